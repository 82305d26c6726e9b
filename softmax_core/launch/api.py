"""The public softmax functions: input checks, the tutorial's wrapper, and `softmax`, the drop-in for torch's.

`softmax` has two ways in. Called eagerly on a plain tensor (the usual case) it looks the call up among the
calls it has seen (ready.py: a dictionary keyed by everything that decides the launch) and calls the kept
compiled kernel directly: one lookup, one allocation, one launcher call. Called while torch.compile,
torch.export or a fake-tensor trace is watching, it goes through the PyTorch operators (operators.py), which
those tools can see into. Both launch through launches.py, the one place kernel arguments are put together."""
from __future__ import annotations

import torch

from softmax_core.hardware import dtypes, runtime
from softmax_core.hardware.gpu import GpuSpec
from softmax_core.kernels.tutorial import tutorial_softmax_kernel
from softmax_core.launch import operators
from softmax_core.launch.launches import (backward_launch, cached_plan, forward_launch, launch_now,  # noqa: F401
                                         rows_unit_stride)
from softmax_core.launch.autograd import functorch_active, softmax_apply
from softmax_core.launch.ready import READY, ReadyCall, call_key, remember
from softmax_core.words import describe
from softmax_core.plans.tutorial import LaunchPlan, plan_launch
from softmax_core.plans.tuned import SoftmaxPlan

SUPPORTED_DTYPES = tuple(dtypes.torch_dtype(name) for name in dtypes.TUTORIAL_DTYPES)    # the tutorial's kernel
SOFTMAX_DTYPES = tuple(dtypes.torch_dtype(name) for name in dtypes.TUNED_DTYPES)        # the tuned kernels


class KernelDoesNotFit(RuntimeError):
    """The plan found that not even one program fits on an SM (Triton would raise OutOfResources). `reason`:
    the plan's reason (a code and its figures); the message is its English words."""

    def __init__(self, reason):
        super().__init__(describe(reason))
        self.reason = reason


def check_input(x, allowed=SUPPORTED_DTYPES) -> None:
    """Raise a TypeError / ValueError that names the problem, before any kernel sees `x`."""
    if not isinstance(x, torch.Tensor):
        raise TypeError(f"softmax expects a torch.Tensor, got {type(x).__name__}")
    if x.is_nested or x.layout != torch.strided:
        # (padding a nested tensor with -inf is the chapter's masking: softmax gives the padding 0)
        kind, fix = (("nested", "x.to_padded_tensor(float('-inf'))") if x.is_nested
                     else (str(x.layout).removeprefix("torch."), "x.to_dense()"))
        raise TypeError(f"softmax needs a dense tensor; got a {kind} one ({fix} makes one)")
    if x.dtype not in allowed:
        names = ", ".join(dtypes.name_of_any(d) for d in allowed)
        raise TypeError(f"softmax needs a floating-point tensor ({names}); got {dtypes.name_of_any(x.dtype)}")
    if x.device.type != runtime.KERNEL_DEVICE_TYPE:
        where = ("Triton's interpreter is on, so kernels run on CPU tensors" if runtime.INTERPRETED else
                 "kernels run on the GPU; move the tensor with x.cuda()" if runtime.gpu_present() else
                 "this machine has no GPU: softmax_core.runtime.use_interpreter() runs the kernels in Triton's "
                 "interpreter on CPU tensors")
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
        raise KernelDoesNotFit(plan.reason)
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
    x = rows_unit_stride(x)   # the kernel walks a row with unit steps; a row's stride is honoured
    y = torch.empty_like(x, memory_format=torch.contiguous_format)
    plan = plan_launch(x.shape[0], x.shape[1], x.dtype, gpu)
    return launch_tutorial_kernel(x, y, plan)


def _check_plan_fits(plan: SoftmaxPlan, n_rows: int, n_cols: int) -> None:
    """A plan's launch carries its own row and column counts: given another matrix it would read and write
    outside it, so that is refused here."""
    if (plan.n_rows, plan.n_cols) != (n_rows, n_cols):
        raise ValueError(f"the plan is for a {plan.n_rows} x {plan.n_cols} matrix, the input is {n_rows} x {n_cols}")


def softmax_forward(x: torch.Tensor, plan: SoftmaxPlan, safe: bool = False, out_dtype: torch.dtype | None = None,
                    *, n_rows: int | None = None, n_cols: int | None = None, row_stride: int | None = None,
                    out_shape=None) -> torch.Tensor:
    """softmax over the rows of `x` by the tuned kernel `plan` names (plan_softmax's, or one forced with its
    `path=`). No input checks: `softmax` is the checked entry point. The rows of `x` are unit-stride and
    `row_stride` apart (a matrix by default; a contiguous tensor of any rank, given n_rows / n_cols /
    row_stride). The output is contiguous, in `out_dtype` (default x's): the kernel rounds its float32
    results straight to it, so a wider output costs no extra pass."""
    if n_rows is None:
        n_rows, n_cols = x.shape
        row_stride = x.stride(0)
    _check_plan_fits(plan, n_rows, n_cols)
    out_dtype = out_dtype or x.dtype
    y = torch.empty(out_shape if out_shape is not None else (n_rows, n_cols), dtype=out_dtype, device=x.device)
    launch_now(forward_launch(plan, safe, row_stride, x.dtype, out_dtype), (x, y), (x,))
    return y


