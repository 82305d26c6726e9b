"""The benchmark harness on CPU: its arithmetic, its checks, failures as data, save/load, the lock.

Timing itself is not tested (CI times nothing): a fake timer returns known milliseconds, so every GB/s
and copy ratio can be compared with the value computed from `bytes_moved` by hand.
"""
import io
import itertools
import json
import threading

import pandas as pd
from pathlib import Path

import pytest
import torch

import softmax_core as sc
from softmax_core import bench, runtime
from softmax_core.__main__ import format_table, text_progress
from softmax_core.bench import Provider

REQUIRED_PROVENANCE = {"gpu", "sm_count", "driver", "torch", "triton", "python", "date", "command", "M",
                       "dtype", "Ns", "directions", "providers", "timer"}


def fixed_timer(*times):
    """A timer that never runs the function: it hands out (median, min, max) triples in turn, with the 20th
    and 80th percentiles halfway between the median and the extremes."""
    cycle = itertools.cycle([bench.Timing((low + median) / 2, median, (median + high) / 2, low, high)
                             for median, low, high in times])
    return lambda fn: next(cycle)


def test_gbps_and_copy_ratio_come_from_bytes_moved():
    # Order of measurement: for each N, for each direction, for each provider -> copy then torch.
    copy_ms, torch_ms = (1.0, 0.5, 2.0), (4.0, 3.0, 5.0)
    run = bench.run_sweep(8, [33, 64], torch.float32, ["copy", "torch"], timer=fixed_timer(copy_ms, torch_ms),
                          command="pytest")
    f = run.frame
    assert list(f.columns) == bench.COLUMNS
    assert len(f) == 2 * 2 * 2 and set(f.status) == {"ok"}
    for r in f.itertuples():
        ms = copy_ms if r.provider == "copy" else torch_ms
        expected = sc.bytes_moved(8, r.N, 4, r.direction) * 1e-9 / (ms[0] * 1e-3)
        assert (r.ms_median, r.ms_min, r.ms_max) == ms
        assert (r.ms_p20, r.ms_p80) == ((ms[1] + ms[0]) / 2, (ms[0] + ms[2]) / 2)
        assert r.gbps == pytest.approx(expected, rel=1e-12)
        assert r.copy_ratio == pytest.approx(1.0 if r.provider == "copy" else copy_ms[0] / torch_ms[0], rel=1e-12)
    backward = f[(f.provider == "copy") & (f.N == 64)].set_index("direction").gbps
    assert backward["backward"] / backward["forward"] == pytest.approx(3 / 2)  # 3·M·N vs 2·M·N elements


def test_copy_ratio_is_missing_without_a_copy_at_that_size():
    rows = [dict(provider="torch", direction="forward", N=8, gbps=10.0, status="ok"),
            dict(provider="copy", direction="forward", N=8, gbps=0.0, status="failed"),
            dict(provider="torch", direction="backward", N=8, gbps=10.0, status="ok"),
            dict(provider="copy", direction="backward", N=8, gbps=40.0, status="ok")]
    ratios = [r["copy_ratio"] for r in bench.with_copy_ratio(rows)]
    assert pd.isna(ratios[0]) and pd.isna(ratios[1]) and ratios[2:] == [0.25, 1.0]


@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16])
def test_every_cpu_provider_computes_softmax(dtype):
    names = ["copy", "torch", "naive", "tutorial", "tuned"]
    run = bench.run_sweep(4, [33], dtype, names, timer=fixed_timer((1.0, 1.0, 1.0)), command="pytest")
    f = run.frame.set_index(["provider", "direction"])
    for name in names:
        assert f.loc[(name, "forward"), "status"] == "ok", f.loc[(name, "forward"), "reason"]
    for name in ["copy", "torch", "naive", "tuned"]:
        assert f.loc[(name, "backward"), "status"] == "ok", f.loc[(name, "backward"), "reason"]
    assert f.loc[("tutorial", "backward"), "status"] == "skipped"
    assert "no backward" in f.loc[("tutorial", "backward"), "reason"]


