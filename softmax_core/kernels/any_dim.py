"""Softmax over an axis that is not the contiguous one: a channel dim, or a transposed view's last dim.

The kernels see a tensor as (outer, outer2, reduce, inner), one stride each (plans/strided.py folds the
dims): `reduce` is the axis the softmax runs over, `inner` the axis a program's tile spans. x and y have
strides of their own: for dim=1 of a contiguous (64, 1000, 49) tensor both are (49000, 0, 49, 1); for the last
dim of a transposed (32, 2048, 2048) view x is (2048 * 2048, 0, 2048, 1) and the contiguous y
(2048 * 2048, 0, 1, 2048): loads coalesce across inner columns, stores down the reduced axis, and Triton
moves each tile between the two orders through shared memory. (A stride of 1 is specialised by Triton's JIT,
so each side's unit-stride axis is known when the kernel is compiled.)

Reading one softmax "row" at a time would step `inner` elements between neighbours: every load a separate
memory transaction. Here a program owns a tile of BLOCK_I neighbouring inner columns of BLOCK_O neighbouring
outer indices and walks the reduced axis down them, so each load instruction reads contiguous values
(coalesced) and the BLOCK_O x BLOCK_I softmaxes are computed side by side, one per (outer, column). The tile
is [BLOCK_O, BLOCK_R, BLOCK_I], inner fastest then reduced: where the inner run is short (a few columns) and
a tile holds it whole, neighbouring (reduce, inner) elements are neighbours in memory too, so several outer
slices per program keep each load a contiguous span (BLOCK_O > 1 only when BLOCK_I covers the inner run):

  one pass  - the whole [BLOCK_O, reduce, BLOCK_I] slab fits in registers: read once, max and sum down each column,
              write once.
  two passes - the slab is walked in [BLOCK_O, BLOCK_R, BLOCK_I] chunks with an online (max, sum) per column (the sum
              so far rescaled by exp(old max - new max) when the max grows); pass 2 walks the chunks last
              first, while they are still in L2, and writes exp(x - max) / sum.

Backward: dx = y * (dy - sum_r y * dy), the sum down each column, in the same two shapes.
Arithmetic in float32 (float64 for float64 input); offsets widened to int64 before they meet a stride.
"""
from __future__ import annotations

from softmax_core.hardware import runtime  # noqa: F401  (first: where the interpreter was asked for, triton's library is made interpretable before @triton.jit runs)

import triton
import triton.language as tl

from softmax_core.kernels.tuned import fast_exp, upcast


