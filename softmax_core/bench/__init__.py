"""Benchmarks: who is fast at which row length, measured honestly and saved with its provenance.

providers.py  the ways of computing softmax that are timed, and the copy roofline
harness.py    checking, timing (timers, the one-GPU lock, torch.compile's limits) and `run_sweep`
records.py    a run's table and provenance, saved as CSV + JSON and loaded back
"""
from .harness import (FULL_SWEEP_DTYPES, FULL_SWEEP_M, FULL_SWEEP_N, TUTORIAL_SWEEP_M, TUTORIAL_SWEEP_N,
                      DoBenchTimer, Timer, Timing, WallClockTimer, compile_limits, default_timer, describe_timer,
                      exclusive_gpu, gbps, measure, mismatch, run_sweep, timing_of, with_copy_ratio)
from .providers import (PROVIDERS, NotDifferentiable, Provider, autograd_backward, available_providers,
                        get_provider)
from .records import (COLUMNS, RECORDED_DIR, RENAMED_PROVIDERS, TIME_COLUMNS, BenchmarkRun, load_recorded_runs,
                      load_run, provenance, save_run, source_digest)

__all__ = [
    "FULL_SWEEP_DTYPES", "FULL_SWEEP_M", "FULL_SWEEP_N", "TUTORIAL_SWEEP_M", "TUTORIAL_SWEEP_N",
    "DoBenchTimer", "Timer", "Timing", "WallClockTimer", "compile_limits", "default_timer", "describe_timer",
    "exclusive_gpu", "gbps", "measure", "mismatch", "run_sweep", "timing_of", "with_copy_ratio",
    "PROVIDERS", "NotDifferentiable", "Provider", "autograd_backward", "available_providers", "get_provider",
    "COLUMNS", "RECORDED_DIR", "RENAMED_PROVIDERS", "TIME_COLUMNS", "BenchmarkRun", "load_recorded_runs",
    "load_run", "provenance", "save_run", "source_digest",
]
