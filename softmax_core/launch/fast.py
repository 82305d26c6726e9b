"""Launching a Triton kernel for the price of its launcher: keep the compiled kernel, skip the JIT's work.

`kernel[grid](*args, **constexprs)` goes through `JITFunction.run` on every call: it binds the arguments
to the signature, works out how each one specialises the kernel (dtype, 16-byte alignment, the value 1),
hashes that into a cache key, looks the compiled kernel up, asks the driver for the current device and
stream, and only then calls the compiled kernel's launcher. For a softmax whose GPU work takes 2 µs that
bookkeeping is most of the call. Here the first call of each specialisation goes through the JIT (which
compiles the kernel, or finds it in its cache) and keeps what the JIT found; later calls with the same
specialisation call the launcher directly, with the arguments in the order the launcher takes them:
grid, stream, kernel function, packed metadata, launch metadata, the two launch hooks, then every argument
of the kernel in signature order, constexprs included (checked on triton 3.6 and 3.9: see
`JITFunction.run` and `CompiledKernel.__getitem__` in those versions).

Under the interpreter there is nothing to keep: every launch goes through the JIT (an interpreted call).
"""
from __future__ import annotations

import torch
import triton

from softmax_core.hardware import runtime

_I32_MIN, _I32_MAX = -(2 ** 31), 2 ** 31


def _arg_spec(arg):
    """What Triton specialises an argument on: a tensor's dtype and whether its address is a multiple of
    16; an int's width (i32 or i64), whether it is 1, and whether it is a multiple of 16."""
    if isinstance(arg, torch.Tensor):
        return (arg.dtype, arg.data_ptr() % 16 == 0)
    return (arg == 1, arg % 16 == 0, _I32_MIN <= arg < _I32_MAX)


def specialisation(args: tuple) -> tuple:
    return tuple(_arg_spec(a) for a in args)


def _launcher_form(launcher) -> str:
    """How to call the C launch function under Triton's Python launcher object, skipping that object's
    `__call__` (which allocates scratch space this kernel does not use, then calls it). Read from the
    launcher's own call signature: "3.6" (scratch pointers before the metadata), "3.9" (metadata first, the
    kernel's arguments as one tuple after their annotations), or "wrapper" for anything else: then the
    Python launcher is called as Triton calls it."""
    import inspect

    cls = type(launcher)
    if cls.__name__ != "CudaLauncher" or getattr(launcher, "gsan_enabled", False):
        return "wrapper"
    needed = ("launch", "launch_cooperative_grid", "launch_pdl", "global_scratch_size", "profile_scratch_size")
    if not all(hasattr(launcher, a) for a in needed) or launcher.global_scratch_size or launcher.profile_scratch_size:
        return "wrapper"
    params = tuple(inspect.signature(cls.__call__).parameters)
    if params == ("self", "gridX", "gridY", "gridZ", "stream", "function", "args"):
        return "3.6"
    if params == ("self", "gridX", "gridY", "gridZ", "stream", "function", "kernel_metadata", "launch_metadata",
                  "launch_enter_hook", "launch_exit_hook", "args") and hasattr(launcher, "arg_annotations"):
        return "3.9"
    return "wrapper"


