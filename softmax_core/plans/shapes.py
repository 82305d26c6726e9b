"""The plan for a tensor as a user describes it (shape, dtype, dim, contiguous or a transposed view): which
kernel `softmax_core.softmax` runs, with the figures behind the choice, and the time no kernel can beat on a
GPU (its bytes over the GPU's memory bandwidth). Pure: shapes in, a frozen `ShapePlan` out; no tensor, no
device. The UI turns the codes and figures into words.

Routes:
  "rows" / "tiled" / "split" - the softmax dim is the contiguous one: `plan.path` of a `SoftmaxPlan`, with
        `edges` (an aligned body between masked edges) or `tiny` (packed tiny rows) where they apply;
  "any_dim" - the softmax dim is strided: an `AnyDimPlan` over the (outer, reduce, inner) layout.

The plan's description, for pages that draw it (a public, frozen API): `ShapePlan.layout` is the fold of the
tensor into outer x reduced x contiguous inner (`ReductionLayout`: n_outer, n_reduce, n_inner and each one's
stride; n_inner == 1 is a row), `ShapePlan.family` the kernel family that runs (one of FAMILIES), and
`ShapePlan.reason` its `PlanReason` (a code plus figures; softmax_core.words says it).
"""
from __future__ import annotations

import math
from dataclasses import dataclass

from softmax_core.hardware import dtypes
from softmax_core.hardware.gpu import GpuSpec
from softmax_core.plans.strided import (AnyDimPlan, ReductionLayout, contiguous_strides, forward_groups,
                                        reduction_layout, transposes)
from softmax_core.plans.tuned import SoftmaxPlan
from softmax_core.plans.any_dim import plan_strided
from softmax_core.plans.choose import plan_softmax

DIRECTIONS = ("forward", "backward")
# The kernel families, as ShapePlan.family names them: programs that own whole rows (several short rows each);
# rows walked in tiles, twice; a row shared by programs that run at once; a strided reduction whose programs own
# tiles of the contiguous axis (and several outer slices where that axis is short), read once or walked twice,
# shared by programs that run at once where the reduced axis is too long for one program, or cut into parts walked
# by programs of two launches or of one launch whose programs wait for each other (plans/any_dim.py's plan_split_dim).
FAMILIES = ("whole_rows", "rows_in_tiles", "rows_shared", "strided_one_pass", "strided_two_pass", "strided_shared",
            "strided_parts")
_ROW_FAMILIES = {"rows": "whole_rows", "tiled": "rows_in_tiles", "split": "rows_shared"}
TENSORS_MOVED = {"forward": 2, "backward": 3}      # x in, y out; y and dy in, dx out


# Why a shape cannot be planned: ShapeError.code, one of these (its figures in ShapeError.figures).
SHAPE_ERRORS = ("no_sizes", "not_whole_numbers", "size_below_one", "too_many_dims", "dim_out_of_range",
                "transposed_needs_two_dims", "unknown_dtype", "unknown_direction")
MAX_DIMS = 8


class ShapeError(ValueError):
    """The shape, dim or dtype cannot be planned: a code from SHAPE_ERRORS and its figures (the message
    says the same in English, for the command line)."""

    def __init__(self, code: str, message: str, **figures):
        super().__init__(message)
        self.code, self.figures = code, figures


def parse_shape(text: str) -> tuple[int, ...]:
    """'8192, 50257' or '64x1000x49' -> (8192, 50257). Raises ShapeError naming the problem."""
    parts = [p for p in text.replace("×", ",").replace("x", ",").replace(" ", ",").split(",") if p]
    if not parts:
        raise ShapeError("no_sizes", "no sizes given")
    try:
        shape = tuple(int(p) for p in parts)
    except ValueError as err:
        raise ShapeError("not_whole_numbers", f"sizes must be whole numbers, got {text!r}", text=text) from err
    if any(n < 1 for n in shape):
        raise ShapeError("size_below_one", f"every size must be at least 1, got {shape}", shape=str(shape))
    if len(shape) > MAX_DIMS:
        raise ShapeError("too_many_dims", f"at most {MAX_DIMS} dims, got {len(shape)}", n=len(shape),
                         limit=MAX_DIMS)
    return shape


