"""The tuned kernels behind `softmax_core.softmax` whose programs each own whole rows: the tutorial's idea,
taken further.

The plan (softmax_core.plans.tuned) picks a shape of work per row length:
  rows  - a [ROWS, BLOCK_N] block: each program holds ROWS whole rows in registers, reads them once
          and writes them once. ROWS > 1 for short rows, so that one program still moves enough bytes
          to hide DRAM latency (the tutorial's one-row programs are latency-bound below N = 1K).
  tiled - a row too wide to hold at once is walked in TILE-wide tiles, twice. Pass 1 keeps a running
          max and sum (the online normaliser: when the max grows, the sum so far is rescaled by
          exp(old_max - new_max)). Pass 2 writes exp(x - max) / sum. Pass 2 walks the tiles in reverse,
          so the tiles pass 1 touched last are still in L2 and most of the second read never reaches DRAM.
  split - a row shared by programs that run at once: softmax_core.kernels.shared_rows.
Backward: dx = y * (dy - sum(dy * y)), with the same shapes.

All arithmetic is float32 (float64 for float64 input); loads upcast, stores round to the output's dtype.
Row indices are widened to int64 before they meet a stride, so M x N may exceed 2**31 elements.
"""
from __future__ import annotations

from softmax_core.hardware import runtime  # noqa: F401  (first: where the interpreter was asked for, triton's library is made interpretable before @triton.jit runs)

import triton
import triton.language as tl

@triton.jit
def fast_exp(x, FP64: tl.constexpr):
    """exp at the kernel's precision. float32: exp(x) = exp2(x * log2(e)), and exp2 is the GPU's native
    instruction. float64 keeps the exact exp."""
    if FP64:
        return tl.exp(x)
    else:
        return tl.exp2(x * 1.4426950408889634)


@triton.jit
def upcast(x, FP64: tl.constexpr):
    """Upcast to the accumulation type: float64 for float64 input, float32 for everything else."""
    if FP64:
        return x.to(tl.float64)
    else:
        return x.to(tl.float32)


@triton.jit
def online_update(running_max, running_sum, x, FP64: tl.constexpr):
    """One tile of the online normaliser: the (max, sum) so far, and the tile x, give the new (max, sum)."""
    new_max = tl.maximum(running_max, tl.max(x, axis=0))
    # While every value so far is -inf, shift by 0 instead: -inf - (-inf) would be NaN and
    # poison a row whose real values come in a later tile.
    shift = tl.where(new_max == float("-inf"), 0.0, new_max)
    rescale = fast_exp(running_max - shift, FP64)        # moves the sum so far to the new max
    tile_sum = tl.sum(fast_exp(x - shift, FP64), axis=0)
    running_sum = running_sum * rescale + tile_sum
    return new_max, running_sum, rescale, tile_sum


@triton.jit
def _rows_forward(x_ptr, y_ptr, x_row_stride, y_row_stride, n_rows, n_cols,
                  ROWS: tl.constexpr, BLOCK_N: tl.constexpr, SAFE: tl.constexpr, FP64: tl.constexpr):
    # Programs walk blocks of rows with a stride of the grid size: a grid of exactly
    # cdiv(n_rows, ROWS) programs makes this a plain grid; a smaller one makes it persistent.
    n_blocks = tl.cdiv(n_rows, ROWS)
    cols = tl.arange(0, BLOCK_N)
    col_ok = cols < n_cols
    for block in tl.range(tl.program_id(0), n_blocks, tl.num_programs(0)):
        rows = block * ROWS + tl.arange(0, ROWS)
        mask = (rows < n_rows)[:, None] & col_ok[None, :]
        rows64 = rows.to(tl.int64)
        x = upcast(tl.load(x_ptr + rows64[:, None] * x_row_stride + cols[None, :], mask=mask,
                         other=float("-inf"), eviction_policy="evict_first"), FP64)
        row_max = tl.max(x, axis=1)
        if SAFE:  # an all -inf row gives zeros instead of NaN
            row_max = tl.where(row_max == float("-inf"), 0.0, row_max)
        numerator = fast_exp(x - row_max[:, None], FP64)
        row_sum = tl.sum(numerator, axis=1)
        inv_sum = 1.0 / row_sum          # one division per row, then a multiply per element
        if SAFE:
            inv_sum = tl.where(row_sum == 0.0, 0.0, inv_sum)
        y = numerator * inv_sum[:, None]
        tl.store(y_ptr + rows64[:, None] * y_row_stride + cols[None, :], y, mask=mask)


