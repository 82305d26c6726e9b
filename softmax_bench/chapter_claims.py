"""The chapter's Step 5 claims, each checked against a recorded run of the chapter's own sweep.

The chapter benchmarks its kernel against torch.softmax at M = 4096, N = 256 ... 12672 in steps of 128, float32,
forward, with `triton.testing.do_bench` (the record's eager clock, L2 flushed before each call), and says:

TRITON_ABOVE_TORCH        "Triton is clearly above PyTorch"
GAP_GROWS_WITH_N          "and the gap grows with N"
FUSION_EXPLAINS_GAP       "because PyTorch's 8MN memory operations are pressed into Triton's 2MN"
BELOW_PEAK_FROM_EXP_SUM   "the bandwidth stays below the peak because exp and sum take time"
COMPILE_FUSES_LESS_WELL   "torch.compile tries the same fusion but can't pull it off as well"
JIT_SCRIPT_FUSES_LESS_WELL the same of torch.jit.script (no provider times it: NOT_MEASURED)

`check_claims` returns one `ClaimCheck` per claim: a verdict code (HOLDS, PARTLY, REFUTED, NOT_MEASURED) and the
figures it was computed from; softmax_bench.claim_words says them (the page and the doc tables alike). `bounds` gives the figures that explain
them: the GPU's spec peak, the best copy of the sweep, the copy at the smallest N (a few microseconds per call,
where the launch costs as much as the bytes) and the largest N whose matrices fit in L2.

"Clearly" is decided from the spread, not the medians: at one N, A is clearly above B when A's slowest timing
(p80) still moves more GB/s than B's fastest (p20); where the two intervals overlap the N is too close to call.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import pandas as pd

from softmax_bench.records import EAGER, RECORDED_DIR, BenchmarkRun, load_recorded_runs
from softmax_core.hardware import dtypes
from softmax_core.hardware.gpu import GpuSpec, gpu_catalog, last_cache
from softmax_core.traffic import memory_traffic
from softmax_core.words import Code

CHAPTER_RECORDS = RECORDED_DIR / "chapter"



class Claim(Code):
    """What the chapter says in Step 5, in its order (words: softmax_core/words/chapter.*.toml)."""
    TRITON_ABOVE_TORCH = "triton_above_torch"
    GAP_GROWS_WITH_N = "gap_grows_with_n"
    FUSION_EXPLAINS_GAP = "fusion_explains_gap"
    BELOW_PEAK_FROM_EXP_SUM = "below_peak_from_exp_sum"
    COMPILE_FUSES_LESS_WELL = "compile_fuses_less_well"
    JIT_SCRIPT_FUSES_LESS_WELL = "jit_script_fuses_less_well"


class Verdict(Code):
    """What the record says of a claim."""
    HOLDS = "holds"
    PARTLY = "partly"
    REFUTED = "refuted"
    NOT_MEASURED = "not_measured"


(TRITON_ABOVE_TORCH, GAP_GROWS_WITH_N, FUSION_EXPLAINS_GAP, BELOW_PEAK_FROM_EXP_SUM, COMPILE_FUSES_LESS_WELL,
 JIT_SCRIPT_FUSES_LESS_WELL) = CLAIMS = tuple(Claim)
HOLDS, PARTLY, REFUTED, NOT_MEASURED = VERDICTS = tuple(Verdict)

# A comparison "holds" when A is clearly ahead at this share of the sizes or more, is "refuted" below REFUTED_SHARE.
HOLDS_SHARE, REFUTED_SHARE = 0.9, 0.5
# The gap "grows with N" when the rank correlation of N and tutorial ÷ torch is at least this; below the lower
# figure N does not order it at all.
GROWS_RHO, NO_TREND_RHO = 0.7, 0.3
# torch.softmax "changes kernel" between two neighbouring N where its GB/s moves by more than this fraction.
STEP_FRACTION = 0.25
# "exp and sum" explain the distance to the peak only where the copy (no exp, no sum) is not most of it.
COPY_SHARE_LIMIT = 0.5
TUNED_AT_COPY = 0.95       # a kernel doing the same exp and sum within this fraction of copy: the math is hidden


@dataclass(frozen=True)
class ClaimCheck:
    claim: Claim
    verdict: Verdict
    figures: dict = field(default_factory=dict)  # what the verdict was computed from (numbers, lists of N)


@dataclass(frozen=True)
class ChapterRuns:
    """The chapter's sweep: the main run (copy, tutorial, torch; tuned and naive when recorded) and, timed in
    a run of its own over fewer sizes because it compiles once per N, torch.compile beside copy."""
    main: BenchmarkRun
    compiled: BenchmarkRun | None = None


def load_chapter_runs(directory: str | Path = CHAPTER_RECORDS) -> ChapterRuns | None:
    """The newest eager runs in `directory` that hold the tutorial kernel and torch.softmax (main) and
    torch.compile (compiled); None when there is no main run."""
    runs = load_recorded_runs(directory, view=EAGER)             # oldest first
    main = [r for r in runs if {"tutorial", "torch", "copy"} <= set(r.frame.provider)]
    compiled = [r for r in runs if {"torch_compile", "copy"} <= set(r.frame.provider)]
    if not main:
        return None
    return ChapterRuns(main[-1], compiled[-1] if compiled else None)


def catalog_gpu_named(name: str | None) -> GpuSpec | None:
    """The catalog's GPU whose name starts with a run's recorded device name ("NVIDIA H200" -> H200 (SXM))."""
    matches = [g for g in gpu_catalog() if name and g.name.startswith(name)]
    return matches[0] if matches else None


def _intervals(run: BenchmarkRun, provider: str) -> pd.DataFrame:
    """N -> median, slow (p80) and fast (p20) GB/s, and the same as ratios to the run's copy median."""
    f = run.frame[(run.frame.direction == "forward") & (run.frame.status == "ok")]
    copy = f[f.provider == "copy"].set_index("N").gbps
    p = f[f.provider == provider].set_index("N")
    out = pd.DataFrame({"gbps": p.gbps, "slow": p.gbps * p.ms_median / p.ms_p80,
                        "fast": p.gbps * p.ms_median / p.ms_p20, "ms": p.ms_median}).sort_index()
    for column in ("gbps", "slow", "fast"):
        out[f"{column}_ratio"] = out[column] / copy.reindex(out.index)
    return out


