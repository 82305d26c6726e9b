"""A tuned softmax's launch plan: which path, its launch shape, the compiled kernel's resources, its occupancy
and why it was chosen (softmax_core.plans.tuned makes them; softmax_core.launch.launches runs them).

A plan owns its launch: `kernel` and `launches` (the constexprs of each launch) follow from the plan's own
fields, here and nowhere else. The planner compiles exactly these (judged in plans/kernel_jobs.py) and the launch
binds tensors to exactly these, so the registers a plan reports are those of the kernel that runs.
"""
from __future__ import annotations

from dataclasses import dataclass

import triton

from softmax_core.hardware import dtypes, runtime
from softmax_core.hardware.compile import KernelResources
from softmax_core.hardware.gpu import GpuSpec
from softmax_core.hardware.occupancy import Occupancy
from softmax_core.kernels.any_width import vector_values
from softmax_core.kernels.row_slots import SPIN_LIMIT
from softmax_core.plans.reasons import PlanReason

# Which kernel each kind of plan launches ("module:function").
ROWS_KERNEL = {"forward": "softmax_core.kernels.tuned:softmax_rows_kernel",
               "backward": "softmax_core.kernels.tuned:softmax_backward_rows_kernel"}
TILED_KERNEL = {"forward": "softmax_core.kernels.tuned:softmax_tiled_kernel",
                "backward": "softmax_core.kernels.tuned:softmax_backward_tiled_kernel"}
SPLIT_KERNEL = {"forward": "softmax_core.kernels.shared_rows:softmax_split_kernel",
                "backward": "softmax_core.kernels.shared_rows:softmax_backward_split_kernel"}
# Shared tiled rows: the backward only (the forward's long 2-byte rows take the split path).
TILED_SPLIT_KERNEL = {"backward": "softmax_core.kernels.shared_rows:softmax_backward_tiled_split_kernel"}
# The any-width kernels (plans/any_width.py): an aligned body between masked edges, and tiny packed rows.
EDGE_KERNEL = {"forward": "softmax_core.kernels.any_width:softmax_any_width_kernel",
               "backward": "softmax_core.kernels.any_width:softmax_backward_any_width_kernel"}
TINY_KERNEL = "softmax_core.kernels.any_width:softmax_tiny_rows_kernel"
# Short rows of any width (plans/any_width.py): one lane a row forward, packed rows regrouped backward.
SHORT_ROWS_KERNEL = {"forward": "softmax_core.kernels.short_rows:softmax_lane_rows_kernel",
                     "backward": "softmax_core.kernels.short_rows:softmax_backward_short_rows_kernel"}
# Short packed 2-byte rows, backward (plans/any_width.py): groups of rows read in words across their boundaries.
WORD_ROWS_KERNEL = {"backward": "softmax_core.kernels.word_rows:softmax_backward_word_rows_kernel"}
SHARED_ROW_KERNELS = (*SPLIT_KERNEL.values(), *TILED_SPLIT_KERNEL.values())   # they take a slots_ptr

Constexprs = tuple[tuple[str, object], ...]


