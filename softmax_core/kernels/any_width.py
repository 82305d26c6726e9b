"""Rows of any width read with 16-byte vector loads: an aligned body between two masked edges.

Triton's JIT proves that a load can be one 16-byte vector only when the address of its first element is a
multiple of 16 bytes and the mask is constant over the vector. It proves that from arguments it sees as
multiples of 16. A row of 50257 bf16 values (GPT-2's vocabulary) breaks both: the row stride is odd, so rows
start anywhere, and the width is odd, so `cols < n_cols` could change inside any vector. The tuned kernels
then load one value at a time, and a bf16 row takes eight load instructions where one would do.

Here each row is read in three pieces. With VEC values in 16 bytes and the row starting at element s:
  head - the VEC - (s mod VEC) values (or none) before the first multiple of VEC at or after s;
  body - from that multiple, a whole number of vectors, as long as fits: its start is computed as
         ((s + VEC - 1) // VEC) * VEC and its length as (n // VEC) * VEC, expressions whose divisibility
         Triton's analysis sees, so every body load and store is a 16-byte vector;
  tail - the fewer than VEC values after the body.
The edges are one masked VEC-wide load each. The output (and, backward, dy and dx) take the same pieces when
their rows are spaced like x's (a contiguous x and its fresh output are), which the kernel checks; otherwise
they are written at their own offsets, value by value.

One kernel does whole rows (ONE_TILE: the body is one tile, held in registers, read once) and long rows
(two passes over TILE-wide tiles of the body with the online (max, sum), pass 2 last tile first), one
program per row, persistent over rows. Backward: dx = y * (dy - sum(y * dy)) in the same pieces.
"""
from __future__ import annotations

from softmax_core.hardware import runtime  # noqa: F401  (first: where the interpreter was asked for, triton's library is made interpretable before @triton.jit runs)

import triton
import triton.language as tl

from softmax_core.kernels.tuned import fast_exp


