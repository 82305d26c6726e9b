"""Plans for a softmax over a non-contiguous axis (kernels/any_dim.py): how the tensor's dims fold into the
kernel's index space, the tile of inner columns each program owns, and whether the reduced axis is held whole
or walked twice.

The kernel's index space is (outer, outer2, reduce, inner): `reduce` is the softmax dim, `inner` the dims a
program's tile spans (BLOCK_I neighbouring columns), `outer` and `outer2` the rest, one program per tile per
outer index. Each group folds dims that step evenly in every tensor of the call, so one stride per group per
tensor says where an element is: x's strides and y's may differ (y is contiguous, as torch.softmax returns
it; x may be a transposed or channels-last view). `inner` is chosen to be unit-stride in x when x has a
unit-stride dim besides the softmax dim (the loads coalesce), else unit-stride in y (the stores do).

Pure functions of shapes, strides and a `GpuSpec`: nothing here touches a tensor or a device.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from functools import lru_cache

import triton

from softmax_core.hardware.gpu import GpuSpec
from softmax_core.plans.reasons import PlanReason, ReasonCode

# Every constant below was measured on the H200 (tuning/h200-any-dim-tune-20261201-1.csv, each output torch's
# contiguous layout). A program's tile covers BLOCK_I neighbouring inner columns per step down the reduced axis.
# Forward, one pass when the whole [reduce, BLOCK_I] slab at the narrowest tile (INNER_MIN_BYTES: two 32-byte
# sectors) is at most ONE_PASS_VALUES values, on ONE_PASS_WARPS warps: (256, 1000, 196) float32, dim=1, ran
# 0.60x copy so (0.45 walked twice in 64-byte tiles).
INNER_MIN_BYTES = 64
ONE_PASS_VALUES = 16384
ONE_PASS_WARPS = 8
# Forward, two passes: INNER_TILE_BYTES of columns, chunks of CHUNK_VALUES on CHUNK_WARPS warps: the transposed
# (32, 2048, 2048) bf16 view ran 0.58x copy so, 0.42 with 256-byte tiles (the tiles of a GPU's programs in
# flight no longer fit in L2 between the two passes), 0.56 with 32-byte ones.
INNER_TILE_BYTES = 64
FILL_PROGRAMS_PER_SM = 2
CHUNK_VALUES = 8192
CHUNK_WARPS = 4
# Backward, y and dy both held: at most 32 values of each per thread. One pass up to BACKWARD_ONE_PASS_VALUES
# on BACKWARD_WARPS warps, else two passes of CHUNK_VALUES chunks on BACKWARD_WARPS warps: (64, 1000, 49) and
# (256, 1000, 196) float32 ran 0.27 / 0.55x copy so, against 0.10 / 0.08 with the forward's 16384 values on 8
# warps (spilled) and 0.25 / 0.23 with 4 warps.
BACKWARD_ONE_PASS_VALUES = 8192
BACKWARD_WARPS = 8
# Where the stores (or loads) step down the reduced axis, a chunk spans at least this many bytes of it.
REDUCE_MIN_BYTES = 128


@dataclass(frozen=True)
class ReductionLayout:
    """One tensor in the kernel's index space: element (o, r, i), o = o1 * n_outer2 + o2, lies at
    o1 * outer_stride + o2 * outer2_stride + r * reduce_stride + i * inner_stride."""
    n_outer: int                    # o1 and o2 together
    n_reduce: int
    n_inner: int
    outer_stride: int
    reduce_stride: int
    inner_stride: int = 1
    n_outer2: int = 1
    outer2_stride: int = 0

    @property
    def strides(self) -> tuple[int, int, int, int]:
        """(outer, outer2, reduce, inner): the order the kernels take them in."""
        return (self.outer_stride, self.outer2_stride, self.reduce_stride, self.inner_stride)


@dataclass(frozen=True)
class DimGroups:
    """Which of a tensor's dims fold into each axis of the index space (each group outermost first)."""
    outer: tuple[tuple[int, ...], ...]     # at most two groups
    reduce: int
    inner: tuple[int, ...]


def contiguous_strides(shape: tuple[int, ...]) -> tuple[int, ...]:
    strides, step = [], 1
    for size in reversed(shape):
        strides.append(step)
        step *= max(size, 1)
    return tuple(reversed(strides))


