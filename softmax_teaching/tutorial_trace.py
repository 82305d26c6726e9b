"""Replaying the tutorial kernel: what each row looked like at every stage, and who handled it.

The explorer app never re-computes softmax to draw it. It runs the real kernel (`tutorial_kernel.py`) with its
TRACE switch on, which makes every program also write what it saw — the loaded row, row − max, exp, the
output, and the scalars (program, loop iteration, max, sum) — into a side buffer. Here that buffer is
unpacked into plain numpy arrays inside frozen dataclasses, so a UI can cache and draw them.

The broken variants flip the kernel's other teaching switches:
  pad_zero       masked lanes are loaded as 0.0 instead of -inf (exp(0) = 1 lands in the sum)
  no_store_mask  the store writes all BLOCK_SIZE lanes, so padded lanes land past the end of the row
  all_neg_inf    the kernel is correct, but one input row is entirely -inf (-inf - (-inf) is NaN)

The output is written into a buffer larger than the matrix ("guard" space after the last row), filled
with a value softmax can never produce, so that every address the kernel wrote is visible afterwards —
including the ones it should not have touched.

Under Triton's interpreter each traced row costs a few milliseconds, so traces are capped in size.
"""
from __future__ import annotations

import dataclasses
from dataclasses import dataclass

import numpy as np
import torch

from softmax_core.hardware import dtypes, runtime
from softmax_core.hardware.gpu import GpuSpec, default_gpu
from softmax_core.kernels.tutorial import TRACE_SCALARS, TRACE_STAGES, trace_row_words
from softmax_core.plans.tutorial import LaunchPlan, plan_launch
from softmax_core.launch.api import launch_tutorial_kernel
from softmax_teaching.traced_matrix import TracedMatrix

VARIANTS = ("correct", "pad_zero", "no_store_mask", "all_neg_inf")
MAX_TRACE_ROWS = 256          # ~3 ms per row in the interpreter: 256 rows stay under a second
MAX_TRACE_BLOCK = 16384       # the trace buffer holds 4 x BLOCK_SIZE floats per row
# Softmax outputs lie in [0, 1] (or are NaN), so a negative fill value marks "never written".
UNWRITTEN = -1.0


def _dtype(dtype) -> torch.dtype:
    return dtypes.of(dtype, dtypes.TUTORIAL_DTYPES).torch


def _check(n_rows: int, n_cols: int, variant: str) -> None:
    if variant not in VARIANTS:
        raise ValueError(f"variant must be one of {', '.join(VARIANTS)}, got {variant!r}")
    if not 1 <= n_rows <= MAX_TRACE_ROWS:
        raise ValueError(f"a trace covers 1 to {MAX_TRACE_ROWS} rows, got {n_rows}")
    if n_cols < 1:
        raise ValueError(f"n_cols must be positive, got {n_cols}")


def launch_flags(variant: str) -> dict:
    """The constexpr flags a variant launches the tutorial kernel with (PAD_VALUE, STORE_MASKED)."""
    return {"PAD_VALUE": 0.0 if variant == "pad_zero" else float("-inf"),
            "STORE_MASKED": variant != "no_store_mask"}


_flags = launch_flags


def _input(n_rows: int, n_cols: int, dtype: torch.dtype, seed: int, variant: str, poisoned_row: int):
    # One generator per row, seeded by (seed, row): a row's values depend on its index only, so asking for
    # more rows adds rows and leaves the existing ones as they were.
    generator = torch.Generator()
    x = torch.empty(n_rows, n_cols)
    for r in range(n_rows):
        torch.randn(n_cols, generator=generator.manual_seed(seed * 1_000_003 + r), out=x[r])
    x = x.to(dtype)
    if variant == "all_neg_inf":
        x[poisoned_row] = float("-inf")
    return x.to(runtime.kernel_device())


def _guarded_output(n_rows: int, n_cols: int, guard: int, dtype: torch.dtype):
    """An output matrix that is a view at the start of a longer buffer filled with UNWRITTEN."""
    buffer = torch.full((n_rows * n_cols + guard,), UNWRITTEN, dtype=dtype, device=runtime.kernel_device())
    return buffer, buffer[: n_rows * n_cols].view(n_rows, n_cols)


def _as_numpy(t: torch.Tensor) -> np.ndarray:
    return t.detach().to("cpu", torch.float32).numpy().copy()


