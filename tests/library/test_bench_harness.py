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
import softmax_bench as bench
from softmax_core.hardware import runtime
from softmax_bench.cli import format_table, text_progress
from softmax_bench import Provider
from softmax_core.words import Coded, describe

REQUIRED_PROVENANCE = {"gpu", "sm_count", "driver", "torch", "triton", "python", "date", "command", "M",
                       "dtype", "Ns", "directions", "providers", "timer", "timer_figures", "record_version", "backend"}


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
    assert f.loc[("tutorial", "backward"), "reason"] == Coded.of(bench.NotTimed.NO_BACKWARD)


def test_failures_are_recorded_and_the_sweep_goes_on(monkeypatch):
    def out_of_resources(x):
        raise RuntimeError("out of resource: shared memory, Required: 393280, Hardware limit: 232448\nmore")

    not_here = Coded.of(bench.NotTimed.NOT_INSTALLED, package="missing", pip="missing")
    fakes = [Provider("raises", out_of_resources),
             Provider("wrong", lambda x: torch.zeros_like(x)),
             Provider("nograd", lambda x: torch.softmax(x, -1),
                      bench.autograd_backward(lambda x: torch.softmax(x.detach(), -1))),
             Provider("missing", torch.sigmoid, why_unavailable=lambda: not_here)]
    for p in fakes:
        monkeypatch.setitem(bench.PROVIDERS, p.name, p)
    run = bench.run_sweep(4, [33, 64], torch.float32, ["raises", "wrong", "nograd", "missing", "torch"],
                          timer=fixed_timer((1.0, 1.0, 1.0)), command="pytest")
    f = run.frame.set_index(["provider", "direction", "N"])
    for N in (33, 64):
        reason = f.loc[("raises", "forward", N), "reason"]
        assert f.loc[("raises", "forward", N), "status"] == "failed"
        assert describe(reason) == ("RuntimeError: out of resource: shared memory, Required: 393280, "
                                    "Hardware limit: 232448")
        assert f.loc[("wrong", "forward", N), "status"] == "failed"
        assert f.loc[("wrong", "forward", N), "reason"].code is bench.NotTimed.WRONG_RESULT
        assert f.loc[("nograd", "forward", N), "status"] == "ok"
        assert f.loc[("nograd", "backward", N), "status"] == "failed"
        assert f.loc[("nograd", "backward", N), "reason"] == Coded.of(bench.NotTimed.NO_BACKWARD)
        assert f.loc[("missing", "forward", N), "status"] == "skipped"
        assert f.loc[("missing", "forward", N), "reason"] == not_here
        assert (f.loc[("torch", slice(None), N), "status"] == "ok").all()
    failed = run.frame[run.frame.status != "ok"]
    assert failed.gbps.isna().all() and failed.copy_ratio.isna().all()
    assert "fails" in format_table(run)


def test_the_check_catches_nan_and_wrong_dtype():
    ref = torch.softmax(torch.randn(3, 5), -1)
    assert bench.mismatch(ref.clone(), ref, torch.float32) is None
    bad = ref.clone()
    bad[1, 2] = float("nan")
    assert "wrong result" in describe(bench.mismatch(bad, ref, torch.float32))
    assert "expected" in describe(bench.mismatch(ref.half(), ref, torch.float32))
    assert "not a tensor" in describe(bench.mismatch(None, ref, torch.float32))


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


def test_two_runs_in_one_minute_keep_both_records(tmp_path):
    # Record names carry the minute; a second run with the same name gets -2, a third -3, and none is lost.
    run = bench.run_sweep(4, [16], "float32", ["copy"], timer=fixed_timer((1.0, 0.5, 2.0)), command="pytest")
    stems = []
    for _ in range(3):
        stem = bench.free_stem(tmp_path, "gpu-models-mixed-20261201T1629")
        bench.save_run(run, tmp_path, stem)
        stems.append(stem)
    assert stems == ["gpu-models-mixed-20261201T1629", "gpu-models-mixed-20261201T1629-2",
                     "gpu-models-mixed-20261201T1629-3"]
    assert len(bench.load_recorded_runs(tmp_path)) == 3
    (tmp_path / "only-json.json").write_text("{}")      # half a record still holds its name
    assert bench.free_stem(tmp_path, "only-json") == "only-json-2"


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
    """The digest names the code that ran: it changes when a library file or a harness file changes."""
    import shutil
    copies = []
    for package in (Path(sc.__file__).parent, Path(bench.__file__).parent):
        copies.append(tmp_path / package.name)
        shutil.copytree(package, copies[-1], ignore=shutil.ignore_patterns("__pycache__"))
    copies = tuple(copies)
    before = bench.source_digest(copies)
    assert before == bench.source_digest()
    (copies[0] / "plans" / "tuned.py").write_text((copies[0] / "plans" / "tuned.py").read_text() + "\n# changed\n")
    after = bench.source_digest(copies)
    assert after != before
    (copies[1] / "harness.py").write_text((copies[1] / "harness.py").read_text() + "\n# changed\n")
    assert bench.source_digest(copies) not in (before, after)  # the harness's files count too