def test_failures_are_recorded_and_the_sweep_goes_on(monkeypatch):
    def out_of_resources(x):
        raise RuntimeError("out of resource: shared memory, Required: 393280, Hardware limit: 232448\nmore")

    fakes = [Provider("raises", "raises", out_of_resources),
             Provider("wrong", "wrong", lambda x: torch.zeros_like(x)),
             Provider("nograd", "nograd", lambda x: torch.softmax(x, -1),
                      bench.autograd_backward(lambda x: torch.softmax(x.detach(), -1))),
             Provider("missing", "missing", torch.sigmoid, why_unavailable=lambda: "not installed here")]
    for p in fakes:
        monkeypatch.setitem(bench.PROVIDERS, p.name, p)
    run = bench.run_sweep(4, [33, 64], torch.float32, ["raises", "wrong", "nograd", "missing", "torch"],
                          timer=fixed_timer((1.0, 1.0, 1.0)), command="pytest")
    f = run.frame.set_index(["provider", "direction", "N"])
    for N in (33, 64):
        reason = f.loc[("raises", "forward", N), "reason"]
        assert f.loc[("raises", "forward", N), "status"] == "failed"
        assert reason == "RuntimeError: out of resource: shared memory, Required: 393280, Hardware limit: 232448"
        assert f.loc[("wrong", "forward", N), "status"] == "failed"
        assert "wrong result" in f.loc[("wrong", "forward", N), "reason"]
        assert f.loc[("nograd", "forward", N), "status"] == "ok"
        assert f.loc[("nograd", "backward", N), "status"] == "failed"
        assert "grad_fn" in f.loc[("nograd", "backward", N), "reason"]
        assert f.loc[("missing", "forward", N), "status"] == "skipped"
        assert f.loc[("missing", "forward", N), "reason"] == "not installed here"
        assert (f.loc[("torch", slice(None), N), "status"] == "ok").all()
    failed = run.frame[run.frame.status != "ok"]
    assert failed.gbps.isna().all() and failed.copy_ratio.isna().all()
    assert "fails" in format_table(run)


def test_the_check_catches_nan_and_wrong_dtype():
    ref = torch.softmax(torch.randn(3, 5), -1)
    assert bench.mismatch(ref.clone(), ref, torch.float32) is None
    bad = ref.clone()
    bad[1, 2] = float("nan")
    assert "wrong result" in bench.mismatch(bad, ref, torch.float32)
    assert "expected" in bench.mismatch(ref.half(), ref, torch.float32)
    assert "not a tensor" in bench.mismatch(None, ref, torch.float32)


def test_progress_counts_every_measurement():
    seen = []
    bench.run_sweep(2, [8, 9, 10], "float32", ["copy", "torch"], directions=("forward",),
                    timer=fixed_timer((1.0, 1.0, 1.0)), progress=lambda d, t, label: seen.append((d, t, label)))
    assert [d for d, _, _ in seen] == list(range(7)) and {t for _, t, _ in seen} == {6}
    assert seen[-1][2] == "torch forward N=10"
    log = io.StringIO()
    report = text_progress(log)
    for done in range(101):
        report(done, 100, "x")
    assert 10 <= log.getvalue().count("\n") <= 12  # a log gets a line per 10%, not one per step


def test_save_and_load_round_trip(tmp_path):
    run = bench.run_sweep(4, [16, 33], "float32", ["copy", "torch", "tutorial"],
                          timer=fixed_timer((1.0, 0.5, 2.0), (3.0, 2.0, 4.0)), command="pytest")
    csv_path, json_path = bench.save_run(run, tmp_path / "runs", "cpu-test")
    assert csv_path.name == "cpu-test.csv" and json.loads(json_path.read_text())["csv"] == "cpu-test.csv"
    loaded = bench.load_recorded_runs(tmp_path / "runs")
    assert len(loaded) == 1
    pd.testing.assert_frame_equal(loaded[0].frame, run.frame, check_dtype=False)
    assert {k: v for k, v in loaded[0].provenance.items() if k != "csv"} == run.provenance
    assert "M=4" in loaded[0].label


def test_load_recorded_runs_without_runs(tmp_path):
    assert bench.load_recorded_runs(tmp_path / "nowhere") == []
    assert bench.load_recorded_runs(tmp_path) == []
    (tmp_path / "broken.json").write_text("{not json")
    with pytest.warns(UserWarning, match="broken.json"):
        assert bench.load_recorded_runs(tmp_path) == []
    recorded = bench.load_recorded_runs()  # the repository's own assets/benchmarks/: every run loads
    assert len(recorded) == len(list(bench.RECORDED_DIR.glob("*.json"))) > 0
    dates = [run.provenance["date"] for run in recorded]
    assert dates == sorted(dates)


def test_provenance_says_where_and_how():
    run = bench.run_sweep(2, [8], "bfloat16", ["torch"], directions=("forward",),
                          timer=fixed_timer((1.0, 1.0, 1.0)), command="python -m softmax_core --benchmark")
    p = run.provenance
    assert REQUIRED_PROVENANCE <= set(p)
    assert p["torch"] == torch.__version__ and p["M"] == 2 and p["Ns"] == [8] and p["dtype"] == "bfloat16"
    assert p["command"] == "python -m softmax_core --benchmark"
    assert p["date"].endswith("+00:00")
    assert p["source_digest"] == bench.source_digest() and len(p["source_digest"]) == 12


def test_source_digest_follows_the_code(tmp_path):
    """The digest names the code that ran: it changes when a library file changes."""
    import shutil
    copy = tmp_path / "softmax_core"
    shutil.copytree(Path(sc.__file__).parent, copy, ignore=shutil.ignore_patterns("__pycache__"))
    before = bench.source_digest(copy)
    assert before == bench.source_digest()
    (copy / "tuned_plan.py").write_text((copy / "tuned_plan.py").read_text() + "\n# changed\n")
    after = bench.source_digest(copy)
    assert after != before
    (copy / "bench" / "harness.py").write_text((copy / "bench" / "harness.py").read_text() + "\n# changed\n")
    assert bench.source_digest(copy) not in (before, after)  # files in subpackages count too


