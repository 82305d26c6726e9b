"""Benchmark providers: each one way of computing softmax (the tuned `softmax`, the tutorial's kernel,
torch, torch.compile, naive, and the optional peers Liger-Kernel and QuACK) or the copy roofline.

A provider knows how to run its forward, how to prepare a backward to time, and whether this machine can
run it at all. Why a row was not timed is a `NotTimed` code with its figures (softmax_core.words says it):
`not_timed_by(err)` turns a provider's exception into one.
"""
from __future__ import annotations

import functools
import importlib.util
import re
from dataclasses import dataclass
from typing import Callable

import torch

from softmax_core.launch import api as launchers
from softmax_core.hardware import runtime
from softmax_core.words import Code, Coded, describe


class ProviderName(Code):
    """The providers a benchmark can time (their words: softmax_core/words/bench.*.toml)."""
    COPY = "copy"
    TUNED = "tuned"
    TUTORIAL = "tutorial"
    TORCH = "torch"
    TORCH_COMPILE = "torch_compile"
    NAIVE = "naive"
    LIGER = "liger"
    QUACK = "quack"


class NotTimed(Code):
    """Why a benchmark row has no timing; the figures each carries are in its words."""
    NO_BACKWARD = "no_backward"              # the provider has no backward pass
    NEEDS_GPU = "needs_gpu"
    NEEDS_NVIDIA = "needs_nvidia"            # provider
    NOT_INSTALLED = "not_installed"          # package, pip
    NOT_IMPORTABLE = "not_importable"        # package, error
    NO_TORCH_COMPILE = "no_torch_compile"    # torch.compile is not supported on this Python
    WRONG_RESULT = "wrong_result"            # error (max |error| / max |reference|), tolerance
    NOT_A_TENSOR = "not_a_tensor"            # returned (a type's name)
    WRONG_OUTPUT = "wrong_output"            # shape, dtype, expected_shape, expected_dtype
    DOES_NOT_FIT = "does_not_fit"            # plan_code (a plans.reasons.ReasonCode) and that reason's figures
    OUT_OF_RESOURCES = "out_of_resources"    # resource, required, limit (Triton's OutOfResources)
    PEER_BLOCK_LIMIT = "peer_block_limit"    # n, limit: a peer refuses rows longer than its largest block
    GRAPH_CAPTURE = "graph_capture"          # error, message: the call could not be timed from a CUDA graph
    GRAPH_BROKEN = "graph_broken"            # message: a failed capture left CUDA unusable
    RAISED = "raised"                        # error (its type's name), message (its first line, as raised)
    RECORDED = "recorded"                    # text: a reason recorded before codes, that no rule recognises


def first_line(err: BaseException, limit: int = 200) -> str:
    """The first line of an exception's message, at most `limit` characters."""
    lines = [line.strip() for line in str(err).splitlines() if line.strip()]
    text = lines[0] if lines else ""
    return text if len(text) <= limit else text[: limit - 1] + "…"


def one_line(err: BaseException, limit: int = 200) -> str:
    """An exception as one short line: its type and the first line of its message."""
    return f"{type(err).__name__}: {first_line(err, limit)}".rstrip(": ")


# Liger-Kernel's refusal of rows longer than its largest block: a peer's message, read into figures once.
_PEER_BLOCK = re.compile(r"^Cannot launch Triton kernel since n = (?P<n>\d+) exceeds the recommended Triton "
                         r"blocksize = (?P<limit>\d+)")
_OUT_OF_RESOURCE = re.compile(r"out of resource: (?P<resource>[\w ]+?), Required: (?P<required>\d+), "
                              r"Hardware limit: (?P<limit>\d+)")


def raised(error: str, message: str) -> Coded:
    """What a provider raised (its type's name and first line), as a code: a known message gets its figures."""
    if error == "RuntimeError" and (found := _PEER_BLOCK.match(message)):
        return Coded.of(NotTimed.PEER_BLOCK_LIMIT, n=int(found["n"]), limit=int(found["limit"]))
    if error == "OutOfResources" and (found := _OUT_OF_RESOURCE.search(message)):
        return Coded.of(NotTimed.OUT_OF_RESOURCES, resource=found["resource"], required=int(found["required"]),
                        limit=int(found["limit"]))
    return Coded.of(NotTimed.RAISED, error=error, message=message)


class NotDifferentiable(RuntimeError):
    """A provider's output carries no autograd graph, so there is no backward pass to time."""


class CodedError(RuntimeError):
    """An exception that carries its reason as a code (`coded`); its message is the English words."""

    def __init__(self, coded: Coded):
        super().__init__(describe(coded))
        self.coded = coded