def test_provenance_names_the_device():
    run = bench.run_sweep(2, [8], "float32", ["torch"], directions=("forward",),
                          timer=fixed_timer((1.0, 1.0, 1.0)), command="x")
    p = run.provenance
    if runtime.INTERPRETED:
        assert p["gpu"] is None and p["sm_count"] is None and p["backend"]["code"] == "Backend:interpreter"
    else:
        props = torch.cuda.get_device_properties(torch.cuda.current_device())
        assert (p["gpu"], p["sm_count"]) == (props.name, props.multi_processor_count)
        assert p["backend"] == {"code": "Backend:gpu", "figures": {"name": props.name}}


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
        assert bench.PROVIDERS[name].available() == (True, None)
    for name in ["liger", "quack"]:
        ok, why = bench.PROVIDERS[name].available()
        assert ok == (why is None)
        if runtime.INTERPRETED:  # optional GPU peers: missing, or present but without a GPU to run on
            assert not ok and why.code in (bench.NotTimed.NOT_IMPORTABLE, bench.NotTimed.NOT_INSTALLED,
                                           bench.NotTimed.NEEDS_GPU, bench.NotTimed.NEEDS_NVIDIA)


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


# -- the CUDA-graph timer, the timer in the record, and QuACK ---------------------------------------------------
def test_the_cuda_graph_timer_summarises_its_samples_and_says_what_it_measures(monkeypatch):
    """A CUDA graph cannot be captured on a CPU: a stand-in for the capture-and-replay step checks what it is
    asked and answers ten samples, which become the Timing's p20, median, p80, min and max."""
    from softmax_bench import timers

    asked = []
    samples = [0.9, 0.1, 0.5, 0.3, 0.7, 0.2, 0.4, 0.6, 0.8, 1.0]

    def fake(fn, rep_ms, n_samples=10):
        asked.append((fn, rep_ms))
        return samples

    monkeypatch.setattr(timers, "graph_samples", fake)
    call = object()
    timer = bench.CudaGraphTimer(rep_ms=25)
    assert timer(call) == bench.Timing(*torch.quantile(torch.tensor(samples, dtype=torch.float64),
                                                       torch.tensor([0.2, 0.5, 0.8, 0.0, 1.0],
                                                                    dtype=torch.float64)).tolist())
    assert asked == [(call, 25)]
    text = bench.describe_timer(timer)
    assert text.startswith("do_bench_cudagraph's method (rep=25), captured on the stream the call was prepared on")
    assert "CUDA graph" in text and "no CPU launch cost" in text and "L2 not flushed" in text
    assert "copy roofline is timed the same way" in text
    assert "L2 flushed before every call" in bench.describe_timer(bench.DoBenchTimer())   # the eager one still says so
    assert (bench.timer_kind(timer), bench.timer_kind(bench.DoBenchTimer()), bench.timer_kind(bench.WallClockTimer()),
            bench.timer_kind(lambda fn: None)) == ("do_bench_cudagraph", "do_bench", "wall clock", None)


def test_a_call_that_cannot_be_captured_is_a_failed_row_and_the_sweep_goes_on(monkeypatch):
    """A capture error (here: ending an invalidated capture, raised while the provider's own error is being
    handled, as torch.cuda.graph does) becomes a "failed" row with both errors in one line; the next
    provider is timed as usual."""
    import gc

    from softmax_bench import timers

    def fake(fn, rep_ms, n_samples=10):
        assert not gc.isenabled()          # no collection during a capture (see timers.CudaGraphTimer)
        if fn().dtype == torch.bfloat16:   # the sync provider's answer: stands for "synchronised while capturing"
            try:
                raise RuntimeError("CUDA error: operation not permitted when stream is capturing")
            finally:
                raise RuntimeError("CUDA error: operation failed due to a previous error during capture")
        return [1.0] * n_samples

    monkeypatch.setattr(timers, "graph_samples", fake)
    syncs = Provider("syncs", lambda x: torch.softmax(x, -1).bfloat16(), roofline=True)
    monkeypatch.setitem(bench.PROVIDERS, "syncs", syncs)
    was_collecting = gc.isenabled()
    run = bench.run_sweep(4, [8], "float32", ["syncs", "torch"], directions=("forward",),
                          timer=bench.CudaGraphTimer(), command="pytest")
    assert gc.isenabled() == was_collecting
    rows = run.frame.set_index("provider")
    assert rows.loc["syncs", "status"] == "failed" and rows.loc["torch", "status"] == "ok"
    reason = describe(rows.loc["syncs", "reason"])
    assert rows.loc["syncs", "reason"].code is bench.NotTimed.GRAPH_CAPTURE
    assert reason.startswith("cannot be timed from a CUDA graph: RuntimeError: CUDA error: "
                             "operation not permitted when stream is capturing; then RuntimeError"), reason
    assert "\n" not in reason
    assert run.provenance["timer"] == "do_bench_cudagraph"
    assert run.provenance["timer_figures"] == {"rep_ms": bench.CudaGraphTimer().rep_ms}


