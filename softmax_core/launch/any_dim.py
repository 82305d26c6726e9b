"""Eager softmax over a non-contiguous axis: the layout, the launches and their autograd (kernels/any_dim.py).

`softmax_any_dim` answers for a call whose softmax dim is not unit-stride in x or not the output's last
(dim=1 of an NCHW tensor, the last dim of a transposed view, a channels-last tensor), or returns None so the
row kernels take it. Like torch.softmax, the output is contiguous whatever x's layout: y = torch.empty(shape).
The backward of such a y over its last dim is the row kernels' (ready.py's); over another dim it is the
any-dim backward kernel, kept like the forward.
"""
from __future__ import annotations

import dataclasses
from functools import lru_cache

import torch

from softmax_core.hardware import dtypes
from softmax_core.hardware.gpu import default_gpu
from softmax_core.launch.autograd import call_backward_directly
from softmax_core.launch.launches import (PlanCalls, address_in_line, backward_launch, cached_plan, launch_aligned,
                                          rows_unit_stride)
from softmax_core.plans.strided import (AnyDimPlan, ReductionLayout, contiguous_strides, dim_groups, forward_groups,
                                        layout_in, transposes)
from softmax_core.plans.any_dim import plan_strided


@lru_cache(maxsize=4096)
def cached_any_dim_plan(layout: ReductionLayout, dtype: torch.dtype, direction: str, device_index: int,
                        transposing: bool = False, written: ReductionLayout | None = None,
                        safe: bool = False, addresses: tuple[int, int] = (0, 0)) -> AnyDimPlan:
    """`addresses`: where the two tensors' data start within a 16-byte line (address_in_line)."""
    return plan_strided(layout, dtypes.element_size(dtype), dtypes.name(dtype), default_gpu(max(device_index, 0)),
                        direction, transposing=transposing, written=written, safe=safe, addresses=addresses)


def sizes(layout: ReductionLayout) -> tuple[int, int, int, int]:
    """The kernels' size arguments, in their order."""
    return (layout.n_outer, layout.n_outer2, layout.n_reduce, layout.n_inner)


def any_dim_layout(x: torch.Tensor, dim: int) -> ReductionLayout | None:
    """x's layout in the any-dim kernel's index space when that kernel is the one to run (None: the row
    kernels', or x needs a copy before it folds)."""
    found = forward_groups(tuple(x.shape), tuple(x.stride()), dim)
    return None if found is None else found[1]


class LaunchesItsPlan:
    """A launch of one plan: its grid, warps and constexprs are the plan's calls' (PlanCalls), never its own."""

    __slots__ = ()

    @property
    def grid(self) -> tuple:
        return self.calls.grid

    @property
    def num_warps(self) -> int:
        return self.calls.num_warps

    @property
    def constexprs(self) -> tuple:
        return self.calls.constexprs


class ReadyAnyDim(LaunchesItsPlan):
    """One eager call over a non-contiguous axis, ready to replay from launch/api.py's dictionary of ready
    calls: the layouts and plan are decided; a call allocates y and launches, through the kept launcher
    (fast.py) once the first launch through the JIT has compiled the kernel. With grad, the call is recorded
    by AnyDimSoftmax, whose backward is kept here too, per layout of dy. (`go` is None and `plain` False:
    api.softmax's shortcut is the row kernels'.)"""

    __slots__ = ("args", "calls", "dtype", "in_dtype", "dim", "shape", "copy_x", "like_x", "kept", "backward_kept")
    go = None
    plain = False
    grad_direct = False

    def __init__(self, x: torch.Tensor, dim: int, safe: bool, out_dtype: torch.dtype, shape: tuple,
                 layouts: tuple[ReductionLayout | None, ReductionLayout]):
        """For x of `shape` (its sizes as ints) whose (x's layout or None, y's layout) are `layouts` (ready_for)."""
        x_layout, y_layout = layouts
        self.copy_x = x_layout is None
        if self.copy_x:
            x_layout = y_layout
        # (api.py's key for a ready call holds x's address within a line; y is fresh, so aligned)
        plan = cached_any_dim_plan(x_layout, x.dtype, "forward", x.get_device(), transposes(x_layout, y_layout),
                                   y_layout, safe, (0 if self.copy_x else address_in_line(x), 0))
        self.args = x_layout.strides + y_layout.strides + sizes(x_layout)
        self.calls = PlanCalls(plan)
        self.dtype, self.in_dtype = out_dtype, x.dtype
        self.dim, self.shape = dim, shape
        # a contiguous x of the output's dtype: y = empty_like(x), half the price of torch.empty(shape)
        self.like_x = x.is_contiguous() and out_dtype == x.dtype
        self.kept = None
        self.backward_kept: dict = {}

    def run(self, x: torch.Tensor, y: torch.Tensor, wrap=None):
        return self.calls.run((x, y), self.args, wrap)

    def __call__(self, x: torch.Tensor) -> torch.Tensor:
        y = _empty_like(x) if self.like_x else _empty(self.shape, dtype=self.dtype, device=x.device)
        if self.copy_x:
            x = x.contiguous()
        kept = self.kept
        if kept is not None:
            kept(x, y)
            return y
        compiled = self.run(x, y)
        if compiled is not None:
            self.kept = self.calls.keep(compiled, (x, y), self.args, self.run)
        return y

    def with_grad(self, x: torch.Tensor) -> torch.Tensor:
        if functorch_active():
            return AnyDimSoftmax.apply(x, self)
        return any_dim_apply(x, self)

    def backward(self, y: torch.Tensor, dy: torch.Tensor) -> torch.Tensor:
        """dx (contiguous, in the forward input's dtype) for this call's y (contiguous) and any dy."""
        key = (dy.stride(), dy.dtype, dy.data_ptr() % 16)
        go = self.backward_kept.get(key)
        if go is not None:
            return go(y, dy)
        go = self.backward_kept[key] = backward_step(y, dy, self.dim, self.in_dtype)
        return go(y, dy)