def softmax_backward(y: torch.Tensor, dy: torch.Tensor, plan: SoftmaxPlan,
                     grad_dtype: torch.dtype | None = None) -> torch.Tensor:
    """dx = y * (dy - sum(y * dy)) for matrices y and dy with unit-stride rows; dx in `grad_dtype` (the
    forward input's dtype: float32 y and dy give a bfloat16 dx after a bf16 -> float32 forward)."""
    n_rows, n_cols = y.shape
    _check_plan_fits(plan, n_rows, n_cols)
    if dy.shape != y.shape:
        raise ValueError(f"dy has shape {tuple(dy.shape)}, y {tuple(y.shape)}: they must match")
    dx = torch.empty((n_rows, n_cols), dtype=grad_dtype or y.dtype, device=y.device)
    launch = backward_launch(plan, y.stride(0), dy.stride(0), (y.dtype, dy.dtype, dx.dtype))
    launch_now(launch, (y, dy, dx), (y, dy))
    return dx


def output_dtype(x: torch.Tensor, dtype) -> tuple[torch.dtype, torch.dtype]:
    """(the dtype the kernel reads, the dtype it writes) for torch.softmax's `dtype=` argument. Like torch:
    the input is cast to `dtype` first, except half precision in and float32 out, which the kernel does in
    its one pass (read bf16, compute in float32, write float32), as torch's own CUDA kernel does."""
    if dtype is None:
        return x.dtype, x.dtype
    if not isinstance(dtype, torch.dtype):
        raise TypeError(f"dtype must be a torch.dtype such as torch.float32, got {type(dtype).__name__}")
    if dtype not in SOFTMAX_DTYPES:
        names = ", ".join(dtypes.name_of_any(d) for d in SOFTMAX_DTYPES)
        raise TypeError(f"softmax computes in a floating-point dtype ({names}); dtype={dtypes.name_of_any(dtype)} "
                        f"is not one")
    if dtype == torch.float32 and x.dtype in dtypes.HALF_PRECISION:
        return x.dtype, dtype
    return dtype, dtype


def _check_dim(x: torch.Tensor, dim) -> int:
    if not isinstance(dim, int) or isinstance(dim, bool):
        raise TypeError(f"dim must be an int, got {type(dim).__name__}")
    rank = max(x.ndim, 1)
    if not -rank <= dim < rank:
        raise IndexError(f"dim {dim} is out of range for a tensor of {x.ndim} dimension(s)")
    return dim % rank


def _tracing(x) -> bool:
    """True when a tool is tracing this call (fake or functional tensors, a dispatch mode, torch.export):
    then the call must go through the registered operator, which the tool can see."""
    return type(x) is not torch.Tensor or torch._C._len_torch_dispatch_stack() > 0


_is_compiling = torch.compiler.is_compiling
_grad_enabled = torch.is_grad_enabled
_dispatch_modes = torch._C._len_torch_dispatch_stack
_empty_like = torch.empty_like


def softmax(x: torch.Tensor, dim: int = -1, dtype: torch.dtype | None = None, *, safe: bool = False) -> torch.Tensor:
    """A drop-in for `torch.softmax(x, dim, dtype=None)`: any rank, any dim, float32/16/bf16 (and float64),
    differentiable, and visible to torch.compile / torch.export as an operator. `dtype` gives the output's
    dtype as in torch (bf16 in, float32 out is one pass). With `safe=True` a row that is entirely -inf gives
    zeros instead of NaN (what attention with a fully masked row wants); the default matches torch."""
    if _is_compiling():
        if answered_by_torch(x, dtype):
            return torch_softmax(x, dim, dtype, safe)
        return _softmax_via_op(x, dim, dtype, safe)
    if type(x) is torch.Tensor and type(dim) is int:
        try:
            ready = READY.get(call_key(x, dim, dtype, safe))
        except RuntimeError:      # no strides or no storage (sparse, nested): _softmax_slow names the problem
            ready = None
        if ready is not None and _dispatch_modes() == 0:
            if x.requires_grad and _grad_enabled():
                if ready.grad_direct and not functorch_active():
                    return softmax_apply(x, ready)       # SoftmaxFunction.apply, its C part called directly
                return ready.with_grad(x)
            go = ready.go
            if ready.plain and go is not None:
                # The whole per-call path: an allocation and the kept launcher. All else was decided once.
                y = _empty_like(x)
                go(x, y)
                return y
            return ready(x)
    return _softmax_slow(x, dim, dtype, safe)