@triton.jit
def _tile(n_outer, n_outer2, n_inner, BLOCK_O: tl.constexpr, BLOCK_I: tl.constexpr):
    """This program's outer indices (o1, o2 as int64, [BLOCK_O]) and their mask, and its inner columns (int64,
    [BLOCK_I]) with their mask."""
    n_inner_blocks = tl.cdiv(n_inner, BLOCK_I)
    pid = tl.program_id(0)
    outer = (pid // n_inner_blocks) * BLOCK_O + tl.arange(0, BLOCK_O)
    o1 = (outer // n_outer2).to(tl.int64)
    o2 = (outer % n_outer2).to(tl.int64)
    cols = (pid % n_inner_blocks) * BLOCK_I + tl.arange(0, BLOCK_I)
    return o1, o2, outer < n_outer, cols.to(tl.int64), cols < n_inner


@triton.jit
def softmax_any_dim_kernel(
    x_ptr, y_ptr,
    x_outer, x_outer2, x_reduce, x_inner, y_outer, y_outer2, y_reduce, y_inner,
    n_outer, n_outer2, n_reduce, n_inner,
    BLOCK_O: tl.constexpr, BLOCK_R: tl.constexpr, BLOCK_I: tl.constexpr, ONE_PASS: tl.constexpr,
    SAFE: tl.constexpr, FP64: tl.constexpr,
):
    o1, o2, o_ok, cols, col_ok = _tile(n_outer, n_outer2, n_inner, BLOCK_O, BLOCK_I)
    x_tile = x_ptr + (o1 * x_outer + o2 * x_outer2)[:, None, None] + (cols * x_inner)[None, None, :]
    y_tile = y_ptr + (o1 * y_outer + o2 * y_outer2)[:, None, None] + (cols * y_inner)[None, None, :]
    tile_ok = o_ok[:, None, None] & col_ok[None, None, :]
    steps = tl.arange(0, BLOCK_R)
    if ONE_PASS:
        mask = tile_ok & (steps < n_reduce)[None, :, None]
        r64 = steps.to(tl.int64)[None, :, None]
        x = upcast(tl.load(x_tile + r64 * x_reduce, mask=mask, other=float("-inf"),
                         eviction_policy="evict_first"), FP64)
        col_max = tl.max(x, axis=1)
        if SAFE:  # a column of only -inf gives zeros instead of NaN
            col_max = tl.where(col_max == float("-inf"), 0.0, col_max)
        numerator = fast_exp(x - col_max[:, None, :], FP64)
        col_sum = tl.sum(numerator, axis=1)
        inv_sum = 1.0 / col_sum
        if SAFE:
            inv_sum = tl.where(col_sum == 0.0, 0.0, inv_sum)
        tl.store(y_tile + r64 * y_reduce, numerator * inv_sum[:, None, :], mask=mask)
    else:
        run_max = upcast(tl.full((BLOCK_O, BLOCK_I), float("-inf"), tl.float32), FP64)
        run_sum = upcast(tl.zeros((BLOCK_O, BLOCK_I), tl.float32), FP64)
        n_chunks = tl.cdiv(n_reduce, BLOCK_R)
        for c in range(0, n_chunks):
            r = c * BLOCK_R + steps
            mask = tile_ok & (r < n_reduce)[None, :, None]
            x = upcast(tl.load(x_tile + r.to(tl.int64)[None, :, None] * x_reduce, mask=mask, other=float("-inf"),
                             eviction_policy="evict_last"), FP64)
            new_max = tl.maximum(run_max, tl.max(x, axis=1))
            # While a column has seen only -inf, shift by 0: -inf - (-inf) would be NaN.
            shift = tl.where(new_max == float("-inf"), 0.0, new_max)
            run_sum = run_sum * fast_exp(run_max - shift, FP64) + tl.sum(fast_exp(x - shift[:, None, :], FP64), axis=1)
            run_max = new_max
        if SAFE:
            run_max = tl.where(run_max == float("-inf"), 0.0, run_max)
            inv_sum = tl.where(run_sum == 0.0, 0.0, 1.0 / run_sum)
        else:
            inv_sum = 1.0 / run_sum
        for c in range(0, n_chunks):   # last chunk first: it is the likeliest still in L2
            r = ((n_chunks - 1 - c) * BLOCK_R + steps)
            mask = tile_ok & (r < n_reduce)[None, :, None]
            r64 = r.to(tl.int64)[None, :, None]
            x = upcast(tl.load(x_tile + r64 * x_reduce, mask=mask, other=float("-inf"),
                             eviction_policy="evict_first"), FP64)
            tl.store(y_tile + r64 * y_reduce, fast_exp(x - run_max[:, None, :], FP64) * inv_sum[:, None, :],
                     mask=mask, eviction_policy="evict_first")


@triton.jit
def softmax_backward_any_dim_kernel(
    y_ptr, dy_ptr, dx_ptr,
    y_outer, y_outer2, y_reduce, y_inner, dy_outer, dy_outer2, dy_reduce, dy_inner,
    n_outer, n_outer2, n_reduce, n_inner,
    BLOCK_O: tl.constexpr, BLOCK_R: tl.constexpr, BLOCK_I: tl.constexpr, ONE_PASS: tl.constexpr,
    FP64: tl.constexpr,
):
    # dx has y's strides (both are allocated by the launcher); dy has its own.
    o1, o2, o_ok, cols, col_ok = _tile(n_outer, n_outer2, n_inner, BLOCK_O, BLOCK_I)
    y_at = (o1 * y_outer + o2 * y_outer2)[:, None, None] + (cols * y_inner)[None, None, :]
    dy_at = (o1 * dy_outer + o2 * dy_outer2)[:, None, None] + (cols * dy_inner)[None, None, :]
    tile_ok = o_ok[:, None, None] & col_ok[None, None, :]
    steps = tl.arange(0, BLOCK_R)
    if ONE_PASS:
        mask = tile_ok & (steps < n_reduce)[None, :, None]
        r64 = steps.to(tl.int64)[None, :, None]
        y = upcast(tl.load(y_ptr + y_at + r64 * y_reduce, mask=mask, other=0.0), FP64)
        dy = upcast(tl.load(dy_ptr + dy_at + r64 * dy_reduce, mask=mask, other=0.0), FP64)
        dot = tl.sum(y * dy, axis=1)
        tl.store(dx_ptr + y_at + r64 * y_reduce, y * (dy - dot[:, None, :]), mask=mask)
    else:
        dot = upcast(tl.zeros((BLOCK_O, BLOCK_I), tl.float32), FP64)
        n_chunks = tl.cdiv(n_reduce, BLOCK_R)
        for c in range(0, n_chunks):
            r = c * BLOCK_R + steps
            r64 = r.to(tl.int64)[None, :, None]
            mask = tile_ok & (r < n_reduce)[None, :, None]
            y = upcast(tl.load(y_ptr + y_at + r64 * y_reduce, mask=mask, other=0.0, eviction_policy="evict_last"),
                       FP64)
            dy = upcast(tl.load(dy_ptr + dy_at + r64 * dy_reduce, mask=mask, other=0.0,
                                eviction_policy="evict_last"), FP64)
            dot += tl.sum(y * dy, axis=1)
        for c in range(0, n_chunks):
            r = (n_chunks - 1 - c) * BLOCK_R + steps
            r64 = r.to(tl.int64)[None, :, None]
            mask = tile_ok & (r < n_reduce)[None, :, None]
            y = upcast(tl.load(y_ptr + y_at + r64 * y_reduce, mask=mask, other=0.0, eviction_policy="evict_first"),
                       FP64)
            dy = upcast(tl.load(dy_ptr + dy_at + r64 * dy_reduce, mask=mask, other=0.0,
                                eviction_policy="evict_first"), FP64)
            tl.store(dx_ptr + y_at + r64 * y_reduce, y * (dy - dot[:, None, :]), mask=mask,
                     eviction_policy="evict_first")
