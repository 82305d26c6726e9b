"""The choice a first attempt makes for a strided softmax: one program per reduced row, walking that row with
its stride (the tutorial kernel's shape, with the column step no longer 1). Element r of row (o, i) lies at
o * outer_stride + i * inner_stride + r * reduce_stride, so each load instruction asks every lane for a value
`reduce_stride` elements from its neighbour's. The transactions page records this kernel's loads beside the
planner's: it exists to be compared, and `sc.softmax` never runs it.

Arithmetic in float32; chunks of BLOCK values down the row, an online (max, sum), then a second walk writes.
"""
from __future__ import annotations

from softmax_core.hardware import runtime  # noqa: F401  (first: it picks the interpreter before @triton.jit runs)

import torch
import triton
import triton.language as tl

BLOCK_MAX = 1024          # values per chunk down the row
NUM_WARPS = 4


@triton.jit
def row_walk_kernel(x_ptr, y_ptr, n_inner, n_outer2, outer_stride, outer2_stride, inner_stride, reduce_stride,
                    n_reduce, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    inner = (pid % n_inner).to(tl.int64)
    outer = pid // n_inner
    o1 = (outer // n_outer2).to(tl.int64)
    o2 = (outer % n_outer2).to(tl.int64)
    start = o1 * outer_stride + o2 * outer2_stride + inner * inner_stride
    steps = tl.arange(0, BLOCK)
    run_max = tl.full((), float("-inf"), tl.float32)
    run_sum = tl.zeros((), tl.float32)
    for c in range(0, tl.cdiv(n_reduce, BLOCK)):
        r = c * BLOCK + steps
        x = tl.load(x_ptr + start + r.to(tl.int64) * reduce_stride, mask=r < n_reduce, other=float("-inf"))
        x = x.to(tl.float32)
        new_max = tl.maximum(run_max, tl.max(x, axis=0))
        run_sum = run_sum * tl.exp(run_max - new_max) + tl.sum(tl.exp(x - new_max), axis=0)
        run_max = new_max
    for c in range(0, tl.cdiv(n_reduce, BLOCK)):
        r = c * BLOCK + steps
        at = start + r.to(tl.int64) * reduce_stride
        x = tl.load(x_ptr + at, mask=r < n_reduce, other=float("-inf")).to(tl.float32)
        tl.store(y_ptr + at, (tl.exp(x - run_max) / run_sum).to(y_ptr.dtype.element_ty), mask=r < n_reduce)


def block_for(n_reduce: int) -> int:
    return min(triton.next_power_of_2(max(n_reduce, 1)), BLOCK_MAX)


def launch_row_walk(x: torch.Tensor, y: torch.Tensor, fold) -> None:
    """Launch over `fold` (the planner's description of x: n_outer, n_outer2, n_reduce, n_inner and their
    strides); y is written at x's own offsets (a buffer of x's storage size)."""
    grid = (fold.n_outer * fold.n_inner,)
    with runtime.one_launch_at_a_time():
        row_walk_kernel[grid](x, y, fold.n_inner, fold.n_outer2, fold.outer_stride, fold.outer2_stride,
                              fold.inner_stride, fold.reduce_stride, fold.n_reduce, BLOCK=block_for(fold.n_reduce),
                              num_warps=NUM_WARPS, num_stages=1)
