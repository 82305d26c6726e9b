"""The tutorial's fused softmax kernel: the one this project teaches with.

One program owns whole rows. It loads a row into on-chip memory once, does max -> subtract -> exp ->
sum -> divide there, and writes the row once: 2·M·N memory operations instead of the naive 8·M·N + 4·M.

Two groups of compile-time switches ride along for the explorer app; with their defaults the kernel
compiles to exactly the tutorial's kernel (a `tl.constexpr` that is False removes its code entirely):
  TRACE        also writes every intermediate of every row, and which program handled it, to `trace_ptr`
  PAD_VALUE    what masked lanes are filled with; -inf is the right answer, 0.0 shows why
  STORE_MASKED whether the store is masked; False shows where the padded lanes would land
  TRACE_ROW    words one traced row takes in `trace_ptr`: `trace_row_words(BLOCK_SIZE)`
"""
from __future__ import annotations

from softmax_core.hardware import runtime  # noqa: F401  (first: where the interpreter was asked for, triton's library is made interpretable before @triton.jit runs)

import triton
import triton.language as tl

# Layout of the trace buffer, per row: TRACE_STAGES vectors of BLOCK_SIZE values (the kernel stores them in
# this order), then TRACE_SCALARS.
TRACE_STAGES = ("loaded", "minus_max", "exp", "output")
TRACE_SCALARS = ("program", "iteration", "row_max", "row_sum")


def trace_row_words(block_size: int) -> int:
    """float32 words one traced row takes: its stage vectors, then its scalars."""
    return len(TRACE_STAGES) * block_size + len(TRACE_SCALARS)


@triton.jit
def tutorial_softmax_kernel(
    input_ptr, output_ptr,                 # pointers to the first element of x and y
    input_row_stride, output_row_stride,   # elements to skip to reach the next row (strided views work)
    n_rows, n_cols,                        # matrix shape
    trace_ptr,                             # only written when TRACE
    BLOCK_SIZE: tl.constexpr,              # next power of two >= n_cols: Triton blocks are powers of two
    num_stages: tl.constexpr,              # how many loop iterations the compiler may overlap
    TRACE: tl.constexpr = False,
    PAD_VALUE: tl.constexpr = float("-inf"),
    STORE_MASKED: tl.constexpr = True,
    TRACE_ROW: tl.constexpr = 0,
):
    # Persistent programs: there are fewer programs than rows, so each one walks the rows
    # row_start, row_start + P, row_start + 2P, ... where P is the number of programs in the grid.
    row_start = tl.program_id(0)
    row_step = tl.num_programs(0)
    # tl.range (not range) lets the compiler pipeline the loop: while one row is being reduced,
    # the load of the next row is already in flight. Rows are independent, so this is safe.
    for row_idx in tl.range(row_start, n_rows, row_step, num_stages=num_stages):
        row_start_ptr = input_ptr + row_idx * input_row_stride
        col_offsets = tl.arange(0, BLOCK_SIZE)
        mask = col_offsets < n_cols
        # Lanes past the end of the row get -inf: it is the max's identity, it stays -inf after the
        # subtraction, exp turns it into exactly 0, and 0 adds nothing to the sum.
        row = tl.load(row_start_ptr + col_offsets, mask=mask, other=PAD_VALUE).to(tl.float32)
        row_max = tl.max(row, axis=0)
        row_minus_max = row - row_max           # largest value becomes 0, so exp cannot overflow
        numerator = tl.exp(row_minus_max)
        denominator = tl.sum(numerator, axis=0)
        softmax_output = numerator / denominator
        output_row_start_ptr = output_ptr + row_idx * output_row_stride
        if STORE_MASKED:
            tl.store(output_row_start_ptr + col_offsets, softmax_output, mask=mask)
        else:
            tl.store(output_row_start_ptr + col_offsets, softmax_output)
        if TRACE:
            # Record what this program saw, so the app can replay it step by step.
            trace_row_ptr = trace_ptr + row_idx * TRACE_ROW
            tl.store(trace_row_ptr + col_offsets, row)
            tl.store(trace_row_ptr + BLOCK_SIZE + col_offsets, row_minus_max)
            tl.store(trace_row_ptr + 2 * BLOCK_SIZE + col_offsets, numerator)
            tl.store(trace_row_ptr + 3 * BLOCK_SIZE + col_offsets, softmax_output)
            scalars_ptr = trace_row_ptr + TRACE_ROW - 4    # the last 4 words: TRACE_SCALARS
            tl.store(scalars_ptr, row_start.to(tl.float32))
            tl.store(scalars_ptr + 1, ((row_idx - row_start) // row_step).to(tl.float32))
            tl.store(scalars_ptr + 2, row_max)
            tl.store(scalars_ptr + 3, denominator)
