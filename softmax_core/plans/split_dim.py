"""Plans that cut a strided tile's reduced axis into parts (kernels/split_dim.py): the column tile, the chunk a
program loads at a step, and how many parts, so that a tensor with few column tiles still fills the GPU.

A transposed view of one or two outer slices has a few hundred column tiles of 32-128 bytes; the two-pass plan
gives each tile one program, so the GPU holds two or three programs an SM, each with one chunk in flight: latency
bound, 0.26-0.42x copy on the class sweep's draws (docs/performance.md). Cutting each tile's reduced axis into
parts gives every SM PROGRAMS_PER_SM programs of small register footprint, each streaming its part twice.

Pure functions of a layout and a `GpuSpec`, as plans/any_dim.py's.
"""
from __future__ import annotations

import triton

from softmax_core.hardware.gpu import GpuSpec
from softmax_core.plans.any_dim import (MAX_WARPS, ONE_PASS_MIN_BYTES, REDUCE_MIN_BYTES, SPLIT_DIM_KERNEL,
                                        VALUES_PER_THREAD, AnyDimPlan, ReductionLayout,
                                        pow2_floor, runtime_interpreted, split_dim_constexprs)
from softmax_core.plans.kernel_jobs import any_dim_compile_job
from softmax_core.plans.reasons import PlanReason, ReasonCode

# Starting values, to be fitted by bench_tools/record/shared_dim_tune.py's parts variants: a chunk of CHUNK_VALUES
# values (forward; the backward holds y and dy, half as many) on columns of COLUMN_BYTES, and enough parts that
# the GPU has PROGRAMS_PER_SM programs an SM; at most MAX_PARTS parts a tile (the words a program of the second
# launch gathers: 8 bytes per part per column).
CHUNK_VALUES = {"forward": 4096, "backward": 2048}
COLUMN_BYTES = 128
PROGRAMS_PER_SM = 8
MAX_PARTS = 64


def plan_split_dim(layout: ReductionLayout, element_bytes: int, dtype_name: str, gpu: GpuSpec, direction: str,
                   *, written: ReductionLayout | None = None, transposing: bool = False, safe: bool = False,
                   compile: bool = True, column_bytes: int | None = None, values: int | None = None,
                   per_sm: int | None = None, num_warps: int | None = None) -> AnyDimPlan | None:
    """The plan whose programs each walk one part of a column tile's reduced axis, twice, in two launches
    (kernels/split_dim.py), or None where it does not apply: float64 (the words hold float32), fewer than two
    parts, or a kernel that spills. `column_bytes`, `values`, `per_sm` and `num_warps` override the constants
    (tuning sweeps); `transposing`: a side of the call steps down the reduced axis with unit stride, so a chunk
    spans at least REDUCE_MIN_BYTES of it."""
    if dtype_name == "float64":
        return None
    forced = any(v is not None for v in (column_bytes, values, per_sm, num_warps))
    inner_pow2 = triton.next_power_of_2(layout.n_inner)
    reduce_pow2 = triton.next_power_of_2(layout.n_reduce)
    bi = min(inner_pow2, max(1, pow2_floor((column_bytes or COLUMN_BYTES) // element_bytes)))
    br = min(reduce_pow2, max(1, pow2_floor((values or CHUNK_VALUES[direction]) // bi)))
    if transposing:
        br = min(reduce_pow2, max(br, REDUCE_MIN_BYTES // element_bytes))
    n_chunks = triton.cdiv(layout.n_reduce, br)
    n_tiles = layout.n_outer * triton.cdiv(layout.n_inner, bi)
    wanted_parts = triton.cdiv((per_sm or PROGRAMS_PER_SM) * gpu.multiprocessor_count, n_tiles)
    chunks_per_part = pow2_floor(max(1, n_chunks // wanted_parts))
    while triton.cdiv(n_chunks, chunks_per_part) > MAX_PARTS:
        chunks_per_part *= 2
    part_r = br * chunks_per_part
    parts = triton.cdiv(layout.n_reduce, part_r)
    if parts < 2:
        return None
    warps = num_warps or max(1, min(MAX_WARPS, triton.next_power_of_2(
        triton.cdiv(br * bi, VALUES_PER_THREAD[direction] * 32))))
    res = None
    if compile and not runtime_interpreted():
        from softmax_core.hardware.compile import kernel_resources

        job = any_dim_compile_job(layout, written or layout, dtype_name, gpu, direction,
                                  split_dim_constexprs(direction, br, bi, part_r, parts, safe), warps,
                                  SPLIT_DIM_KERNEL[direction], {"slots_ptr": "*i64"})
        res = kernel_resources(job)
        if res.n_spills > 0 and not forced:
            return None
    narrowest = min(inner_pow2, max(1, pow2_floor(ONE_PASS_MIN_BYTES // element_bytes)))
    why = (dict(why=ReasonCode.FORCED) if forced else
           dict(why=ReasonCode.SLAB_CUT, slab_values=reduce_pow2 * narrowest, max_values=br * bi, tiles=n_tiles,
                parts=parts))
    reason = PlanReason.of(ReasonCode.ANY_DIM, block_o=1, block_i=bi, block_r=br, n_chunks=chunks_per_part,
                           num_warps=warps, num_programs=n_tiles * parts, **why)
    return AnyDimPlan(gpu, direction, layout, dtype_name, bi, br, False, warps, n_tiles * parts, reason, 1,
                      safe and direction == "forward", res.n_regs if res else None, res.n_spills if res else 0,
                      part_r=part_r)
