"""Launching a Triton kernel for the price of its launcher: keep the compiled kernel, skip the JIT's work.

`kernel[grid](*args, **constexprs)` goes through `JITFunction.run` on every call: it binds the arguments
to the signature, works out how each one specialises the kernel (dtype, 16-byte alignment, the value 1),
hashes that into a cache key, looks the compiled kernel up, asks the driver for the current device and
stream, and only then calls the compiled kernel's launcher. For a softmax whose GPU work takes 2 µs that
bookkeeping is most of the call. A `KeptLaunch` holds what the JIT found for one specialisation and calls
the C launch function under Triton's launcher object directly, with the arguments in the order it takes
them: grid, stream, kernel function, packed metadata, launch metadata, the two launch hooks, then every
argument of the kernel in signature order, constexprs included (see `JITFunction.run`,
`CompiledKernel.__getitem__` and the CUDA launcher in triton 3.6 and 3.9). Pointers go in as integer
addresses, which both versions' launchers take as they are (a tensor would cost a `data_ptr()` call and a
driver query per pointer).

Which launches are kept, and for which tensors, is softmax_core.launch.launches' business; under the
interpreter there is nothing to keep.
"""
from __future__ import annotations

import inspect
from typing import Callable

import torch
import triton


def launcher_form(launcher) -> str:
    """How to call the C launch function under Triton's Python launcher object, skipping that object's
    `__call__` (which allocates scratch space these kernels do not use, then calls it). Read from the
    launcher's own call signature: "3.6" (scratch pointers before the metadata), "3.9" (metadata first, the
    kernel's arguments as one tuple after their annotations), or "unknown": then every launch goes through
    the JIT, as Triton launches it."""
    cls = type(launcher)
    if cls.__name__ != "CudaLauncher" or getattr(launcher, "gsan_enabled", False):
        return "unknown"
    needed = ("launch", "launch_cooperative_grid", "launch_pdl", "global_scratch_size", "profile_scratch_size")
    if not all(hasattr(launcher, a) for a in needed) or launcher.global_scratch_size or launcher.profile_scratch_size:
        return "unknown"
    params = tuple(inspect.signature(cls.__call__).parameters)
    if params == ("self", "gridX", "gridY", "gridZ", "stream", "function", "args"):
        return "3.6"
    if params == ("self", "gridX", "gridY", "gridZ", "stream", "function", "kernel_metadata", "launch_metadata",
                  "launch_enter_hook", "launch_exit_hook", "args") and hasattr(launcher, "arg_annotations"):
        return "3.9"
    return "unknown"


def trailing_values(kernel, n_args: int, constexprs: tuple) -> tuple:
    """Every kernel parameter after the first `n_args`, in signature order: the constexprs given, and the
    parameter's default for any not given (the launcher takes them all, as the JIT binds them all)."""
    given = dict(constexprs)
    params = list(inspect.signature(kernel.fn).parameters.values())[n_args:]
    missing = [p.name for p in params if p.name not in given and p.default is inspect.Parameter.empty]
    if missing:
        raise TypeError(f"{kernel.fn.__name__}: no value for {', '.join(missing)}")
    return tuple(given[p.name] if p.name in given else p.default for p in params)


# `bind`'s `slots` for a launch that is one of several sharing a buffer of slots: the buffer comes with the
# tensors, as the last of them (launches.PlanCalls.keep makes one per call).
SLOTS_LAST = "slots last"


