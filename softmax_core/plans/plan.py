"""A tuned softmax's launch plan: which path, its launch shape, the compiled kernel's resources, its occupancy
and why it was chosen (softmax_core.plans.tuned makes them; softmax_core.launch.launches runs them)."""
from __future__ import annotations

from dataclasses import dataclass

import triton

from softmax_core.hardware.compile import KernelResources
from softmax_core.hardware.gpu import GpuSpec
from softmax_core.hardware.occupancy import Occupancy
from softmax_core.plans.reasons import PlanReason


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
    resources: KernelResources
    occupancy: Occupancy
    reason: PlanReason              # why this path: a code and its figures (reasons.py)
    split: int = 1                  # split path, or a shared tiled row: programs per row (num_programs is a
                                    # multiple of it; they run at once and meet through published slots)
    edges: bool = False             # read as an aligned body between masked edges, for rows Triton cannot prove
                                    # vector-aligned: rows / tiled, one row per program (kernels/any_width.py),
                                    # or split, its chunks covering the body (kernels/shared_rows.py, EDGES)
    tiny: bool = False              # rows, forward: packed power-of-two rows of at most TINY_MAX_ROW_BYTES,
                                    # loaded with no column mask (plans/any_width.py)
    short_rows: bool = False        # rows of at most SHORT_MAX_COLS values (plans/any_width.py): forward, one lane
                                    # a row; backward, a block of packed rows moved as one span (kernels/short_rows.py)
    vec: int = 1                    # rows: values per 16-byte vector when the width is a multiple of it but
                                    # not of 16 (the kernel then checks the strides and loads vectors), else 1

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
