"""Plans that cut a strided tile's reduced axis into parts (kernels/split_dim.py): the column tile, the chunk a
program loads at a step, and how many parts, so that a tensor with few column tiles still fills the GPU.

A transposed view of one or two outer slices has a few hundred column tiles of 32-128 bytes; the two-pass plan
gives each tile one program, so the GPU holds two or three programs an SM, each with one chunk in flight: latency
bound, 0.26-0.42x copy on the class sweep's draws (docs/performance.md). Cutting each tile's reduced axis into
parts gives every SM PROGRAMS_PER_SM programs of small register footprint, each streaming its part twice.

Pure functions of a layout and a `GpuSpec`, as plans/any_dim.py's.
"""
from __future__ import annotations

from dataclasses import replace

import triton

from softmax_core.hardware.gpu import GpuSpec
from softmax_core.plans.any_dim import (MAX_WARPS, ONE_PASS_MIN_BYTES, REDUCE_MIN_BYTES, SPLIT_DIM_KERNEL,
                                        VALUES_PER_THREAD, AnyDimPlan, ReductionLayout,
                                        pow2_floor, runtime_interpreted)
from softmax_core.plans.kernel_jobs import any_dim_compile_job
from softmax_core.plans.reasons import PlanReason, ReasonCode

# The shapes a program may take: (column bytes, chunk values forward; the backward holds y and dy, half as many
# values each). Each is compiled for the GPU (both launches), and the plan keeps the one whose resident programs
# hold the most bytes of their chunks per SM, the wider columns where two hold about as much (IN_FLIGHT_TIE): a
# 64-column bf16 chunk walked down a transposed view compiled to 233 registers (one or two programs an SM) where
# 32 columns took 127, so the widest column is not always the most in flight. The rule the rows backward's
# tuning found (docs/performance.md: speed follows the bytes in flight), predicted here before the strided
# classes were timed.
SHAPES = ((64, 2048), (128, 2048), (128, 4096), (256, 4096))
DEFAULT_SHAPE = (128, 4096)          # where nothing is compiled (the interpreter)
IN_FLIGHT_TIE = 0.9
# Where the cut plan is faster than two passes: the forward over an inner run shorter than CUT_INNER_BYTES (a cache
# line). Timed on the strided classes' fit seed 2727 (assets/benchmarks/tuning/h100-split-dim-tune-2727-20261206.csv,
# an H100: no H200 could be had), at inner runs of 16-38 bytes cut tiles ran 0.36, 0.56 and 0.41x copy where two
# passes ran 0.29, 0.48 and 0.31; elsewhere (wider runs, transposed views, every backward) two passes ran as fast
# or faster (up to 0.74 against 0.45). docs/performance.md, "Strided tiles cut into parts".
CUT_INNER_BYTES = 128
# Enough parts that the GPU has PROGRAMS_PER_SM programs an SM; at most MAX_PARTS parts a tile (the words a
# program of the second launch gathers: 8 bytes per part per column).
PROGRAMS_PER_SM = 8
MAX_PARTS = 64


