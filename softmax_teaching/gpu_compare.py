"""One kernel and one matrix shape on every catalog GPU, side by side.

Each row is computed, never typed in: registers and shared memory from compiling the kernel for that GPU
(cached, so the second call is instant), programs per SM from the hardware's rules and from the chapter's
formula (softmax_core.hardware.occupancy), the grid the plan launches, and the time no kernel can beat on that GPU:
the bytes a single pass must move (softmax_core.traffic) divided by the GPU's memory bandwidth.
"""
from __future__ import annotations

from dataclasses import dataclass

import torch
import triton

from softmax_core.hardware.gpu import GpuSpec, gpu_catalog
from softmax_core.hardware.occupancy import Limiter
from softmax_core.hardware.dtypes import element_size
from softmax_core.traffic import bytes_moved
from softmax_core.plans.choose import plan_softmax
from softmax_core.plans.tutorial import plan_launch, tutorial_compile_job, tutorial_num_stages, tutorial_num_warps

KERNELS = ("tutorial", "tuned")


@dataclass(frozen=True)
class GpuComparison:
    gpu: GpuSpec
    kernel: str                      # "tutorial" (the chapter's wrapper) or "tuned" (softmax_core.softmax)
    path: str                        # tutorial: "rows"; tuned: the plan's path ("rows" | "tiled" | "split")
    n_regs: int
    n_spills: int
    shared_bytes: int
    num_warps: int
    toolchain: str                   # which compiler produced n_regs (counts differ between versions)
    programs_per_sm: int             # the hardware's rules
    chapter_programs_per_sm: int     # the chapter's formula
    limiter: Limiter                 # the hardware's limiter
    grid: int                        # programs the plan launches
    resident_programs: int           # programs the GPU runs at once: SMs x programs_per_sm
    bytes_moved: int                 # one read of the input, one write of the output
    time_floor_us: float | None      # bytes_moved / bandwidth; None: the catalog has no bandwidth figure
    fits: bool                       # False: not even one program fits on an SM
    limiters: tuple[Limiter, ...] = ()   # the rows, or every SM limit allowing programs_per_sm (a tie: 2+)

    @property
    def agrees(self) -> bool:
        return self.programs_per_sm == self.chapter_programs_per_sm


def compare_gpus(kernel: str, n_rows: int, n_cols: int, dtype: torch.dtype = torch.float32,
                 gpus: tuple[GpuSpec, ...] | None = None, recorded=None) -> tuple[GpuComparison, ...]:
    """`kernel` ("tutorial" or "tuned") for an n_rows x n_cols matrix of `dtype` on each of `gpus`
    (default: every catalog GPU), in catalog order. `recorded(job, gpu)`: a GPU's own recorded compile of
    the tutorial kernel's job, or None (then the local compile's figures stand)."""
    if kernel not in KERNELS:
        raise ValueError(f"kernel must be one of {KERNELS}, got {kernel!r}")
    for name, value in (("n_rows", n_rows), ("n_cols", n_cols)):
        if not isinstance(value, int) or isinstance(value, bool) or value < 1:
            raise ValueError(f"{name} must be a positive integer, got {value!r}")
    moved = bytes_moved(n_rows, n_cols, element_size(dtype))
    rows = []
    for gpu in gpus if gpus is not None else gpu_catalog():
        if kernel == "tutorial":
            block = triton.next_power_of_2(n_cols)
            job = tutorial_compile_job(block, tutorial_num_warps(block), tutorial_num_stages(gpu), dtype, gpu)
            plan = plan_launch(n_rows, n_cols, dtype, gpu, resources=recorded(job, gpu) if recorded else None)
            occ, res_regs, res_spills, shared, warps = (plan.occupancy, plan.n_regs, plan.n_spills,
                                                        plan.shared_bytes, plan.num_warps)
            path, grid, fits, chain = "rows", plan.num_programs, plan.fits, plan.toolchain
        else:
            plan = plan_softmax(n_rows, n_cols, dtype, gpu)
            occ, res = plan.occupancy, plan.resources
            res_regs, res_spills, shared, warps = res.n_regs, res.n_spills, res.shared_bytes, plan.num_warps
            path, grid, fits, chain = plan.path, plan.num_programs, occ.programs_per_sm > 0, res.toolchain
        floor = moved / (gpu.memory_bandwidth_gbps * 1e3) if gpu.memory_bandwidth_gbps else None
        rows.append(GpuComparison(gpu, kernel, path, res_regs, res_spills, shared, warps, chain,
                                  occ.programs_per_sm, occ.chapter_programs_per_sm, occ.limiter, grid,
                                  gpu.multiprocessor_count * occ.programs_per_sm, moved, floor, fits,
                                  (Limiter.ROWS,) if occ.limiter == Limiter.ROWS else occ.limiters))
    return tuple(rows)