class KeptLaunch:
    """A compiled kernel and the launcher arguments that stay the same from call to call."""

    __slots__ = ("run", "function", "metadata", "grid0", "grid1", "grid2", "tail", "device_index", "form")

    def __init__(self, compiled, grid: tuple, constexpr_values: tuple, device_index: int):
        self.run = compiled.run                  # initialises the module handles on first access
        self.function = compiled.function
        self.metadata = compiled.packed_metadata
        grid = tuple(grid) + (1, 1)
        self.grid0, self.grid1, self.grid2 = grid[0], grid[1], grid[2]
        self.tail = constexpr_values
        self.device_index = device_index
        self.form = _launcher_form(self.run)

    def __call__(self, args: tuple) -> None:
        """Launch with `args`: every kernel argument before the constexprs, in signature order."""
        stream = torch._C._cuda_getCurrentRawStream(self.device_index)
        launcher = self.run
        if self.form == "3.9":
            launcher.launch(self.grid0, self.grid1, self.grid2, stream, self.function, launcher.launch_cooperative_grid,
                            launcher.launch_pdl, self.metadata, None, None, None, None, None,
                            launcher.arg_annotations, launcher.kernel_signature, args + self.tail)
        elif self.form == "3.6":
            launcher.launch(self.grid0, self.grid1, self.grid2, stream, self.function, launcher.launch_cooperative_grid,
                            launcher.launch_pdl, None, None, self.metadata, None, None, None, *args, *self.tail)
        else:
            launcher(self.grid0, self.grid1, self.grid2, stream, self.function, self.metadata, None, None, None,
                     *args, *self.tail)

    def bind(self, tail: tuple, raw_pointers: bool = True):
        """A function of the first two kernel arguments (the tensors that change per call) that launches with
        `tail` (every other argument, constexprs included, in signature order) and the current stream.

        With `raw_pointers` the two tensors reach the launcher as their addresses (ints). Given a tensor, the
        C launcher calls its `data_ptr()` and then asks the driver whether the address is a GPU address
        (cuPointerGetAttribute, about half a microsecond each); given an int it takes it as it is. That check
        has already been made for this call's key (same device, a tensor the first launch accepted), so the
        second one is skipped. Call the result once where a launch is harmless and fall back to
        `raw_pointers=False` if it raises: a launcher that takes no ints says so there."""
        g0, g1, g2, fn, meta, dev = self.grid0, self.grid1, self.grid2, self.function, self.metadata, self.device_index
        stream = torch._C._cuda_getCurrentRawStream
        launcher = self.run
        if self.form == "3.9":
            c_launch, coop, pdl = launcher.launch, launcher.launch_cooperative_grid, launcher.launch_pdl
            annotations, signature = launcher.arg_annotations, launcher.kernel_signature
            if raw_pointers:
                def go(a, b):
                    c_launch(g0, g1, g2, stream(dev), fn, coop, pdl, meta, None, None, None, None, None,
                             annotations, signature, (a.data_ptr(), b.data_ptr()) + tail)
            else:
                def go(a, b):
                    c_launch(g0, g1, g2, stream(dev), fn, coop, pdl, meta, None, None, None, None, None,
                             annotations, signature, (a, b) + tail)
        elif self.form == "3.6":
            c_launch, coop, pdl = launcher.launch, launcher.launch_cooperative_grid, launcher.launch_pdl
            if raw_pointers:
                def go(a, b):
                    c_launch(g0, g1, g2, stream(dev), fn, coop, pdl, None, None, meta, None, None, None,
                             a.data_ptr(), b.data_ptr(), *tail)
            else:
                def go(a, b):
                    c_launch(g0, g1, g2, stream(dev), fn, coop, pdl, None, None, meta, None, None, None, a, b, *tail)
        else:
            def go(a, b):
                launcher(g0, g1, g2, stream(dev), fn, meta, None, None, None, a, b, *tail)
        return go


# (kernel, grid, constexprs, num_warps, device, specialisation) -> KeptLaunch
_KEPT: dict = {}


def _jit_launch(kernel, grid, args, constexprs, num_warps):
    return kernel[grid](*args, **dict(constexprs), num_warps=num_warps, num_stages=1)


def _trailing_values(kernel, n_args: int, constexprs: tuple) -> tuple:
    """Every kernel parameter after the first `n_args`, in signature order: the constexprs given, and the
    parameter's default for any not given (the launcher takes them all, as the JIT binds them all)."""
    import inspect

    given = dict(constexprs)
    params = list(inspect.signature(kernel.fn).parameters.values())[n_args:]
    missing = [p.name for p in params if p.name not in given and p.default is inspect.Parameter.empty]
    if missing:
        raise TypeError(f"{kernel.fn.__name__}: no value for {', '.join(missing)}")
    return tuple(given[p.name] if p.name in given else p.default for p in params)


def kept_launch_for(kernel, grid: tuple, args: tuple, constexprs: tuple, num_warps: int) -> KeptLaunch | None:
    """The kept launch for this exact specialisation (launching once through the JIT if there is none
    yet: call it only where running the kernel on `args` is wanted), or None under the interpreter."""
    if runtime.INTERPRETED:
        return None
    device_index = args[0].get_device()
    key = (kernel, grid, constexprs, num_warps, device_index, specialisation(args))
    kept = _KEPT.get(key)
    if kept is None:
        compiled = _jit_launch(kernel, grid, args, constexprs, num_warps)
        kept = _KEPT[key] = KeptLaunch(compiled, grid, _trailing_values(kernel, len(args), constexprs), device_index)
    return kept


_KNOBS = triton.knobs.runtime


def hooks_installed() -> bool:
    """A profiler (or the user) asked Triton to call a hook on every launch: then the JIT launches, so the
    hooks see their launch metadata. (Both triton 3.6 and 3.9 keep an empty HookChain when there is none;
    None is accepted too.)"""
    enter, leave = _KNOBS.launch_enter_hook, _KNOBS.launch_exit_hook
    return (enter is not None and getattr(enter, "calls", True)) or (leave is not None and getattr(leave, "calls", True))


def launch(kernel, grid: tuple, args: tuple, constexprs: tuple, num_warps: int) -> None:
    """Launch `kernel` on `grid`. `args` are the kernel's arguments before its constexprs, in order;
    `constexprs` the (name, value) pairs after them, in order."""
    if runtime.INTERPRETED:
        with runtime.one_launch_at_a_time():
            _jit_launch(kernel, grid, args, constexprs, num_warps)
        return
    device_index = args[0].get_device()
    key = (kernel, grid, constexprs, num_warps, device_index, specialisation(args))
    kept = _KEPT.get(key)
    if kept is None or hooks_installed():
        compiled = _jit_launch(kernel, grid, args, constexprs, num_warps)
        if kept is None:
            _KEPT[key] = KeptLaunch(compiled, grid, _trailing_values(kernel, len(args), constexprs), device_index)
        return
    kept(args)
