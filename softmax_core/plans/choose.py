"""The tuned plan for a matrix, as `sc.softmax` uses it: the whole-row, tiled or split path
(plans/tuned.py), then the any-width kernels where they are faster (plans/any_width.py), then the backward's
rows of 256-1024 values shaped for the most bytes in flight (plans/whole_rows.py). It sits above both,
so neither imports the other's caller. (A strided softmax dim: plans/any_dim.py's plan_strided.)"""
from __future__ import annotations

import torch

from softmax_core.hardware.gpu import GpuSpec, default_gpu
from softmax_core.plans.any_width import refine
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
