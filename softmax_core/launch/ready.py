"""The eager path's memory: each call seen before, ready to repeat with one lookup, one allocation and the kept
launcher.

A call's key (`call_key`) holds everything that decides its launch: shape, strides, dtype, device, dim, the
`dtype=` asked for, `safe`, and the input's address modulo 16. The first call with a key checks the input
(api.py), works out the layout and the plan once, launches through Triton's JIT and keeps a `ReadyCall`;
every later call with that key finds it and goes straight to the kept launcher (launches.py). The backward
is kept the same way, per layout of dy, on the forward's `ReadyCall`.
"""
from __future__ import annotations

import torch

from softmax_core.launch.autograd import softmax_function
from softmax_core.launch.launches import (backward_launch, cached_plan, forget_launches, forward_launch,
                                         launch_aligned, rows_unit_stride)

# More keys than this and the memory starts again (each entry is small; a program with this many shapes is
# rebuilding its tensors' layouts, and its calls will be re-planned from the plan cache).
MAX_READY_CALLS = 4096


def call_key(x: torch.Tensor, dim: int, dtype, safe: bool) -> tuple:
    """Everything that decides an eager call's launch (the dim as given: -1 and 1 are two keys for one call)."""
    return (x.shape, x.stride(), x.dtype, x.get_device(), dim, dtype, safe, x.data_ptr() % 16)


