"""The tuned plan for a matrix, as `sc.softmax` uses it: the whole-row, tiled or split path
(plans/tuned.py), then the any-width kernels where they are faster (plans/any_width.py), then the backward's
rows of 256-1024 values shaped for the most bytes in flight (plans/whole_rows.py). It sits above both,
so neither imports the other's caller. A strided softmax dim: `plan_strided`, the any-dim plan (plans/any_dim.py)
or its tiles cut into parts (plans/split_dim.py)."""
from __future__ import annotations

import torch

from softmax_core.hardware.gpu import GpuSpec, default_gpu
from softmax_core.plans.any_dim import plan_any_dim
from softmax_core.plans.any_width import refine
from softmax_core.plans.split_dim import plan_split_dim
from softmax_core.plans.strided import AnyDimPlan, ReductionLayout
from softmax_core.plans.tuned import SoftmaxPlan, plan_rows_tiled_split
from softmax_core.plans.whole_rows import most_in_flight, takes_most_in_flight


def plan_softmax(n_rows: int, n_cols: int, dtype: torch.dtype = torch.float32, gpu: GpuSpec | None = None,
                 direction: str = "forward", safe: bool = False, *, path: str | None = None,
                 aligned: bool = True, edges: bool | None = None, packed: bool = True) -> SoftmaxPlan:
    """The plan for an n_rows x n_cols softmax on `gpu`: the path plan_rows_tiled_split chooses, then, where
    it is faster, the same plan on the any-width kernels (plans/any_width.py: rows of a width Triton cannot
    prove aligned, and tiny packed rows). `edges` forces the aligned-body choice either way (tests, tuning), on
    the split path too. `packed`: every tensor's rows are n_cols apart (a padded input, or a dy broadcast down
    the rows, is not), which the short-rows kernels and the split kernels' edges need."""
    gpu = gpu or default_gpu()
    plan = plan_rows_tiled_split(n_rows, n_cols, dtype, gpu, direction, safe, path=path, aligned=aligned,
                                 edges=edges, packed=packed)
    plan = refine(plan, dtype, path=path, aligned=aligned, edges=edges)
    return most_in_flight(plan) if takes_most_in_flight(plan, path, edges) else plan


def plan_strided(layout: ReductionLayout, element_bytes: int, dtype_name: str, gpu: GpuSpec,
                 direction: str = "forward", *, transposing: bool = False, written: ReductionLayout | None = None,
                 safe: bool = False, compile: bool = True, addresses: tuple[int, int] = (0, 0)) -> AnyDimPlan:
    """The plan for a softmax down `layout`'s strided reduced axis (`written`: the other tensor's layout, y
    forward and dy backward; `transposing`: a side steps down the reduced axis with unit stride): the any-dim
    plan where it holds the slab in one pass; where it walks its tiles twice, the tiles cut into parts where that
    was measured faster (`cuts`), else two passes. `addresses`: where the two tensors' data start within a 16-byte
    line (the any-dim plan's words)."""
    plan = plan_any_dim(layout, element_bytes, dtype_name, gpu, direction, transposing=transposing,
                        written=written, safe=safe, compile=compile, addresses=addresses)
    if plan.one_pass:
        return plan
    cut = plan_split_dim(layout, element_bytes, dtype_name, gpu, direction, written=written,
                         transposing=transposing, safe=safe, compile=compile)
    return plan if cut is None else cut