def view_strides(shape: tuple[int, ...], transposed: bool) -> tuple[int, ...]:
    """Strides of a contiguous tensor of `shape`, or (transposed) of a contiguous (..., b, a) buffer seen as
    (..., a, b): the view `buffer.transpose(-1, -2)`."""
    if not transposed or len(shape) < 2:
        return contiguous_strides(shape)
    buffer = contiguous_strides(shape[:-2] + (shape[-1], shape[-2]))
    return buffer[:-2] + (buffer[-1], buffer[-2])


@dataclass(frozen=True)
class ShapePlan:
    shape: tuple[int, ...]
    dtype: str
    dim: int                        # non-negative
    transposed: bool
    direction: str
    gpu: GpuSpec
    route: str                      # "rows" | "tiled" | "split" | "any_dim"
    layout: ReductionLayout
    rows_plan: SoftmaxPlan | None   # the softmax dim is the contiguous one
    any_dim_plan: AnyDimPlan | None
    bytes_moved: int

    @property
    def family(self) -> str:
        """The kernel family that runs (FAMILIES)."""
        if self.any_dim_plan is not None:
            if self.any_dim_plan.shares:
                return "strided_shared"
            if self.any_dim_plan.cut:
                return "strided_parts"
            return "strided_one_pass" if self.any_dim_plan.one_pass else "strided_two_pass"
        return _ROW_FAMILIES[self.route]

    @property
    def reason(self):
        """Why: the `PlanReason` of the plan that runs."""
        return (self.any_dim_plan or self.rows_plan).reason

    @property
    def floor_us(self) -> float | None:
        """Microseconds to move the bytes at the GPU's quoted memory bandwidth: no kernel is faster."""
        bandwidth = self.gpu.memory_bandwidth_gbps
        return None if not bandwidth else self.bytes_moved / (bandwidth * 1e9) * 1e6


def plan_shape(shape: tuple[int, ...], dtype: str, dim: int, gpu: GpuSpec, *, transposed: bool = False,
               direction: str = "forward") -> ShapePlan:
    """The plan sc.softmax(x, dim) takes for x of `shape` and `dtype` (contiguous, or a transposed view)."""
    if direction not in DIRECTIONS:
        raise ShapeError("unknown_direction", f"direction must be one of {DIRECTIONS}, got {direction!r}",
                         direction=direction)
    if not shape:
        raise ShapeError("no_sizes", "a softmax needs at least one dim")
    if dtype not in dtypes.TUNED_DTYPES:
        raise ShapeError("unknown_dtype", f"dtype must be one of {', '.join(dtypes.TUNED_DTYPES)}, got {dtype!r}",
                         dtype=dtype)
    if not -len(shape) <= dim < len(shape):
        raise ShapeError("dim_out_of_range", f"dim {dim} is out of range for {len(shape)} dim(s)", dim=dim,
                         n=len(shape))
    if transposed and len(shape) < 2:
        raise ShapeError("transposed_needs_two_dims", "a transposed view needs at least two dims")
    dim %= len(shape)
    # The forward reads x where it lies. The backward reads y, which is contiguous whatever x's layout (as
    # torch's is), and dy taken in y's layout: so a transposed view's backward over its last dim is the row
    # kernels' again. The same layouts and plan as the launch (softmax_core.launch.any_dim).
    strides = view_strides(shape, transposed) if direction == "forward" else contiguous_strides(shape)
    elt = dtypes.element_size(dtype)
    nbytes = TENSORS_MOVED[direction] * math.prod(shape) * elt
    common = dict(shape=shape, dtype=dtype, dim=dim, transposed=transposed, direction=direction, gpu=gpu,
                  bytes_moved=nbytes)
    found = forward_groups(shape, strides, dim)
    if found is not None:
        _, read, written = found
        layout = read or written                  # x that does not fold is read from a contiguous copy
        plan = plan_strided(layout, elt, dtype, gpu, direction, transposing=transposes(layout, written),
                            written=written)
        return ShapePlan(route="any_dim", layout=layout, rows_plan=None, any_dim_plan=plan, **common)
    layout = reduction_layout(shape, strides, dim)
    rows = plan_softmax(layout.n_outer, layout.n_reduce, dtypes.torch_dtype(dtype), gpu, direction)
    return ShapePlan(route=rows.path, layout=layout, rows_plan=rows, any_dim_plan=None, **common)