@dataclass(frozen=True)
class SoftmaxPlan:
    gpu: GpuSpec
    direction: str                  # "forward" | "backward"
    n_rows: int
    n_cols: int
    dtype: str
    path: str                       # "rows": whole rows in registers | "split": a row shared by `split`
                                    # programs that run at once | "tiled": two passes over tiles
    rows_per_program: int           # rows path: rows one block holds
    block_n: int                    # rows path: padded row width | split: chunk width | tiled: tile width
    num_warps: int
    num_programs: int               # a grid smaller than the number of blocks makes the programs loop
    resources: KernelResources | None   # the compiled kernel's (None only in a draft the planner is judging)
    occupancy: Occupancy | None
    reason: PlanReason | None       # why this path: a code and its figures (reasons.py)
    split: int = 1                  # split path, or a shared tiled row: programs per row (num_programs is a
                                    # multiple of it; they run at once and meet through published slots)
    edges: bool = False             # read as an aligned body between masked edges, for rows Triton cannot prove
                                    # vector-aligned: rows / tiled, one row per program (kernels/any_width.py),
                                    # or split, its chunks covering the body (kernels/shared_rows.py, EDGES)
    tiny: bool = False              # rows, forward: packed power-of-two rows of at most TINY_MAX_ROW_BYTES,
                                    # loaded with no column mask (plans/any_width.py)
    short_rows: bool = False        # rows of at most SHORT_MAX_COLS values (plans/any_width.py): forward, one lane
                                    # a row; backward, a block of packed rows moved as one span (kernels/short_rows.py)
    row_words: int = 1              # short rows, backward: > 1, groups of this many packed rows read as words of
                                    # this many 2-byte values, across the rows' boundaries (kernels/word_rows.py)
    vec: int = 1                    # rows: values per 16-byte vector when the width is a multiple of it but
                                    # not of 16 (the kernel then checks the strides and loads vectors), else 1
    safe: bool = False              # forward: a row of only -inf gives zeros (else NaN, as torch)
    aligned: bool = True            # the tensors read start on 16-byte boundaries (the JIT's specialisation)
    packed: bool = True             # every tensor's rows are n_cols apart (the short-rows kernels and the split
                                    # kernels' edges need it; the others place each tensor's rows by its stride)

    @property
    def grid(self) -> tuple[int]:
        return (self.num_programs,)

    @property
    def shares_rows(self) -> bool:
        """Several programs per row, meeting through slots (the split path, or a tiled row shared)."""
        return self.split > 1

    @property
    def peers(self) -> int:
        """Split path: programs per row rounded up to a power of two (the kernel's tl.arange needs one)."""
        return triton.next_power_of_2(self.split)

    @property
    def n_slots(self) -> int:
        """One 64-bit slot per program per row for plans whose programs share a row (0 for the others)."""
        return self.n_rows * self.split if self.shares_rows else 0

    @property
    def slots_filled(self) -> bool:
        """The slots start as NOT_PUBLISHED: programs that share a row wait for their peers' words."""
        return True

    @property
    def needs_packed_rows(self) -> bool:
        """Whether this plan runs only on rows n_cols apart in every tensor (`packed`): the short-rows kernels move
        a block of rows as one span, and the split kernels' edges are the input's pieces, shared by every tensor."""
        return self.short_rows or (self.path == "split" and self.edges)

    @property
    def kernel(self) -> str:
        """The kernel every launch of this plan runs (module:function)."""
        if self.short_rows:
            return (WORD_ROWS_KERNEL if self.row_words > 1 else SHORT_ROWS_KERNEL)[self.direction]
        if self.tiny:
            return TINY_KERNEL
        if self.path == "split":
            return SPLIT_KERNEL[self.direction]
        if self.edges:
            return EDGE_KERNEL[self.direction]
        if self.path == "rows":
            return ROWS_KERNEL[self.direction]
        return TILED_SPLIT_KERNEL[self.direction] if self.shares_rows else TILED_KERNEL[self.direction]

    @property
    def constexprs(self) -> Constexprs:
        """The kernel's constexprs in its one-launch form (PHASE 0 where programs share a row): what the planner
        compiles and, but for PHASE under the interpreter, what every launch passes."""
        safe = (("SAFE", self.safe),) if self.direction == "forward" else ()
        fp64 = (("FP64", self.dtype == "float64"),)
        meet = (("PHASE", 0), ("SPIN", SPIN_LIMIT))
        if self.row_words > 1:
            return (("GROUPS", self.rows_per_program // self.row_words), ("BLOCK_N", self.block_n),
                    ("PACK", self.row_words))
        if self.short_rows or self.tiny:
            return (("ROWS", self.rows_per_program), ("BLOCK_N", self.block_n)) + safe
        if self.path == "split":
            body = (("EDGES", True), ("VEC", vector_values(self.element_bytes))) if self.edges else ()
            return (("SPLIT", self.split), ("PEERS", self.peers), ("CHUNK", self.block_n)) + safe + meet + body
        if self.edges:
            return ((("TILE", self.block_n), ("VEC", vector_values(self.element_bytes)),
                     ("ONE_TILE", self.path == "rows")) + safe)
        if self.path == "rows":
            return (("ROWS", self.rows_per_program), ("BLOCK_N", self.block_n)) + safe + fp64 + (("VEC", self.vec),)
        if self.shares_rows:
            return (("TILE", self.block_n), ("SPLIT", self.split), ("PEERS", self.peers)) + meet
        return (("TILE", self.block_n),) + safe + fp64

    @property
    def launches(self) -> tuple[Constexprs, ...]:
        """The constexprs of each launch, in order: one launch, or where programs share a row under the
        interpreter (which runs programs one after another) a publishing launch and a finishing one."""
        one = self.constexprs
        if not self.shares_rows:
            return (one,)
        return tuple(tuple((name, phase if name == "PHASE" else value) for name, value in one)
                     for phase in runtime.launch_phases())

    @property
    def element_bytes(self) -> int:
        return dtypes.element_size(self.dtype)
