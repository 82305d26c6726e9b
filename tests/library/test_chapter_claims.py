"""The chapter's Step 5 claims: verdicts computed from a run, on the recorded H200 sweep and on made-up runs
that move each verdict."""
import pandas as pd
import pytest

from softmax_bench import chapter_claims as cc
from softmax_bench.harness import TUTORIAL_SWEEP_M, TUTORIAL_SWEEP_N
from softmax_bench.records import COLUMNS, BenchmarkRun


def make_run(gbps: dict, spread: float = 1.02, Ns=(256, 1024, 4096, 8192, 12672), M=4096, gpu="NVIDIA H200"):
    """A run whose provider p moves gbps[p](N) GB/s at N, with p80 / p20 = spread around the median."""
    rows = []
    for p, rate in gbps.items():
        for n in Ns:
            g = rate(n)
            ms = 2 * M * n * 4 * 1e-9 / g * 1e3
            rows.append(dict(provider=p, direction="forward", dtype="float32", M=M, N=n, ms_p20=ms / spread ** 0.5,
                             ms_median=ms, ms_p80=ms * spread ** 0.5, ms_min=ms / spread, ms_max=ms * spread,
                             gbps=g, copy_ratio=g / gbps["copy"](n), status="ok", reason=""))
    return BenchmarkRun(pd.DataFrame(rows, columns=COLUMNS), dict(M=M, dtype="float32", gpu=gpu))


def verdicts(runs):
    return {c.claim: c.verdict for c in cc.check_claims(runs)}


def test_the_recorded_sweep_is_the_chapters_own():
    runs = cc.load_chapter_runs()
    assert runs is not None and runs.compiled is not None
    assert runs.main.provenance["M"] == TUTORIAL_SWEEP_M
    assert sorted(set(runs.main.frame.N)) == TUTORIAL_SWEEP_N == [128 * i for i in range(2, 100)]
    assert runs.main.provenance["dtype"] == "float32" and runs.main.provenance["timer"] == "do_bench"
    checks = cc.check_claims(runs)
    assert [c.claim for c in checks] == list(cc.CLAIMS) and all(c.verdict in cc.VERDICTS for c in checks)


def test_on_the_recorded_h200_sweep():
    """What the record says; the figures are read back from the file, so a new record moves them."""
    runs = cc.load_chapter_runs()
    got = {c.claim: c for c in cc.check_claims(runs)}
    frame = runs.main.frame.set_index(["provider", "N"]).gbps
    above = got[cc.TRITON_ABOVE_TORCH].figures
    assert above["above"] + above["below"] + above["close"] == 98
    assert above["min_ratio"] == pytest.approx(min(frame["tutorial"] / frame["torch"]))
    steps = [n for n, _ in got[cc.GAP_GROWS_WITH_N].figures["torch_steps"]]
    for n in steps:   # each step is a real jump of torch's GB/s between neighbouring N
        assert abs(frame["torch"][n] / frame["torch"][n - 128] - 1) > cc.STEP_FRACTION
    assert got[cc.JIT_SCRIPT_FUSES_LESS_WELL].verdict == cc.NOT_MEASURED
    b = cc.bounds(runs)
    assert b["peak_gbps"] == 4800 and b["copy_best_gbps"] == pytest.approx(frame["copy"].max())
    assert b["copy_best_gbps"] < b["peak_gbps"]


def test_a_clear_growing_lead_holds_and_a_shrinking_one_is_refuted():
    copy = lambda n: 4000.0
    growing = cc.ChapterRuns(make_run({"copy": copy, "tutorial": lambda n: 3000 + n / 10, "torch": lambda n: 2000}))
    assert verdicts(growing)[cc.TRITON_ABOVE_TORCH] == cc.HOLDS
    assert verdicts(growing)[cc.GAP_GROWS_WITH_N] == cc.HOLDS
    shrinking = cc.ChapterRuns(make_run({"copy": copy, "tutorial": lambda n: 3000, "torch": lambda n: 1500 + n / 10}))
    assert verdicts(shrinking)[cc.GAP_GROWS_WITH_N] == cc.REFUTED
    behind = cc.ChapterRuns(make_run({"copy": copy, "tutorial": lambda n: 2000, "torch": lambda n: 3000}))
    assert verdicts(behind)[cc.TRITON_ABOVE_TORCH] == cc.REFUTED


