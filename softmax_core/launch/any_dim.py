"""Eager softmax over a non-contiguous axis: the layout, the launch and its autograd (kernels/any_dim.py).

`softmax_any_dim` answers for a call whose reduced axis is not the contiguous one (dim=1 of an NCHW-like
tensor, the last dim of a transposed view), or returns None so the row kernels take it. The output keeps
x's layout (memory order), so writes are as coalesced as reads; torch.softmax returns a contiguous tensor,
which for such an x means writes strided by the reduced axis.
"""
from __future__ import annotations

from functools import lru_cache

import torch

from softmax_core.hardware import dtypes
from softmax_core.hardware.gpu import default_gpu
from softmax_core.kernels.any_dim import softmax_any_dim_kernel, softmax_backward_any_dim_kernel
from softmax_core.hardware import runtime
from softmax_core.launch.fast import KeptLaunch, trailing_values
from softmax_core.plans.any_dim import AnyDimPlan, ReductionLayout, plan_any_dim, reduction_layout


def launch(kernel, grid: tuple, args: tuple, constexprs: tuple, num_warps: int):
    """Through Triton's JIT (one launch at a time under the interpreter); the compiled kernel (None under the
    interpreter)."""
    with runtime.one_launch_at_a_time():
        return kernel[grid](*args, **dict(constexprs), num_warps=num_warps, num_stages=1)


@lru_cache(maxsize=4096)
def cached_any_dim_plan(layout: ReductionLayout, dtype: torch.dtype, direction: str,
                        device_index: int) -> AnyDimPlan:
    return plan_any_dim(layout, dtypes.element_size(dtype), dtypes.name(dtype), default_gpu(max(device_index, 0)),
                        direction)


def any_dim_layout(x: torch.Tensor, dim: int) -> ReductionLayout | None:
    """x's (outer, reduce, inner) layout when the any-dim kernel is the one to run: x dense, the reduced axis
    not unit-stride (inner > 1). None otherwise (the row kernels' case, or x needs a copy first)."""
    layout = reduction_layout(tuple(x.shape), tuple(x.stride()), dim)
    return layout if layout is not None and layout.n_inner > 1 else None


def any_dim_forward(x: torch.Tensor, layout: ReductionLayout, safe: bool, out_dtype: torch.dtype,
                    plan: AnyDimPlan | None = None) -> torch.Tensor:
    """y in x's layout, by `plan` (default: the fitted one)."""
    plan = plan or cached_any_dim_plan(layout, x.dtype, "forward", x.get_device())
    y = torch.empty_like(x, dtype=out_dtype)          # x is dense: y gets x's strides
    args = (x, y, layout.outer_stride, layout.reduce_stride, layout.outer_stride, layout.reduce_stride,
            layout.n_reduce, layout.n_inner)
    launch(softmax_any_dim_kernel, plan.grid, args,
           (("BLOCK_R", plan.block_r), ("BLOCK_I", plan.block_i), ("ONE_PASS", plan.one_pass), ("SAFE", safe),
            ("FP64", x.dtype == torch.float64)), plan.num_warps)
    return y


def any_dim_backward(y: torch.Tensor, dy: torch.Tensor, layout: ReductionLayout,
                     grad_dtype: torch.dtype, plan: AnyDimPlan | None = None) -> torch.Tensor:
    """dx in y's layout; dy is brought to that layout first when it has another."""
    if dy.stride() != y.stride() or dy.dtype != y.dtype:
        dy = torch.empty_like(y).copy_(dy)
    plan = plan or cached_any_dim_plan(layout, y.dtype, "backward", y.get_device())
    dx = torch.empty_like(y, dtype=grad_dtype)
    args = (y, dy, dx, layout.outer_stride, layout.reduce_stride, layout.n_reduce, layout.n_inner)
    launch(softmax_backward_any_dim_kernel, plan.grid, args,
           (("BLOCK_R", plan.block_r), ("BLOCK_I", plan.block_i), ("ONE_PASS", plan.one_pass),
            ("FP64", y.dtype == torch.float64)), plan.num_warps)
    return dx