def not_timed_by(err: BaseException) -> Coded:
    """Why a provider that raised `err` was not timed, as a NotTimed code and its figures."""
    if isinstance(err, CodedError):
        return err.coded
    if isinstance(err, launchers.KernelDoesNotFit):
        return Coded.of(NotTimed.DOES_NOT_FIT, plan_code=err.reason.code.value, **err.reason.values)
    if isinstance(err, NotDifferentiable):
        return Coded.of(NotTimed.NO_BACKWARD)
    required, limit, name = (getattr(err, attr, None) for attr in ("required", "limit", "name"))
    if type(err).__name__ == "OutOfResources" and None not in (required, limit, name):
        return Coded.of(NotTimed.OUT_OF_RESOURCES, resource=str(name), required=int(required), limit=int(limit))
    return raised(type(err).__name__, first_line(err))


Forward = Callable[[torch.Tensor], torch.Tensor]
# Given (x, dy), do the forward once and return a call that runs only the backward: that call is what we time.
PrepareBackward = Callable[[torch.Tensor, torch.Tensor], Callable[[], torch.Tensor]]


def _runs_anywhere() -> Coded | None:
    return None


@dataclass(frozen=True)
class Provider:
    name: str                       # a ProviderName's value for the project's providers
    forward: Forward
    backward: PrepareBackward | None = None
    why_unavailable: Callable[[], Coded | None] = _runs_anywhere
    roofline: bool = False          # copies bytes instead of computing softmax: nothing to check

    def __post_init__(self):
        object.__setattr__(self, "name", str(self.name))   # a plain str in tables and records

    @property
    def label(self) -> str:
        """Its name for people, in English (softmax_core.words); a provider of no ProviderName: its name."""
        return label(self.name)

    def available(self) -> tuple[bool, Coded | None]:
        """(True, None) when this machine can run it, else (False, why not)."""
        reason = self.why_unavailable()
        return reason is None, reason


def label(name: str, lang: str = "en") -> str:
    """A provider's name for people in `lang`: its ProviderName's words, or `name` itself for any other."""
    return describe(ProviderName(name), lang=lang) if name in set(ProviderName) else name


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


def _needs_gpu() -> Coded | None:
    return Coded.of(NotTimed.NEEDS_GPU) if runtime.INTERPRETED else None


@functools.cache
def _torch_compile_unavailable() -> Coded | None:
    return None if torch._dynamo.is_dynamo_supported() else Coded.of(NotTimed.NO_TORCH_COMPILE)


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


def _quack_unavailable() -> Coded | None:
    # Cheapest question first: whether the package is there at all (no import), then the GPU, then the
    # import itself (cached: a failed import is not retried for every row of a sweep).
    if importlib.util.find_spec("quack") is None:
        return Coded.of(NotTimed.NOT_INSTALLED, package="quack-kernels", pip="quack-kernels")
    if runtime.INTERPRETED or torch.version.hip:
        return Coded.of(NotTimed.NEEDS_NVIDIA, provider="QuACK")
    return _quack_import_problem()


@functools.cache
def _quack_import_problem() -> Coded | None:
    try:
        _quack_forward()
    except Exception as err:  # ImportError, or a CUDA/DSL error raised while the package imports
        return Coded.of(NotTimed.NOT_IMPORTABLE, package="quack-kernels", error=one_line(err))
    return None


def _optional_peer(loader: Callable[[], Forward], package: str) -> Callable[[], Coded | None]:
    @functools.cache  # a failed import is not retried for every row of a sweep
    def why_not() -> Coded | None:
        try:
            loader()
        except Exception as err:  # ImportError, or a CUDA/DSL error raised while the package imports
            return Coded.of(NotTimed.NOT_IMPORTABLE, package=package, error=one_line(err))
        return _needs_gpu()
    return why_not


def _registry() -> dict[str, Provider]:
    providers = [
        Provider(ProviderName.COPY, lambda x: torch.empty_like(x).copy_(x), _copy_backward, roofline=True),
        # launchers.softmax is looked up at call time, so the harness measures whatever `softmax` is now.
        Provider(ProviderName.TUNED, lambda x: launchers.softmax(x), autograd_backward(lambda x: launchers.softmax(x))),
        Provider(ProviderName.TUTORIAL, lambda x: launchers.tutorial_softmax(x)),
        Provider(ProviderName.TORCH, _softmax_last_dim, autograd_backward(_softmax_last_dim)),
        Provider(ProviderName.TORCH_COMPILE, lambda x: _compiled_softmax()(x),
                 autograd_backward(lambda x: _compiled_softmax()(x)), _torch_compile_unavailable),
        Provider(ProviderName.NAIVE, launchers.naive_softmax, autograd_backward(launchers.naive_softmax)),
        Provider(ProviderName.LIGER, lambda x: _liger_forward()(x),
                 autograd_backward(lambda x: _liger_forward()(x)), _optional_peer(_liger_forward, "liger_kernel")),
        Provider(ProviderName.QUACK, lambda x: _quack_forward()(x),
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
