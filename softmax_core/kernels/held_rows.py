"""Long bfloat16 rows held in registers in their own 2-byte type: one read of the row, one write.

A row of 50,257 bf16 values (GPT-2's vocabulary) is 100 KB. Upcast to float32 it needs 64 values a thread in a
1024-thread program, every register the thread has, so the tuned kernels walk it in tiles and read it twice.
Kept as bf16, two values share a 32-bit register: a [PARTS, TILE] block of the row's body costs 512 threads 64
registers each, and one program holds the whole row.

The compiler keeps the block in bf16 only if nothing asks for all of it in float32 at once, so each pass
converts it afresh, and in a different way, so that no two passes share one float32 copy:
  max   - over the bits, as integers: a bf16's sign-magnitude bits, with the magnitude bits flipped for
          negative values, order as the floats do (_order_key); no conversion at all;
  sum   - exp(x - max) over x.to(float32);
  write - y = exp(x - (max + log(sum))), one exp and no divide, over x converted by moving its 16 bits to
          the top of a 32-bit word (which is what a bf16 is: a float32 with its low 16 bits cut).
The row is read as kernels/any_width.py reads it: an aligned body between two masked edges, so every body
load and store is a 16-byte vector whatever the width.
"""
from __future__ import annotations

from softmax_core.hardware import runtime  # noqa: F401  (must come first: it picks the interpreter before @triton.jit runs)

import triton
import triton.language as tl

from softmax_core.kernels.any_width import _pieces
from softmax_core.kernels.tuned import fast_exp


@triton.jit
def _order_key(bits):
    """The bf16 with these int16 bits, as an integer whose order is the floats' order (its own inverse)."""
    return bits ^ ((bits >> 15) & 0x7FFF)


@triton.jit
def _widen(x):
    """bf16 -> float32 by moving the 16 bits to the top of the word: exact, and not the `.to` the sum uses."""
    return (x.to(tl.int16, bitcast=True).to(tl.int32) << 16).to(tl.float32, bitcast=True)


@triton.jit
def softmax_held_row_kernel(
    x_ptr, y_ptr,
    x_row_stride, y_row_stride,
    n_rows, n_cols,
    PARTS: tl.constexpr, TILE: tl.constexpr, SAFE: tl.constexpr,
):
    VEC: tl.constexpr = 8          # bf16 values in one 16-byte vector
    at = tl.arange(0, PARTS)[:, None] * TILE + tl.arange(0, TILE)[None, :]
    edge = tl.arange(0, VEC)
    same_spacing = x_row_stride == y_row_stride
    for row in tl.range(tl.program_id(0), n_rows, tl.num_programs(0)):
        s, b, head, body, tail = _pieces(row, x_row_stride, n_cols, VEC)
        y_s = tl.where(same_spacing, s, tl.cast(row, tl.int64) * y_row_stride)
        x_head = tl.load(x_ptr + s + edge, mask=edge < head, other=float("-inf")).to(tl.float32)
        x_tail = tl.load(x_ptr + b + body + edge, mask=edge < tail, other=float("-inf")).to(tl.float32)
        x = tl.load(x_ptr + b + at, mask=at < body, other=float("-inf"), eviction_policy="evict_first")
        key = tl.max(tl.max(_order_key(x.to(tl.int16, bitcast=True)), axis=1), axis=0)
        body_max = _order_key(key.to(tl.int16)).to(tl.bfloat16, bitcast=True).to(tl.float32)
        row_max = tl.maximum(body_max, tl.maximum(tl.max(x_head, axis=0), tl.max(x_tail, axis=0)))
        if SAFE:  # an all -inf row gives zeros instead of NaN
            row_max = tl.where(row_max == float("-inf"), 0.0, row_max)
        row_sum = (tl.sum(tl.sum(fast_exp(x.to(tl.float32) - row_max, False), axis=1), axis=0)
                   + tl.sum(fast_exp(x_head - row_max, False), axis=0)
                   + tl.sum(fast_exp(x_tail - row_max, False), axis=0))
        # y = exp(x - max) / sum = exp(x - (max + log(sum)))
        shift = row_max + tl.log(row_sum)
        if SAFE:
            shift = tl.where(row_sum == 0.0, float("inf"), shift)
        out = fast_exp(_widen(x) - shift, False)
        if same_spacing:
            tl.store(y_ptr + b + at, out, mask=at < body, eviction_policy="evict_first")
        else:
            tl.store(y_ptr + y_s + head + at, out, mask=at < body, eviction_policy="evict_first")
        tl.store(y_ptr + y_s + edge, fast_exp(x_head - shift, False), mask=edge < head)
        tl.store(y_ptr + y_s + head + body + edge, fast_exp(x_tail - shift, False), mask=edge < tail)