def _clearly(a: pd.DataFrame, b: pd.DataFrame, suffix: str = "") -> tuple[list[int], list[int], list[int]]:
    """The common N where a is clearly above b, where b is clearly above a, and where it is too close."""
    common = a.index.intersection(b.index)
    above = [int(n) for n in common if a.at[n, "slow" + suffix] > b.at[n, "fast" + suffix]]
    below = [int(n) for n in common if b.at[n, "slow" + suffix] > a.at[n, "fast" + suffix]]
    close = [int(n) for n in common if n not in above and n not in below]
    return above, below, close


def _share_verdict(share: float) -> str:
    return HOLDS if share >= HOLDS_SHARE else REFUTED if share < REFUTED_SHARE else PARTLY


def triton_above_torch(runs: ChapterRuns) -> ClaimCheck:
    tut, torch_ = _intervals(runs.main, "tutorial"), _intervals(runs.main, "torch")
    above, below, close = _clearly(tut, torch_)
    share = len(above) / max(1, len(above) + len(below) + len(close))
    ratio = (tut.gbps / torch_.gbps).dropna()
    return ClaimCheck(TRITON_ABOVE_TORCH, _share_verdict(share), dict(
        sizes=len(ratio), above=len(above), below=len(below), close=len(close), share_above=share,
        torch_above_at=below, too_close_at=close, median_ratio=float(ratio.median()),
        min_ratio=float(ratio.min()), min_ratio_n=int(ratio.idxmin())))


