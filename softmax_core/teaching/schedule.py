"""Models of a launch, for pictures: which SM each program lands on, and how num_stages overlaps one
program's loads with its math. Neither is measured (the hardware does not report them); both say so.
"""
from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Placement:
    program: int
    sm: int
    slot: int          # which of the SM's program slots it occupies
    wave: int          # 0: starts at launch; 1, 2, ...: waits for a slot to free up


def program_placement(num_programs: int, multiprocessor_count: int, programs_per_sm: int) -> tuple[Placement, ...]:
    """Where each program of the grid runs, assuming the block scheduler deals programs out to SMs in
    order, one per SM per round, until every SM holds programs_per_sm of them; programs beyond that wait
    for a later wave. (Real schedulers promise no order; this is the usual picture.)"""
    if num_programs < 0 or multiprocessor_count < 1:
        raise ValueError("need num_programs >= 0 and at least one SM")
    per_sm = max(programs_per_sm, 1)
    slots = multiprocessor_count * per_sm
    placements = []
    for p in range(num_programs):
        wave, within = divmod(p, slots)
        slot, sm = divmod(within, multiprocessor_count)
        placements.append(Placement(p, sm, slot, wave))
    return tuple(placements)


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
