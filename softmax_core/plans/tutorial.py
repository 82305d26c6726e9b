"""The occupancy-aware launch plan: how many programs to launch, and why.

The tutorial's wrapper asks the compiler what one program costs (registers, shared memory), asks the GPU
what one SM has, and launches as many persistent programs as fit at once on every SM. This module is
that reasoning as a pure function of a `GpuSpec` and the kernel's real resources.
"""
from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

import torch
import triton

from softmax_core.hardware import dtypes
from softmax_core.hardware.compile import CompileJob, KernelResources, kernel_resources
from softmax_core.hardware.gpu import GpuSpec, default_gpu
from softmax_core.hardware.occupancy import Limiter, Occupancy, occupancy
from softmax_core.hardware.signatures import kernel_signature
from softmax_core.plans.reasons import PlanReason, ReasonCode
from softmax_core.words import Coded

TUTORIAL_KERNEL = "softmax_core.kernels.tutorial:tutorial_softmax_kernel"

# The tutorial's heuristics, as ordered tables: the first row whose threshold BLOCK_SIZE reaches wins.
# Wider rows get more warps, so that each thread holds a bounded number of the row's values.
TUTORIAL_NUM_WARPS = ((4096, 16), (2048, 8), (0, 4))
# More pipeline stages keep more rows in flight but each stage buffers a row in shared memory;
# the tutorial affords 4 only on GPUs where one program may use more than 200,000 B of shared memory
# (triton's max_shared_mem, which the tutorial reads as SIZE_SMEM).
TUTORIAL_STAGES_SHARED_THRESHOLD = 200_000
TUTORIAL_NUM_STAGES = (4, 2)


def tutorial_num_warps(block_size: int) -> int:
    return next(warps for threshold, warps in TUTORIAL_NUM_WARPS if block_size >= threshold)


def tutorial_num_stages(gpu: GpuSpec) -> int:
    large, small = TUTORIAL_NUM_STAGES
    return large if gpu.max_shared_mem > TUTORIAL_STAGES_SHARED_THRESHOLD else small


@dataclass(frozen=True)
class LaunchPlan:
    gpu: GpuSpec
    n_rows: int
    n_cols: int
    dtype: str
    block_size: int
    num_warps: int
    num_stages: int
    n_regs: int
    n_spills: int
    shared_bytes: int
    # The chapter's formula decides this wrapper's grid (it is what the chapter teaches):
    reg_occupancy: int
    sram_occupancy: int | None
    programs_per_sm: int
    num_programs: int
    limiter: Limiter
    occupancy_rule: Coded           # the chapter's formula with these numbers (softmax_core.words says it)
    resources_how: Coded            # where n_regs and shared_bytes came from (compile.RegisterSource)
    fits: bool                      # False: not even one program fits on an SM
    reason: PlanReason              # why this grid (or why none fits), as a code and its figures
    occupancy: Occupancy | None = None  # both answers: the hardware's rules and the chapter's formula
    toolchain: str = ""                 # which compiler produced n_regs (compile.toolchain)

    @property
    def hardware_programs_per_sm(self) -> int:
        """What the GPU really runs at once (softmax_core.hardware.occupancy); may be fewer than programs_per_sm."""
        return self.occupancy.programs_per_sm

    @property
    def grid(self) -> tuple[int, int, int]:
        return (self.num_programs, 1, 1)

    @property
    def rows_per_program(self) -> float:
        return self.n_rows / self.num_programs if self.num_programs else float("inf")


def tutorial_compile_job(block_size: int, num_warps: int, num_stages: int, dtype: torch.dtype, gpu: GpuSpec,
                     **flags) -> CompileJob:
    """The tutorial kernel's specialisation for one row width and dtype, for `gpu`."""
    # i32 strides: what a launch passes for a matrix under 2**31 elements (Triton types a small int i32).
    signature, constexprs = kernel_signature(TUTORIAL_KERNEL, dtypes.of(dtype).triton_pointer, "i32",
                                             {"BLOCK_SIZE": block_size, "num_stages": num_stages, **flags},
                                             pointers={"trace_ptr": "*fp32"})
    return CompileJob(TUTORIAL_KERNEL, signature, constexprs, num_warps, num_stages, gpu.compile_target,
                      on_device=gpu.live)


