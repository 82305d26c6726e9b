"""softmax as two PyTorch operators, so that torch.compile, torch.export and CUDA graphs can take it in.

    torch.ops.softmax_core.softmax_forward(x, safe, out_dtype) -> y        x: a matrix, rows unit-stride
    torch.ops.softmax_core.softmax_backward(y, dy, grad_dtype) -> dx
    torch.ops.softmax_core.softmax_any_dim_forward(x, dim, safe, out_dtype) -> y       any layout, any dim
    torch.ops.softmax_core.softmax_any_dim_backward(y, dy, dim, grad_dtype) -> dx     y contiguous

The forward carries its backward (`register_autograd`), and each has a fake implementation that only says
what comes out (shape, dtype, device), so a tracer never needs to run a kernel. `softmax_matrix` below is
what api.softmax calls while a tool is tracing it; eager calls skip the operator's dispatch, which costs
more than launching a small kernel.

On a GPU the operators are `torch.library.triton_op`s whose bodies launch the kernels through
`wrap_triton` (launches.SoftmaxLaunch.run_wrapped): torch.compile then sees the Triton kernels themselves,
Inductor launches them with its own launcher, and `mode="reduce-overhead"` captures them in a CUDA graph.
Under the interpreter (no GPU) there is no Triton code Inductor could generate for the CPU, so the operators
are opaque `custom_op`s: a compiled graph calls them like any other operator, and they run the interpreted
kernels.
"""
from __future__ import annotations

import torch

from softmax_core.hardware import runtime
from softmax_core.launch.autograd import softmax_double_backward
from softmax_core.launch.launches import backward_launch, cached_plan, forward_launch, launch_aligned, rows_unit_stride
from softmax_core.launch import any_dim

NAMESPACE = "softmax_core"


def _plan(direction: str, safe: bool, *inputs: torch.Tensor):
    # Shape, dtype, the device's index and whether the inputs are 16-byte aligned: nothing here asks the driver
    # anything.
    matrix = inputs[0]
    n_rows, n_cols = (int(d) for d in matrix.shape)
    aligned = all(launch_aligned(t) for t in inputs)
    packed = all(int(t.stride(0)) == n_cols for t in inputs)
    return cached_plan(n_rows, n_cols, matrix.dtype, direction, safe, matrix.get_device(), aligned, packed)


def _forward_body(x: torch.Tensor, safe: bool, out_dtype: torch.dtype, wrap) -> torch.Tensor:
    plan = _plan("forward", safe, x)
    y = torch.empty((plan.n_rows, plan.n_cols), dtype=out_dtype, device=x.device)
    forward_launch(plan, safe, int(x.stride(0)), x.dtype, out_dtype).run_wrapped((x, y), wrap)
    return y


def _backward_body(y: torch.Tensor, dy: torch.Tensor, grad_dtype: torch.dtype, wrap) -> torch.Tensor:
    plan = _plan("backward", False, y, dy)
    dx = torch.empty((plan.n_rows, plan.n_cols), dtype=grad_dtype, device=y.device)
    launch = backward_launch(plan, int(y.stride(0)), int(dy.stride(0)), (y.dtype, dy.dtype, dx.dtype))
    launch.run_wrapped((y, dy, dx), wrap)
    return dx


def _any_dim_forward_body(x: torch.Tensor, dim: int, safe: bool, out_dtype: torch.dtype, wrap) -> torch.Tensor:
    # The eager call's layouts and plan (launch/any_dim.py), launched through `wrap`; the output is contiguous.
    ready = any_dim.ready_for(x, dim, safe, out_dtype)
    y = torch.empty(tuple(x.shape), dtype=out_dtype, device=x.device)
    if ready.copy_x:
        x = x.contiguous()
    ready.run(x, y, wrap)
    return y


def _any_dim_backward_body(y: torch.Tensor, dy: torch.Tensor, dim: int, grad_dtype: torch.dtype,
                           wrap) -> torch.Tensor:
    step = any_dim.BackwardLaunch(y, dy, dim)
    dy = step.dy_for(y, dy)
    dx = torch.empty(tuple(y.shape), dtype=grad_dtype, device=y.device)
    step.run(y, dy, dx, wrap)
    return dx


if runtime.INTERPRETED:
    def _as_is(kernel):
        return kernel

    @torch.library.custom_op(f"{NAMESPACE}::softmax_forward", mutates_args=(), device_types="cpu")
    def softmax_forward_op(x: torch.Tensor, safe: bool, out_dtype: torch.dtype) -> torch.Tensor:
        return _forward_body(x, safe, out_dtype, _as_is)

    @torch.library.custom_op(f"{NAMESPACE}::softmax_backward", mutates_args=(), device_types="cpu")
    def softmax_backward_op(y: torch.Tensor, dy: torch.Tensor, grad_dtype: torch.dtype) -> torch.Tensor:
        return _backward_body(y, dy, grad_dtype, _as_is)

    @softmax_forward_op.register_fake
    def _(x, safe, out_dtype):
        return x.new_empty(x.shape, dtype=out_dtype)

    @torch.library.custom_op(f"{NAMESPACE}::softmax_any_dim_forward", mutates_args=(), device_types="cpu")
    def softmax_any_dim_forward_op(x: torch.Tensor, dim: int, safe: bool, out_dtype: torch.dtype) -> torch.Tensor:
        return _any_dim_forward_body(x, dim, safe, out_dtype, _as_is)

    @torch.library.custom_op(f"{NAMESPACE}::softmax_any_dim_backward", mutates_args=(), device_types="cpu")
    def softmax_any_dim_backward_op(y: torch.Tensor, dy: torch.Tensor, dim: int,
                                    grad_dtype: torch.dtype) -> torch.Tensor:
        return _any_dim_backward_body(y, dy, dim, grad_dtype, _as_is)

    @softmax_any_dim_forward_op.register_fake
    def _(x, dim, safe, out_dtype):
        return torch.empty(x.shape, dtype=out_dtype, device=x.device)

    @softmax_any_dim_backward_op.register_fake
    def _(y, dy, dim, grad_dtype):
        return torch.empty(y.shape, dtype=grad_dtype, device=y.device)

    @softmax_backward_op.register_fake
    def _(y, dy, grad_dtype):
        return y.new_empty(y.shape, dtype=grad_dtype)
