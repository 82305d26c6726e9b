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

Words (PACK > 1): Triton vectorises a load only where it can prove the addresses 16-byte aligned, and an odd
stride proves nothing, so a tile of float16 down a (N, 37, 6) tensor loads 2 bytes a lane. Where the inner run is
unit-stride and every stride a multiple of 2 (or 4), each lane loads one 32-bit (64-bit) word of 2 (4) neighbouring
columns, splits it into its values in registers (shifts and bit casts: the lowest bits are the first column, as
memory lays them out on a little-endian GPU), and the store packs the results back the same way.

Backward: dx = y * (dy - sum_r y * dy), the sum down each column, in the same two shapes.
Arithmetic in float32 (float64 for float64 input); offsets widened to int64 before they meet a stride.
"""
from __future__ import annotations

from softmax_core.hardware import runtime  # noqa: F401  (first: where the interpreter was asked for, triton's library is made interpretable before @triton.jit runs)

import triton
import triton.language as tl

from softmax_core.kernels.tuned import fast_exp, upcast
from softmax_core.kernels.words import values_of, words_of


@triton.jit
def _columns_of(words, PACK: tl.constexpr, ELEM: tl.constexpr):
    """[A, B, W] words -> [A, B, W * PACK] values, in memory order."""
    return tl.reshape(values_of(words, PACK, ELEM), [words.shape[0], words.shape[1], words.shape[2] * PACK])


@triton.jit
def _words_of_columns(values, PACK: tl.constexpr, WORD: tl.constexpr):
    """[A, B, C] values (in the stored type) -> [A, B, C // PACK] words."""
    A: tl.constexpr = values.shape[0]
    B: tl.constexpr = values.shape[1]
    W: tl.constexpr = values.shape[2] // PACK
    if PACK == 2:
        return words_of(tl.reshape(values, [A, B, W, 2]), PACK, WORD)
    else:
        return words_of(tl.reshape(values, [A, B, W, 2, 2]), PACK, WORD)


@triton.jit
def _tile(n_outer, n_outer2, n_inner, BLOCK_O: tl.constexpr, BLOCK_I: tl.constexpr):
    """This program's outer indices (o1, o2 as int64, [BLOCK_O]) and their mask, and which tile of BLOCK_I inner
    columns it owns."""
    n_inner_blocks = tl.cdiv(n_inner, BLOCK_I)
    pid = tl.program_id(0)
    outer = (pid // n_inner_blocks) * BLOCK_O + tl.arange(0, BLOCK_O)
    o1 = (outer // n_outer2).to(tl.int64)
    o2 = (outer % n_outer2).to(tl.int64)
    return o1, o2, outer < n_outer, pid % n_inner_blocks


@triton.jit
def _mask(o_ok, r, n_reduce, cols, n_inner):
    return o_ok[:, None, None] & (r < n_reduce)[None, :, None] & (cols < n_inner)[None, None, :]


@triton.jit
def _pointers(ptr, at, r, stride_r, cols, stride_i, OFFSETS_32: tl.constexpr):
    """Pointers to the [BLOCK_O, len(r), len(cols)] elements at outer offsets `at` (int64), reduced indices `r` and
    inner columns `cols`. A pointer per element is a 64-bit register pair, and in a one-pass slab the pointers
    outnumber the values' own registers; OFFSETS_32: every outer slice of the tensor spans under 2**31
    elements, so each slice's base is one 64-bit pointer and the offsets within it are 32-bit, one register each."""
    if OFFSETS_32:
        return (ptr + at)[:, None, None] + ((r * stride_r)[None, :, None] + (cols * stride_i)[None, None, :])
    else:
        return (ptr + at[:, None, None] + (r.to(tl.int64) * stride_r)[None, :, None]
                + (cols.to(tl.int64) * stride_i)[None, None, :])


@triton.jit
def load_tile(ptr, at, r, stride_r, stride_i, o_ok, n_reduce, n_inner, block, other,
              BLOCK_I: tl.constexpr, PACK: tl.constexpr, EVICT: tl.constexpr,
              OFFSETS_32: tl.constexpr):
    """The [BLOCK_O, len(r), BLOCK_I] values at outer offsets `at`, reduced indices `r`, inner column tile `block`
    (`other` where out of range). PACK > 1: the inner run is unit-stride and every offset a multiple of PACK, so
    each lane loads one word of PACK neighbouring values (4 or 8 bytes, where an unaligned run would load 2) and
    splits it in registers."""
    cols = block * BLOCK_I + tl.arange(0, BLOCK_I)
    ELEM: tl.constexpr = ptr.dtype.element_ty
    if PACK == 1 or ELEM.primitive_bitwidth * PACK > 64:
        return tl.load(_pointers(ptr, at, r, stride_r, cols, stride_i, OFFSETS_32),
                       mask=_mask(o_ok, r, n_reduce, cols, n_inner), other=other, eviction_policy=EVICT)
    else:
        WORD: tl.constexpr = tl.int32 if ELEM.primitive_bitwidth * PACK == 32 else tl.int64
        W: tl.constexpr = BLOCK_I // PACK
        wcols = block * W + tl.arange(0, W)
        words = tl.load(_pointers(ptr.to(tl.pointer_type(WORD)), at // PACK, r, stride_r // PACK, wcols, 1,
                                  OFFSETS_32),
                        mask=_mask(o_ok, r, n_reduce, wcols, n_inner // PACK), other=0, eviction_policy=EVICT)
        return tl.where(_mask(o_ok, r, n_reduce, cols, n_inner), _columns_of(words, PACK, ELEM), other)


@triton.jit
def store_tile(ptr, at, r, stride_r, stride_i, o_ok, n_reduce, n_inner, block, values,
               BLOCK_I: tl.constexpr, PACK: tl.constexpr, EVICT: tl.constexpr, OFFSETS_32: tl.constexpr):
    """load_tile's store: `values` rounded to ptr's type, written PACK to a word where PACK > 1 (and the word is at
    most 64 bits: dx may be wider than the y whose layout the plan packed)."""
    ELEM: tl.constexpr = ptr.dtype.element_ty
    values = values.to(ELEM)
    if PACK == 1 or ELEM.primitive_bitwidth * PACK > 64:   # (a float32 dx of a float16 y's plan: no word that wide)
        cols = block * BLOCK_I + tl.arange(0, BLOCK_I)
        tl.store(_pointers(ptr, at, r, stride_r, cols, stride_i, OFFSETS_32), values,
                 mask=_mask(o_ok, r, n_reduce, cols, n_inner), eviction_policy=EVICT)
    else:
        WORD: tl.constexpr = tl.int32 if ELEM.primitive_bitwidth * PACK == 32 else tl.int64
        W: tl.constexpr = BLOCK_I // PACK
        wcols = block * W + tl.arange(0, W)
        tl.store(_pointers(ptr.to(tl.pointer_type(WORD)), at // PACK, r, stride_r // PACK, wcols, 1, OFFSETS_32),
                 _words_of_columns(values, PACK, WORD), mask=_mask(o_ok, r, n_reduce, wcols, n_inner // PACK),
                 eviction_policy=EVICT)


@triton.jit
def softmax_any_dim_kernel(
    x_ptr, y_ptr,
    x_outer, x_outer2, x_reduce, x_inner, y_outer, y_outer2, y_reduce, y_inner,
    n_outer, n_outer2, n_reduce, n_inner,
    BLOCK_O: tl.constexpr, BLOCK_R: tl.constexpr, BLOCK_I: tl.constexpr, ONE_PASS: tl.constexpr,
    SAFE: tl.constexpr, FP64: tl.constexpr, PACK_X: tl.constexpr, PACK_Y: tl.constexpr, OFFSETS_32: tl.constexpr,
):
    o1, o2, o_ok, block = _tile(n_outer, n_outer2, n_inner, BLOCK_O, BLOCK_I)
    x_at = o1 * x_outer + o2 * x_outer2
    y_at = o1 * y_outer + o2 * y_outer2
    steps = tl.arange(0, BLOCK_R)
    if ONE_PASS:
        x = upcast(load_tile(x_ptr, x_at, steps, x_reduce, x_inner, o_ok, n_reduce, n_inner, block, float("-inf"),
                             BLOCK_I, PACK_X, "evict_first", OFFSETS_32), FP64)
        col_max = tl.max(x, axis=1)
        if SAFE:  # a column of only -inf gives zeros instead of NaN
            col_max = tl.where(col_max == float("-inf"), 0.0, col_max)
        numerator = fast_exp(x - col_max[:, None, :], FP64)
        col_sum = tl.sum(numerator, axis=1)
        inv_sum = 1.0 / col_sum
        if SAFE:
            inv_sum = tl.where(col_sum == 0.0, 0.0, inv_sum)
        store_tile(y_ptr, y_at, steps, y_reduce, y_inner, o_ok, n_reduce, n_inner, block,
                   numerator * inv_sum[:, None, :], BLOCK_I, PACK_Y, "", OFFSETS_32)
    else:
        run_max = upcast(tl.full((BLOCK_O, BLOCK_I), float("-inf"), tl.float32), FP64)
        run_sum = upcast(tl.zeros((BLOCK_O, BLOCK_I), tl.float32), FP64)
        n_chunks = tl.cdiv(n_reduce, BLOCK_R)
        for c in range(0, n_chunks):
            x = upcast(load_tile(x_ptr, x_at, c * BLOCK_R + steps, x_reduce, x_inner, o_ok, n_reduce, n_inner, block,
                                 float("-inf"), BLOCK_I, PACK_X, "evict_last", OFFSETS_32), FP64)
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
            r = (n_chunks - 1 - c) * BLOCK_R + steps
            x = upcast(load_tile(x_ptr, x_at, r, x_reduce, x_inner, o_ok, n_reduce, n_inner, block, float("-inf"),
                                 BLOCK_I, PACK_X, "evict_first", OFFSETS_32), FP64)
            store_tile(y_ptr, y_at, r, y_reduce, y_inner, o_ok, n_reduce, n_inner, block,
                       fast_exp(x - run_max[:, None, :], FP64) * inv_sum[:, None, :], BLOCK_I, PACK_Y, "evict_first",
                       OFFSETS_32)


@triton.jit
def softmax_backward_any_dim_kernel(
    y_ptr, dy_ptr, dx_ptr,
    y_outer, y_outer2, y_reduce, y_inner, dy_outer, dy_outer2, dy_reduce, dy_inner,
    n_outer, n_outer2, n_reduce, n_inner,
    BLOCK_O: tl.constexpr, BLOCK_R: tl.constexpr, BLOCK_I: tl.constexpr, ONE_PASS: tl.constexpr,
    FP64: tl.constexpr, PACK_Y: tl.constexpr, PACK_DY: tl.constexpr, OFFSETS_32: tl.constexpr,
):
    # dx has y's strides and dtype's size class (both are allocated by the launcher); dy has its own.
    o1, o2, o_ok, block = _tile(n_outer, n_outer2, n_inner, BLOCK_O, BLOCK_I)
    y_at = o1 * y_outer + o2 * y_outer2
    dy_at = o1 * dy_outer + o2 * dy_outer2
    steps = tl.arange(0, BLOCK_R)
    if ONE_PASS:
        y = upcast(load_tile(y_ptr, y_at, steps, y_reduce, y_inner, o_ok, n_reduce, n_inner, block, 0.0,
                             BLOCK_I, PACK_Y, "", OFFSETS_32), FP64)
        dy = upcast(load_tile(dy_ptr, dy_at, steps, dy_reduce, dy_inner, o_ok, n_reduce, n_inner, block, 0.0,
                              BLOCK_I, PACK_DY, "", OFFSETS_32), FP64)
        dot = tl.sum(y * dy, axis=1)
        store_tile(dx_ptr, y_at, steps, y_reduce, y_inner, o_ok, n_reduce, n_inner, block, y * (dy - dot[:, None, :]),
                   BLOCK_I, PACK_Y, "", OFFSETS_32)
    else:
        dot = upcast(tl.zeros((BLOCK_O, BLOCK_I), tl.float32), FP64)
        n_chunks = tl.cdiv(n_reduce, BLOCK_R)
        for c in range(0, n_chunks):
            r = c * BLOCK_R + steps
            y = upcast(load_tile(y_ptr, y_at, r, y_reduce, y_inner, o_ok, n_reduce, n_inner, block, 0.0,
                                 BLOCK_I, PACK_Y, "evict_last", OFFSETS_32), FP64)
            dy = upcast(load_tile(dy_ptr, dy_at, r, dy_reduce, dy_inner, o_ok, n_reduce, n_inner, block, 0.0,
                                  BLOCK_I, PACK_DY, "evict_last", OFFSETS_32), FP64)
            dot += tl.sum(y * dy, axis=1)
        for c in range(0, n_chunks):
            r = (n_chunks - 1 - c) * BLOCK_R + steps
            y = upcast(load_tile(y_ptr, y_at, r, y_reduce, y_inner, o_ok, n_reduce, n_inner, block, 0.0,
                                 BLOCK_I, PACK_Y, "evict_first", OFFSETS_32), FP64)
            dy = upcast(load_tile(dy_ptr, dy_at, r, dy_reduce, dy_inner, o_ok, n_reduce, n_inner, block, 0.0,
                                  BLOCK_I, PACK_DY, "evict_first", OFFSETS_32), FP64)
            store_tile(dx_ptr, y_at, r, y_reduce, y_inner, o_ok, n_reduce, n_inner, block, y * (dy - dot[:, None, :]),
                       BLOCK_I, PACK_Y, "evict_first", OFFSETS_32)