def test_the_record_names_its_timer_and_migrated_records_load(tmp_path):
    eager = bench.run_sweep(2, [8], "float32", ["copy", "torch"], directions=("forward",),
                            timer=bench.WallClockTimer(warmup=0, max_repeats=3, budget_s=0.0), command="eager")
    assert eager.provenance["record_version"] == bench.RECORD_VERSION == 3
    assert eager.provenance["timer"] == "wall clock" and eager.timing_view == "eager"
    bench.save_run(eager, tmp_path, "new")
    assert bench.load_run(tmp_path / "new.json").provenance["timer"] == "wall clock"
    # a record first written in version 1 (the clock's description under "timer"), rewritten once in version 3
    old = bench.load_run(bench.RECORDED_DIR / "history" / "nvidia-h200-full-float32-20261130T0527.json")
    assert old.provenance["recorded_as_version"] == 1 and old.provenance["timer"] == "do_bench"
    assert old.provenance["timer_figures"] == {"warmup_ms": 10, "rep_ms": 40}
    assert old.timing_view == "eager"


def _fake_record(directory, stem, timer, date, dtype="float32", gpu="Test GPU 9000"):
    rows = [dict(provider=p, direction="forward", dtype=dtype, M=4096, N=1024, ms_p20=0.01, ms_median=0.01,
                 ms_p80=0.01, ms_min=0.01, ms_max=0.01, gbps=1000.0, copy_ratio=1.0, status="ok", reason="")
            for p in ("copy", "torch")]
    info = {"gpu": gpu, "dtype": dtype, "M": 4096, "date": date, "record_version": bench.RECORD_VERSION,
            "timer": timer, "timer_figures": {}}
    bench.save_run(bench.BenchmarkRun(pd.DataFrame(rows, columns=bench.COLUMNS), info), directory, stem)


def test_recorded_runs_pick_the_eager_record_by_default_and_find_the_graph_one(tmp_path):
    # the graph record is the newest: a picker that took "the newest run" would take it
    _fake_record(tmp_path, "gpu-full-float32-1", "do_bench", "2026-01-01T00:00:00+00:00")
    _fake_record(tmp_path, "gpu-full-cudagraph-float32-2", "do_bench_cudagraph", "2026-01-02T00:00:00+00:00")
    every = bench.load_recorded_runs(tmp_path)
    assert [r.timing_view for r in every] == ["eager", "cudagraph"]
    assert [r.provenance["date"][:10] for r in bench.load_recorded_runs(tmp_path, view="eager")] == ["2026-01-01"]
    graph = bench.load_recorded_runs(tmp_path, view="cudagraph")
    assert [r.timer for r in graph] == ["do_bench_cudagraph"]
    assert bench.current_runs(every) == [every[0]] and bench.current_runs(every, "cudagraph") == [every[1]]
    with pytest.raises(ValueError, match="timing view"):
        bench.load_recorded_runs(tmp_path, view="graph")


def test_quack_is_skipped_here_with_a_clear_reason():
    """No quack-kernels on this machine (or no GPU): its rows are "skipped", saying which, never "failed"."""
    run = bench.run_sweep(4, [16], "bfloat16", ["copy", "quack"], timer=fixed_timer((1.0, 1.0, 1.0)),
                          command="pytest")
    quack = run.frame[run.frame.provider == "quack"]
    assert list(quack.status) == ["skipped", "skipped"]
    reason = quack.reason.iloc[0]
    import importlib.util
    if importlib.util.find_spec("quack") is None:
        assert describe(reason).startswith("quack-kernels is not installed")
    else:
        assert reason.code in (bench.NotTimed.NEEDS_NVIDIA, bench.NotTimed.NOT_IMPORTABLE)
    assert run.provenance["unavailable"]["quack"] == reason.to_json()
    assert bench.PROVIDERS["quack"].label == "QuACK"
    # its package versions sit beside torch's and triton's (None: not installed)
    assert "quack_kernels" in run.provenance and "nvidia_cutlass_dsl" in run.provenance
    assert run.provenance["quack_kernels"] == bench.package_version("quack-kernels")
    plain = bench.run_sweep(4, [16], "float32", ["torch"], directions=("forward",),
                            timer=fixed_timer((1.0, 1.0, 1.0)), command="pytest")
    assert "quack_kernels" not in plain.provenance


