"""From a plan and its tensors to kernel launches: the one place the tuned kernels' arguments are put together.

A `SoftmaxLaunch` is everything about a launch that does not depend on where the tensors are: the plan's
kernel for each launch with its constexprs (`steps`), the integer arguments after the tensors (row
strides, n_rows, n_cols), and the tensors' dtypes. It launches three ways, all from the same arguments:

  run(*tensors)            through Triton's JIT (the first call of a specialisation, launch hooks installed,
                           and every call under the interpreter);
  go = kept_go(...)        a function of the tensors that calls the compiled kernel's C launcher directly
                           (fast.py): what every eager call after the first one runs, and what a CUDA graph
                           captures when it captures softmax_core.softmax;
  run_wrapped(tensors, w)  through `w(kernel)[grid](...)`: torch.library.wrap_triton in the operators
                           (operators.py), so that torch.compile sees the kernels themselves.

Tensors are (x, y) forward and (y, dy, dx) backward. Plans whose programs share a row (plan.shares_rows)
also take a fresh buffer of slots per launch, made here.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from functools import lru_cache
from typing import Callable

import torch
from torch._subclasses.fake_tensor import is_fake

from softmax_core.hardware import dtypes, runtime
from softmax_core.hardware.gpu import default_gpu
from softmax_core.kernels.row_slots import NOT_PUBLISHED, SPIN_LIMIT
from softmax_core.kernels.shared_rows import (softmax_backward_split_kernel, softmax_backward_tiled_split_kernel,
                                              softmax_split_kernel)
from softmax_core.kernels.tuned import (softmax_backward_rows_kernel, softmax_backward_tiled_kernel,
                                        softmax_rows_kernel, softmax_tiled_kernel)
from softmax_core.kernels.any_width import any_width_calls, tiny_rows_calls
from softmax_core.kernels.short_rows import short_rows_calls
from softmax_core.launch.fast import KeptLaunch, trailing_values
from softmax_core.plans.tuned import SoftmaxPlan, split_shape
from softmax_core.plans.choose import plan_softmax

FLOAT64 = dtypes.name(torch.float64)


@lru_cache(maxsize=4096)
def cached_plan(n_rows: int, n_cols: int, dtype: torch.dtype, direction: str, safe: bool,
                device_index: int = 0, aligned: bool = True) -> SoftmaxPlan:
    """The plan for GPU number `device_index` (or the catalog's H200 under the interpreter), computed once.
    Everything that decides it is in the arguments, so a caller never has to ask the device."""
    return plan_softmax(n_rows, n_cols, dtype, default_gpu(max(device_index, 0)), direction, safe,
                        aligned=aligned)


def launch_aligned(matrix: torch.Tensor, row_stride: int | None = None) -> bool:
    """Whether Triton's JIT will see `matrix` as a plan assumes (plans.tuned.launch_divisible): a start on a
    16-byte boundary and, where the width is a multiple of 16, a row stride that is one too. A tracer's tensor
    (fake, or with no storage behind it) has no address: it counts as aligned, as Inductor's real inputs are."""
    row_stride = matrix.stride(0) if row_stride is None else row_stride
    if is_fake(matrix):
        return True
    try:
        address = matrix.data_ptr()
    except RuntimeError:
        return True
    return address % 16 == 0 and (row_stride % 16 == 0 or matrix.shape[-1] % 16 != 0)


def rows_unit_stride(x: torch.Tensor) -> torch.Tensor:
    """The kernels step through a row one element at a time and between rows by a stride."""
    return x if x.stride(-1) == 1 or x.shape[-1] == 1 else x.contiguous()


def split_phases() -> tuple[int, ...]:
    """The split kernels' PHASE per launch: one launch whose programs wait for each other on a GPU; under
    the interpreter, which runs programs one at a time, a publishing launch and then a finishing one."""
    return (1, 2) if runtime.INTERPRETED else (0,)


@dataclass(frozen=True)
class Step:
    """One kernel launch of a plan: the kernel and its constexprs, (name, value) pairs in signature order."""
    kernel: object
    constexprs: tuple


def plan_steps(plan: SoftmaxPlan, safe: bool = False) -> tuple[Step, ...]:
    """The launches that carry out `plan`, in order (two for a shared row under the interpreter)."""
    fp64 = plan.dtype == FLOAT64
    forward = plan.direction == "forward"
    if plan.short_rows:     # short rows of any width (plans/any_width.py)
        return tuple(Step(k, c) for k, c in short_rows_calls(plan.direction, plan.rows_per_program, plan.block_n, safe))
    if plan.tiny:           # packed tiny rows (plans/any_width.py)
        return tuple(Step(k, c) for k, c in tiny_rows_calls(plan.rows_per_program, plan.block_n, safe))
    if plan.path == "split":   # with plan.edges: the split kernels' aligned body between masked edges
        kernel = softmax_split_kernel if forward else softmax_backward_split_kernel
        # the row's shape as the plan compiled it: CHUNK, and with edges EDGES and VEC (after SPIN in the signature)
        shape = split_shape(plan.block_n, plan.edges, plan.dtype)
        head = (("SPLIT", plan.split), ("PEERS", plan.peers), ("CHUNK", shape.pop("CHUNK")))
        flags = (("SAFE", safe),) if forward else ()
        return tuple(Step(kernel, head + flags + (("PHASE", phase), ("SPIN", SPIN_LIMIT)) + tuple(shape.items()))
                     for phase in split_phases())
    if plan.edges:          # an aligned body between masked edges (plans/any_width.py)
        return tuple(Step(k, c) for k, c in any_width_calls(plan.direction, plan.block_n,
                                                            dtypes.element_size(plan.dtype), plan.path == "rows", safe))
    if plan.path == "rows":
        kernel = softmax_rows_kernel if forward else softmax_backward_rows_kernel
        flags = (("SAFE", safe), ("FP64", fp64)) if forward else (("FP64", fp64),)
        return (Step(kernel, (("ROWS", plan.rows_per_program), ("BLOCK_N", plan.block_n)) + flags
                     + (("VEC", plan.vec),)),)
    if plan.shares_rows:      # a tiled backward row shared by programs that run at once
        return tuple(Step(softmax_backward_tiled_split_kernel,
                          (("TILE", plan.block_n), ("SPLIT", plan.split), ("PEERS", plan.peers), ("PHASE", phase),
                           ("SPIN", SPIN_LIMIT)))
                     for phase in split_phases())
    if forward:
        return (Step(softmax_tiled_kernel, (("TILE", plan.block_n), ("SAFE", safe), ("FP64", fp64))),)
    return (Step(softmax_backward_tiled_kernel, (("TILE", plan.block_n), ("FP64", fp64))),)


@dataclass(frozen=True)
class SoftmaxLaunch:
    plan: SoftmaxPlan
    steps: tuple[Step, ...]
    scalars: tuple[int, ...]               # the kernel arguments after the tensors: row strides, n_rows, n_cols
    tensor_dtypes: tuple[torch.dtype, ...]  # (x, y) forward, (y, dy, dx) backward
    # (device, inputs 16-byte aligned) -> go, for the specialisations launched so far
    kept: dict = field(default_factory=dict, compare=False, hash=False, repr=False)

    def slots(self, device) -> torch.Tensor:
        """One 64-bit slot per program per row, where programs sharing a row publish their partial results."""
        return torch.full((self.plan.n_rows * self.plan.split,), NOT_PUBLISHED, dtype=torch.int64, device=device)

    def arguments(self, tensors: tuple) -> tuple:
        """Every kernel argument before the constexprs, in signature order."""
        if self.plan.shares_rows:
            return tensors + self.scalars + (self.slots(tensors[0].device),)
        return tensors + self.scalars

    def run(self, *tensors: torch.Tensor):
        """Launch through Triton's JIT; returns the last step's compiled kernel (None under the interpreter)."""
        args = self.arguments(tensors)
        compiled = None
        for step in self.steps:
            with runtime.one_launch_at_a_time():
                compiled = step.kernel[self.plan.grid](*args, **dict(step.constexprs), num_warps=self.plan.num_warps,
                                                       num_stages=1)
        return compiled

    def run_wrapped(self, tensors: tuple, wrap) -> None:
        """Launch through `wrap(kernel)[grid](...)` (torch.library.wrap_triton for the operators)."""
        args = self.arguments(tensors)
        for step in self.steps:
            with runtime.one_launch_at_a_time():
                wrap(step.kernel)[self.plan.grid](*args, **dict(step.constexprs), num_warps=self.plan.num_warps,
                                                  num_stages=1)

    def launch_and_keep(self, tensors: tuple, key) -> Callable[..., None]:
        """Launch on `tensors` through the JIT and return `go(*tensors)` for later launches of the same
        specialisation (`key`: the device and the inputs' alignment), kept under `key`."""
        compiled = self.run(*tensors)
        go = self.kept.get(key)
        if go is None:
            go = self.kept[key] = self._kept_go(compiled, tensors[0].get_device())
        return go

    def _kept_go(self, compiled, device_index: int) -> Callable[..., None]:
        """A launch of `compiled` with everything but the tensors bound; `run` itself where there is nothing
        to keep (the interpreter, a plan of two launches, a launcher whose form is unknown)."""
        if compiled is None or len(self.steps) != 1:
            return self.run
        step = self.steps[0]
        n_args = len(self.tensor_dtypes) + len(self.scalars) + (1 if self.plan.shares_rows else 0)
        tail = trailing_values(step.kernel, n_args, step.constexprs)
        go = KeptLaunch(compiled, self.plan.grid, device_index).bind(
            len(self.tensor_dtypes), self.scalars, tail, self.slots if self.plan.shares_rows else None, self.run)
        return self.run if go is None else go


def forward_launch(plan: SoftmaxPlan, safe: bool, row_stride: int, in_dtype: torch.dtype,
                   out_dtype: torch.dtype) -> SoftmaxLaunch:
    """The forward launch of `plan` on rows `row_stride` apart, writing contiguous rows in `out_dtype`."""
    return _launch_for(plan, ("forward", safe, row_stride, in_dtype, out_dtype))


def backward_launch(plan: SoftmaxPlan, y_stride: int, dy_stride: int, tensor_dtypes: tuple) -> SoftmaxLaunch:
    """The backward launch of `plan` on y and dy rows that far apart, writing contiguous dx rows."""
    return _launch_for(plan, ("backward", y_stride, dy_stride, tensor_dtypes))


# (id(plan), what else decides the launch) -> (the plan asked for, its SoftmaxLaunch). Plans come from
# cached_plan, which keeps them, so an id stays the plan's; an entry whose plan is not the one asked for is
# replaced. (The launch's own plan can differ from the one asked for: see _plan_for_spacing.)
_LAUNCHES: dict = {}


def _plan_for_spacing(plan: SoftmaxPlan, same_spacing: bool, safe: bool) -> SoftmaxPlan:
    """The plan to launch for `plan` on these tensors. The split kernels read rows as an aligned body between
    masked edges only where every tensor's rows are as far apart as the input's (the output's, and dy's, then
    share its pieces); other spacings (a padded input, a dy broadcast down the rows) take the tiled path, whose
    any-width kernels place each tensor's row by its own stride. The short-rows kernels take packed rows only
    (every row stride equal to the width: `same_spacing`); other spacings take the rows kernel."""
    if plan.short_rows and not same_spacing:
        return plan_softmax(plan.n_rows, plan.n_cols, dtypes.torch_dtype(plan.dtype), plan.gpu, plan.direction, safe,
                            path="rows")
    if plan.path != "split" or not plan.edges or same_spacing:
        return plan
    return plan_softmax(plan.n_rows, plan.n_cols, dtypes.torch_dtype(plan.dtype), plan.gpu, plan.direction, safe,
                        path="tiled")


def _launch_for(plan: SoftmaxPlan, detail: tuple) -> SoftmaxLaunch:
    key = (id(plan), detail)
    found = _LAUNCHES.get(key)
    if found is not None and found[0] is plan:
        return found[1]
    n_rows, n_cols = plan.n_rows, plan.n_cols
    if detail[0] == "forward":
        _, safe, row_stride, in_dtype, out_dtype = detail
        steps_plan = _plan_for_spacing(plan, row_stride == n_cols, safe)
        made = SoftmaxLaunch(steps_plan, plan_steps(steps_plan, safe), (row_stride, n_cols, n_rows, n_cols),
                             (in_dtype, out_dtype))
    else:
        _, y_stride, dy_stride, tensor_dtypes = detail
        steps_plan = _plan_for_spacing(plan, y_stride == dy_stride == n_cols, False)
        made = SoftmaxLaunch(steps_plan, plan_steps(steps_plan), (y_stride, dy_stride, n_cols, n_rows, n_cols),
                             tensor_dtypes)
    _LAUNCHES[key] = (plan, made)
    return made


def launch_now(launch: SoftmaxLaunch, tensors: tuple, inputs: tuple) -> None:
    """Launch on `tensors`, by the kept launcher when this specialisation has been launched before. `inputs`:
    the tensors the caller chose (their addresses decide the specialisation; outputs are fresh, so aligned)."""
    key = (tensors[0].get_device(),) + tuple(t.data_ptr() % 16 == 0 for t in inputs)
    go = launch.kept.get(key)
    if go is None:
        launch.launch_and_keep(tensors, key)
    else:
        go(*tensors)


def forget_launches() -> None:
    """Drop every kept launch (tests start from the JIT path with it)."""
    _LAUNCHES.clear()
