"""Launching the kernels from PyTorch: input checks, the tutorial's wrapper, and the public `softmax`."""
from __future__ import annotations

from functools import lru_cache

import torch

from . import dtypes, runtime
from .tuned_kernels import (NOT_PUBLISHED, softmax_backward_rows_kernel, softmax_backward_split_kernel,
                    softmax_backward_tiled_kernel, softmax_rows_kernel, softmax_split_kernel, softmax_tiled_kernel)
from .gpu import GpuSpec, default_gpu
from .reason_text import describe
from .tutorial_kernel import tutorial_softmax_kernel
from .tutorial_plan import LaunchPlan, plan_launch
from .tuned_plan import SoftmaxPlan, plan_softmax

SUPPORTED_DTYPES = tuple(dtypes.torch_dtype(name) for name in dtypes.TUTORIAL_DTYPES)    # the tutorial's kernel
SOFTMAX_DTYPES = tuple(dtypes.torch_dtype(name) for name in dtypes.TUNED_DTYPES)        # the tuned kernels


class KernelDoesNotFit(RuntimeError):
    """The plan found that not even one program fits on an SM (Triton would raise OutOfResources)."""


def check_input(x, allowed=SUPPORTED_DTYPES) -> None:
    """Raise a TypeError / ValueError that names the problem, before any kernel sees `x`."""
    if not isinstance(x, torch.Tensor):
        raise TypeError(f"softmax expects a torch.Tensor, got {type(x).__name__}")
    if x.dtype not in allowed:
        names = ", ".join(dtypes.name_of_any(d) for d in allowed)
        raise TypeError(f"softmax needs a floating-point tensor ({names}); got {dtypes.name_of_any(x.dtype)}")
    if x.device.type != runtime.KERNEL_DEVICE_TYPE:
        where = ("this machine has no GPU, so kernels run in Triton's interpreter on CPU tensors"
                 if runtime.INTERPRETED else "kernels run on the GPU; move the tensor with x.cuda()")
        raise ValueError(f"x is on {x.device}, but {where}")


def naive_softmax(x: torch.Tensor) -> torch.Tensor:
    """The tutorial's five-kernel softmax; each line is one trip through DRAM (see memory.py)."""
    x_max = x.max(dim=1)[0]                   # read MN, write M
    z = x - x_max[:, None]                    # read MN + M, write MN
    numerator = torch.exp(z)                  # read MN, write MN
    denominator = numerator.sum(dim=1)        # read MN, write M
    return numerator / denominator[:, None]   # read MN + M, write MN


def launch_tutorial_kernel(x: torch.Tensor, y: torch.Tensor, plan: LaunchPlan, trace: torch.Tensor | None = None,
                       **flags) -> torch.Tensor:
    """Run the tutorial kernel on the plan's persistent grid. `flags` are the kernel's teaching switches."""
    if not plan.fits:
        raise KernelDoesNotFit(describe(plan.reason))
    n_rows, n_cols = x.shape
    with runtime.one_launch_at_a_time():
        tutorial_softmax_kernel[plan.grid](
            x, y, x.stride(0), y.stride(0), n_rows, n_cols,
            trace if trace is not None else y,
            BLOCK_SIZE=plan.block_size, num_stages=plan.num_stages, num_warps=plan.num_warps, **flags)
    return y


def tutorial_softmax(x: torch.Tensor, gpu: GpuSpec | None = None) -> torch.Tensor:
    """The tutorial's wrapper: plan from the compiled kernel's resources, then launch. 2-D input only."""
    check_input(x)
    if x.ndim != 2:
        raise ValueError(f"the tutorial's kernel takes a 2-D matrix, got a tensor of shape {tuple(x.shape)}")
    if x.numel() == 0:
        return torch.empty_like(x)
    x = _rows_unit_stride(x)   # the kernel walks a row with unit steps; a row's stride is honoured
    y = torch.empty_like(x, memory_format=torch.contiguous_format)
    plan = plan_launch(x.shape[0], x.shape[1], x.dtype, gpu)
    return launch_tutorial_kernel(x, y, plan)


def split_phases() -> tuple[int, ...]:
    """The split kernels' PHASE per launch: one launch whose programs wait for each other on a GPU; under
    the interpreter, which runs programs one at a time, a publishing launch and then a finishing one."""
    return (1, 2) if runtime.INTERPRETED else (0,)


def _split_slots(plan: SoftmaxPlan, device) -> torch.Tensor:
    """One 64-bit slot per program per row, where programs sharing a row publish their partial results."""
    return torch.full((plan.n_rows * plan.split,), NOT_PUBLISHED, dtype=torch.int64, device=device)


