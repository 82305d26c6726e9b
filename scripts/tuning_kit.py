"""What the H200 tuning scripts (scripts/h200_*.py) share: sweep lists narrowed from the environment, the
timer with its spread, and a rows-path plan reshaped. Not a test; nothing here runs a kernel by itself."""
from __future__ import annotations

import dataclasses
import os

import triton


def env_list(name: str, default, cast=int) -> list:
    """A comma-separated list from the environment variable `name` (each value cast), else `default`."""
    value = os.environ.get(name)
    return [cast(v) for v in value.split(",")] if value else list(default)


def bench(fn) -> tuple[float, float, float]:
    """(p20, median, p80) milliseconds: do_bench with the L2 flushed before every call."""
    return tuple(triton.testing.do_bench(fn, warmup=10, rep=40, quantiles=[0.2, 0.5, 0.8]))


def rows_variant(plan, rows: int, warps: int):
    """A rows-path plan reshaped to `rows` rows per program on `warps` warps, one program per block of rows."""
    return dataclasses.replace(plan, rows_per_program=rows, num_warps=warps,
                               num_programs=triton.cdiv(plan.n_rows, rows))
