"""Benchmark providers: each one way of computing softmax (the tuned `softmax`, the tutorial's kernel,
torch, torch.compile, naive, and the optional peers Liger-Kernel and QuACK) or the copy roofline.

A provider knows how to run its forward, how to prepare a backward to time, and whether this machine can
run it at all.
"""
from __future__ import annotations

import functools
import importlib.util
from dataclasses import dataclass
from typing import Callable

import torch

from softmax_core.launch import api as launchers
from softmax_core.hardware import runtime


def one_line(err: BaseException, limit: int = 200) -> str:
    """An exception as one short line: its type and the first line of its message."""
    lines = [line.strip() for line in str(err).splitlines() if line.strip()]
    text = f"{type(err).__name__}: {lines[0] if lines else ''}".rstrip(": ")
    return text if len(text) <= limit else text[: limit - 1] + "…"


class NotDifferentiable(RuntimeError):
    """A provider's output carries no autograd graph, so there is no backward pass to time."""


Forward = Callable[[torch.Tensor], torch.Tensor]
# Given (x, dy), do the forward once and return a call that runs only the backward: that call is what we time.
PrepareBackward = Callable[[torch.Tensor, torch.Tensor], Callable[[], torch.Tensor]]


def _runs_anywhere() -> str | None:
    return None


@dataclass(frozen=True)
class Provider:
    name: str
    label: str
    forward: Forward
    backward: PrepareBackward | None = None
    why_unavailable: Callable[[], str | None] = _runs_anywhere
    roofline: bool = False          # copies bytes instead of computing softmax: nothing to check
    no_backward_reason: str = "no backward pass"

    def available(self) -> tuple[bool, str]:
        """(True, "") when this machine can run it, else (False, why not)."""
        reason = self.why_unavailable()
        return reason is None, reason or ""


def autograd_backward(forward: Forward) -> PrepareBackward:
    """Backward through autograd: build the graph once, then time only `autograd.grad` over it."""
    def prepare(x: torch.Tensor, dy: torch.Tensor) -> Callable[[], torch.Tensor]:
        leaf = x.detach().requires_grad_()
        y = forward(leaf)
        if y.grad_fn is None:
            raise NotDifferentiable("its output has no grad_fn, so autograd has no backward pass to run")
        return lambda: torch.autograd.grad(y, leaf, dy, retain_graph=True)[0]
    return prepare


def _copy_backward(x: torch.Tensor, dy: torch.Tensor) -> Callable[[], torch.Tensor]:
    # The backward roofline: read two tensors and write one, exactly the 3·M·N elements a softmax backward
    # must move (y and dy in, dx out). Elementwise add is as close to pure memory traffic as torch gets.
    out = torch.empty_like(x)
    return lambda: torch.add(x, dy, out=out)


def _softmax_last_dim(x: torch.Tensor) -> torch.Tensor:
    return torch.softmax(x, dim=-1)


@functools.cache
def _compiled_softmax() -> Forward:
    # One compiled function; dynamo specialises it per (dtype, shape, needs-grad) because dynamic=False, so
    # each size gets the kernel torch.compile would build for exactly that shape. `compile_limits` lets it.
    return torch.compile(_softmax_last_dim, dynamic=False)


def _needs_gpu() -> str | None:
    return "needs a GPU" if runtime.INTERPRETED else None


@functools.cache
def _torch_compile_unavailable() -> str | None:
    return None if torch._dynamo.is_dynamo_supported() else "torch.compile is not supported on this Python"


@functools.cache
def _liger_forward() -> Forward:
    from liger_kernel.ops.softmax import LigerSoftmaxFunction
    return LigerSoftmaxFunction.apply


@functools.cache
def _quack_forward() -> Forward:
    # Imported on first use only: importing quack takes seconds and loads NVIDIA's CuTe DSL. Its softmax is
    # an autograd function over a 2-D tensor (float32, float16 or bfloat16), softmax over the last dim.
    from quack.softmax import softmax
    return softmax


def _quack_unavailable() -> str | None:
    # Cheapest question first: whether the package is there at all (no import), then the GPU, then the
    # import itself (cached: a failed import is not retried for every row of a sweep).
    if importlib.util.find_spec("quack") is None:
        return "quack-kernels is not installed; it is an optional peer (pip install quack-kernels)"
    if runtime.INTERPRETED or torch.version.hip:
        return "QuACK needs an NVIDIA GPU (its kernels are written in NVIDIA's CuTe DSL)"
    return _quack_import_problem()


@functools.cache
def _quack_import_problem() -> str | None:
    try:
        _quack_forward()
    except Exception as err:  # ImportError, or a CUDA/DSL error raised while the package imports
        return f"quack-kernels is installed but does not import ({one_line(err)})"
    return None


def _optional_peer(loader: Callable[[], Forward], package: str) -> Callable[[], str | None]:
    @functools.cache  # a failed import is not retried for every row of a sweep
    def why_not() -> str | None:
        try:
            loader()
        except Exception as err:  # ImportError, or a CUDA/DSL error raised while the package imports
            return f"{package} is not importable ({one_line(err)}); it is an optional peer"
        return _needs_gpu()
    return why_not


def _registry() -> dict[str, Provider]:
    providers = [
        Provider("copy", "copy (roofline)", lambda x: torch.empty_like(x).copy_(x), _copy_backward, roofline=True),
        # launchers.softmax is looked up at call time, so the harness measures whatever `softmax` is now.
        Provider("tuned", "tuned (softmax_core.softmax)", lambda x: launchers.softmax(x),
                 autograd_backward(lambda x: launchers.softmax(x))),
        Provider("tutorial", "tutorial kernel (softmax_core.tutorial_softmax)", lambda x: launchers.tutorial_softmax(x),
                 no_backward_reason="the tutorial's kernel has no backward pass"),
        Provider("torch", "torch.softmax", _softmax_last_dim, autograd_backward(_softmax_last_dim)),
        Provider("torch_compile", "torch.compile(torch.softmax)", lambda x: _compiled_softmax()(x),
                 autograd_backward(lambda x: _compiled_softmax()(x)), _torch_compile_unavailable),
        Provider("naive", "naive (five torch ops)", launchers.naive_softmax, autograd_backward(launchers.naive_softmax)),
        Provider("liger", "Liger-Kernel softmax", lambda x: _liger_forward()(x),
                 autograd_backward(lambda x: _liger_forward()(x)), _optional_peer(_liger_forward, "liger_kernel")),
        Provider("quack", "QuACK", lambda x: _quack_forward()(x),
                 autograd_backward(lambda x: _quack_forward()(x)), _quack_unavailable),
    ]
    return {p.name: p for p in providers}


PROVIDERS: dict[str, Provider] = _registry()
# The optional peers' distributions, whose versions a record keeps when the peer is in the run.
# Written with underscores (the same distribution to pip and importlib.metadata): one word in any table.
PEER_PACKAGES = {"liger": ("liger_kernel",), "quack": ("quack_kernels", "nvidia_cutlass_dsl")}


def get_provider(name: str) -> Provider:
    if name not in PROVIDERS:
        raise ValueError(f"unknown provider {name!r}; known: {', '.join(PROVIDERS)}")
    return PROVIDERS[name]


def available_providers() -> list[str]:
    return [name for name, p in PROVIDERS.items() if p.available()[0]]