def plan_split_dim(layout: ReductionLayout, element_bytes: int, dtype_name: str, gpu: GpuSpec, direction: str,
                   *, written: ReductionLayout | None = None, transposing: bool = False, safe: bool = False,
                   compile: bool = True, column_bytes: int | None = None, values: int | None = None,
                   per_sm: int | None = None, num_warps: int | None = None) -> AnyDimPlan | None:
    """The plan whose programs each walk one part of a column tile's reduced axis, twice, in two launches
    (kernels/split_dim.py), or None where it does not apply: float64 (the words hold float32), fewer than two
    parts, every shape spills, or (unless forced) where two passes are as fast (`cuts`). `column_bytes`, `values`,
    `per_sm` and `num_warps` force one shape (tuning sweeps); `transposing`: a side of the call steps down the
    reduced axis with unit stride, so a chunk spans at least REDUCE_MIN_BYTES of it."""
    forced = any(v is not None for v in (column_bytes, values, per_sm, num_warps))
    if dtype_name == "float64" or not (forced or cuts(layout, element_bytes, direction)):
        return None
    judging = compile and not runtime_interpreted()
    if forced or not judging:
        shapes = ((column_bytes or DEFAULT_SHAPE[0], values or DEFAULT_SHAPE[1] // (2 if direction == "backward"
                                                                                  else 1)),)
    else:
        shapes = tuple((b, v // (2 if direction == "backward" else 1)) for b, v in SHAPES)
    made = [_shaped(layout, element_bytes, dtype_name, gpu, direction, written, transposing, safe, b, v,
                    per_sm or PROGRAMS_PER_SM, num_warps, judging) for b, v in shapes]
    made = [p for p in made if p is not None and (forced or not p.n_spills)]
    if not made or forced:
        return made[0] if made else None
    held = [_bytes_in_flight(p, element_bytes) if judging else 0.0 for p in made]
    # the widest columns among the shapes that hold about as much as the most
    best = max((p for p, h in zip(made, held) if h >= IN_FLIGHT_TIE * max(held)),
               key=lambda p: (p.block_i, held[made.index(p)]))
    parts = best.parts
    narrowest = min(triton.next_power_of_2(layout.n_inner), max(1, pow2_floor(ONE_PASS_MIN_BYTES // element_bytes)))
    reason = PlanReason.of(ReasonCode.ANY_DIM, block_o=1, block_i=min(best.block_i, layout.n_inner),
                           block_r=best.block_r,
                           n_chunks=best.part_r // best.block_r, num_warps=best.num_warps,
                           num_programs=best.num_programs, why=ReasonCode.SLAB_CUT,
                           slab_values=triton.next_power_of_2(layout.n_reduce) * narrowest,
                           max_values=best.block_r * best.block_i, inner_bytes=layout.n_inner * element_bytes,
                           line_bytes=CUT_INNER_BYTES, parts=parts)
    return replace(best, reason=reason)


def cuts(layout: ReductionLayout, element_bytes: int, direction: str) -> bool:
    """Whether cutting the tiles into parts is faster than two passes (measured; CUT_INNER_BYTES): the forward
    over an inner run shorter than a cache line."""
    return direction == "forward" and layout.n_inner * element_bytes < CUT_INNER_BYTES


def _bytes_in_flight(plan: AnyDimPlan, element_bytes: int) -> float:
    """Bytes of their chunks the programs resident on one SM hold (y and dy backward): programs per SM as the
    occupancy rules give them for the compiled kernel, at most the grid's share of an SM."""
    from softmax_core.hardware.occupancy import occupancy

    per_sm = occupancy(plan.gpu, plan.n_regs, plan.n_shared, plan.num_warps, 1).programs_per_sm
    resident = min(per_sm, plan.num_programs / plan.gpu.multiprocessor_count)
    tensors = 2 if plan.direction == "backward" else 1
    return resident * plan.block_r * plan.block_i * element_bytes * tensors


def _shaped(layout, element_bytes, dtype_name, gpu, direction, written, transposing, safe, column_bytes, values,
            per_sm, num_warps, judging) -> AnyDimPlan | None:
    """The cut plan of one shape (None where it gives fewer than two parts), compiled where `judging`: both
    launches, the registers and shared memory the larger of the two."""
    inner_pow2 = triton.next_power_of_2(layout.n_inner)
    reduce_pow2 = triton.next_power_of_2(layout.n_reduce)
    bi = min(inner_pow2, max(1, pow2_floor(column_bytes // element_bytes)))
    br = min(reduce_pow2, max(1, pow2_floor(values // bi)))
    if transposing:
        br = min(reduce_pow2, max(br, REDUCE_MIN_BYTES // element_bytes))
    n_chunks = triton.cdiv(layout.n_reduce, br)
    n_tiles = layout.n_outer * triton.cdiv(layout.n_inner, bi)
    wanted_parts = triton.cdiv(per_sm * gpu.multiprocessor_count, n_tiles)
    chunks_per_part = pow2_floor(max(1, n_chunks // wanted_parts))
    while triton.cdiv(n_chunks, chunks_per_part) > MAX_PARTS:
        chunks_per_part *= 2
    part_r = br * chunks_per_part
    parts = triton.cdiv(layout.n_reduce, part_r)
    if parts < 2:
        return None
    warps = num_warps or max(1, min(MAX_WARPS, triton.next_power_of_2(
        triton.cdiv(br * bi, VALUES_PER_THREAD[direction] * 32))))
    plan = AnyDimPlan(gpu, direction, layout, dtype_name, bi, br, False, warps, n_tiles * parts,
                      PlanReason.of(ReasonCode.ANY_DIM, block_o=1, block_i=min(bi, layout.n_inner), block_r=br,
                                    n_chunks=chunks_per_part, num_warps=warps, num_programs=n_tiles * parts,
                                    why=ReasonCode.FORCED),
                      1, safe and direction == "forward", part_r=part_r)
    if not judging:
        return plan
    from softmax_core.hardware.compile import kernel_resources

    found = [kernel_resources(any_dim_compile_job(layout, written or layout, dtype_name, gpu, direction,
                                                  launch, warps, SPLIT_DIM_KERNEL[direction],
                                                  {"slots_ptr": "*i64"}))
             for launch in plan.launches]
    return replace(plan, n_regs=max(r.n_regs for r in found), n_spills=max(r.n_spills for r in found),
                   n_shared=max(r.shared_bytes for r in found))
