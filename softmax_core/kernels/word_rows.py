"""The backward of short packed rows of 2-byte values, read in words that cross the rows' boundaries.

A row of 37 float16 values starts at byte 74 r: after an odd row it sits on no 4-byte boundary, so Triton loads it
one value (2 bytes) a lane. But PACK consecutive rows of packed rows (a group) start at byte 2 PACK n_cols g, a
multiple of the word: the group's PACK x n_cols values are n_cols words of PACK values each (an int32 of 2, an
int64 of 4; kernels/words.py splits them in registers). The same holds at any width, so a block of GROUPS groups is
a [GROUPS, BLOCK_N] tile of words, every lane loading 4 or 8 bytes, and each word's values fall in one row or two
neighbours:

    value p of a group (p = PACK * word + k) is value p % n_cols of the group's row p // n_cols

dx = y * (dy - sum(y * dy)) per row: each row's sum is a reduction over the whole group masked to that row (PACK
masked reductions where the rows kernel does one, on values already in registers); y and dy are read in words and
dx written in words. The padding past n_cols words has p // n_cols >= PACK, so it belongs to no row. The last block,
where fewer than GROUPS whole groups remain, is read a value at a time (its rows may end mid-word, and a word past
the tensor's end must not be loaded).

The forward was written the same way (a row's max and its sum: 2 x PACK masked reductions) and measured slower than
the kernels it would replace (docs/performance.md, "Short rows in words"), so the forward has no word kernel.

Packed rows only (every row stride equal to the width; the strides are taken for the launch's uniform signature)
and tensors that start on a 16-byte boundary (launch/launches.py plans other inputs on the rows kernel). All
arithmetic is float32.
"""
from __future__ import annotations

from softmax_core.hardware import runtime  # noqa: F401  (first: the interpreter, where asked for, before @triton.jit)

import triton
import triton.language as tl

from softmax_core.kernels.words import values_of, words_of


@triton.jit
def _load_group_values(ptr, at, ok, GROUPS: tl.constexpr, BLOCK_N: tl.constexpr, PACK: tl.constexpr):
    """The words at `at` ([GROUPS, BLOCK_N] word offsets, `ok` where they exist) as [GROUPS, BLOCK_N * PACK] float32
    values, in memory order. A word of PACK values is an int32 (2 of 2 bytes) or an int64 (4)."""
    WORD: tl.constexpr = tl.int32 if PACK == 2 else tl.int64
    words = tl.load(ptr.to(tl.pointer_type(WORD)) + at, mask=ok, other=0)
    return tl.reshape(values_of(words, PACK, ptr.dtype.element_ty), [GROUPS, BLOCK_N * PACK]).to(tl.float32)


@triton.jit
def _store_group_values(ptr, first_word, at, ok, values, n_cols, GROUPS: tl.constexpr, BLOCK_N: tl.constexpr,
                        PACK: tl.constexpr):
    """_load_group_values undone: [GROUPS, BLOCK_N * PACK] values rounded to ptr's type and written as words; a
    float32 dx (softmax_backward's grad_dtype) has no word that wide and takes the values at their own
    offsets (value p of group g of the block: PACK x first_word + g x PACK x n_cols + p)."""
    ELEM: tl.constexpr = ptr.dtype.element_ty
    WORD: tl.constexpr = tl.int32 if PACK == 2 else tl.int64
    values = values.to(ELEM)
    if ELEM.primitive_bitwidth == 16:
        if PACK == 2:
            words = words_of(tl.reshape(values, [GROUPS, BLOCK_N, 2]), PACK, WORD)
        else:
            words = words_of(tl.reshape(values, [GROUPS, BLOCK_N, 2, 2]), PACK, WORD)
        tl.store(ptr.to(tl.pointer_type(WORD)) + at, words, mask=ok)
    else:
        g = tl.arange(0, GROUPS)[:, None]
        p = tl.arange(0, BLOCK_N * PACK)[None, :]
        tl.store(ptr + first_word * PACK + g * (n_cols * PACK) + p, values, mask=(p < n_cols * PACK) & (g < GROUPS))


@triton.jit
def _group_words(first_word, n_cols, GROUPS: tl.constexpr, BLOCK_N: tl.constexpr, PACK: tl.constexpr):
    """A block's word offsets [GROUPS, BLOCK_N] from `first_word` (int64), which exist, and each value's row in its
    group ([1, BLOCK_N * PACK]; PACK or more: padding)."""
    g = tl.arange(0, GROUPS)[:, None]
    w = tl.arange(0, BLOCK_N)[None, :]
    ok = (w < n_cols) & (g < GROUPS)
    return first_word + g * n_cols + w, ok, tl.arange(0, BLOCK_N * PACK)[None, :] // n_cols


@triton.jit
def _backward_words(y_ptr, dy_ptr, dx_ptr, first_word, n_cols, GROUPS: tl.constexpr, BLOCK_N: tl.constexpr,
                    PACK: tl.constexpr):
    at, ok, row = _group_words(first_word, n_cols, GROUPS, BLOCK_N, PACK)
    y = _load_group_values(y_ptr, at, ok, GROUPS, BLOCK_N, PACK)
    dy = _load_group_values(dy_ptr, at, ok, GROUPS, BLOCK_N, PACK)
    product = y * dy
    dot = tl.zeros([GROUPS, BLOCK_N * PACK], tl.float32)         # each value's row's sum of y * dy
    for k in tl.static_range(PACK):
        d = tl.sum(tl.where(row == k, product, 0.0), axis=1)
        dot = tl.where(row == k, d[:, None], dot)
    _store_group_values(dx_ptr, first_word, at, ok, y * (dy - dot), n_cols, GROUPS, BLOCK_N, PACK)


@triton.jit
def _backward_values(y_ptr, dy_ptr, dx_ptr, block, n_rows, n_cols, ROWS: tl.constexpr, BLOCK_N: tl.constexpr):
    """The last block's rows, a value at a time."""
    rows = block * ROWS + tl.arange(0, ROWS)
    cols = tl.arange(0, BLOCK_N)
    mask = (rows < n_rows)[:, None] & (cols < n_cols)[None, :]
    at = rows.to(tl.int64)[:, None] * n_cols + cols[None, :]
    y = tl.load(y_ptr + at, mask=mask, other=0.0).to(tl.float32)
    dy = tl.load(dy_ptr + at, mask=mask, other=0.0).to(tl.float32)
    dot = tl.sum(y * dy, axis=1)
    tl.store(dx_ptr + at, y * (dy - dot[:, None]), mask=mask)


@triton.jit
def softmax_backward_word_rows_kernel(
    y_ptr, dy_ptr, dx_ptr,
    y_row_stride, dy_row_stride, dx_row_stride,
    n_rows, n_cols,
    GROUPS: tl.constexpr, BLOCK_N: tl.constexpr, PACK: tl.constexpr,
):
    ROWS: tl.constexpr = GROUPS * PACK
    n_whole = n_rows // ROWS
    for block in tl.range(tl.program_id(0), tl.cdiv(n_rows, ROWS), tl.num_programs(0)):
        if block < n_whole:
            _backward_words(y_ptr, dy_ptr, dx_ptr, tl.cast(block, tl.int64) * (GROUPS * n_cols), n_cols, GROUPS,
                            BLOCK_N, PACK)
        else:
            _backward_values(y_ptr, dy_ptr, dx_ptr, block, n_rows, n_cols, ROWS, BLOCK_N)
