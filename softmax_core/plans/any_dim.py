"""Plans for a softmax over a non-contiguous axis (kernels/any_dim.py): the tensor's layout in memory order,
the tile of inner columns each program owns, and whether the reduced axis is held whole or walked twice.

Pure functions of shapes, strides and a `GpuSpec`: nothing here touches a tensor or a device.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import triton

from softmax_core.hardware.gpu import GpuSpec

# Every constant below was measured on the H200 (tuning/h200-shapes-tune-20261201-1.csv; docs/performance.md, "Real
# shapes"). A program's loads cover BLOCK_I contiguous inner columns per step down the reduced axis.
# One pass when the whole [reduce, BLOCK_I] slab at the narrowest tile (INNER_MIN_BYTES: two 32-byte sectors)
# is at most ONE_PASS_VALUES values, on ONE_PASS_WARPS warps: (64, 1000, 49) and (256, 1000, 196) float32,
# dim=1, ran 0.68 / 0.60x copy so, against 0.63 / 0.55 for 128-byte tiles walked twice.
INNER_MIN_BYTES = 64
ONE_PASS_VALUES = 16384
ONE_PASS_WARPS = 8
# Two passes: INNER_TILE_BYTES of columns (narrowed down to INNER_MIN_BYTES until the grid has
# FILL_PROGRAMS_PER_SM programs per SM), chunks of CHUNK_VALUES on CHUNK_WARPS warps: the transposed
# (32, 2048, 2048) bf16 view ran 0.45x copy so, 0.42-0.44 with 16-64 columns or 8 warps.
INNER_TILE_BYTES = 256
FILL_PROGRAMS_PER_SM = 2
CHUNK_VALUES = 8192
CHUNK_WARPS = 4


@dataclass(frozen=True)
class ReductionLayout:
    """A dense tensor seen as (outer, reduce, inner) in memory order; inner elements are unit-stride."""
    n_outer: int
    n_reduce: int
    n_inner: int
    outer_stride: int
    reduce_stride: int


def reduction_layout(shape: tuple[int, ...], strides: tuple[int, ...], dim: int) -> ReductionLayout | None:
    """The (outer, reduce, inner) view of a tensor of this shape and strides, softmax over `dim`, or None when
    the tensor is not dense (gaps or overlaps between its elements: it must be copied first). Dims of size 1
    have no say in the layout."""
    order = sorted((d for d in range(len(shape)) if shape[d] != 1 or d == dim),
                   key=lambda d: (strides[d], d == dim), reverse=True)
    expected = 1
    for d in reversed(order):         # innermost first: each stride is the product of the sizes inside it
        if shape[d] != 1 and strides[d] != expected:
            return None
        expected *= shape[d]
    position = order.index(dim)
    outer = math.prod(shape[d] for d in order[:position])
    inner = math.prod(shape[d] for d in order[position + 1:])
    return ReductionLayout(outer, shape[dim], inner, shape[dim] * inner, inner)


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

    @property
    def grid(self) -> tuple[int]:
        return (self.num_programs,)

    @property
    def n_chunks(self) -> int:
        return 1 if self.one_pass else triton.cdiv(self.layout.n_reduce, self.block_r)


def plan_any_dim(layout: ReductionLayout, element_bytes: int, dtype_name: str, gpu: GpuSpec,
                 direction: str = "forward", *, block_i: int | None = None, block_r: int | None = None,
                 num_warps: int | None = None) -> AnyDimPlan:
    """The plan for a softmax down `layout`'s reduced axis. `block_i`, `block_r` and `num_warps` override
    the fitted shape (tuning sweeps); a `block_r` below the padded reduced axis means two passes."""
    inner_pow2 = triton.next_power_of_2(layout.n_inner)
    reduce_pow2 = triton.next_power_of_2(layout.n_reduce)
    narrowest = min(inner_pow2, max(1, INNER_MIN_BYTES // element_bytes))
    fits_once = reduce_pow2 * narrowest <= ONE_PASS_VALUES
    if block_i is None:
        block_i = narrowest
        if not fits_once:
            block_i = min(inner_pow2, max(1, INNER_TILE_BYTES // element_bytes))
            wanted = FILL_PROGRAMS_PER_SM * gpu.multiprocessor_count
            while block_i > narrowest and layout.n_outer * triton.cdiv(layout.n_inner, block_i) < wanted:
                block_i //= 2
    if block_r is None:
        block_r = reduce_pow2 if reduce_pow2 * block_i <= ONE_PASS_VALUES else max(1, CHUNK_VALUES // block_i)
    block_r = min(block_r, reduce_pow2)
    one_pass = block_r >= reduce_pow2
    if num_warps is None:
        num_warps = ONE_PASS_WARPS if one_pass else CHUNK_WARPS
    programs = layout.n_outer * triton.cdiv(layout.n_inner, block_i)
    return AnyDimPlan(gpu, direction, layout, dtype_name, block_i, block_r, one_pass, num_warps, programs)