else:
    from torch.library import triton_op, wrap_triton

    # A triton_op's fake implementation is derived from its body (the launches do nothing on fake tensors).
    @triton_op(f"{NAMESPACE}::softmax_forward", mutates_args=())
    def softmax_forward_op(x: torch.Tensor, safe: bool, out_dtype: torch.dtype) -> torch.Tensor:
        return _forward_body(x, safe, out_dtype, wrap_triton)

    @triton_op(f"{NAMESPACE}::softmax_backward", mutates_args=())
    def softmax_backward_op(y: torch.Tensor, dy: torch.Tensor, grad_dtype: torch.dtype) -> torch.Tensor:
        return _backward_body(y, dy, grad_dtype, wrap_triton)

    @triton_op(f"{NAMESPACE}::softmax_any_dim_forward", mutates_args=())
    def softmax_any_dim_forward_op(x: torch.Tensor, dim: int, safe: bool, out_dtype: torch.dtype) -> torch.Tensor:
        return _any_dim_forward_body(x, dim, safe, out_dtype, wrap_triton)

    @triton_op(f"{NAMESPACE}::softmax_any_dim_backward", mutates_args=())
    def softmax_any_dim_backward_op(y: torch.Tensor, dy: torch.Tensor, dim: int,
                                    grad_dtype: torch.dtype) -> torch.Tensor:
        return _any_dim_backward_body(y, dy, dim, grad_dtype, wrap_triton)


def _setup_context(ctx, inputs, output):
    x, _safe, _out_dtype = inputs
    ctx.save_for_backward(output)
    ctx.grad_dtype = x.dtype


def _backward(ctx, dy):
    (y,) = ctx.saved_tensors
    return torch.ops.softmax_core.softmax_backward(y, rows_unit_stride(dy), ctx.grad_dtype), None, None


softmax_forward_op.register_autograd(_backward, setup_context=_setup_context)


def _setup_backward_context(ctx, inputs, output):
    y, dy, _grad_dtype = inputs
    ctx.save_for_backward(y, dy)


def _double_backward(ctx, g):
    y, dy = ctx.saved_tensors
    d_y, d_dy = softmax_double_backward(y, dy, g)
    return d_y, d_dy, None


softmax_backward_op.register_autograd(_double_backward, setup_context=_setup_backward_context)


def _setup_any_dim_context(ctx, inputs, output):
    x, dim, _safe, _out_dtype = inputs
    ctx.save_for_backward(output)
    ctx.dim, ctx.grad_dtype = dim, x.dtype


def _any_dim_backward(ctx, dy):
    (y,) = ctx.saved_tensors
    dim = ctx.dim
    if any_dim.rows_backward(tuple(int(d) for d in y.shape), dim):        # y's softmax dim is its last: the rows' operator
        n_cols = int(y.shape[dim])
        dx = torch.ops.softmax_core.softmax_backward(y.reshape(-1, n_cols),
                                                     rows_unit_stride(dy.reshape(-1, n_cols)), ctx.grad_dtype)
        return dx.reshape(y.shape), None, None, None
    return torch.ops.softmax_core.softmax_any_dim_backward(y, dy, dim, ctx.grad_dtype), None, None, None


softmax_any_dim_forward_op.register_autograd(_any_dim_backward, setup_context=_setup_any_dim_context)


def _setup_any_dim_backward_context(ctx, inputs, output):
    y, dy, dim, _grad_dtype = inputs
    ctx.save_for_backward(y, dy)
    ctx.dim = dim


def _any_dim_double_backward(ctx, g):
    y, dy = ctx.saved_tensors
    dim = ctx.dim
    g = g.to(y.dtype)
    gy = (g * y).sum(dim, keepdim=True)
    return g * (dy - (y * dy).sum(dim, keepdim=True)) - gy * dy, y * (g - gy), None, None


softmax_any_dim_backward_op.register_autograd(_any_dim_double_backward, setup_context=_setup_any_dim_backward_context)


def softmax_any_dim(x: torch.Tensor, dim: int, safe: bool, out_dtype: torch.dtype) -> torch.Tensor:
    """softmax over `dim` of x in any layout, through the registered operator; the output is contiguous."""
    return torch.ops.softmax_core.softmax_any_dim_forward(x, dim, safe, out_dtype)


def softmax_matrix(x: torch.Tensor, safe: bool, out_dtype: torch.dtype) -> torch.Tensor:
    """softmax over the last dim of a matrix with unit-stride rows, through the registered operator."""
    return torch.ops.softmax_core.softmax_forward(x, safe, out_dtype)
