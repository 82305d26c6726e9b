"""From a plan and its tensors to kernel launches: the one place the tuned kernels' arguments are put together.

A `SoftmaxLaunch` is everything about a launch that does not depend on where the tensors are: the plan's
calls (`PlanCalls`: the plan's own kernel and the constexprs of each of its launches, never rebuilt here; the
any-dim launches, launch/any_dim.py, bind theirs through the same class), the integer arguments after the
tensors (row strides, n_rows, n_cols), and the tensors' dtypes. It launches three ways, all from the same arguments:

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

from dataclasses import dataclass, field, replace
from functools import lru_cache
from typing import Callable

import torch
from torch._subclasses.fake_tensor import is_fake

from softmax_core.hardware import runtime
from softmax_core.hardware.compile import resolve_kernel
from softmax_core.hardware.gpu import default_gpu
from softmax_core.kernels.row_slots import NOT_PUBLISHED
from softmax_core.launch.fast import SLOTS_LAST, KeptLaunch, hooks_installed, trailing_values
from softmax_core.plans.plan import SoftmaxPlan
from softmax_core.plans.choose import plan_softmax


@lru_cache(maxsize=4096)
def cached_plan(n_rows: int, n_cols: int, dtype: torch.dtype, direction: str, safe: bool,
                device_index: int = 0, aligned: bool = True, packed: bool = True) -> SoftmaxPlan:
    """The plan for GPU number `device_index` (or the catalog's H200 under the interpreter), computed once.
    Everything that decides it is in the arguments, so a caller never has to ask the device. `packed`: every
    tensor's rows are n_cols apart."""
    return plan_softmax(n_rows, n_cols, dtype, default_gpu(max(device_index, 0)), direction, safe,
                        aligned=aligned, packed=packed)


def launch_aligned(matrix: torch.Tensor, row_stride: int | None = None) -> bool:
    """Whether Triton's JIT will see `matrix` as a plan assumes (plans.tuned.launch_divisible): a start on a
    16-byte boundary and, where the width is a multiple of 16, a row stride that is one too. A tracer's tensor
    (fake, or with no storage behind it) has no address: it counts as aligned, as Inductor's real inputs are."""
    row_stride = matrix.stride(0) if row_stride is None else row_stride
    return address_in_line(matrix) == 0 and (row_stride % 16 == 0 or matrix.shape[-1] % 16 != 0)


def address_in_line(t: torch.Tensor) -> int:
    """Where `t`'s data starts within a 16-byte line (0: aligned). A tracer's tensor (fake, or with no storage
    behind it) has no address: 0, as Inductor's real inputs are aligned."""
    if is_fake(t):
        return 0
    try:
        return t.data_ptr() % 16
    except RuntimeError:
        return 0


def rows_unit_stride(x: torch.Tensor) -> torch.Tensor:
    """The kernels step through a row one element at a time and between rows by a stride."""
    return x if x.stride(-1) == 1 or x.shape[-1] == 1 else x.contiguous()


class PlanCalls:
    """The kernel calls of one plan, as the plan made them (`plan.kernel`, `.launches`, `.grid`, `.num_warps`,
    `.n_slots`, `.slots_filled`: a row plan's or an any-dim plan's): a launch binds tensors and integer arguments
    to them and adds nothing else. Plans whose programs share work also take a fresh buffer of `n_slots` slots per
    call, one buffer for all of the call's launches."""

    __slots__ = ("kernel", "launches", "grid", "num_warps", "n_slots", "filled")

    def __init__(self, plan):
        self.kernel = resolve_kernel(plan.kernel)
        self.launches, self.grid, self.num_warps, self.n_slots = plan.launches, plan.grid, plan.num_warps, plan.n_slots
        self.filled = plan.slots_filled

    @property
    def constexprs(self) -> tuple:
        return self.launches[-1]

    def slots(self, device) -> torch.Tensor:
        """One 64-bit slot per program per shared row or column, where programs publish their partial results:
        NOT_PUBLISHED where programs wait for their peers, else as the allocator leaves it (every slot is written
        by one launch before the next reads it)."""
        if self.filled:
            return torch.full((self.n_slots,), NOT_PUBLISHED, dtype=torch.int64, device=device)
        return torch.empty((self.n_slots,), dtype=torch.int64, device=device)

    def run(self, tensors: tuple, ints: tuple, wrap=None):
        """Every launch through Triton's JIT, or through `wrap(kernel)` (torch.library.wrap_triton); the compiled
        kernel of each launch (None under the interpreter or wrapped)."""
        args = tensors + ints + ((self.slots(tensors[0].device),) if self.n_slots else ())
        kernel = self.kernel if wrap is None else wrap(self.kernel)
        compiled = []
        for constexprs in self.launches:
            with runtime.one_launch_at_a_time():
                compiled.append(kernel[self.grid](*args, **dict(constexprs), num_warps=self.num_warps, num_stages=1))
        return None if wrap is not None or compiled[-1] is None else tuple(compiled)

    def keep(self, compiled, tensors: tuple, ints: tuple, fallback) -> Callable[..., None]:
        """`go(*tensors)` through the compiled kernels' launchers (fast.py; `compiled`: run's, one per launch),
        everything but the tensors bound, or `fallback` where there is nothing to keep (the interpreter, a
        launcher of unknown form)."""
        if compiled is None:
            return fallback
        n_args = len(tensors) + len(ints) + (1 if self.n_slots else 0)
        device = tensors[0].get_device()
        if len(compiled) == 1:
            tail = trailing_values(self.kernel, n_args, self.constexprs)
            return (KeptLaunch(compiled[0], self.grid, device).bind(
                len(tensors), ints, tail, self.slots if self.n_slots else None, fallback) or fallback)
        # Several launches share one buffer of slots per call: each is bound with the buffer as its last tensor.
        gos = []
        for one, constexprs in zip(compiled, self.launches):
            tail = trailing_values(self.kernel, n_args, constexprs)
            go = KeptLaunch(one, self.grid, device).bind(len(tensors), ints, tail, SLOTS_LAST, fallback)
            if go is None:
                return fallback
            gos.append(go)
        slots = self.slots

        def go_all(*t):
            if hooks_installed():
                return fallback(*t)
            buffer = slots(t[0].device)
            for go in gos:
                go(*t, buffer)
        return go_all


@dataclass(frozen=True)
class SoftmaxLaunch:
    plan: SoftmaxPlan
    calls: PlanCalls
    scalars: tuple[int, ...]               # the kernel arguments after the tensors: row strides, n_rows, n_cols
    tensor_dtypes: tuple[torch.dtype, ...]  # (x, y) forward, (y, dy, dx) backward
    # (device, inputs 16-byte aligned) -> go, for the specialisations launched so far
    kept: dict = field(default_factory=dict, compare=False, hash=False, repr=False)

    @property
    def kernel(self):
        return self.calls.kernel

    def run(self, *tensors: torch.Tensor):
        """Launch through Triton's JIT; returns the last launch's compiled kernel (None under the interpreter)."""
        compiled = self.calls.run(tensors, self.scalars)
        return None if compiled is None else compiled[-1]

    def run_wrapped(self, tensors: tuple, wrap) -> None:
        """Launch through `wrap(kernel)[grid](...)` (torch.library.wrap_triton for the operators)."""
        self.calls.run(tensors, self.scalars, wrap)

    def launch_and_keep(self, tensors: tuple, key) -> Callable[..., None]:
        """Launch on `tensors` through the JIT and return `go(*tensors)` for later launches of the same
        specialisation (`key`: the device and the inputs' alignment), kept under `key`."""
        compiled = self.calls.run(tensors, self.scalars)
        go = self.kept.get(key)
        if go is None:
            go = self.kept[key] = self.calls.keep(compiled, tensors, self.scalars, self.run)
        return go


def forward_launch(plan: SoftmaxPlan, safe: bool, row_stride: int, in_dtype: torch.dtype,
                   out_dtype: torch.dtype) -> SoftmaxLaunch:
    """The forward launch of `plan` on rows `row_stride` apart, writing contiguous rows in `out_dtype`; `safe`
    sets the plan's own (a plan made without it, launched with it: the same plan with SAFE on)."""
    return _launch_for(plan, ("forward", safe, row_stride, in_dtype, out_dtype))


def backward_launch(plan: SoftmaxPlan, y_stride: int, dy_stride: int, tensor_dtypes: tuple) -> SoftmaxLaunch:
    """The backward launch of `plan` on y and dy rows that far apart, writing contiguous dx rows."""
    return _launch_for(plan, ("backward", y_stride, dy_stride, tensor_dtypes))


# (id(plan), what else decides the launch) -> (the plan asked for, its SoftmaxLaunch). Plans come from
# cached_plan, which keeps them, so an id stays the plan's; an entry whose plan is not the one asked for is
# replaced.
_LAUNCHES: dict = {}


def _launch_for(plan: SoftmaxPlan, detail: tuple) -> SoftmaxLaunch:
    key = (id(plan), detail)
    found = _LAUNCHES.get(key)
    if found is not None and found[0] is plan:
        return found[1]
    n_rows, n_cols = plan.n_rows, plan.n_cols
    if detail[0] == "forward":
        _, safe, row_stride, in_dtype, out_dtype = detail
        packed = row_stride == n_cols
        launched = plan if plan.safe == safe else replace(plan, safe=safe)
        scalars, tensor_dtypes = (row_stride, n_cols, n_rows, n_cols), (in_dtype, out_dtype)
    else:
        _, y_stride, dy_stride, tensor_dtypes = detail
        packed = y_stride == dy_stride == n_cols
        launched, scalars = plan, (y_stride, dy_stride, n_cols, n_rows, n_cols)
    if plan.needs_packed_rows and not packed:
        raise ValueError(f"this {plan.path} plan reads rows n_cols ({n_cols}) apart in every tensor; plan these "
                         f"tensors with packed=False")
    made = SoftmaxLaunch(launched, PlanCalls(launched), scalars, tensor_dtypes)
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