def test_provenance_names_the_device():
    run = bench.run_sweep(2, [8], "float32", ["torch"], directions=("forward",),
                          timer=fixed_timer((1.0, 1.0, 1.0)), command="x")
    p = run.provenance
    if runtime.INTERPRETED:
        assert p["gpu"] is None and p["sm_count"] is None and "interpreter" in p["device"]
    else:
        props = torch.cuda.get_device_properties(torch.cuda.current_device())
        assert (p["gpu"], p["sm_count"]) == (props.name, props.multi_processor_count)
        assert "interpreter" not in p["device"]


def test_bad_arguments_are_named():
    with pytest.raises(ValueError, match="unknown provider"):
        bench.run_sweep(2, [8], "float32", ["nobody"])
    with pytest.raises(TypeError, match="float32"):
        bench.run_sweep(2, [8], torch.int32, ["torch"])
    with pytest.raises(ValueError, match="positive"):
        bench.run_sweep(2, [0], "float32", ["torch"])
    with pytest.raises(ValueError, match="direction"):
        bench.run_sweep(2, [8], "float32", ["torch"], directions=("sideways",))


def test_one_benchmark_at_a_time():
    held, release, waited = threading.Event(), threading.Event(), []

    def other_session():
        with bench.exclusive_gpu():
            held.set()
            release.wait(5)

    thread = threading.Thread(target=other_session)
    thread.start()
    held.wait(5)
    threading.Timer(0.2, release.set).start()
    with bench.exclusive_gpu(on_wait=lambda: waited.append(True)):
        assert release.is_set()  # the lock came only after the other session let go
    thread.join(5)
    assert not thread.is_alive()
    assert waited == [True]
    with bench.exclusive_gpu(on_wait=lambda: waited.append(False)):
        with bench.exclusive_gpu(on_wait=lambda: waited.append(False)):  # re-entrant for the same session
            pass
    assert waited == [True]


def test_providers_say_whether_they_can_run():
    assert {"copy", "tuned", "tutorial", "torch", "torch_compile", "naive", "liger", "quack"} <= set(bench.PROVIDERS)
    for name in ["copy", "tuned", "tutorial", "torch", "naive"]:
        assert bench.PROVIDERS[name].available() == (True, "")
    for name in ["liger", "quack"]:
        ok, why = bench.PROVIDERS[name].available()
        assert ok == (why == "")
        if runtime.INTERPRETED:  # optional GPU peers: missing, or present but without a GPU to run on
            assert not ok and ("not importable" in why or why == "needs a GPU")


def test_recorded_runs_use_the_current_provider_names():
    """The recorded files say "as_taught"; loading them gives the tutorial provider's current name."""
    runs = bench.load_recorded_runs()
    assert runs
    for run in runs:
        assert "tutorial" in set(run.frame.provider) and "as_taught" not in set(run.frame.provider)
        assert "tutorial" in run.provenance["providers"] and "as_taught" not in run.provenance["providers"]


def test_wall_clock_percentiles_interpolate_like_torch_quantile():
    samples = [5.0, 1.0, 4.0, 2.0, 3.0, 10.0]
    t = bench.timing_of(samples)
    expected = torch.quantile(torch.tensor(samples, dtype=torch.float64), torch.tensor([0.2, 0.5, 0.8],
                                                                                        dtype=torch.float64))
    assert (t.p20, t.median, t.p80) == pytest.approx(expected.tolist())
    assert (t.min, t.max) == (1.0, 10.0)
    timed = bench.WallClockTimer(warmup=0, max_repeats=3, budget_s=0.0)(lambda: None)
    assert timed.min <= timed.p20 <= timed.median <= timed.p80 <= timed.max


def test_runs_recorded_without_percentiles_load_with_them_empty(tmp_path):
    """Runs recorded before the 20th / 80th percentiles were kept (median, min, max only) still load."""
    run = bench.run_sweep(2, [8], "float32", ["torch", "tutorial"], directions=("forward",),
                          timer=fixed_timer((1.0, 0.5, 2.0)), command="pytest")
    csv_path, json_path = bench.save_run(run, tmp_path, "old")
    old = pd.read_csv(csv_path).drop(columns=["ms_p20", "ms_p80"])
    old["provider"] = old["provider"].replace({"tutorial": "as_taught"})   # and under the old provider name
    old.to_csv(csv_path, index=False)
    loaded = bench.load_run(json_path)
    assert list(loaded.frame.columns) == bench.COLUMNS
    assert loaded.frame.ms_p20.isna().all() and loaded.frame.ms_p80.isna().all()
    assert list(loaded.frame.ms_median) == [1.0, 1.0] and list(loaded.frame.provider) == ["torch", "tutorial"]