class AnyDimSoftmax(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x: torch.Tensor, ready: "ReadyAnyDim") -> torch.Tensor:
        y = ready(x)                     # the ready call's launch: kept after the first
        ctx.save_for_backward(y)
        ctx.dim, ctx.layout, ctx.grad_dtype = ready.dim, ready.layout, x.dtype
        return y

    @staticmethod
    def backward(ctx, dy: torch.Tensor):
        (y,) = ctx.saved_tensors
        if torch.is_grad_enabled():
            # create_graph=True: the same formula in torch ops, which autograd can differentiate again.
            dx = (y * (dy - (y * dy).sum(ctx.dim, keepdim=True))).to(ctx.grad_dtype)
        else:
            dx = any_dim_backward(y, dy, ctx.layout, ctx.grad_dtype)
        return dx, None


class ReadyAnyDim:
    """One eager call over a non-contiguous axis, ready to replay from launch/api.py's dictionary of ready
    calls: the layout and plan are decided; a call allocates y and launches, through the kept launcher
    (fast.py) once the first launch through the JIT has compiled the kernel. With grad, the call is recorded
    by AnyDimSoftmax. (`go` is None and `plain` False: api.softmax's shortcut is the row kernels'.)"""

    __slots__ = ("args", "constexprs", "grid", "num_warps", "dtype", "dim", "layout", "kept")
    go = None
    plain = False
    grad_direct = False

    def __init__(self, plan: AnyDimPlan, layout: ReductionLayout, safe: bool, out_dtype: torch.dtype, fp64: bool,
                 dim: int):
        self.args = (layout.outer_stride, layout.reduce_stride, layout.outer_stride, layout.reduce_stride,
                     layout.n_reduce, layout.n_inner)
        self.constexprs = (("BLOCK_R", plan.block_r), ("BLOCK_I", plan.block_i), ("ONE_PASS", plan.one_pass),
                           ("SAFE", safe), ("FP64", fp64))
        self.grid, self.num_warps, self.dtype = plan.grid, plan.num_warps, out_dtype
        self.dim, self.layout = dim, layout
        self.kept = None

    def run(self, x: torch.Tensor, y: torch.Tensor):
        return launch(softmax_any_dim_kernel, self.grid, (x, y) + self.args, self.constexprs, self.num_warps)

    def __call__(self, x: torch.Tensor) -> torch.Tensor:
        y = torch.empty_like(x, dtype=self.dtype)
        if self.kept is not None:
            self.kept(x, y)
            return y
        compiled = self.run(x, y)
        if compiled is not None:
            tail = trailing_values(softmax_any_dim_kernel, 2 + len(self.args), self.constexprs)
            self.kept = (KeptLaunch(compiled, self.grid, x.get_device()).bind(2, self.args, tail, None, self.run)
                         or self.run)
        return y

    def with_grad(self, x: torch.Tensor) -> torch.Tensor:
        return AnyDimSoftmax.apply(x, self)


def softmax_any_dim(x: torch.Tensor, dim: int, safe: bool,
                    out_dtype: torch.dtype) -> tuple[torch.Tensor, ReadyAnyDim | None] | None:
    """(softmax of x over `dim` by the any-dim kernel, the call made ready to replay or None with autograd
    recording), for x a checked, non-empty tensor of the dtype to read and `dim` non-negative. None where the
    row kernels are the right ones: the reduced axis is unit-stride, or x is not dense (a copy makes it
    dense: the rows path already does that)."""
    if x.ndim < 2:
        return None
    layout = any_dim_layout(x, dim)
    if layout is None:
        return None
    plan = cached_any_dim_plan(layout, x.dtype, "forward", x.get_device())
    ready = ReadyAnyDim(plan, layout, safe, out_dtype, x.dtype == torch.float64, dim)
    if x.requires_grad and torch.is_grad_enabled():
        return ready.with_grad(x), ready
    return ready(x), ready
