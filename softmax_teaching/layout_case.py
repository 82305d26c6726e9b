"""A layout case as the transactions page describes it (shape, dtype, dim, view, direction), where its
elements lie in their storage, the real tensor (allocated, never filled), and `planner_view`: the one place
softmax_teaching reads the planner (which family it picks, why, and how it folds the tensor into outer ×
reduced length R with stride S × contiguous inner run), so the page follows the planner wherever it goes."""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import torch

from softmax_core.hardware import dtypes
from softmax_core.hardware.gpu import GpuSpec

VIEWS = ("contiguous", "transposed", "padded", "offset")
DIRECTIONS = ("forward", "backward")
PAD_BYTES = 128            # a padded row stride: rows rounded up to 128 bytes, plus 128 more
OFFSET_ELEMENTS = 1        # a slice that starts one element into its storage (no longer 16-byte aligned)


@dataclass(frozen=True)
class Case:
    shape: tuple[int, ...]
    dtype: str                 # "float32", "bfloat16", "float16", "float64"
    dim: int                   # non-negative
    view: str                  # one of VIEWS
    direction: str = "forward"


@dataclass(frozen=True)
class ViewStrides:
    """Where a view's elements lie in its storage: strides, the offset of element 0 and the storage's size,
    all in elements."""
    strides: tuple[int, ...]
    storage_offset: int
    storage_elements: int

    def offsets(self, shape: tuple[int, ...]) -> np.ndarray:
        """The storage offset of every element of a tensor of `shape`, as an array of that shape."""
        grids = np.meshgrid(*[np.arange(n, dtype=np.int64) for n in shape], indexing="ij")
        return self.storage_offset + sum(g * s for g, s in zip(grids, self.strides))


def view_strides(shape: tuple[int, ...], view: str, element_bytes: int = 4) -> ViewStrides:
    """The layout of `view` for a tensor of `shape` whose elements are `element_bytes` wide (the padding is
    in bytes); ValueError for a view the shape cannot take."""
    if view not in VIEWS:
        raise ValueError(f"view must be one of {VIEWS}, got {view!r}")
    if view == "transposed" and len(shape) < 2:
        raise ValueError("a transposed view needs at least two dims")
    numel = math.prod(shape)
    if view == "transposed":
        buffer = shape[:-2] + (shape[-1], shape[-2])
        strides = _contiguous(buffer)
        return ViewStrides(strides[:-2] + (strides[-1], strides[-2]), 0, numel)
    if view == "padded":
        return _sized(ViewStrides(_contiguous(shape[:-1] + (padded_row(shape[-1], element_bytes),)), 0, 0), shape)
    if view == "offset":
        return ViewStrides(_contiguous(shape), OFFSET_ELEMENTS, numel + OFFSET_ELEMENTS)
    return ViewStrides(_contiguous(shape), 0, numel)


def padded_row(n: int, element_bytes: int) -> int:
    """The row stride of a padded view, in elements: the row rounded up to PAD_BYTES, then PAD_BYTES more."""
    step = max(1, PAD_BYTES // element_bytes)
    return -(-n // step) * step + step


def _contiguous(shape: tuple[int, ...]) -> tuple[int, ...]:
    strides, step = [], 1
    for n in reversed(shape):
        strides.append(step)
        step *= max(n, 1)
    return tuple(reversed(strides))


def _sized(layout: ViewStrides, shape: tuple[int, ...]) -> ViewStrides:
    """`layout` with its storage just long enough for the last element."""
    last = layout.storage_offset + sum((n - 1) * s for n, s in zip(shape, layout.strides)) + 1
    return ViewStrides(layout.strides, layout.storage_offset, last)


def case_strides(case: Case) -> ViewStrides:
    return view_strides(case.shape, case.view, dtypes.element_size(case.dtype))


def make_input(case: Case, device: str = "cpu") -> torch.Tensor:
    """The case's tensor: storage allocated, not filled (torch.empty), seen through the case's view."""
    layout = case_strides(case)
    storage = torch.empty(layout.storage_elements, dtype=dtypes.torch_dtype(case.dtype), device=device)
    return storage.as_strided(case.shape, layout.strides, layout.storage_offset)


@dataclass(frozen=True)
class Fold:
    """The tensor as the planner describes it: element (o1, o2, r, i) of the reduced axis lies at
    o1 * outer_stride + o2 * outer2_stride + r * reduce_stride + i * inner_stride (inner 1: a row softmax)."""
    n_outer: int               # o1 and o2 together
    n_outer2: int
    n_reduce: int
    n_inner: int
    outer_stride: int
    outer2_stride: int
    reduce_stride: int
    inner_stride: int


@dataclass(frozen=True)
class PlannerView:
    family: str                # "rows" | "tiled" | "split" | "any_dim" (the planner's route)
    reason: object             # the plan's PlanReason: a code and figures, said by the UI
    fold: Fold
    toolchain: str = ""        # the compiler whose figures the reason states ("" where it states none)


def planner_view(shape: tuple[int, ...], strides: tuple[int, ...], dim: int, dtype: str, gpu: GpuSpec,
                 direction: str = "forward") -> PlannerView:
    """What the planner does with x of this shape and these strides, softmax over `dim`: the one function of
    softmax_teaching that reads softmax_core.plans (so it follows the planner wherever it goes). The forward
    reads x where it lies; the backward reads a contiguous y (and dy in y's layout), as the launch does."""
    from softmax_core.plans.strided import contiguous_strides, forward_groups, reduction_layout, transposes
    from softmax_core.plans.any_dim import plan_strided
    from softmax_core.plans.choose import plan_softmax

    shape, strides = tuple(shape), tuple(strides)
    if direction == "backward":
        strides = contiguous_strides(shape)
    elt = dtypes.element_size(dtype)
    found = forward_groups(shape, strides, dim)
    if found is not None:
        _, read, written = found
        layout = read or written
        plan = plan_strided(layout, elt, dtype, gpu, direction, transposing=transposes(layout, written),
                            written=written)
        family, reason, toolchain = "any_dim", plan.reason, ""
    else:
        layout = reduction_layout(shape, strides, dim)
        plan = plan_softmax(layout.n_outer, layout.n_reduce, dtypes.torch_dtype(dtype), gpu, direction)
        family, reason, toolchain = plan.path, plan.reason, plan.resources.toolchain
    fold = Fold(layout.n_outer, layout.n_outer2, layout.n_reduce, layout.n_inner, layout.outer_stride,
                layout.outer2_stride, layout.reduce_stride, layout.inner_stride)
    return PlannerView(family, reason, fold, toolchain)