def rows_backward(shape: tuple, dim: int) -> bool:
    """Whether the backward of a contiguous y of this shape over `dim` is the row kernels' (dim is its last
    dim of size above 1, or the only one)."""
    return dim_groups(tuple(shape), dim, contiguous_strides(tuple(shape)), contiguous_strides(tuple(shape))) is None


class BackwardLaunch(LaunchesItsPlan):
    """The any-dim backward for a contiguous y of one shape and a dy of one layout and dtype: the kernel's
    integer arguments and constexprs; `dy_for` brings a dy that does not fold as y does into y's layout."""

    __slots__ = ("args", "calls", "converted")

    def __init__(self, y: torch.Tensor, dy: torch.Tensor, dim: int, plan: AnyDimPlan | None = None):
        """`plan` overrides the fitted one (tuning sweeps; it must be for y's layout)."""
        shape = tuple(int(d) for d in y.shape)
        y_strides, dy_strides = tuple(int(s) for s in y.stride()), tuple(int(s) for s in dy.stride())
        groups = dim_groups(shape, dim, y_strides, y_strides)
        y_layout = layout_in(groups, shape, y_strides)
        dy_layout = layout_in(groups, shape, dy_strides)
        self.converted = dy_layout is None or dy.dtype != y.dtype
        if self.converted:
            dy_layout = y_layout
        plan = plan or cached_any_dim_plan(y_layout, y.dtype, "backward", y.get_device(),
                                           transposes(y_layout, dy_layout), dy_layout, False,
                                           (address_in_line(y), 0 if self.converted else address_in_line(dy)))
        self.args = y_layout.strides + dy_layout.strides + sizes(y_layout)
        self.calls = PlanCalls(plan)

    def dy_for(self, y: torch.Tensor, dy: torch.Tensor) -> torch.Tensor:
        return torch.empty_like(y).copy_(dy) if self.converted else dy

    def run(self, y, dy, dx, wrap=None):
        return self.calls.run((y, dy, dx), self.args, wrap)


def backward_step(y: torch.Tensor, dy: torch.Tensor, dim: int, grad_dtype: torch.dtype):
    """`step(y, dy) -> dx` for a contiguous y of this shape and a dy of this layout, dtype and alignment: the
    row kernels' backward when dim is y's last, else the any-dim kernel's. The first step launches through
    the JIT; later ones call the kept launcher with the tensors' addresses (the kernels take the layout from
    their integer arguments, so y, dy and dx go in as they are)."""
    shape = tuple(y.shape)
    same_dtype = grad_dtype == y.dtype
    kept: list = []
    if rows_backward(shape, dim):
        n_cols = shape[dim]
        n_rows = y.numel() // n_cols
        dy_as_is = dy.is_contiguous() and dy.dtype == y.dtype

        def rows(y, dy):
            dx = _empty_like(y) if same_dtype else _empty(shape, dtype=grad_dtype, device=y.device)
            if not dy_as_is:
                dy = rows_unit_stride(dy.reshape(n_rows, n_cols).to(y.dtype))
            if kept:
                kept[0](y, dy, dx)
                return dx
            y2 = y.view(n_rows, n_cols)
            dy2 = dy.view(n_rows, n_cols) if dy_as_is else dy
            plan = cached_plan(n_rows, n_cols, y.dtype, "backward", False, y.get_device(),
                               launch_aligned(y2) and launch_aligned(dy2), dy2.stride(0) == n_cols)
            launch = backward_launch(plan, n_cols, dy2.stride(0), (y.dtype, y.dtype, grad_dtype))
            key = (y.get_device(), True, dy2.data_ptr() % 16 == 0)
            kept.append(launch.launch_and_keep((y2, dy2, dx.view(n_rows, n_cols)), key))
            return dx
        return rows
    made = BackwardLaunch(y, dy, dim)
    converted = made.converted

    def step(y, dy):
        if converted:
            dy = made.dy_for(y, dy)
        dx = _empty_like(y) if same_dtype else _empty(shape, dtype=grad_dtype, device=y.device)
        if kept:
            kept[0](y, dy, dx)
            return dx
        compiled = made.run(y, dy, dx)
        if compiled is not None:
            kept.append(made.calls.keep(compiled, (y, dy, dx), made.args, made.run))
        return dx
    return step


