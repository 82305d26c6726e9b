"""Plans whose programs share a strided tile's reduced axis (kernels/shared_dim.py): the piece each program holds,
how many programs share a tile, and how many tiles are in flight so that every program of a group runs at once.
A tuning sweep's opt-in (the fitted plan_any_dim never takes it); plan_shared_dim says what was measured.
"""
from __future__ import annotations

from dataclasses import replace

import triton

from softmax_core.hardware.gpu import GpuSpec
from softmax_core.plans.any_dim import MAX_WARPS, pow2_floor, runtime_interpreted
from softmax_core.plans.kernel_jobs import launch_resources
from softmax_core.plans.strided import AnyDimPlan, ReductionLayout
from softmax_core.plans.reasons import PlanReason, ReasonCode

# A slab too large for one program can be shared by `split` programs that run at once (kernels/shared_dim.py; a
# tuning sweep's opt-in, see plan_shared_dim): each holds a piece of SHARED_TILE_VALUES values (columns by the
# reduced indices of its part), on warps that give each thread SHARED_VALUES_PER_THREAD; the columns are as wide as
# SHARED_INNER_BYTES allows (widest first, a cache line down to a sector) while the words a program gathers from its
# peers (8 bytes per peer per column) stay within GATHER_SHARE of the bytes of its piece. Starting values, not yet
# fitted (bench_tools/record/shared_dim_tune.py is the sweep that would fit them).
SHARED_TILE_VALUES = {"forward": 8192, "backward": 4096}
SHARED_VALUES_PER_THREAD = 32
SHARED_INNER_BYTES = (128, 64, 32)
GATHER_SHARE = 0.25
MAX_SHARED_SPLIT = 64


def plan_shared_dim(layout: ReductionLayout, element_bytes: int, dtype_name: str, gpu: GpuSpec, direction: str,
                    *, written: ReductionLayout | None = None, safe: bool = False, compile: bool = True,
                    values: int | None = None, nbytes: int | None = None,
                    num_warps: int | None = None) -> AnyDimPlan | None:
    """The plan whose programs share each column tile's reduced axis (kernels/shared_dim.py), or None where it
    cannot run: float64 (the words it exchanges hold float32), a GPU that is not NVIDIA's, more than
    MAX_SHARED_SPLIT programs a tile, or a piece that spills or does not fit with its peers on the GPU.
    Not taken by the fitted plan. On the H200 (triton 3.6, assets/benchmarks/tuning/h200-shared-dim-tune-20261202-2,
    kept launches) its pieces compile to 105-255 registers, one or two programs per SM, and it ran 0.21-0.53x copy:
    ahead of the fitted two passes at one shape of six (a 1 x 11719 x 5333 float32 transposed view, 0.46 against
    0.38), behind at the 2-byte ones (0.21-0.32 against 0.34-0.45). And one forced variant there returned NaN
    where torch did not (6 in ...-1-jit), not understood yet: the interpreter's two-launch form is exact. A tuning
    sweep's opt-in until both are fixed."""
    if dtype_name == "float64" or (gpu.vendor != "nvidia" and not runtime_interpreted()):
        return None
    inner_pow2 = triton.next_power_of_2(layout.n_inner)
    reduce_pow2 = triton.next_power_of_2(layout.n_reduce)
    values = values or SHARED_TILE_VALUES[direction]
    shape = None
    for width in ((nbytes,) if nbytes else SHARED_INNER_BYTES):
        bi = min(inner_pow2, max(1, pow2_floor(width // element_bytes)))
        br = min(reduce_pow2, max(1, pow2_floor(values // bi)))
        split = triton.cdiv(layout.n_reduce, br)
        shape = (bi, br, split)
        if triton.next_power_of_2(split) * 8 <= GATHER_SHARE * br * element_bytes:
            break
    bi, br, split = shape
    if split > MAX_SHARED_SPLIT or split < 2:
        return None
    warps = num_warps or max(1, min(MAX_WARPS, triton.next_power_of_2(triton.cdiv(br * bi,
                                                                               SHARED_VALUES_PER_THREAD * 32))))
    n_tiles = layout.n_outer * triton.cdiv(layout.n_inner, bi)
    # the plan as it will launch, its grid and reason to come from its compile
    draft = AnyDimPlan(gpu, direction, layout, dtype_name, bi, br, True, warps, split, None, 1,
                       safe and direction == "forward", split=split)
    res, per_sm = None, 1
    if compile and not runtime_interpreted():
        from softmax_core.hardware.occupancy import occupancy

        res = launch_resources(draft, written)
        per_sm = occupancy(gpu, res.n_regs, res.shared_bytes, warps, 1).programs_per_sm
        if res.n_spills > 0:
            return None
    groups = min(n_tiles, gpu.multiprocessor_count * per_sm // split)
    if groups < 1:
        return None
    why = dict(why=ReasonCode.SLAB_SHARED, slab_values=reduce_pow2 * bi, max_values=br * bi, split=split)
    reason = PlanReason.of(ReasonCode.ANY_DIM, block_o=1, block_i=min(bi, layout.n_inner), block_r=br, n_chunks=1,
                           num_warps=warps, num_programs=groups * split, word_values=1, **why)
    return replace(draft, num_programs=groups * split, reason=reason, n_regs=res.n_regs if res else None,
                   n_spills=res.n_spills if res else 0, n_shared=res.shared_bytes if res else 0)