@triton.jit
def row_pieces(row, row_stride, n_cols, VEC: tl.constexpr):
    """The row's start s, its body's start (a multiple of VEC), and the head, body and tail lengths."""
    s = tl.cast(row, tl.int64) * row_stride
    body_start = ((s + VEC - 1) // VEC) * VEC
    head = tl.minimum((body_start - s).to(tl.int32), n_cols)
    body = ((n_cols - head) // VEC) * VEC
    return s, body_start, head, body, n_cols - head - body


@triton.jit
def softmax_any_width_kernel(
    x_ptr, y_ptr,
    x_row_stride, y_row_stride,
    n_rows, n_cols,
    TILE: tl.constexpr, VEC: tl.constexpr, ONE_TILE: tl.constexpr, SAFE: tl.constexpr,
):
    offs = tl.arange(0, TILE)
    edge = tl.arange(0, VEC)
    same_spacing = x_row_stride == y_row_stride
    for row in tl.range(tl.program_id(0), n_rows, tl.num_programs(0)):
        s, b, head, body, tail = row_pieces(row, x_row_stride, n_cols, VEC)
        # where y's pieces start: x's offsets when the rows are spaced alike (then y's body is aligned too)
        y_s = tl.where(same_spacing, s, tl.cast(row, tl.int64) * y_row_stride)
        x_head = tl.load(x_ptr + s + edge, mask=edge < head, other=float("-inf")).to(tl.float32)
        x_tail = tl.load(x_ptr + b + body + edge, mask=edge < tail, other=float("-inf")).to(tl.float32)
        edge_max = tl.maximum(tl.max(x_head, axis=0), tl.max(x_tail, axis=0))
        if ONE_TILE:
            x = tl.load(x_ptr + b + offs, mask=offs < body, other=float("-inf"),
                        eviction_policy="evict_first").to(tl.float32)
            row_max = tl.maximum(tl.max(x, axis=0), edge_max)
            if SAFE:
                row_max = tl.where(row_max == float("-inf"), 0.0, row_max)
            numerator = fast_exp(x - row_max, False)
            row_sum = (tl.sum(numerator, axis=0) + tl.sum(fast_exp(x_head - row_max, False), axis=0)
                       + tl.sum(fast_exp(x_tail - row_max, False), axis=0))
        else:
            run_max = edge_max
            shift = tl.where(run_max == float("-inf"), 0.0, run_max)
            run_sum = tl.sum(fast_exp(x_head - shift, False), axis=0) + tl.sum(fast_exp(x_tail - shift, False), axis=0)
            for t in range(0, tl.cdiv(body, TILE)):
                cols = t * TILE + offs
                x = tl.load(x_ptr + b + cols, mask=cols < body, other=float("-inf"),
                            eviction_policy="evict_last").to(tl.float32)
                new_max = tl.maximum(run_max, tl.max(x, axis=0))
                # While every value so far is -inf, shift by 0: -inf - (-inf) would be NaN.
                shift = tl.where(new_max == float("-inf"), 0.0, new_max)
                run_sum = run_sum * fast_exp(run_max - shift, False) + tl.sum(fast_exp(x - shift, False), axis=0)
                run_max = new_max
            row_max = run_max
            row_sum = run_sum
            if SAFE:
                row_max = tl.where(row_max == float("-inf"), 0.0, row_max)
        inv_sum = 1.0 / row_sum
        if SAFE:
            inv_sum = tl.where(row_sum == 0.0, 0.0, inv_sum)
        if ONE_TILE:
            if same_spacing:
                tl.store(y_ptr + b + offs, numerator * inv_sum, mask=offs < body)
            else:
                tl.store(y_ptr + y_s + head + offs, numerator * inv_sum, mask=offs < body)
        else:
            n_tiles = tl.cdiv(body, TILE)
            for t in range(0, n_tiles):   # last tile first: it is the likeliest still in L2
                cols = (n_tiles - 1 - t) * TILE + offs
                mask = cols < body
                x = tl.load(x_ptr + b + cols, mask=mask, other=float("-inf"),
                            eviction_policy="evict_first").to(tl.float32)
                out = fast_exp(x - row_max, False) * inv_sum
                if same_spacing:
                    tl.store(y_ptr + b + cols, out, mask=mask, eviction_policy="evict_first")
                else:
                    tl.store(y_ptr + y_s + head + cols, out, mask=mask, eviction_policy="evict_first")
        tl.store(y_ptr + y_s + edge, fast_exp(x_head - row_max, False) * inv_sum, mask=edge < head)
        tl.store(y_ptr + y_s + head + body + edge, fast_exp(x_tail - row_max, False) * inv_sum, mask=edge < tail)


@triton.jit
def softmax_backward_any_width_kernel(
    y_ptr, dy_ptr, dx_ptr,
    y_row_stride, dy_row_stride, dx_row_stride,
    n_rows, n_cols,
    TILE: tl.constexpr, VEC: tl.constexpr, ONE_TILE: tl.constexpr,
):
    offs = tl.arange(0, TILE)
    edge = tl.arange(0, VEC)
    same_spacing = (dy_row_stride == y_row_stride) & (dx_row_stride == y_row_stride)
    for row in tl.range(tl.program_id(0), n_rows, tl.num_programs(0)):
        s, b, head, body, tail = row_pieces(row, y_row_stride, n_cols, VEC)
        r64 = tl.cast(row, tl.int64)
        dy_s = tl.where(same_spacing, s, r64 * dy_row_stride)
        dx_s = tl.where(same_spacing, s, r64 * dx_row_stride)
        y_head = tl.load(y_ptr + s + edge, mask=edge < head, other=0.0).to(tl.float32)
        dy_head = tl.load(dy_ptr + dy_s + edge, mask=edge < head, other=0.0).to(tl.float32)
        y_tail = tl.load(y_ptr + b + body + edge, mask=edge < tail, other=0.0).to(tl.float32)
        dy_tail = tl.load(dy_ptr + dy_s + head + body + edge, mask=edge < tail, other=0.0).to(tl.float32)
        dot = tl.sum(y_head * dy_head, axis=0) + tl.sum(y_tail * dy_tail, axis=0)
        if ONE_TILE:
            mask = offs < body
            y = tl.load(y_ptr + b + offs, mask=mask, other=0.0).to(tl.float32)
            if same_spacing:
                dy = tl.load(dy_ptr + b + offs, mask=mask, other=0.0).to(tl.float32)
            else:
                dy = tl.load(dy_ptr + dy_s + head + offs, mask=mask, other=0.0).to(tl.float32)
            dot += tl.sum(y * dy, axis=0)
            if same_spacing:
                tl.store(dx_ptr + b + offs, y * (dy - dot), mask=mask)
            else:
                tl.store(dx_ptr + dx_s + head + offs, y * (dy - dot), mask=mask)
        else:
            n_tiles = tl.cdiv(body, TILE)
            for t in range(0, n_tiles):
                cols = t * TILE + offs
                mask = cols < body
                y = tl.load(y_ptr + b + cols, mask=mask, other=0.0, eviction_policy="evict_last").to(tl.float32)
                if same_spacing:
                    dy = tl.load(dy_ptr + b + cols, mask=mask, other=0.0, eviction_policy="evict_last")
                else:
                    dy = tl.load(dy_ptr + dy_s + head + cols, mask=mask, other=0.0, eviction_policy="evict_last")
                dot += tl.sum(y * dy.to(tl.float32), axis=0)
            for t in range(0, n_tiles):
                cols = (n_tiles - 1 - t) * TILE + offs
                mask = cols < body
                y = tl.load(y_ptr + b + cols, mask=mask, other=0.0, eviction_policy="evict_first").to(tl.float32)
                if same_spacing:
                    dy = tl.load(dy_ptr + b + cols, mask=mask, other=0.0, eviction_policy="evict_first")
                    tl.store(dx_ptr + b + cols, y * (dy.to(tl.float32) - dot), mask=mask,
                             eviction_policy="evict_first")
                else:
                    dy = tl.load(dy_ptr + dy_s + head + cols, mask=mask, other=0.0, eviction_policy="evict_first")
                    tl.store(dx_ptr + dx_s + head + cols, y * (dy.to(tl.float32) - dot), mask=mask,
                             eviction_policy="evict_first")
        tl.store(dx_ptr + dx_s + edge, y_head * (dy_head - dot), mask=edge < head)
        tl.store(dx_ptr + dx_s + head + body + edge, y_tail * (dy_tail - dot), mask=edge < tail)


def vector_values(element_bytes: int) -> int:
    """VEC: values in one 16-byte vector."""
    return 16 // element_bytes


# -- Tiny rows (routers: 8 experts; small heads) ------------------------------------------------------------
# A row of 8 bf16 values is one 16-byte vector, but `cols < n_cols` with n_cols = 8 is not a multiple of 16
# to Triton, so it loads them one at a time. When the width is a power of two and the rows are packed
# (row stride = width = BLOCK_N, checked at run time) no column mask is needed and each thread loads a row as
# vectors; ROWS rows per program keep each program's bytes up.


@triton.jit
def softmax_tiny_rows_kernel(
    x_ptr, y_ptr,
    x_row_stride, y_row_stride,
    n_rows, n_cols,
    ROWS: tl.constexpr, BLOCK_N: tl.constexpr, SAFE: tl.constexpr,
):
    cols = tl.arange(0, BLOCK_N)
    packed = (x_row_stride == BLOCK_N) & (y_row_stride == BLOCK_N) & (n_cols == BLOCK_N)
    for block in tl.range(tl.program_id(0), tl.cdiv(n_rows, ROWS), tl.num_programs(0)):
        rows = (block * ROWS + tl.arange(0, ROWS)).to(tl.int64)
        row_ok = (rows < n_rows)[:, None]
        at = rows[:, None] * BLOCK_N + cols[None, :]
        if packed:
            x = tl.load(x_ptr + at, mask=row_ok, other=float("-inf"), eviction_policy="evict_first")
        else:
            mask = row_ok & (cols < n_cols)[None, :]
            x = tl.load(x_ptr + rows[:, None] * x_row_stride + cols[None, :], mask=mask, other=float("-inf"))
        x = x.to(tl.float32)
        row_max = tl.max(x, axis=1)
        if SAFE:
            row_max = tl.where(row_max == float("-inf"), 0.0, row_max)
        numerator = fast_exp(x - row_max[:, None], False)
        row_sum = tl.sum(numerator, axis=1)
        inv_sum = 1.0 / row_sum
        if SAFE:
            inv_sum = tl.where(row_sum == 0.0, 0.0, inv_sum)
        y = numerator * inv_sum[:, None]
        if packed:
            tl.store(y_ptr + at, y, mask=row_ok)
        else:
            tl.store(y_ptr + rows[:, None] * y_row_stride + cols[None, :], y, mask=row_ok & (cols < n_cols)[None, :])