class KeptLaunch:
    """A compiled kernel and the launcher arguments that stay the same from call to call."""

    __slots__ = ("launcher", "function", "metadata", "grid", "device_index", "form")

    def __init__(self, compiled, grid: tuple, device_index: int):
        self.launcher = compiled.run                  # initialises the module handles on first access
        self.function = compiled.function
        self.metadata = compiled.packed_metadata
        self.grid = (tuple(grid) + (1, 1))[:3]
        self.device_index = device_index
        self.form = launcher_form(self.launcher)

    def bind(self, n_tensors: int, scalars: tuple, tail: tuple, slots, run) -> Callable[..., None] | None:
        """`go(*tensors)`: one launch on the current stream with the tensors' addresses, then `scalars`, a fresh
        slot buffer (where `slots(device)` makes one; with SLOTS_LAST, `go(*tensors, slots)`, the caller's), then
        `tail` (the constexprs); through `run` (the JIT) while launch hooks are installed (SLOTS_LAST: the caller
        checks). None where the launcher's form is unknown. One closure per form and arity, so that a launch is a
        single Python call above the C launch function."""
        if self.form not in ("3.6", "3.9"):
            return None
        g0, g1, g2 = self.grid
        fn, meta, dev, launcher = self.function, self.metadata, self.device_index, self.launcher
        stream, hooked = torch._C._cuda_getCurrentRawStream, hooks_installed
        c_launch, coop, pdl = launcher.launch, launcher.launch_cooperative_grid, launcher.launch_pdl
        rest = scalars + tail
        if slots is SLOTS_LAST:
            if self.form == "3.9":
                annotations, signature = launcher.arg_annotations, launcher.kernel_signature

                def go(*t):
                    args = tuple(a.data_ptr() for a in t[:-1]) + scalars + (t[-1].data_ptr(),) + tail
                    c_launch(g0, g1, g2, stream(dev), fn, coop, pdl, meta, None, None, None, None, None,
                             annotations, signature, args)
            else:
                def go(*t):
                    c_launch(g0, g1, g2, stream(dev), fn, coop, pdl, None, None, meta, None, None, None,
                             *(a.data_ptr() for a in t[:-1]), *scalars, t[-1].data_ptr(), *tail)
            return go
        if self.form == "3.9":
            annotations, signature = launcher.arg_annotations, launcher.kernel_signature
            if slots is not None:
                def go(*t):
                    if hooked():
                        return run(*t)
                    args = tuple(a.data_ptr() for a in t) + scalars + (slots(t[0].device).data_ptr(),) + tail
                    c_launch(g0, g1, g2, stream(dev), fn, coop, pdl, meta, None, None, None, None, None,
                             annotations, signature, args)
            elif n_tensors == 2:
                def go(a, b):
                    if hooked():
                        return run(a, b)
                    c_launch(g0, g1, g2, stream(dev), fn, coop, pdl, meta, None, None, None, None, None,
                             annotations, signature, (a.data_ptr(), b.data_ptr()) + rest)
            else:
                def go(a, b, c):
                    if hooked():
                        return run(a, b, c)
                    c_launch(g0, g1, g2, stream(dev), fn, coop, pdl, meta, None, None, None, None, None,
                             annotations, signature, (a.data_ptr(), b.data_ptr(), c.data_ptr()) + rest)
            return go
        if slots is not None:
            def go(*t):
                if hooked():
                    return run(*t)
                c_launch(g0, g1, g2, stream(dev), fn, coop, pdl, None, None, meta, None, None, None,
                         *(a.data_ptr() for a in t), *scalars, slots(t[0].device).data_ptr(), *tail)
        elif n_tensors == 2:
            def go(a, b):
                if hooked():
                    return run(a, b)
                c_launch(g0, g1, g2, stream(dev), fn, coop, pdl, None, None, meta, None, None, None,
                         a.data_ptr(), b.data_ptr(), *rest)
        else:
            def go(a, b, c):
                if hooked():
                    return run(a, b, c)
                c_launch(g0, g1, g2, stream(dev), fn, coop, pdl, None, None, meta, None, None, None,
                         a.data_ptr(), b.data_ptr(), c.data_ptr(), *rest)
        return go


_KNOBS = triton.knobs.runtime


def hooks_installed() -> bool:
    """A profiler (or the user) asked Triton to call a hook on every launch: then the JIT launches, so the
    hooks see their launch metadata. (Both triton 3.6 and 3.9 keep an empty HookChain when there is none;
    None is accepted too.)"""
    enter, leave = _KNOBS.launch_enter_hook, _KNOBS.launch_exit_hook
    return (enter is not None and getattr(enter, "calls", True)) or (leave is not None and getattr(leave, "calls", True))