class ReadyCall:
    """One eager call, ready to repeat: the cast in front (for `dtype=`), how x becomes the kernel's matrix
    (the softmax dim last, rows with unit stride), the forward launch, and how y gets x's shape back.

    `direct`: x itself is the matrix (the dim last with unit stride, rows evenly spaced: a contiguous tensor
    of any rank, or a matrix with padded rows), so y is allocated in x's shape and nothing is reshaped."""

    __slots__ = ("cast", "in_dtype", "out_dtype", "dim", "moved", "direct", "plain", "shape", "n_rows", "n_cols",
                 "launch", "kept_key", "go", "backward_kept", "same_dtype", "grad_direct")

    def __init__(self, x: torch.Tensor, dim: int, safe: bool, out_dtype: torch.dtype, cast: bool):
        """For x already in the dtype the kernel reads; `cast`: the call's own input is cast to it first."""
        in_dtype = x.dtype
        self.cast, self.in_dtype, self.out_dtype, self.dim = cast, in_dtype, out_dtype, dim
        self.same_dtype = out_dtype == in_dtype
        self.moved = dim != x.ndim - 1
        moved = x.movedim(dim, -1) if self.moved else x
        self.shape = moved.shape                     # y's shape before the dim goes back to its place
        self.n_cols = moved.shape[-1]
        self.n_rows = moved.numel() // self.n_cols
        unit = x.stride(-1) == 1 or self.n_cols == 1
        self.direct = not self.moved and unit and (x.ndim <= 2 or x.is_contiguous())
        if self.direct:
            matrix, row_stride = x, (x.stride(0) if x.ndim == 2 else self.n_cols)
        else:
            matrix = self.matrix(x)
            row_stride = matrix.stride(0)
        # y = empty_like(x) of the call's own x: no cast in front, and y in x's layout and dtype
        self.plain = not cast and self.direct and x.is_contiguous() and out_dtype == in_dtype
        # with grad: the call's own x goes straight into SoftmaxFunction (a matrix, no cast, nothing to reshape)
        self.grad_direct = not cast and self.direct and x.ndim == 2
        plan = cached_plan(self.n_rows, self.n_cols, in_dtype, "forward", safe, x.get_device(),
                           launch_aligned(matrix, row_stride), row_stride == self.n_cols)
        self.launch = forward_launch(plan, safe, row_stride, in_dtype, out_dtype)
        self.kept_key = (x.get_device(), matrix.data_ptr() % 16 == 0)
        self.go = None                               # the kept launch, once the first call has made it
        self.backward_kept: dict = {}                # (dy's row stride, dtype, aligned) -> kept backward launch

    # -- layout -------------------------------------------------------------------------------------------------
    def matrix(self, x: torch.Tensor) -> torch.Tensor:
        """x (in the kernel's dtype) as the kernel's matrix: the dim last, flattened, rows with unit stride."""
        if self.moved:
            x = x.movedim(self.dim, -1)
        return rows_unit_stride(x.reshape(self.n_rows, self.n_cols))

    def shape_back(self, y: torch.Tensor) -> torch.Tensor:
        y = y.view(self.shape)
        return y.movedim(-1, self.dim) if self.moved else y

    # -- launches -----------------------------------------------------------------------------------------------
    def launch_on(self, x: torch.Tensor, y: torch.Tensor) -> None:
        go = self.go
        if go is None:
            self.go = self.launch.launch_and_keep((x, y), self.kept_key)
        else:
            go(x, y)

    def forward_matrix(self, matrix: torch.Tensor) -> torch.Tensor:
        # rows with unit stride: y is a contiguous matrix
        y = _empty_like(matrix) if self.same_dtype else _empty_like(matrix, dtype=self.out_dtype)
        self.launch_on(matrix, y)
        return y

    def __call__(self, x: torch.Tensor) -> torch.Tensor:
        """The call without autograd."""
        if self.cast:
            x = x.to(self.in_dtype)
        if self.direct:
            y = _empty_like(x) if self.plain else _empty_like(x, dtype=self.out_dtype, memory_format=_CONTIGUOUS)
            self.launch_on(x, y)
            return y
        return self.shape_back(self.forward_matrix(self.matrix(x)))

    def with_grad(self, x: torch.Tensor) -> torch.Tensor:
        """The call recorded for autograd: the layout steps are torch ops, the softmax is one SoftmaxFunction."""
        if self.cast:
            x = x.to(self.in_dtype)
        if self.direct and x.ndim == 2:
            return softmax_function(x, self)
        matrix = x.reshape(self.n_rows, self.n_cols) if self.direct else self.matrix(x)
        return self.shape_back(softmax_function(matrix, self))

    def backward(self, y: torch.Tensor, dy: torch.Tensor) -> torch.Tensor:
        """dx for this call's y (ours: contiguous) and dy (unit-stride rows), in the forward input's dtype."""
        dx = _empty_like(y) if self.same_dtype else _empty_like(y, dtype=self.in_dtype)
        key = (dy.stride(0), dy.dtype, dy.data_ptr() % 16 == 0)
        go = self.backward_kept.get(key)
        if go is not None:
            go(y, dy, dx)
            return dx
        plan = cached_plan(self.n_rows, self.n_cols, y.dtype, "backward", False, y.get_device(),
                           launch_aligned(y) and launch_aligned(dy), y.stride(0) == dy.stride(0) == self.n_cols)
        launch = backward_launch(plan, y.stride(0), dy.stride(0), (y.dtype, dy.dtype, dx.dtype))
        self.backward_kept[key] = launch.launch_and_keep((y, dy, dx), (y.get_device(), True, key[2]))
        return dx


_empty_like = torch.empty_like     # (torch.empty with a shape costs twice as much to call)
_CONTIGUOUS = torch.contiguous_format


# call_key(...) -> ReadyCall; filled by api.softmax after it has checked the input, so a key is only ever
# found for a valid call.
READY: dict = {}


def remember(key: tuple, ready: ReadyCall) -> None:
    if len(READY) >= MAX_READY_CALLS:
        READY.clear()
    READY[key] = ready


def ready_call(x: torch.Tensor, dim: int = -1, dtype=None, safe: bool = False) -> ReadyCall | None:
    """The kept call for these arguments, if one has been made (tools and tests look at it)."""
    return READY.get(call_key(x, dim, dtype, safe))


def forget_ready_calls() -> None:
    """Forget every kept call and launch: the next call of each goes through the JIT again."""
    READY.clear()
    forget_launches()