def torch_kernel_steps(runs: ChapterRuns, fraction: float = STEP_FRACTION) -> list[tuple[int, float]]:
    """(N, change) where torch.softmax's GB/s moved by more than `fraction` from the previous swept N: there
    PyTorch picked another of its softmax kernels."""
    gbps = _intervals(runs.main, "torch").gbps
    change = gbps / gbps.shift(1) - 1
    return [(int(n), float(c)) for n, c in change.items() if abs(c) > fraction]


def gap_grows_with_n(runs: ChapterRuns) -> ClaimCheck:
    ratio = (_intervals(runs.main, "tutorial").gbps / _intervals(runs.main, "torch").gbps).dropna()
    rho = float(pd.Series(ratio.index, index=ratio.index).rank().corr(ratio.rank()))
    verdict = HOLDS if rho >= GROWS_RHO else REFUTED if rho < NO_TREND_RHO else PARTLY
    return ClaimCheck(GAP_GROWS_WITH_N, verdict, dict(
        rank_correlation=rho, first_n=int(ratio.index[0]), first_ratio=float(ratio.iloc[0]),
        last_n=int(ratio.index[-1]), last_ratio=float(ratio.iloc[-1]), max_ratio=float(ratio.max()),
        max_ratio_n=int(ratio.idxmax()), torch_steps=torch_kernel_steps(runs)))


def fusion_explains_gap(runs: ChapterRuns) -> ClaimCheck:
    """An 8MN chain at copy speed would reach at most fused bytes ÷ naive bytes of copy in GB/s counted as 2MN;
    torch.softmax above that ceiling at every N is one pass too, so fusion is not what separates it."""
    M = int(runs.main.provenance["M"])
    torch_ = _intervals(runs.main, "torch")
    ceiling = 1 / memory_traffic(M, int(torch_.index[-1])).predicted_speedup
    figures = dict(ceiling_ratio=ceiling, torch_min_ratio=float(torch_.gbps_ratio.min()),
                   torch_min_ratio_n=int(torch_.gbps_ratio.idxmin()),
                   torch_median_ratio=float(torch_.gbps_ratio.median()))
    if "naive" in set(runs.main.frame.provider):
        naive, tut = _intervals(runs.main, "naive"), _intervals(runs.main, "tutorial")
        figures.update(naive_median_ratio=float(naive.gbps_ratio.median()),
                       naive_max_ratio=float(naive.gbps_ratio.max()),
                       tutorial_over_naive=float((tut.gbps / naive.gbps).dropna().median()))
    above = figures["torch_min_ratio"] > ceiling
    return ClaimCheck(FUSION_EXPLAINS_GAP, REFUTED if above else HOLDS, figures)


def bounds(runs: ChapterRuns) -> dict:
    """What bounds every figure of the sweep: the spec peak, the best copy, the copy at the smallest N (its
    microseconds per call, and how many of them the bytes at the best copy's rate would not explain) and the last
    cache before DRAM (softmax_core.hardware.gpu.last_cache: its kind, MiB, and the largest swept N whose x and y
    fit in it together)."""
    copy = _intervals(runs.main, "copy")
    gpu = catalog_gpu_named(runs.main.provenance.get("gpu"))
    M = int(runs.main.provenance["M"])
    element = dtypes.element_size(runs.main.provenance.get("dtype", "float32"))
    out = dict(gpu=runs.main.provenance.get("gpu"), peak_gbps=gpu.memory_bandwidth_gbps if gpu else None,
               copy_best_gbps=float(copy.gbps.max()), copy_best_n=int(copy.gbps.idxmax()),
               smallest_n=int(copy.index[0]), copy_smallest_gbps=float(copy.gbps.iloc[0]),
               copy_smallest_us=float(copy.ms.iloc[0] * 1e3),
               smallest_mb=2 * M * int(copy.index[0]) * element / 1e6)
    cache = last_cache(gpu) if gpu else None
    out.update(cache_kind=cache.kind if cache else None, cache_mib=cache.mib if cache else None)
    # the smallest call's bytes at the best copy's rate, and what is left of its time: launch and ramp-up
    out["smallest_at_best_us"] = out["smallest_mb"] * 1e6 / (out["copy_best_gbps"] * 1e9) * 1e6
    out["smallest_fixed_us"] = out["copy_smallest_us"] - out["smallest_at_best_us"]
    if gpu and gpu.memory_bandwidth_gbps:
        out["copy_best_of_peak"] = out["copy_best_gbps"] / gpu.memory_bandwidth_gbps
        out["copy_smallest_of_peak"] = out["copy_smallest_gbps"] / gpu.memory_bandwidth_gbps
    if cache:
        fits = [int(n) for n in copy.index if 2 * M * n * element <= cache.bytes]
        out["cache_fits_up_to_n"] = fits[-1] if fits else None
    return out