def test_the_full_sweep_takes_quack_when_it_is_available(monkeypatch, tmp_path):
    from softmax_bench import cli

    seen = {}

    def fake_sweep(M, Ns, dtype, providers, directions, timer=None, progress=None, command=None, **_):
        seen.setdefault("providers", list(providers))
        seen.setdefault("timers", []).append(timer)
        rows = [dict(provider=p, direction="forward", dtype=dtype, M=M, N=Ns[0], ms_p20=0.1, ms_median=0.1,
                     ms_p80=0.1, ms_min=0.1, ms_max=0.1, gbps=1.0, copy_ratio=1.0, status="ok", reason="")
                for p in providers]
        info = {"gpu": "NVIDIA H200", "date": "2026-12-01T10:20:30+00:00", "dtype": dtype, "M": M,
                "timer": bench.timer_kind(timer), "command": command}
        return bench.BenchmarkRun(pd.DataFrame(rows, columns=bench.COLUMNS), info)

    monkeypatch.setattr(runtime, "INTERPRETED", False)
    monkeypatch.setattr(runtime, "backend", lambda: Coded.of(runtime.Backend.GPU, name="pretend"))
    monkeypatch.setattr(bench, "run_sweep", fake_sweep)
    monkeypatch.setattr(bench, "available_providers", lambda: ["copy", "tuned", "torch", "quack"])
    argv = ["--sweep", "full", "--sizes", "1024", "--timer", "cudagraph", "--rep-ms", "30",
            "--out", str(tmp_path)]
    assert cli.main(argv) == 0
    assert seen["providers"] == ["copy", "tuned", "torch", "quack"]
    assert all(isinstance(t, bench.CudaGraphTimer) and t.rep_ms == 30 for t in seen["timers"])
    assert sorted(p.name for p in tmp_path.glob("*.json")) == [
        "nvidia-h200-full-cudagraph-bfloat16-20261201T1020.json", "nvidia-h200-full-cudagraph-float32-20261201T1020.json"]
    eager_dir = tmp_path / "eager"
    seen.clear()
    assert cli.main(["--sweep", "full", "--sizes", "1024", "--out", str(eager_dir)]) == 0
    assert all(isinstance(t, bench.DoBenchTimer) for t in seen["timers"])      # eager is the default
    assert sorted(p.name for p in eager_dir.glob("*.json")) == [
        "nvidia-h200-full-bfloat16-20261201T1020.json", "nvidia-h200-full-float32-20261201T1020.json"]
    assert cli.build_parser().parse_args(["--timer", "cudagraph"]).timer == "cudagraph"
    with pytest.raises(SystemExit):
        cli.build_parser().parse_args(["--timer", "graph"])


@pytest.mark.gpu
def test_on_a_gpu_the_cuda_graph_timer_times_and_a_failed_capture_leaves_cuda_usable(monkeypatch):
    """On the device: do_bench_cudagraph really runs; a provider that reads a value back to the host while
    being captured (illegal in a capture) is a "failed" row, and every provider after it is still timed."""
    def reads_back(x):
        y = torch.softmax(x, dim=-1)
        if y.sum().item() < 0:           # a copy to the host: not allowed while a CUDA graph is captured
            raise AssertionError("unreachable")
        return y

    monkeypatch.setitem(bench.PROVIDERS, "reads_back", Provider("reads_back", reads_back))
    run = bench.run_sweep(256, [1024], "float32", ["copy", "reads_back", "torch", "tuned"],
                          timer=bench.CudaGraphTimer(rep_ms=5), command="pytest gpu")
    rows = run.frame.set_index(["provider", "direction"])
    assert rows.loc[("reads_back", "forward"), "status"] == "failed"
    assert rows.loc[("reads_back", "forward"), "reason"].code is bench.NotTimed.GRAPH_CAPTURE
    for name in ("copy", "torch", "tuned"):
        for direction in ("forward", "backward"):
            row = rows.loc[(name, direction)]
            assert row.status == "ok", (name, direction, row.reason)
            assert 0 < row.ms_min <= row.ms_median <= row.ms_max
    assert not torch.cuda.is_current_stream_capturing()
    assert torch.cuda.current_stream() == torch.cuda.default_stream()
    assert run.provenance["timer"] == "do_bench_cudagraph"
