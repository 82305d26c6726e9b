"""A schematic of num_stages: how software pipelining overlaps one program's loads with its math. Not
measured (the hardware does not report it); the pages say so."""
from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Span:
    iteration: int
    phase: str          # "load" | "compute" | "store"
    start: float
    end: float


def pipeline_timeline(n_iterations: int, num_stages: int, load_time: float, compute_time: float = 1.0,
                      store_time: float = 1.0) -> tuple[Span, ...]:
    """A schematic of one program's loop under software pipelining.

    With num_stages = s the compiler keeps up to s - 1 future rows' loads in flight while the current row
    is computed: the load for iteration j may start once the buffer of iteration j - s is free (its math
    is done), and no earlier than the previous load's start. Math waits for its own load and for the
    previous row's math. Stores are issued after the math and do not block. With s = 1 nothing overlaps.
    Times are in units of `compute_time`; the durations are the caller's illustration, not measurements.
    """
    if n_iterations < 0 or num_stages < 1 or min(load_time, compute_time, store_time) < 0:
        raise ValueError("need n_iterations >= 0, num_stages >= 1 and non-negative durations")
    spans: list[Span] = []
    load_start: list[float] = []
    compute_end: list[float] = []
    for j in range(n_iterations):
        earliest = load_start[-1] if load_start else 0.0
        if j >= num_stages:
            earliest = max(earliest, compute_end[j - num_stages])
        load_start.append(earliest)
        load_end = earliest + load_time
        start = max(load_end, compute_end[-1] if compute_end else 0.0)
        compute_end.append(start + compute_time)
        spans += [Span(j, "load", earliest, load_end), Span(j, "compute", start, start + compute_time),
                  Span(j, "store", start + compute_time, start + compute_time + store_time)]
    return tuple(spans)