def test_overlapping_spreads_are_too_close_to_call():
    runs = cc.ChapterRuns(make_run({"copy": lambda n: 4000, "tutorial": lambda n: 3100, "torch": lambda n: 3000},
                                   spread=1.2))
    check = cc.triton_above_torch(runs)
    assert check.figures["close"] == 5 and check.verdict == cc.REFUTED
    tight = cc.ChapterRuns(make_run({"copy": lambda n: 4000, "tutorial": lambda n: 3100, "torch": lambda n: 3000},
                                    spread=1.01))
    assert cc.triton_above_torch(tight).verdict == cc.HOLDS


def test_fusion_explains_the_gap_only_when_torch_moves_the_naive_bytes():
    naive_torch = cc.ChapterRuns(make_run({"copy": lambda n: 4000, "tutorial": lambda n: 3600, "torch": lambda n: 900}))
    assert verdicts(naive_torch)[cc.FUSION_EXPLAINS_GAP] == cc.HOLDS
    fused_torch = cc.ChapterRuns(make_run({"copy": lambda n: 4000, "tutorial": lambda n: 3600, "torch": lambda n: 2400}))
    assert verdicts(fused_torch)[cc.FUSION_EXPLAINS_GAP] == cc.REFUTED


def test_below_peak_from_the_math_only_when_copy_reaches_the_peak():
    at_copy = {"tutorial": lambda n: 3600, "torch": lambda n: 2000, "tuned": lambda n: 3950}
    slow_copy = cc.ChapterRuns(make_run({"copy": lambda n: 4000, **at_copy}))       # peak 4800: copy is most of it
    assert verdicts(slow_copy)[cc.BELOW_PEAK_FROM_EXP_SUM] == cc.REFUTED
    fast_copy = cc.ChapterRuns(make_run({"copy": lambda n: 4790, "tutorial": lambda n: 3600,
                                         "torch": lambda n: 2000, "tuned": lambda n: 3700}))
    assert verdicts(fast_copy)[cc.BELOW_PEAK_FROM_EXP_SUM] == cc.HOLDS
    unknown_gpu = cc.ChapterRuns(make_run({"copy": lambda n: 4000, **at_copy}, gpu="a GPU not in the catalog"))
    assert verdicts(unknown_gpu)[cc.BELOW_PEAK_FROM_EXP_SUM] == cc.NOT_MEASURED


def test_compile_is_compared_ratio_to_its_own_runs_copy():
    main = make_run({"copy": lambda n: 4000, "tutorial": lambda n: 3600, "torch": lambda n: 2000})
    faster_machine = make_run({"copy": lambda n: 8000, "torch_compile": lambda n: 6000})   # 0.75 of its copy
    assert verdicts(cc.ChapterRuns(main, faster_machine))[cc.COMPILE_FUSES_LESS_WELL] == cc.HOLDS
    better = make_run({"copy": lambda n: 4000, "torch_compile": lambda n: 3900})
    assert verdicts(cc.ChapterRuns(main, better))[cc.COMPILE_FUSES_LESS_WELL] == cc.REFUTED
    assert verdicts(cc.ChapterRuns(main))[cc.COMPILE_FUSES_LESS_WELL] == cc.NOT_MEASURED


def test_the_bounds_name_the_last_cache_before_dram():
    """The L2 on the H200; on an MI300X the Infinity Cache every CU shares (softmax_core.hardware.gpu.last_cache),
    and the widest N whose x and y fit in it follows its size."""
    from softmax_bench.claim_words import bounds_text

    copy = {"copy": lambda n: 4000.0}
    Ns = (256, 1024, 4096, 8192, 12672)
    nvidia = cc.bounds(cc.ChapterRuns(make_run(copy, Ns=Ns)))
    amd = cc.bounds(cc.ChapterRuns(make_run(copy, Ns=Ns, gpu="AMD Instinct MI300X")))
    assert (nvidia["cache_kind"], nvidia["cache_mib"]) == ("l2", 60.0)
    assert (amd["cache_kind"], amd["cache_mib"]) == ("infinity_cache", 256.0)
    fits = lambda mib: max(n for n in Ns if 2 * 4096 * n * 4 <= mib * 2**20)
    assert nvidia["cache_fits_up_to_n"] == fits(60) == 1024 and amd["cache_fits_up_to_n"] == fits(256) == 8192
    text = bounds_text(cc.ChapterRuns(make_run(copy, Ns=Ns, gpu="AMD Instinct MI300X")))
    assert "256 MiB Infinity Cache would hold x and y up to N = 8,192" in text