def answered_by_torch(x, dtype) -> bool:
    """Whether torch.softmax itself answers this call (its answer, or its own error), because no kernel of
    ours serves it: a dense tensor on a device our kernels do not run on here (a CPU tensor when Triton's
    interpreter was not asked for; a meta tensor, for shape inference), or an element type torch refuses too
    (an integer, bool or complex tensor without a floating `dtype=`, a `dtype=` that is not floating)."""
    if not isinstance(x, torch.Tensor) or x.is_nested or x.layout != torch.strided:
        return False                       # check_input names the problem
    if x.device.type != runtime.KERNEL_DEVICE_TYPE and x.device.type in ("cpu", "meta"):
        return True
    if dtype is None:
        return x.dtype not in SOFTMAX_DTYPES
    return isinstance(dtype, torch.dtype) and dtype not in SOFTMAX_DTYPES


def torch_softmax(x: torch.Tensor, dim, dtype, safe) -> torch.Tensor:
    """torch.softmax with this function's one extra: `safe=True` gives a row that is entirely -inf zeros."""
    if not isinstance(safe, bool):
        raise TypeError(f"safe must be a bool, got {type(safe).__name__}")
    y = torch.softmax(x, dim, dtype=dtype)
    if safe and x.is_floating_point() and x.numel():
        y = y.masked_fill(torch.isneginf(x).all(dim, keepdim=True), 0)
    return y


def _softmax_via_op(x, dim, dtype, safe: bool) -> torch.Tensor:
    check_input(x, SOFTMAX_DTYPES + NON_FLOAT_DTYPES if dtype is not None else SOFTMAX_DTYPES)
    dim = _check_dim(x, dim)
    in_dtype, out_dtype = output_dtype(x, dtype)
    if x.dtype != in_dtype:
        x = x.to(in_dtype)
    if x.ndim == 0:
        return operators.softmax_matrix(x.reshape(1, 1), safe, out_dtype).reshape(())
    if x.numel() == 0:
        return torch.empty(x.shape, dtype=out_dtype, device=x.device)
    if takes_any_dim(x.shape, x.stride(), dim):
        return operators.softmax_any_dim(x, dim, safe, out_dtype)      # read in x's layout, y contiguous
    moved = x.movedim(dim, -1)
    matrix = rows_unit_stride(moved.reshape(-1, moved.shape[-1]))
    return operators.softmax_matrix(matrix, safe, out_dtype).reshape(moved.shape).movedim(-1, dim)


def _softmax_slow(x, dim, dtype, safe: bool) -> torch.Tensor:
    """The first call with a key: checks, then the layout and plan worked out once and kept for the next."""
    if answered_by_torch(x, dtype):
        return torch_softmax(x, dim, dtype, safe)
    check_input(x, SOFTMAX_DTYPES + NON_FLOAT_DTYPES if dtype is not None else SOFTMAX_DTYPES)
    if not isinstance(safe, bool):
        raise TypeError(f"safe must be a bool, got {type(safe).__name__}")
    given_dim, dim = dim, _check_dim(x, dim)
    if _tracing(x):
        return _softmax_via_op(x, dim, dtype, safe)
    in_dtype, out_dtype = output_dtype(x, dtype)
    if x.ndim == 0:
        return softmax(x.to(in_dtype).reshape(1), 0, safe=safe).reshape(()).to(out_dtype)
    if x.numel() == 0:
        return torch.empty(x.shape, dtype=out_dtype, device=x.device)
    key = call_key(x, given_dim, dtype, safe)
    cast = x.dtype != in_dtype
    x = x.to(in_dtype)              # x itself when no cast is asked for; the ready call's cast is then a no-op
    if (routed := softmax_any_dim(x, dim, safe, out_dtype)) is not None:   # the reduced axis is not unit-stride
        y, kept = routed
        if kept is not None and not cast:     # (a kept any-dim call reads x as it comes: no cast in front)
            remember(key, kept)
        return y
    ready = ReadyCall(x, dim, safe, out_dtype, cast)
    remember(key, ready)
    return ready.with_grad(x) if x.requires_grad and torch.is_grad_enabled() else ready(x)


# Integer, bool and complex input is accepted when a floating `dtype=` says what to compute in: it is cast
# to that dtype first, as torch.softmax does (complex loses its imaginary part, with torch's warning).
NON_FLOAT_DTYPES = (torch.uint8, torch.int8, torch.int16, torch.int32, torch.int64, torch.bool,
                    torch.complex64, torch.complex128)

from softmax_core.launch.any_dim import softmax_any_dim, takes_any_dim  # noqa: E402