@dataclass(frozen=True, eq=False)
class Trace(TracedMatrix):
    """One launch of the tutorial kernel with TRACE on. Row r of the matrix is row r of every array."""

    plan: LaunchPlan              # the plan it ran on (num_programs may have been overridden)
    variant: str
    seed: int
    poisoned_row: int | None      # the all -inf row (variant "all_neg_inf")
    x: np.ndarray                 # (n_rows, n_cols) input, as float32
    stages: np.ndarray | None     # (n_rows, len(TRACE_STAGES), BLOCK_SIZE), or None if not kept
    program: np.ndarray           # (n_rows,) which program handled the row, as recorded by the kernel
    iteration: np.ndarray         # (n_rows,) in which trip through its tl.range loop
    row_max: np.ndarray           # (n_rows,)
    row_sum: np.ndarray           # (n_rows,)
    buffer: np.ndarray            # output buffer incl. guard space, NaN where nothing was written
    written: np.ndarray           # bool, same shape as buffer: did any store touch this address
    reference: np.ndarray         # (n_rows, n_cols) torch.softmax of x, for judging the output

    @property
    def block_size(self) -> int:
        return self.plan.block_size

    @property
    def num_programs(self) -> int:
        return self.plan.num_programs

    @property
    def num_stages(self) -> int:
        return self.plan.num_stages

    @property
    def guard_start(self) -> int:
        """First address past the matrix: anything written from here on is out of bounds."""
        return self.n_rows * self.n_cols

    @property
    def output(self) -> np.ndarray:
        return self.buffer[: self.guard_start].reshape(self.n_rows, self.n_cols)

    @property
    def n_iterations(self) -> int:
        return int(self.iteration.max()) + 1

    def stage(self, row: int, name: str) -> np.ndarray:
        """The BLOCK_SIZE values row `row` held at stage `name` (one of TRACE_STAGES)."""
        if self.stages is None:
            raise ValueError("this trace was taken with keep_stages=False")
        return self.stages[row, TRACE_STAGES.index(name)]

    def rows_of_program(self, program: int) -> np.ndarray:
        """The rows program `program` handled, in the order it handled them."""
        rows = np.flatnonzero(self.program == program)
        return rows[np.argsort(self.iteration[rows], kind="stable")]

    def right_elements(self, rtol: float = 1e-3, atol: float = 1e-6) -> np.ndarray:
        """(n_rows, n_cols) bool: the stored output equals torch.softmax's within the tolerance (a NaN where
        torch also gives NaN counts as right). atol is tiny because probabilities themselves are small."""
        return np.isclose(self.output, self.reference, rtol=rtol, atol=atol, equal_nan=True)

    def wrong_rows(self, rtol: float = 1e-3, atol: float = 1e-6) -> np.ndarray:
        """Rows with at least one stored output that differs from torch.softmax."""
        return np.flatnonzero(~self.right_elements(rtol, atol).all(axis=1))

    @property
    def out_of_bounds_writes(self) -> np.ndarray:
        """Addresses past the matrix that some store wrote."""
        return self.guard_start + np.flatnonzero(self.written[self.guard_start:])


