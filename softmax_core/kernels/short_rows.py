"""Short rows of any width (2-255 values: attention over a few keys, small heads, routers of odd size).

A short row is too little work for a warp: the rows kernel gives each row a group of lanes, so every row's
max and sum cost shuffles between lanes, every value is loaded one at a time (an odd width cannot be proved
16-byte aligned) through a 64-bit address of its own, and the registers that holds leave few warps per SM.
Two shapes of work that fit short rows better:

  forward  - one lane, one row (for the narrowest rows: a thread holds all BLOCK_N values of its row): the block is [BLOCK_N, ROWS], rows
             along the lanes, so a row's values sit in one thread and its max and sum need no shuffle. Each
             load instruction reads value c of 32 neighbouring rows; those rows are one contiguous span of
             memory, so the next values come from the lines the first load brought into L1.
  backward - a block of ROWS rows is one contiguous span of ROWS x n_cols values when the rows are packed
             (row stride = width), whatever the width: it is read as that span, in 16-byte vectors, and
             regrouped into rows by `tl.gather` (through shared memory); dx goes back the same way.

Both take packed rows only (every row stride equal to the width): a padded or sliced input is planned on the rows
kernel by the launch (launch/launches.py). Offsets inside a block are 32-bit; each block's start is 64-bit. All
arithmetic is float32.
"""
from __future__ import annotations

from softmax_core.hardware import runtime  # noqa: F401  (first: the interpreter, where asked for, before @triton.jit)

import triton
import triton.language as tl

from softmax_core.kernels.tuned import fast_exp


@triton.jit
def softmax_lane_rows_kernel(
    x_ptr, y_ptr,
    x_row_stride, y_row_stride,
    n_rows, n_cols,
    ROWS: tl.constexpr, BLOCK_N: tl.constexpr, SAFE: tl.constexpr,
):
    # Packed rows only (x_row_stride = y_row_stride = n_cols; launch/launches.py plans other spacings on the
    # rows kernel): a block is ROWS x n_cols values from `first` on, and an offset inside it fits 32 bits.
    cols = tl.arange(0, BLOCK_N)[:, None]            # [BLOCK_N, 1]: a row's values down one thread
    lanes = tl.arange(0, ROWS)[None, :]               # [1, ROWS]: one row a lane
    at = lanes * n_cols + cols
    for block in tl.range(tl.program_id(0), tl.cdiv(n_rows, ROWS), tl.num_programs(0)):
        start = tl.cast(block, tl.int64) * (ROWS * n_cols)
        mask = (cols < n_cols) & (block * ROWS + lanes < n_rows)
        # No eviction hint: the next load instruction reads the next value of the same rows, from the lines this
        # one brought into L1 (evict_first would give them up first).
        x = tl.load(x_ptr + start + at, mask=mask, other=float("-inf")).to(tl.float32)
        row_max = tl.max(x, axis=0)
        if SAFE:  # an all -inf row gives zeros instead of NaN
            row_max = tl.where(row_max == float("-inf"), 0.0, row_max)
        numerator = fast_exp(x - row_max[None, :], False)
        row_sum = tl.sum(numerator, axis=0)
        inv_sum = 1.0 / row_sum
        if SAFE:
            inv_sum = tl.where(row_sum == 0.0, 0.0, inv_sum)
        tl.store(y_ptr + start + at, numerator * inv_sum[None, :], mask=mask)


@triton.jit
def _rows_of_span(span, n_cols, ROWS: tl.constexpr, BLOCK_N: tl.constexpr):
    """A span of ROWS packed rows (ROWS x n_cols values, as loaded) regrouped as [ROWS, BLOCK_N], float32;
    the columns past n_cols read value 0 of the span (the caller masks them)."""
    rows = tl.arange(0, ROWS)[:, None]
    cols = tl.arange(0, BLOCK_N)[None, :]
    at = tl.where(cols < n_cols, rows * n_cols + cols, 0)
    return tl.reshape(tl.gather(span, tl.reshape(at, (ROWS * BLOCK_N,)), 0), (ROWS, BLOCK_N)).to(tl.float32)


@triton.jit
def _span_of_rows(block, n_cols, ROWS: tl.constexpr, BLOCK_N: tl.constexpr):
    """The inverse: a [ROWS, BLOCK_N] block laid out as its span of packed rows (ROWS * BLOCK_N values, the
    first ROWS x n_cols of them meaningful)."""
    f = tl.arange(0, ROWS * BLOCK_N)
    row = f // n_cols
    at = tl.minimum(row, ROWS - 1) * BLOCK_N + (f - row * n_cols)
    return tl.gather(tl.reshape(block, (ROWS * BLOCK_N,)), at, 0)


@triton.jit
def _backward_span(y_ptr, dy_ptr, dx_ptr, start, n_cols, limit, ROWS: tl.constexpr, BLOCK_N: tl.constexpr,
                   WHOLE: tl.constexpr):
    f = tl.arange(0, ROWS * BLOCK_N)
    # A whole block's span ends at ROWS x n_cols, a multiple of ROWS: Triton sees that its mask changes only
    # between 16-byte vectors and loads vectors. The last, partial block ends at `limit`, where the tensor does.
    # (Each mask is built in its own branch: one mask chosen at run time would hide that from Triton.)
    if WHOLE:
        ok = f < ROWS * n_cols
    else:
        ok = f < limit
    cols = tl.arange(0, BLOCK_N)[None, :]
    y = _rows_of_span(tl.load(y_ptr + start + f, mask=ok, other=0.0), n_cols, ROWS, BLOCK_N)
    dy = _rows_of_span(tl.load(dy_ptr + start + f, mask=ok, other=0.0), n_cols, ROWS, BLOCK_N)
    dot = tl.sum(tl.where(cols < n_cols, y * dy, 0.0), axis=1)
    dx = y * (dy - dot[:, None])
    tl.store(dx_ptr + start + f, _span_of_rows(dx, n_cols, ROWS, BLOCK_N), mask=ok)


@triton.jit
def softmax_backward_short_rows_kernel(
    y_ptr, dy_ptr, dx_ptr,
    y_row_stride, dy_row_stride, dx_row_stride,
    n_rows, n_cols,
    ROWS: tl.constexpr, BLOCK_N: tl.constexpr,
):
    # Packed rows only (every row stride = n_cols; launch/launches.py plans other spacings on the rows kernel).
    n_full = n_rows // ROWS
    for block in tl.range(tl.program_id(0), tl.cdiv(n_rows, ROWS), tl.num_programs(0)):
        start = tl.cast(block, tl.int64) * (ROWS * n_cols)
        if block < n_full:
            _backward_span(y_ptr, dy_ptr, dx_ptr, start, n_cols, 0, ROWS, BLOCK_N, True)
        else:
            _backward_span(y_ptr, dy_ptr, dx_ptr, start, n_cols, (n_rows - block * ROWS) * n_cols, ROWS, BLOCK_N,
                           False)
