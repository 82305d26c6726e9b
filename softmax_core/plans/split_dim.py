"""Plans whose programs each walk one part of a strided column tile's reduced axis (kernels/split_dim.py): the
chunk and column shape, how many parts a tile is cut into, and whether the parts meet between two launches or
wait for each other in one. Each shape is compiled for the GPU it is for.

Pure functions of layouts and a `GpuSpec`: nothing here touches a tensor or a device.
"""
from __future__ import annotations

from dataclasses import replace

import triton

from softmax_core.hardware.gpu import GpuSpec
from softmax_core.plans.any_dim import (CUT_INNER_BYTES, L2_SHARE, MAX_WARPS, REDUCE_MIN_BYTES, VALUES_PER_THREAD, cuts,
                                        launch_resources, narrowest_slab, pow2_floor, runtime_interpreted)
from softmax_core.plans.reasons import PlanReason, ReasonCode
from softmax_core.plans.strided import AnyDimPlan, ReductionLayout, slices_span_32_bits

# The shapes a program may take: (column bytes, chunk values forward; the backward holds y and dy, half as many
# values each). Each is compiled for the GPU (both launches), and the plan keeps the one whose resident programs
# hold the most bytes of their chunks per SM, the wider columns where two hold about as much (IN_FLIGHT_TIE): a
# 64-column bf16 chunk down a transposed view compiled to 233 registers where 32 columns took 127, so the widest
# column is not always the most in flight (docs/performance.md).
CUT_SHAPES = ((64, 2048), (128, 2048), (128, 4096), (256, 4096))
CUT_DEFAULT_SHAPE = (128, 4096)      # where nothing is compiled (the interpreter)
IN_FLIGHT_TIE = 0.9
# Enough parts that the GPU has CUT_PROGRAMS_PER_SM programs an SM; at most MAX_PARTS parts a tile (the words a
# program of the second launch gathers: 8 bytes per part per column).
CUT_PROGRAMS_PER_SM = 8
MAX_PARTS = 64


def plan_split_dim(layout: ReductionLayout, element_bytes: int, dtype_name: str, gpu: GpuSpec, direction: str,
                   *, written: ReductionLayout | None = None, transposing: bool = False, safe: bool = False,
                   compile: bool = True, column_bytes: int | None = None, values: int | None = None,
                   per_sm: int | None = None, num_warps: int | None = None,
                   waits: bool = False) -> AnyDimPlan | None:
    """The plan whose programs each walk one part of a column tile's reduced axis, twice, in two launches
    (kernels/split_dim.py), or None where it does not apply: float64 (the words hold float32), fewer than two
    parts, every shape spills, or (unless forced) where two passes are as fast (`cuts`). `column_bytes`, `values`,
    `per_sm` and `num_warps` force one shape (tuning sweeps); `transposing`: a side of the call steps down the
    reduced axis with unit stride, so a chunk spans at least REDUCE_MIN_BYTES of it. `waits`: one launch whose
    programs wait for their tile's other parts, each part small enough that the parts of the programs resident at
    once fit L2_SHARE of L2, so that each second read is L2's (a tuning sweep's opt-in: not yet timed)."""
    forced = any(v is not None for v in (column_bytes, values, per_sm, num_warps))
    if dtype_name == "float64" or not (forced or cuts(layout, element_bytes, direction)):
        return None
    judging = compile and not runtime_interpreted()
    half = 2 if direction == "backward" else 1
    if forced or not judging:
        shapes = ((column_bytes or CUT_DEFAULT_SHAPE[0], values or CUT_DEFAULT_SHAPE[1] // half),)
    else:
        shapes = tuple((b, v // half) for b, v in CUT_SHAPES)
    made = [_shaped(layout, element_bytes, dtype_name, gpu, direction, written, transposing, safe, b, v,
                    per_sm or CUT_PROGRAMS_PER_SM, num_warps, judging, waits) for b, v in shapes]
    made = [p for p in made if p is not None and (forced or not p.n_spills)]
    if not made or forced:
        return made[0] if made else None
    best = made[0]
    if judging:       # the widest columns among the shapes that hold about as much as the most
        held = [_bytes_in_flight(p, element_bytes) for p in made]
        best = max((ph for ph in zip(made, held) if ph[1] >= IN_FLIGHT_TIE * max(held)),
                   key=lambda ph: (ph[0].block_i, ph[1]))[0]
    reason = PlanReason.of(ReasonCode.ANY_DIM, block_o=1, block_i=min(best.block_i, layout.n_inner),
                           block_r=best.block_r, n_chunks=best.part_r // best.block_r, num_warps=best.num_warps,
                           num_programs=best.num_programs, word_values=1, why=ReasonCode.SLAB_CUT,
                           slab_values=narrowest_slab(layout, element_bytes),
                           max_values=best.block_r * best.block_i, inner_bytes=layout.n_inner * element_bytes,
                           cut_bytes=CUT_INNER_BYTES, parts=best.parts)
    return replace(best, reason=reason)


def _bytes_in_flight(plan: AnyDimPlan, element_bytes: int) -> float:
    """Bytes of their chunks the programs resident on one SM hold (y and dy backward): programs per SM as the
    occupancy rules give them for the compiled kernel, at most the grid's share of an SM."""
    from softmax_core.hardware.occupancy import occupancy

    per_sm = occupancy(plan.gpu, plan.n_regs, plan.n_shared, plan.num_warps, 1).programs_per_sm
    resident = min(per_sm, plan.num_programs / plan.gpu.multiprocessor_count)
    tensors = 2 if plan.direction == "backward" else 1
    return resident * plan.block_r * plan.block_i * element_bytes * tensors


def _shaped(layout, element_bytes, dtype_name, gpu, direction, written, transposing, safe, column_bytes, values,
            per_sm, num_warps, judging, waits=False) -> AnyDimPlan | None:
    """The cut plan of one shape (None where it gives fewer than two parts), compiled where `judging`: each
    launch, the registers and shared memory the larger of the two. Enough parts that `per_sm` programs an SM fill
    the GPU; where the parts wait for each other, also few enough chunks a part that the parts of the programs
    resident at once fit L2's share, and addressed by 32-bit offsets within a slice where every slice spans under
    2**31 elements: compiled offline with Triton 3.6 (the H200's) at seed 27182's strided draws, the waiting forms
    of 2,048-value chunks went from 150-215 registers to 128-168 (6 -> 8 programs an SM at 32-byte columns), while
    the two-launch form's were as often more as fewer (127 -> 168, 216 -> 168), so that form keeps 64-bit pointers."""
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
    if waits:
        tensors = 2 if direction == "backward" else 1
        part_bytes = L2_SHARE * (gpu.l2_mib or 0) * 2**20 / (per_sm * gpu.multiprocessor_count)
        chunks_per_part = min(chunks_per_part, pow2_floor(max(1, int(part_bytes // (br * bi * element_bytes
                                                                                     * tensors)))))
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
                                    word_values=1, why=ReasonCode.FORCED),
                      1, safe and direction == "forward", part_r=part_r, waits=waits,
                      offsets_32=waits and slices_span_32_bits(layout, written or layout))
    if not judging:
        return plan
    found = [launch_resources(plan, written, launch) for launch in plan.launches]
    return replace(plan, n_regs=max(r.n_regs for r in found), n_spills=max(r.n_spills for r in found),
                   n_shared=max(r.shared_bytes for r in found))