def below_peak_from_exp_sum(runs: ChapterRuns) -> ClaimCheck:
    """Where copy, which computes nothing, is most of the tutorial's distance to the peak, and a kernel doing
    the same exp and sum runs at copy speed, the math is not what keeps it below the peak."""
    b = bounds(runs)
    tut, copy = _intervals(runs.main, "tutorial"), _intervals(runs.main, "copy")
    n = int(tut.index[-1])
    figures = dict(peak_gbps=b["peak_gbps"], n=n, tutorial_gbps=float(tut.at[n, "gbps"]),
                   copy_gbps=float(copy.at[n, "gbps"]), tutorial_median_ratio=float(tut.gbps_ratio.median()))
    if "tuned" in set(runs.main.frame.provider):
        figures["tuned_median_ratio"] = float(_intervals(runs.main, "tuned").gbps_ratio.median())
    if not b["peak_gbps"]:
        return ClaimCheck(BELOW_PEAK_FROM_EXP_SUM, NOT_MEASURED, figures)
    gap = b["peak_gbps"] - figures["tutorial_gbps"]
    figures["copy_share_of_gap"] = (b["peak_gbps"] - figures["copy_gbps"]) / gap if gap > 0 else 1.0
    copy_bound = figures["copy_share_of_gap"] >= COPY_SHARE_LIMIT
    math_hidden = figures.get("tuned_median_ratio", 0.0) >= TUNED_AT_COPY
    verdict = REFUTED if copy_bound and math_hidden else PARTLY if copy_bound or math_hidden else HOLDS
    return ClaimCheck(BELOW_PEAK_FROM_EXP_SUM, verdict, figures)


def compile_fuses_less_well(runs: ChapterRuns) -> ClaimCheck:
    """Tutorial kernel against torch.compile, each as a ratio to its own run's copy (the two runs differ)."""
    if runs.compiled is None:
        return ClaimCheck(COMPILE_FUSES_LESS_WELL, NOT_MEASURED)
    tut, comp = _intervals(runs.main, "tutorial"), _intervals(runs.compiled, "torch_compile")
    above, below, close = _clearly(tut, comp, suffix="_ratio")
    share = len(above) / max(1, len(above) + len(below) + len(close))
    return ClaimCheck(COMPILE_FUSES_LESS_WELL, _share_verdict(share), dict(
        sizes=len(above) + len(below) + len(close), above=len(above), below=len(below), close=len(close),
        share_above=share, compile_above_at=below, too_close_at=close))


def check_claims(runs: ChapterRuns) -> tuple[ClaimCheck, ...]:
    """Every claim of CLAIMS, in that order."""
    return (triton_above_torch(runs), gap_grows_with_n(runs), fusion_explains_gap(runs),
            below_peak_from_exp_sum(runs), compile_fuses_less_well(runs),
            ClaimCheck(JIT_SCRIPT_FUSES_LESS_WELL, NOT_MEASURED))