def _folds(shape, strides_of, outer_dim: int, inner_dim: int) -> bool:
    """Whether `outer_dim` steps exactly over `inner_dim` in every tensor (the two fold into one axis)."""
    return all(s[outer_dim] == s[inner_dim] * shape[inner_dim] for s in strides_of)


def dim_groups(shape: tuple[int, ...], dim: int, *strides_of: tuple[int, ...]) -> DimGroups | None:
    """The index space for tensors of `shape` with these strides (the first is the one read, the last the one
    written), softmax over `dim`; None when the softmax dim is unit-stride in both (the row kernels' case).
    More than two outer groups can come back (the dims do not fold): `layout_in` then gives None."""
    read, write = strides_of[0], strides_of[-1]
    rest = [d for d in range(len(shape)) if d != dim and shape[d] != 1]
    unit_read = [d for d in rest if read[d] == 1]
    unit_write = [d for d in rest if write[d] == 1]
    if unit_read:
        first = unit_read[0]
    elif unit_write and write[dim] != 1:
        first = unit_write[0]
    else:
        return None                    # the softmax dim is the contiguous one: rows
    inner = [first]
    rest.remove(first)
    grown = True
    while grown:
        grown = False
        for d in rest:
            if _folds(shape, strides_of, d, inner[0]):
                inner.insert(0, d)
                rest.remove(d)
                grown = True
                break
    rest.sort(key=lambda d: read[d], reverse=True)
    outer: list[list[int]] = []
    for d in rest:
        if outer and _folds(shape, strides_of, outer[-1][-1], d):
            outer[-1].append(d)
        else:
            outer.append([d])
    return DimGroups(tuple(tuple(g) for g in outer), dim, tuple(inner))


def takes_any_dim(shape, strides, dim: int) -> bool:
    """Whether `dim_groups` finds an index space for x of this shape and strides with a contiguous output: x
    has a unit-stride dim besides `dim`, or `dim` is not the output's innermost dim of size above 1. Written
    with plain loops over ints, so torch.compile can trace it (and guard on the strides it reads)."""
    n = len(shape)
    for d in range(n):
        if d != dim and shape[d] != 1 and strides[d] == 1:
            return n >= 2
    for d in range(dim + 1, n):
        if shape[d] != 1:
            return n >= 2
    return False


def layout_in(groups: DimGroups, shape: tuple[int, ...], strides: tuple[int, ...]) -> ReductionLayout | None:
    """A tensor of `shape` and `strides` in `groups`' index space, or None when its dims do not fold as the
    groups do (it must be copied into a layout that does)."""
    def axis(group: tuple[int, ...]) -> tuple[int, int]:
        for outer_dim, inner_dim in zip(group, group[1:]):
            if strides[outer_dim] != strides[inner_dim] * shape[inner_dim]:
                raise ValueError
        return math.prod(shape[d] for d in group), (strides[group[-1]] if group else 0)

    if len(groups.outer) > 2:
        return None
    try:
        outer = [axis(g) for g in groups.outer] + [(1, 0)] * (2 - len(groups.outer))
        (n1, s1), (n2, s2) = outer
        n_inner, inner_stride = axis(groups.inner)
    except ValueError:
        return None
    return ReductionLayout(n1 * n2, shape[groups.reduce], n_inner, s1, strides[groups.reduce], inner_stride, n2, s2)


def reduction_layout(shape: tuple[int, ...], strides: tuple[int, ...], dim: int) -> ReductionLayout | None:
    """x's layout in the index space of a softmax over `dim` whose output is contiguous (torch's strides); None
    when x's dims do not fold (it is copied first). Where x's softmax dim is unit-stride and so is the
    output's (the row kernels' case) the layout is (rows, n_reduce, 1): n_inner = 1 tells it apart."""
    shape, strides = tuple(shape), tuple(strides)
    groups = dim_groups(shape, dim, strides, contiguous_strides(shape))
    if groups is None:
        n_reduce = shape[dim] if shape else 1
        return ReductionLayout(math.prod(shape) // max(n_reduce, 1) if n_reduce else 0, n_reduce, 1,
                               n_reduce, strides[dim] if shape else 1)
    return layout_in(groups, shape, strides)


def transposes(*layouts: ReductionLayout) -> bool:
    """Whether a tensor of the call steps down the reduced axis with unit stride (so a chunk must span it)."""
    return any(l.reduce_stride == 1 and l.n_reduce > 1 for l in layouts)