def _check_shape(n_rows: int, n_cols: int) -> None:
    for name, value in (("n_rows", n_rows), ("n_cols", n_cols)):
        if not isinstance(value, int) or isinstance(value, bool) or value < 1:
            raise ValueError(f"{name} must be a positive integer, got {value!r}")


def plan_launch(n_rows: int, n_cols: int, dtype: torch.dtype = torch.float32, gpu: GpuSpec | None = None,
                *, resources: KernelResources | None = None) -> LaunchPlan:
    """Plan the tutorial kernel's launch for an n_rows x n_cols matrix on `gpu` (default: this machine's GPU,
    else the catalog's H200). `resources` skips the compile (for what-if questions and tests)."""
    _check_shape(n_rows, n_cols)
    dtypes.of(dtype)  # a TypeError naming the choices before any compile
    return _plan_launch(n_rows, n_cols, dtype, gpu or default_gpu(), resources)


@lru_cache(maxsize=4096)
def _plan_launch(n_rows: int, n_cols: int, dtype: torch.dtype, gpu: GpuSpec,
                 resources: KernelResources | None) -> LaunchPlan:
    """Plans are pure values: the same question gets the same (cached) answer, so a wrapper that
    plans on every call, as the tutorial's does, costs nothing after the first."""
    block_size = triton.next_power_of_2(n_cols)
    num_warps = tutorial_num_warps(block_size)
    num_stages = tutorial_num_stages(gpu)
    if resources is None:
        resources = kernel_resources(tutorial_compile_job(block_size, num_warps, num_stages, dtype, gpu))
    occ = occupancy(gpu, resources.n_regs, resources.shared_bytes, num_warps, n_rows)
    # The tutorial's grid is the chapter's formula (it is what the chapter teaches); occ also carries the
    # hardware's answer (plan.occupancy, plan.hardware_programs_per_sm) for the page to show beside it.
    fits = occ.chapter_programs_per_sm > 0
    reason = _reason(gpu, block_size, num_warps, resources, occ, fits)
    return LaunchPlan(gpu=gpu, n_rows=n_rows, n_cols=n_cols, dtype=dtypes.name(dtype), block_size=block_size,
                      num_warps=num_warps, num_stages=num_stages, n_regs=resources.n_regs,
                      n_spills=resources.n_spills, shared_bytes=resources.shared_bytes,
                      reg_occupancy=occ.chapter_reg_occupancy, sram_occupancy=occ.chapter_sram_occupancy,
                      programs_per_sm=occ.chapter_programs_per_sm, num_programs=occ.chapter_num_programs,
                      limiter=occ.chapter_limiter, occupancy_rule=occ.chapter_rule, resources_how=resources.how,
                      fits=fits, reason=reason, occupancy=occ, toolchain=resources.toolchain)


def clear_plan_cache() -> None:
    """Forget every plan computed so far (for tests that must see plans computed afresh)."""
    _plan_launch.cache_clear()


def _reason(gpu: GpuSpec, block_size: int, num_warps: int, res: KernelResources, occ: Occupancy,
            fits: bool) -> PlanReason:
    if not fits:
        if occ.chapter_sram_occupancy == 0:
            return PlanReason.of(ReasonCode.TUTORIAL_OVER_SHARED_MEMORY, shared_bytes=res.shared_bytes,
                                 block_size=block_size, gpu=gpu.name, max_shared_mem=gpu.max_shared_mem)
        return PlanReason.of(ReasonCode.TUTORIAL_OVER_REGISTERS, n_regs=res.n_regs,
                             threads=gpu.warp_size * num_warps, max_num_regs=gpu.max_num_regs)
    return PlanReason.of(ReasonCode.TUTORIAL_FITS, reg_occupancy=occ.chapter_reg_occupancy,
                         sram_occupancy=occ.chapter_sram_occupancy, shared_bytes=res.shared_bytes,
                         max_shared_mem=gpu.max_shared_mem, programs_per_sm=occ.chapter_programs_per_sm,
                         sms=gpu.multiprocessor_count, limiter=occ.chapter_limiter,
                         num_programs=occ.chapter_num_programs)
