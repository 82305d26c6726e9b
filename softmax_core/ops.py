"""Launching the kernels from PyTorch: input checks, the seed's wrapper, and the public `softmax`."""
from __future__ import annotations

import torch

from . import runtime
from .kernels import seed_softmax_kernel
from .launch import TRITON_POINTER_TYPE, LaunchPlan, plan_launch
from .gpu import GpuSpec

SUPPORTED_DTYPES = (torch.float32, torch.float16, torch.bfloat16)


class KernelDoesNotFit(RuntimeError):
    """The plan found that not even one program fits on an SM (Triton would raise OutOfResources)."""


def check_input(x, dtypes=SUPPORTED_DTYPES) -> None:
    """Raise a TypeError / ValueError that names the problem, before any kernel sees `x`."""
    if not isinstance(x, torch.Tensor):
        raise TypeError(f"softmax expects a torch.Tensor, got {type(x).__name__}")
    if x.dtype not in dtypes:
        names = ", ".join(str(d).replace("torch.", "") for d in dtypes)
        raise TypeError(f"softmax needs a floating-point tensor ({names}); got {str(x.dtype).replace('torch.', '')}")
    expected = runtime.kernel_device()
    if x.device.type != expected.type:
        where = ("this machine has no GPU, so kernels run in Triton's interpreter on CPU tensors"
                 if runtime.INTERPRETED else "kernels run on the GPU; move the tensor with x.cuda()")
        raise ValueError(f"x is on {x.device}, but {where}")


def naive_softmax(x: torch.Tensor) -> torch.Tensor:
    """The seed's five-kernel softmax; each line is one trip through DRAM (see memory.py)."""
    x_max = x.max(dim=1)[0]                   # read MN, write M
    z = x - x_max[:, None]                    # read MN + M, write MN
    numerator = torch.exp(z)                  # read MN, write MN
    denominator = numerator.sum(dim=1)        # read MN, write M
    return numerator / denominator[:, None]   # read MN + M, write MN


def launch_seed_kernel(x: torch.Tensor, y: torch.Tensor, plan: LaunchPlan, trace: torch.Tensor | None = None,
                       **flags) -> torch.Tensor:
    """Run the seed kernel on the plan's persistent grid. `flags` are the kernel's teaching switches."""
    if not plan.fits:
        raise KernelDoesNotFit(plan.explanation)
    n_rows, n_cols = x.shape
    seed_softmax_kernel[plan.grid](
        x, y, x.stride(0), y.stride(0), n_rows, n_cols,
        trace if trace is not None else y,
        BLOCK_SIZE=plan.block_size, num_stages=plan.num_stages, num_warps=plan.num_warps, **flags)
    return y


def seed_softmax(x: torch.Tensor, gpu: GpuSpec | None = None) -> torch.Tensor:
    """The chapter's wrapper: plan from the compiled kernel's resources, then launch. 2-D input only."""
    check_input(x)
    if x.ndim != 2:
        raise ValueError(f"the seed's kernel takes a 2-D matrix, got a tensor of shape {tuple(x.shape)}")
    if x.numel() == 0:
        return torch.empty_like(x)
    if x.stride(1) != 1:  # the kernel walks a row with unit steps; a row's stride is honoured
        x = x.contiguous()
    y = torch.empty_like(x, memory_format=torch.contiguous_format)
    plan = plan_launch(x.shape[0], x.shape[1], x.dtype, gpu)
    return launch_seed_kernel(x, y, plan)


def softmax(x: torch.Tensor) -> torch.Tensor:
    """Softmax over the last dim of a 2-D float tensor, like `torch.softmax(x, dim=-1)`."""
    return seed_softmax(x)


assert set(SUPPORTED_DTYPES) <= set(TRITON_POINTER_TYPE)
