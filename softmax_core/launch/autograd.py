"""Eager autograd for softmax_core.softmax: the forward's y is saved, and the backward kernel runs on it.

The functions take a matrix with unit-stride rows and the eager call's `ReadyCall` (ready.py), which knows
the forward's launch and keeps the backward's: an eager backward is a dictionary lookup, one allocation and
the kept launcher, as the forward is.
"""
from __future__ import annotations

import torch



def softmax_double_backward(y: torch.Tensor, dy: torch.Tensor, g: torch.Tensor):
    """Gradients of dx = y * (dy - sum(y * dy)) with respect to y and dy, given g = dL/d(dx), in torch ops
    (second derivatives are rare; they need to be right, not fast):
        dL/d(dy) = y * (g - sum(g * y))          (the softmax backward again, applied to g)
        dL/dy    = g * (dy - sum(y * dy)) - sum(g * y) * dy"""
    g = g.to(y.dtype)
    gy = (g * y).sum(-1, keepdim=True)
    return g * (dy - (y * dy).sum(-1, keepdim=True)) - gy * dy, y * (g - gy)


class SoftmaxFunction(torch.autograd.Function):
    """softmax over the rows of a matrix by `ready`'s forward launch; its backward by the backward kernel.
    Both bodies are the ReadyCall's steps written out in place: an eager call with grad runs them every time,
    and each Python call saved is a tenth of a microsecond."""

    @staticmethod
    def forward(ctx, x: torch.Tensor, ready) -> torch.Tensor:
        y = _empty_like(x) if ready.same_dtype else _empty_like(x, dtype=ready.out_dtype)
        go = ready.go
        if go is None:
            ready.launch_on(x, y)
        else:
            go(x, y)
        ctx.save_for_backward(y)
        ctx.ready = ready
        return y

    @staticmethod
    def backward(ctx, dy: torch.Tensor):
        (y,) = ctx.saved_tensors
        if dy.stride(-1) != 1:
            dy = dy.contiguous()       # the kernels step through a row one element at a time
        if _grad_enabled():   # create_graph=True: the backward must itself be differentiable
            return SoftmaxBackwardFunction.apply(y, dy, ctx.ready), None
        return ctx.ready.backward(y, dy), None


class SoftmaxBackwardFunction(torch.autograd.Function):
    """The backward kernel as a differentiable step, used only when a graph of the backward is wanted."""

    @staticmethod
    def forward(ctx, y: torch.Tensor, dy: torch.Tensor, ready) -> torch.Tensor:
        ctx.save_for_backward(y, dy)
        return ready.backward(y, dy)

    @staticmethod
    def backward(ctx, g: torch.Tensor):
        y, dy = ctx.saved_tensors
        d_y, d_dy = softmax_double_backward(y, dy, g)
        return d_y, d_dy, None


def call_backward_directly(function_class) -> None:
    """Autograd's engine runs a Python Function's backward by calling `apply` on the node's context object, a
    subclass of BackwardCFunction whose `apply` first looks up whether the class defines `backward` or `vjp`.
    `function_class` defines `backward`: its context's `apply` is made that function itself, so the engine's
    call lands in it with no lookup in between. (Where a torch version has no such context class, nothing is
    changed and the engine's own path runs.)"""
    context_class = getattr(function_class, "_backward_cls", None)
    if context_class is not None and "apply" in vars(torch.autograd.function.BackwardCFunction):
        context_class.apply = function_class.backward


# Function.apply's Python (argument binding for setup_context, functorch's wrappers) costs more than the rest
# of a small softmax call; with no functorch transform active it ends in this C function, called directly here.
softmax_apply = super(torch.autograd.Function, SoftmaxFunction).apply
call_backward_directly(SoftmaxFunction)
functorch_active = torch._C._are_functorch_transforms_active
_grad_enabled = torch.is_grad_enabled
_empty_like = torch.empty_like     # (torch.empty with a shape costs twice as much to call)


def softmax_function(x: torch.Tensor, ready) -> torch.Tensor:
    """SoftmaxFunction.apply(x, ready), recorded for autograd."""
    if functorch_active():
        return SoftmaxFunction.apply(x, ready)
    return softmax_apply(x, ready)
