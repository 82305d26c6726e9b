"""Benchmarks: who is fast at which row length, measured honestly and saved with its provenance.

providers.py  the ways of computing softmax that are timed, and the copy roofline
harness.py    checking then timing each provider (the one-GPU lock, torch.compile's limits) and `run_sweep`
timers.py     the clocks (do_bench, a CUDA graph's replay, a wall clock) and what each measures
records.py    a run's table and provenance, saved as CSV + JSON and loaded back
chapter_claims.py  the chapter's Step 5 claims, each a verdict computed from a recorded run of its sweep
trust.py      how far a measured figure can be trusted: the one rule for the pages and the doc tables
"""
from softmax_bench.harness import (FULL_SWEEP_DTYPES, FULL_SWEEP_M, FULL_SWEEP_N, TUTORIAL_SWEEP_M, TUTORIAL_SWEEP_N,
                                        Inputs, compile_limits, exclusive_gpu, gbps, make_inputs, measure, mismatch,
                                        run_sweep, with_copy_ratio)
from softmax_bench.timers import (QUANTILES, TIMERS, CudaGraphTimer, DoBenchTimer, GraphCaptureError, Timer, Timing,
                                       WallClockTimer, default_timer, describe_timer, timer_figures, timer_kind,
                                       timing_of)
from softmax_bench.providers import (PEER_PACKAGES, PROVIDERS, NotDifferentiable, NotTimed, Provider, ProviderName,
                        autograd_backward, available_providers, get_provider, not_timed_by)
from softmax_bench.records import (COLUMNS, CUDAGRAPH, DO_BENCH, DO_BENCH_CUDAGRAPH, EAGER, GRAPH_ROOFLINE_LIMIT,
                      RECORD_VERSION, RECORDED_DIR, Clock, Method,
                      RENAMED_PROVIDERS, TIME_COLUMNS, TIMING_VIEWS, WALL_CLOCK, BenchmarkRun, current_runs,
                      csv_frame, free_stem, load_recorded_runs, load_run, package_version, provenance, save_run,
                      slower_graph_roofline, source_digest, timing_view)

__all__ = [
    "FULL_SWEEP_DTYPES", "FULL_SWEEP_M", "FULL_SWEEP_N", "QUANTILES", "TIMERS", "TUTORIAL_SWEEP_M",
    "TUTORIAL_SWEEP_N", "CudaGraphTimer", "DoBenchTimer", "GraphCaptureError", "Inputs", "Timer", "Timing",
    "WallClockTimer", "compile_limits", "default_timer", "describe_timer", "exclusive_gpu", "gbps", "make_inputs",
    "measure", "mismatch", "run_sweep", "timer_figures", "timer_kind", "timing_of", "with_copy_ratio",
    "PEER_PACKAGES", "PROVIDERS", "NotDifferentiable", "NotTimed", "Provider", "ProviderName", "autograd_backward",
    "available_providers", "get_provider", "not_timed_by",
    "COLUMNS", "CUDAGRAPH", "DO_BENCH", "DO_BENCH_CUDAGRAPH", "EAGER", "GRAPH_ROOFLINE_LIMIT", "RECORD_VERSION",
    "RECORDED_DIR", "Clock", "Method",
    "RENAMED_PROVIDERS", "TIME_COLUMNS", "TIMING_VIEWS", "WALL_CLOCK", "BenchmarkRun", "current_runs",
    "csv_frame", "free_stem", "load_recorded_runs", "load_run", "package_version", "provenance", "save_run", "slower_graph_roofline",
    "source_digest", "timing_view",
]
