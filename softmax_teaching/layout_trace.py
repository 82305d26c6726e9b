"""One program's loads as memory transactions: the recorded elements (load_record) on the compiled lanes
(compiled_loads), grouped into requests, sectors and lines (transactions).

Codes for a load whose lanes cannot be drawn (`LoadTrace.missing`): "no_compiled_load" (the compiled kernel has
no plain `tt.load` at that line and tile: the compiler turned it into something else, an async copy say),
"not_blocked" (its layout is not a blocked one), "no_width" (no load instruction was found).
"""
from __future__ import annotations

import math
from dataclasses import dataclass

from softmax_core.hardware.gpu import GpuSpec
from softmax_teaching import transactions as tx
from softmax_teaching.compiled_loads import CompiledLoad, CompiledLoads, compiled_loads
from softmax_teaching.layout_case import Case
from softmax_teaching.load_record import RecordedLaunch, RecordedLoad
from softmax_teaching.recorded_loads import recorded

MISSING = ("no_compiled_load", "not_blocked", "no_width")


@dataclass(frozen=True)
class LoadTrace:
    recorded: RecordedLoad
    compiled: CompiledLoad | None
    layout: tx.BlockedLayout | None
    vector: int | None             # elements per lane per instruction
    requests: tx.Requests | None
    missing: str = ""              # why there are no requests (a code), "" when there are


@dataclass(frozen=True)
class KernelTrace:
    kernel: str                    # "planned" | "row_walk"
    launch: RecordedLaunch
    compiled: CompiledLoads
    loads: tuple[LoadTrace, ...]

    @property
    def totals(self) -> tx.Totals:
        return tx.totals([l.requests for l in self.loads if l.requests is not None])

    @property
    def kernel_name(self) -> str:
        return self.launch.kernel.split(":")[-1]


def trace_load(recorded: RecordedLoad, compiled: CompiledLoads) -> LoadTrace:
    load = compiled.for_load(recorded.line, recorded.tile_shape, recorded.caller)
    if load is None:
        return LoadTrace(recorded, None, None, None, None, "no_compiled_load")
    try:
        layout = tx.parse_blocked(load.layout)
    except ValueError:
        return LoadTrace(recorded, load, None, None, None, "not_blocked")
    if not load.width_bytes:
        return LoadTrace(recorded, load, layout, None, None, "no_width")
    run = layout.size_per_thread[layout.order[0]]
    vector = math.gcd(max(1, load.width_bytes // recorded.element_bytes), run)
    requests = tx.group_requests(recorded.offsets, recorded.mask, recorded.element_bytes, layout, vector)
    return LoadTrace(recorded, load, layout, vector, requests)


def kernel_traces(cases: list[tuple[Case, str]], gpu: GpuSpec, program: int = 0) -> list[KernelTrace]:
    """For each (case, kernel), the loads of `program` of the launch `sc.softmax` makes for the case on `gpu`
    (`kernel` "planned"; "row_walk": one program per reduced row instead), on the lanes of that kernel
    compiled for `gpu`. The records are made together (recorded_loads.recorded: one child process for all
    those this process cannot make itself)."""
    launches = recorded(cases, gpu, program)
    out = []
    for (case, kernel), launch in zip(cases, launches):
        compiled = compiled_loads(launch.compile_job(gpu.compile_target))
        out.append(KernelTrace(kernel, launch, compiled, tuple(trace_load(l, compiled) for l in launch.loads)))
    return out


def kernel_trace(case: Case, kernel: str, gpu: GpuSpec, program: int = 0) -> KernelTrace:
    """kernel_traces for one case."""
    return kernel_traces([(case, kernel)], gpu, program)[0]