@triton.jit
def as_multiple(value, VEC: tl.constexpr):
    """`value` (a multiple of VEC) written as (value // VEC) * VEC: the same number, in a form whose
    divisibility Triton's analysis sees, so loads at offsets built from it can be 16-byte vectors."""
    return (value // VEC) * VEC


@triton.jit
def softmax_rows_kernel(
    x_ptr, y_ptr,
    x_row_stride, y_row_stride,
    n_rows, n_cols,
    ROWS: tl.constexpr, BLOCK_N: tl.constexpr,
    SAFE: tl.constexpr, FP64: tl.constexpr, VEC: tl.constexpr = 1,
):
    # VEC > 1 (values in 16 bytes): when the width and both row strides are multiples of VEC (checked here,
    # at run time), every row starts on a 16-byte boundary and a mask changes only between vectors, so the
    # same block is read and written as vectors; Triton's JIT sees that only for multiples of 16 (3000 fp16
    # values, 1000 bf16 ones are multiples of 8 but not of 16). Any other spacing takes the same code unhinted.
    if VEC > 1:
        if (n_cols % VEC == 0) & (x_row_stride % VEC == 0) & (y_row_stride % VEC == 0):
            _rows_forward(x_ptr, y_ptr, as_multiple(x_row_stride, VEC), as_multiple(y_row_stride, VEC), n_rows,
                          as_multiple(n_cols, VEC), ROWS, BLOCK_N, SAFE, FP64)
        else:
            _rows_forward(x_ptr, y_ptr, x_row_stride, y_row_stride, n_rows, n_cols, ROWS, BLOCK_N, SAFE, FP64)
    else:
        _rows_forward(x_ptr, y_ptr, x_row_stride, y_row_stride, n_rows, n_cols, ROWS, BLOCK_N, SAFE, FP64)


# What the tiled kernel writes per row and tile when TRACE is on (one float32 each, in this order).
TRACE_TILE_FIELDS = ("m_before", "d_before", "tile_max", "m_after", "rescale", "tile_sum", "d_after", "program")
TRACE_TILE_WORDS = tl.constexpr(len(TRACE_TILE_FIELDS))


@triton.jit
def softmax_tiled_kernel(
    x_ptr, y_ptr,
    x_row_stride, y_row_stride,
    n_rows, n_cols,
    TILE: tl.constexpr,
    SAFE: tl.constexpr, FP64: tl.constexpr,
    trace_ptr=None, TRACE: tl.constexpr = False,
):
    # TRACE (off by default, and then compiled away with trace_ptr) also writes, per row and tile, the
    # TRACE_TILE_FIELDS below to trace_ptr: what pass 1 knew before and after the tile (long_row_trace.py).
    n_tiles = tl.cdiv(n_cols, TILE)
    offsets = tl.arange(0, TILE)
    for row in tl.range(tl.program_id(0), n_rows, tl.num_programs(0)):
        x_row = x_ptr + tl.cast(row, tl.int64) * x_row_stride
        y_row = y_ptr + tl.cast(row, tl.int64) * y_row_stride
        # Pass 1: one (max, sum) for the whole row, one tile at a time.
        running_max = upcast(tl.full((), float("-inf"), tl.float32), FP64)
        running_sum = upcast(tl.full((), 0.0, tl.float32), FP64)
        for t in range(0, n_tiles):
            cols = t * TILE + offsets
            x = upcast(tl.load(x_row + cols, mask=cols < n_cols, other=float("-inf"),
                             eviction_policy="evict_last"), FP64)
            new_max, new_sum, rescale, tile_sum = online_update(running_max, running_sum, x, FP64)
            if TRACE:
                record = trace_ptr + (tl.cast(row, tl.int64) * n_tiles + t) * TRACE_TILE_WORDS
                tl.store(record + 0, running_max)
                tl.store(record + 1, running_sum)
                tl.store(record + 2, tl.max(x, axis=0))
                tl.store(record + 3, new_max)
                tl.store(record + 4, rescale)
                tl.store(record + 5, tile_sum)
                tl.store(record + 6, new_sum)
                tl.store(record + 7, tl.program_id(0).to(tl.float32))
            running_max, running_sum = new_max, new_sum
        if SAFE:
            running_max = tl.where(running_max == float("-inf"), 0.0, running_max)
            inv_sum = tl.where(running_sum == 0.0, 0.0, 1.0 / running_sum)
        else:
            inv_sum = 1.0 / running_sum
        # Pass 2: last tile first, while it is still in L2.
        for t in range(0, n_tiles):
            cols = (n_tiles - 1 - t) * TILE + offsets
            mask = cols < n_cols
            x = upcast(tl.load(x_row + cols, mask=mask, other=float("-inf"), eviction_policy="evict_first"), FP64)
            tl.store(y_row + cols, fast_exp(x - running_max, FP64) * inv_sum, mask=mask, eviction_policy="evict_first")


@triton.jit
def _rows_backward(y_ptr, dy_ptr, dx_ptr, y_row_stride, dy_row_stride, dx_row_stride, n_rows, n_cols,
                   ROWS: tl.constexpr, BLOCK_N: tl.constexpr, FP64: tl.constexpr):
    # dx_i = y_i * (dy_i - sum_j dy_j * y_j): the Jacobian of softmax applied to dy, in one read of y and dy.
    n_blocks = tl.cdiv(n_rows, ROWS)
    cols = tl.arange(0, BLOCK_N)
    col_ok = cols < n_cols
    for block in tl.range(tl.program_id(0), n_blocks, tl.num_programs(0)):
        rows = (block * ROWS + tl.arange(0, ROWS)).to(tl.int64)
        mask = (rows < n_rows)[:, None] & col_ok[None, :]
        y = upcast(tl.load(y_ptr + rows[:, None] * y_row_stride + cols[None, :], mask=mask, other=0.0), FP64)
        dy = upcast(tl.load(dy_ptr + rows[:, None] * dy_row_stride + cols[None, :], mask=mask, other=0.0), FP64)
        dot = tl.sum(y * dy, axis=1)
        tl.store(dx_ptr + rows[:, None] * dx_row_stride + cols[None, :], y * (dy - dot[:, None]), mask=mask)


@triton.jit
def softmax_backward_rows_kernel(
    y_ptr, dy_ptr, dx_ptr,
    y_row_stride, dy_row_stride, dx_row_stride,
    n_rows, n_cols,
    ROWS: tl.constexpr, BLOCK_N: tl.constexpr, FP64: tl.constexpr, VEC: tl.constexpr = 1,
):
    # VEC as in softmax_rows_kernel: vector loads and stores when the width and the three row strides are
    # multiples of VEC.
    if VEC > 1:
        if ((n_cols % VEC == 0) & (y_row_stride % VEC == 0) & (dy_row_stride % VEC == 0)
                & (dx_row_stride % VEC == 0)):
            _rows_backward(y_ptr, dy_ptr, dx_ptr, as_multiple(y_row_stride, VEC), as_multiple(dy_row_stride, VEC),
                           as_multiple(dx_row_stride, VEC), n_rows, as_multiple(n_cols, VEC), ROWS, BLOCK_N, FP64)
        else:
            _rows_backward(y_ptr, dy_ptr, dx_ptr, y_row_stride, dy_row_stride, dx_row_stride, n_rows, n_cols,
                           ROWS, BLOCK_N, FP64)
    else:
        _rows_backward(y_ptr, dy_ptr, dx_ptr, y_row_stride, dy_row_stride, dx_row_stride, n_rows, n_cols,
                       ROWS, BLOCK_N, FP64)


@triton.jit
def softmax_backward_tiled_kernel(
    y_ptr, dy_ptr, dx_ptr,
    y_row_stride, dy_row_stride, dx_row_stride,
    n_rows, n_cols,
    TILE: tl.constexpr, FP64: tl.constexpr,
):
    n_tiles = tl.cdiv(n_cols, TILE)
    offsets = tl.arange(0, TILE)
    for row in tl.range(tl.program_id(0), n_rows, tl.num_programs(0)):
        row64 = tl.cast(row, tl.int64)
        dot = upcast(tl.full((), 0.0, tl.float32), FP64)
        for t in range(0, n_tiles):
            cols = t * TILE + offsets
            mask = cols < n_cols
            y = upcast(tl.load(y_ptr + row64 * y_row_stride + cols, mask=mask, other=0.0,
                             eviction_policy="evict_last"), FP64)
            dy = upcast(tl.load(dy_ptr + row64 * dy_row_stride + cols, mask=mask, other=0.0,
                              eviction_policy="evict_last"), FP64)
            dot += tl.sum(y * dy, axis=0)
        for t in range(0, n_tiles):
            cols = (n_tiles - 1 - t) * TILE + offsets
            mask = cols < n_cols
            y = upcast(tl.load(y_ptr + row64 * y_row_stride + cols, mask=mask, other=0.0,
                             eviction_policy="evict_first"), FP64)
            dy = upcast(tl.load(dy_ptr + row64 * dy_row_stride + cols, mask=mask, other=0.0,
                              eviction_policy="evict_first"), FP64)
            tl.store(dx_ptr + row64 * dx_row_stride + cols, y * (dy - dot), mask=mask, eviction_policy="evict_first")