class AnyDimSoftmax(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x: torch.Tensor, ready: ReadyAnyDim) -> torch.Tensor:
        y = ready(x)                     # the ready call's launch: kept after the first
        ctx.save_for_backward(y)
        ctx.ready = ready
        return y

    @staticmethod
    def backward(ctx, dy: torch.Tensor):
        (y,) = ctx.saved_tensors
        ready = ctx.ready
        if _grad_enabled():
            # create_graph=True: the same formula in torch ops, which autograd can differentiate again.
            dim = ready.dim
            return (y * (dy - (y * dy).sum(dim, keepdim=True))).to(ready.in_dtype), None
        return ready.backward(y, dy), None


# Function.apply's Python costs more than the rest of a small call; with no functorch transform active it
# ends in this C function, called directly (as autograd.py does for the row kernels).
any_dim_apply = super(torch.autograd.Function, AnyDimSoftmax).apply
call_backward_directly(AnyDimSoftmax)
functorch_active = torch._C._are_functorch_transforms_active
_grad_enabled = torch.is_grad_enabled
_empty_like, _empty = torch.empty_like, torch.empty


def any_dim_forward(x: torch.Tensor, dim: int, safe: bool, out_dtype: torch.dtype,
                    plan: AnyDimPlan | None = None) -> torch.Tensor:
    """Contiguous y for x's softmax over `dim` by the any-dim kernel, by `plan` (default: the fitted one; one
    given must be for x's layout, `any_dim_layout(x, dim)`). For tuning sweeps and tests."""
    ready = ready_for(x, dim, safe, out_dtype)
    if plan is not None:
        ready.calls = PlanCalls(dataclasses.replace(plan, safe=safe))
    return ready(x)


def any_dim_backward(y: torch.Tensor, dy: torch.Tensor, dim: int, grad_dtype: torch.dtype,
                     plan: AnyDimPlan | None = None) -> torch.Tensor:
    """dx (contiguous) for a contiguous y and any dy, softmax over `dim`, by `plan` (default:
    the fitted one), through the JIT. For tuning sweeps and tests; with no plan, dim may be y's last (the
    row kernels' backward)."""
    if plan is None:
        return backward_step(y, dy, dim, grad_dtype)(y, dy)
    made = BackwardLaunch(y, dy, dim, plan)
    dy = made.dy_for(y, dy)
    dx = _empty(tuple(y.shape), dtype=grad_dtype, device=y.device)
    made.run(y, dy, dx)
    return dx


def takes_any_dim(shape, strides, dim: int) -> bool:
    """Whether the any-dim kernel takes the call (the traced route's test; ready_for's when eager): whether
    plans/strided.py's `dim_groups` finds an index space for x of this shape and strides with a contiguous
    output, i.e. x has a unit-stride dim besides `dim`, or `dim` is not the output's innermost dim of size above
    1. Written with plain loops over ints, so torch.compile can trace it (and guard on the strides it reads)."""
    n = len(shape)
    for d in range(n):
        if d != dim and shape[d] != 1 and strides[d] == 1:
            return n >= 2
    for d in range(dim + 1, n):
        if shape[d] != 1:
            return n >= 2
    return False


def ready_for(x: torch.Tensor, dim: int, safe: bool, out_dtype: torch.dtype) -> ReadyAnyDim | None:
    """x's softmax over `dim` made ready to launch on the any-dim kernel, for x a checked, non-empty tensor of the
    dtype to read and `dim` non-negative; None where the row kernels are the right ones (the softmax dim is
    unit-stride in x and is the output's last)."""
    if x.ndim < 2:
        return None
    # int(): under a tracer with dynamic shapes the sizes are symbols; the launch is planned for these values
    shape = tuple(int(d) for d in x.shape)
    found = forward_groups(shape, tuple(int(s) for s in x.stride()), dim)
    return None if found is None else ReadyAnyDim(x, dim, safe, out_dtype, shape, found[1:])


def softmax_any_dim(x: torch.Tensor, dim: int, safe: bool,
                    out_dtype: torch.dtype) -> tuple[torch.Tensor, ReadyAnyDim | None] | None:
    """(softmax of x over `dim` by the any-dim kernel, the call made ready to replay), or None where the row kernels
    are the right ones (ready_for)."""
    ready = ready_for(x, dim, safe, out_dtype)
    if ready is None:
        return None
    if x.requires_grad and torch.is_grad_enabled():
        return ready.with_grad(x), ready
    return ready(x), ready
