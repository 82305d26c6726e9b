"""Launching a Triton kernel with less Python in the way, for the small matrices where that Python is the cost.

`kernel[grid](*args, **constexprs)` asks Triton's JIT, on every call, to bind the arguments, work out how
to specialise them (is a pointer 16-byte aligned? is an integer 1, a multiple of 16, beyond 32 bits?),
hash that into a cache key and look the compiled kernel up. For a softmax of a 4096 x 512 matrix the
kernel itself runs for about 7 us on an H200 and that bookkeeping costs about as much again, so the GPU
waits for Python.

`Launcher` remembers, per specialisation, the compiled kernel the JIT picked the first time, and from
then on hands the arguments straight to it. The key is built from the same properties the JIT specialises
on, so a launch never reuses a kernel compiled under assumptions its arguments break (an offset view
whose pointer is not 16-byte aligned gets its own entry, and with it the JIT's own choice). Under the
interpreter there is nothing compiled to remember: every launch goes through the JIT.
"""
from __future__ import annotations

import threading

import torch

from . import runtime

INT32_RANGE = range(-(2**31), 2**31)


def _specialisation(value) -> tuple:
    """What Triton's JIT looks at in one argument when it picks a compiled kernel."""
    if isinstance(value, torch.Tensor):
        return ("tensor", value.dtype, value.device.index, value.data_ptr() % 16 == 0)
    if isinstance(value, bool):
        return ("bool", value)
    if isinstance(value, int):
        return ("int", value == 1, value % 16 == 0, value in INT32_RANGE)
    return (type(value).__name__, value)


class Launcher:
    """`Launcher(kernel)(grid, args, constexprs, num_warps)`: the same launch as
    `kernel[grid](*args, **constexprs, num_warps=num_warps, num_stages=1)`, cheaper from the second time."""

    def __init__(self, kernel):
        self.kernel = kernel
        self._compiled: dict = {}
        self._lock = threading.Lock()
        self.fast_launches = 0          # for tests and the overhead script: how often the shortcut was taken

    def __call__(self, grid: tuple, args: tuple, constexprs: dict, num_warps: int, num_stages: int = 1):
        if runtime.INTERPRETED:
            with runtime.one_launch_at_a_time():
                return self.kernel[grid](*args, **constexprs, num_warps=num_warps, num_stages=num_stages)
        key = (tuple(map(_specialisation, args)), tuple(constexprs.items()), num_warps, num_stages)
        compiled = self._compiled.get(key)
        if compiled is None:
            compiled = self.kernel[grid](*args, **constexprs, num_warps=num_warps, num_stages=num_stages)
            with self._lock:
                self._compiled[key] = compiled
            return compiled
        # The compiled kernel takes every parameter in the kernel's order, constexprs included (it skips
        # those), and a three-dimensional grid.
        grid3 = tuple(grid) + (1,) * (3 - len(grid))
        compiled[grid3](*args, *(constexprs[name] for name in self.kernel.arg_names[len(args):]))
        self.fast_launches += 1
        return compiled