def softmax_forward(x: torch.Tensor, plan: SoftmaxPlan, safe: bool = False) -> torch.Tensor:
    """softmax over the rows of the matrix `x` by the tuned kernel `plan` names (plan_softmax's, or one
    forced with its `path=`). No input checks: `softmax` is the checked entry point."""
    n_rows, n_cols = x.shape
    y = torch.empty((n_rows, n_cols), dtype=x.dtype, device=x.device)
    if plan.path == "split":
        slots = _split_slots(plan, x.device)
        with runtime.one_launch_at_a_time():
            for phase in split_phases():
                softmax_split_kernel[plan.grid](x, y, x.stride(0), y.stride(0), n_rows, n_cols, slots,
                                                SPLIT=plan.split, PEERS=plan.peers,
                                                CHUNK=plan.block_n, SAFE=safe, PHASE=phase,
                                                num_warps=plan.num_warps, num_stages=1)
        return y
    common = dict(SAFE=safe, FP64=x.dtype == torch.float64, num_warps=plan.num_warps, num_stages=1)
    with runtime.one_launch_at_a_time():
        if plan.path == "rows":
            softmax_rows_kernel[plan.grid](x, y, x.stride(0), y.stride(0), n_rows, n_cols,
                                           ROWS=plan.rows_per_program, BLOCK_N=plan.block_n, **common)
        else:
            softmax_tiled_kernel[plan.grid](x, y, x.stride(0), y.stride(0), n_rows, n_cols, TILE=plan.block_n,
                                            **common)
    return y


def softmax_backward(y: torch.Tensor, dy: torch.Tensor, plan: SoftmaxPlan) -> torch.Tensor:
    """dx for y = softmax(x) and the gradient dy, by the tuned backward kernel `plan` names."""
    n_rows, n_cols = y.shape
    dx = torch.empty((n_rows, n_cols), dtype=y.dtype, device=y.device)
    args = (y, dy, dx, y.stride(0), dy.stride(0), dx.stride(0), n_rows, n_cols)
    if plan.path == "split":
        slots = _split_slots(plan, y.device)
        with runtime.one_launch_at_a_time():
            for phase in split_phases():
                softmax_backward_split_kernel[plan.grid](*args, slots, SPLIT=plan.split,
                                                         PEERS=plan.peers,
                                                         CHUNK=plan.block_n, PHASE=phase,
                                                         num_warps=plan.num_warps, num_stages=1)
        return dx
    common = dict(FP64=y.dtype == torch.float64, num_warps=plan.num_warps, num_stages=1)
    with runtime.one_launch_at_a_time():
        if plan.path == "rows":
            softmax_backward_rows_kernel[plan.grid](*args, ROWS=plan.rows_per_program, BLOCK_N=plan.block_n,
                                                    **common)
        else:
            softmax_backward_tiled_kernel[plan.grid](*args, TILE=plan.block_n, **common)
    return dx


@lru_cache(maxsize=4096)
def cached_plan(n_rows: int, n_cols: int, dtype: torch.dtype, direction: str, safe: bool) -> SoftmaxPlan:
    """The plan for this machine's GPU (or the catalog's H200 under the interpreter), computed once."""
    return plan_softmax(n_rows, n_cols, dtype, default_gpu(), direction, safe)


def _forward(x: torch.Tensor, safe: bool) -> torch.Tensor:
    return softmax_forward(x, cached_plan(*x.shape, x.dtype, "forward", safe), safe)


class _SoftmaxFunction(torch.autograd.Function):
    """Softmax over the last dim of a matrix whose rows are unit-stride; backward reuses forward's y."""

    @staticmethod
    def forward(ctx, x: torch.Tensor, safe: bool) -> torch.Tensor:
        y = _forward(x, safe)
        ctx.save_for_backward(y)
        return y

    @staticmethod
    def backward(ctx, dy: torch.Tensor):
        (y,) = ctx.saved_tensors
        dy = _rows_unit_stride(dy)
        dx = softmax_backward(y, dy, cached_plan(*y.shape, y.dtype, "backward", False))
        return dx, None


def _rows_unit_stride(x: torch.Tensor) -> torch.Tensor:
    """The kernels step through a row one element at a time and between rows by a stride."""
    return x if x.stride(-1) == 1 or x.shape[-1] == 1 else x.contiguous()


def softmax(x: torch.Tensor, dim: int = -1, *, safe: bool = False) -> torch.Tensor:
    """A drop-in for `torch.softmax(x, dim)`: any rank, any dim, float32/16/bf16 (and float64),
    differentiable. With `safe=True` a row that is entirely -inf gives zeros instead of NaN (what attention
    with a fully masked row wants); the default matches torch."""
    check_input(x, SOFTMAX_DTYPES)
    if not isinstance(dim, int) or isinstance(dim, bool):
        raise TypeError(f"dim must be an int, got {type(dim).__name__}")
    rank = max(x.ndim, 1)
    if not -rank <= dim < rank:
        raise IndexError(f"dim {dim} is out of range for a tensor of {x.ndim} dimension(s)")
    if x.ndim == 0:
        return softmax(x.reshape(1), 0, safe=safe).reshape(())
    dim = dim % x.ndim
    if x.numel() == 0:
        return torch.empty_like(x)
    # Bring the softmax dim last and flatten the rest into rows. Both are views when the layout allows,
    # and both are skipped when there is nothing to do: for a small matrix their Python cost is larger
    # than the kernel's run time.
    last = dim == x.ndim - 1
    moved = x if last else x.movedim(dim, -1)
    matrix = moved if moved.ndim == 2 else moved.reshape(-1, moved.shape[-1])
    matrix = _rows_unit_stride(matrix)
    if matrix.requires_grad and torch.is_grad_enabled():
        y = _SoftmaxFunction.apply(matrix, safe)
    else:  # no graph to record: skip autograd's bookkeeping, which costs more than a small kernel
        y = _forward(matrix, safe)
    if moved.ndim != 2:
        y = y.reshape(moved.shape)
    return y if last else y.movedim(-1, dim)