def trace_rows(n_rows: int, n_cols: int, *, num_programs: int | None = None, num_stages: int | None = None,
               dtype="float32", variant: str = "correct", seed: int = 0, poisoned_row: int = 0,
               gpu: GpuSpec | None = None, keep_stages: bool = True) -> Trace:
    """Run the tutorial kernel with TRACE on over an n_rows x n_cols random matrix and unpack what it recorded.

    num_programs / num_stages default to the launch plan for `gpu` (this machine's GPU, else the H200).
    Raises KernelDoesNotFit when not even one program fits on the GPU (the tutorial's OutOfResources).
    """
    _check(n_rows, n_cols, variant)
    dtype = _dtype(dtype)
    if not 0 <= poisoned_row < n_rows:
        raise ValueError(f"poisoned_row must be a row of the matrix (0..{n_rows - 1}), got {poisoned_row}")
    plan = plan_launch(n_rows, n_cols, dtype, gpu or default_gpu())
    if plan.block_size > MAX_TRACE_BLOCK:
        raise ValueError(f"a trace holds rows up to {MAX_TRACE_BLOCK} values wide; BLOCK_SIZE {plan.block_size} "
                         f"is too big to replay in the interpreter")
    if num_programs is not None:
        if num_programs < 1:
            raise ValueError(f"num_programs must be at least 1, got {num_programs}")
        plan = dataclasses.replace(plan, num_programs=num_programs)
    if num_stages is not None:
        if num_stages < 1:
            raise ValueError(f"num_stages must be at least 1, got {num_stages}")
        plan = dataclasses.replace(plan, num_stages=num_stages)

    x = _input(n_rows, n_cols, dtype, seed, variant, poisoned_row)
    # Without the store mask a row writes BLOCK_SIZE lanes; the last row's extra lanes fall in the guard.
    guard = plan.block_size - n_cols + 8
    buffer, y = _guarded_output(n_rows, n_cols, guard, dtype)
    row_words = trace_row_words(plan.block_size)
    # every traced row is written in full by the program that handles it, so no fill is needed
    trace = torch.empty((n_rows * row_words,), dtype=torch.float32, device=x.device)
    with np.errstate(invalid="ignore"):  # the all -inf row: -inf - (-inf) = NaN on purpose
        launch_tutorial_kernel(x, y, plan, trace=trace, TRACE=True, TRACE_ROW=row_words, **_flags(variant))

    per_row = trace.view(n_rows, row_words).cpu()
    scalars = per_row[:, -len(TRACE_SCALARS):].numpy()
    stages = None
    if keep_stages:
        stages = per_row[:, : len(TRACE_STAGES) * plan.block_size].reshape(
            n_rows, len(TRACE_STAGES), plan.block_size).numpy().copy()
    values = _as_numpy(buffer)
    written = values != UNWRITTEN
    values[~written] = np.nan
    reference = _as_numpy(torch.softmax(x.double(), dim=-1))
    return Trace(plan=plan, variant=variant, seed=seed,
                 poisoned_row=poisoned_row if variant == "all_neg_inf" else None,
                 x=_as_numpy(x), stages=stages,
                 program=scalars[:, TRACE_SCALARS.index("program")].astype(np.int64),
                 iteration=scalars[:, TRACE_SCALARS.index("iteration")].astype(np.int64),
                 row_max=scalars[:, TRACE_SCALARS.index("row_max")].copy(),
                 row_sum=scalars[:, TRACE_SCALARS.index("row_sum")].copy(),
                 buffer=values, written=written, reference=reference)


@dataclass(frozen=True)
class StoreFootprint:
    """Where one row's store landed, measured by running the kernel on that row alone."""

    row: int
    n_rows: int
    n_cols: int
    block_size: int
    store_masked: bool
    addresses: np.ndarray         # every address (element index from the matrix's start) the store wrote

    @property
    def row_start(self) -> int:
        return self.row * self.n_cols

    @property
    def row_end(self) -> int:
        """One past the row's last element."""
        return self.row_start + self.n_cols

    @property
    def stray(self) -> np.ndarray:
        """Addresses written outside the row."""
        a = self.addresses
        return a[(a < self.row_start) | (a >= self.row_end)]

    @property
    def past_matrix(self) -> np.ndarray:
        """Stray addresses beyond the last element of the whole matrix: memory the tensor does not own."""
        return self.stray[self.stray >= self.n_rows * self.n_cols]

    def rows_hit(self) -> list[int]:
        """Other rows of the matrix whose elements this row's store overwrote."""
        inside = self.stray[self.stray < self.n_rows * self.n_cols]
        return sorted(set((inside // self.n_cols).tolist()))


def store_footprint(n_rows: int, n_cols: int, row: int, *, store_masked: bool = True, dtype="float32",
                    gpu: GpuSpec | None = None) -> StoreFootprint:
    """Launch the kernel on row `row` alone, writing into a buffer laid out like the whole matrix (plus
    guard space) and filled with a value softmax never writes; every changed address is one it stored to."""
    _check(n_rows, n_cols, "correct")
    if not 0 <= row < n_rows:
        raise ValueError(f"row must be in 0..{n_rows - 1}, got {row}")
    dtype = _dtype(dtype)
    plan = dataclasses.replace(plan_launch(n_rows, n_cols, dtype, gpu or default_gpu()), num_programs=1)
    x = _input(n_rows, n_cols, dtype, 0, "correct", 0)[row: row + 1]
    guard = plan.block_size - n_cols + 8
    buffer, y = _guarded_output(n_rows, n_cols, guard, dtype)
    launch_tutorial_kernel(x, y[row: row + 1], plan, STORE_MASKED=store_masked)
    written = np.flatnonzero(_as_numpy(buffer) != UNWRITTEN)
    return StoreFootprint(row, n_rows, n_cols, plan.block_size, store_masked, written)

# Long rows (the tiled and split kernels) are traced in their own module.
from softmax_teaching.long_row_trace import trace_online, trace_split  # noqa: E402,F401