@lru_cache(maxsize=4096)
def forward_groups(shape: tuple, strides: tuple, dim: int) -> tuple[DimGroups, ReductionLayout | None,
                                                                    ReductionLayout] | None:
    """(the index space, x's layout in it or None when x must be copied to fold, the contiguous y's layout) for a
    softmax over `dim` of a tensor with this shape and these strides; None for the row kernels' case."""
    out = contiguous_strides(shape)
    groups = dim_groups(shape, dim, strides, out)
    if groups is None:
        return None
    x_layout = layout_in(groups, shape, strides)
    if x_layout is None:                       # x's dims do not fold: it is read from a contiguous copy
        groups = dim_groups(shape, dim, out, out)
        if groups is None:
            return None
    return groups, x_layout, layout_in(groups, shape, out)


@dataclass(frozen=True)
class AnyDimPlan:
    gpu: GpuSpec
    direction: str                  # "forward" | "backward"
    layout: ReductionLayout
    dtype: str
    block_i: int                    # inner columns per program
    block_r: int                    # one pass: the reduced axis padded; two passes: values per chunk down it
    one_pass: bool
    num_warps: int
    num_programs: int
    reason: PlanReason

    @property
    def grid(self) -> tuple[int]:
        return (self.num_programs,)

    @property
    def n_chunks(self) -> int:
        return 1 if self.one_pass else triton.cdiv(self.layout.n_reduce, self.block_r)


def plan_any_dim(layout: ReductionLayout, element_bytes: int, dtype_name: str, gpu: GpuSpec,
                 direction: str = "forward", *, block_i: int | None = None, block_r: int | None = None,
                 num_warps: int | None = None, transposing: bool = False) -> AnyDimPlan:
    """The plan for a softmax down `layout`'s reduced axis. `transposing`: one side of the call steps down the
    reduced axis with unit stride (a transposed view in, a contiguous output), so a chunk spans at least
    REDUCE_MIN_BYTES of it. `block_i`, `block_r` and `num_warps` override the fitted shape (tuning sweeps); a
    `block_r` below the padded reduced axis means two passes."""
    forced = block_i is not None or block_r is not None or num_warps is not None
    inner_pow2 = triton.next_power_of_2(layout.n_inner)
    reduce_pow2 = triton.next_power_of_2(layout.n_reduce)
    narrowest = min(inner_pow2, max(1, INNER_MIN_BYTES // element_bytes))
    once = ONE_PASS_VALUES if direction == "forward" else BACKWARD_ONE_PASS_VALUES
    fits_once = reduce_pow2 * narrowest <= once
    if block_i is None:
        block_i = narrowest
        if not fits_once:
            block_i = min(inner_pow2, max(1, INNER_TILE_BYTES // element_bytes))
            wanted = FILL_PROGRAMS_PER_SM * gpu.multiprocessor_count
            while block_i > narrowest and layout.n_outer * triton.cdiv(layout.n_inner, block_i) < wanted:
                block_i //= 2
    if block_r is None:
        block_r = reduce_pow2 if reduce_pow2 * block_i <= once else max(1, CHUNK_VALUES // block_i)
        if transposing:
            block_r = max(block_r, REDUCE_MIN_BYTES // element_bytes)
    block_r = min(block_r, reduce_pow2)
    one_pass = block_r >= reduce_pow2
    if num_warps is None:
        num_warps = BACKWARD_WARPS if direction == "backward" else ONE_PASS_WARPS if one_pass else CHUNK_WARPS
    programs = layout.n_outer * triton.cdiv(layout.n_inner, block_i)
    n_chunks = 1 if one_pass else triton.cdiv(layout.n_reduce, block_r)
    if forced:
        why = dict(why=ReasonCode.FORCED)
    else:
        why = dict(why=ReasonCode.SLAB_FITS if one_pass else ReasonCode.SLAB_OVER_LIMIT,
                   slab_values=reduce_pow2 * narrowest, max_values=once)
    reason = PlanReason.of(ReasonCode.ANY_DIM, block_i=block_i, block_r=block_r, n_chunks=n_chunks,
                           num_warps=num_warps, num_programs=programs, **why)
    return AnyDimPlan(gpu, direction, layout, dtype_name, block_i, block_r, one_pass, num_warps, programs, reason)
