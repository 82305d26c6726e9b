"""Compile a pasted kernel in a jailed child: the parent side.

The source has passed the gate (gate.py) before any of this; the child checks it again. The child runs in
the jail (jail.py: bubblewrap's namespaces, a read-only view of the Python environment, its own tmpfs as
home and Triton cache, no network, no environment of the server's, the time, memory, file-size and process
limits) or, where the jail does not work here, under the limits alone; every variant says which
(`Variant.sandbox`). Its output is capped and its result lines are validated (replies.py).

What one request may cost is bounded: at most MAX_VARIANTS compiles (GPUs x autotune configs), at most
COMPILE_SLOTS compiles in flight in this process (more wait their turn, so a class pasting at once queues
instead of exhausting the machine), and the child's output bytes (jail.SandboxLimits).
"""
from __future__ import annotations

import os
import threading
from dataclasses import dataclass, field

from kernel_inspector import argspec, jail, replies
from kernel_inspector.gate import KernelFile
from kernel_inspector.jail import PACKAGE_ROOT, SandboxLimits, bootstrap, child_env
from kernel_inspector.rules import ConfigSpec, Refusal, SourceRefused, Symbol
from softmax_core.hardware.compile import KernelResources
from softmax_core.hardware.gpu import GpuSpec

CONFIG_DEFAULT_WARPS, CONFIG_DEFAULT_STAGES = 4, 3     # triton.Config's own defaults
SLOTS_ENV = "SOFTMAX_EXPLORER_COMPILE_SLOTS"
COMPILE_SLOTS = threading.BoundedSemaphore(max(1, int(os.environ.get(SLOTS_ENV, "2") or 2)))
MAX_VARIANTS = 32                  # GPUs x autotune configs in one request


@dataclass(frozen=True)
class CompileFailure:
    hint: str                          # a code from hints.HINT_CODES
    line: int | None                   # the line of the user's file, where Triton names one
    message: str                       # Triton's (or Python's) own message


@dataclass(frozen=True)
class Variant:
    """One compile: a GPU, and an autotune config (index into the kernel's configs) or the user's options."""

    gpu: str
    config: int | None
    num_warps: int
    num_stages: int
    constexprs: tuple
    resources: KernelResources | None = None
    failure: CompileFailure | None = None
    seconds: float | None = None
    sandbox: str = "none"              # what it was compiled in: one of jail.SANDBOX_CODES


@dataclass(frozen=True)
class CompileReport:
    kernel: str
    variants: tuple[Variant, ...]
    refused: Refusal | None = None
    stderr_tail: str = field(default="", compare=False)
    specialisation: argspec.Specialisation | None = None     # what the compile assumed of the values


def _json_value(value):
    return {"symbol": value.path} if isinstance(value, Symbol) else value


def variants_for(kernel_file: KernelFile, kernel: str, specs: tuple[argspec.ArgSpec, ...], gpus: list[GpuSpec],
                 num_warps: int, num_stages: int) -> list[dict]:
    """Every (GPU, config) to compile: each autotune config where the kernel has them, else the user's."""
    info = kernel_file.kernel(kernel)
    specialisation = argspec.jit_specialisation(specs, info)
    configs: list[ConfigSpec | None] = list(info.configs) or [None]
    out = []
    for gpu in gpus:
        for index, config in enumerate(configs):
            _, constexprs = argspec.specialised_inputs(specs, specialisation, config)
            out.append({"gpu": gpu.key, "target": list(gpu.compile_target),
                        "config": None if config is None else index,
                        # a triton.Config that names no num_warps / num_stages runs with triton's defaults
                        "num_warps": (config.num_warps or CONFIG_DEFAULT_WARPS) if config else num_warps,
                        "num_stages": (config.num_stages or CONFIG_DEFAULT_STAGES) if config else num_stages,
                        "constexprs": [[n, _json_value(v)] for n, v in constexprs]})
    return out


def compile_kernel(kernel_file: KernelFile, kernel: str | None, specs: tuple[argspec.ArgSpec, ...],
                   gpus: list[GpuSpec], num_warps: int = 4, num_stages: int = 3,
                   limits: SandboxLimits = SandboxLimits()) -> CompileReport:
    """Compile `kernel` of a gated file for each GPU (and each autotune config) in a sandboxed child."""
    name = kernel_file.kernel(kernel).name
    variants = variants_for(kernel_file, name, specs, gpus, num_warps, num_stages)
    for index, variant in enumerate(variants):
        variant["index"] = index
    info = kernel_file.kernel(name)
    specialisation = argspec.jit_specialisation(specs, info)
    signature, _ = argspec.specialised_inputs(specs, specialisation, (info.configs or (None,))[0])
    if len(variants) > MAX_VARIANTS:
        raise SourceRefused(Refusal("too_large", info.line, detail="variants", value=len(variants),
                                    limit=MAX_VARIANTS))
    request = {"source": kernel_file.source, "kernel": name, "signature": [list(p) for p in signature],
               "divisible": list(specialisation.divisible_by_16), "variants": variants}
    with COMPILE_SLOTS:
        outcome = jail.run_child("kernel_inspector.worker", "main", request, limits)
    done: dict[int, tuple] = {}
    refused = None
    for line in outcome.replies:
        try:
            reply = replies.compile_reply(line, range(len(variants)))
        except replies.BadReply:
            continue
        if reply[0] == "refused":
            refused = reply[1]
        else:
            done.setdefault(reply[0], reply[1:])
    results = []
    for variant in variants:
        base = dict(gpu=variant["gpu"], config=variant["config"], num_warps=variant["num_warps"],
                    num_stages=variant["num_stages"], constexprs=tuple(map(tuple, variant["constexprs"])),
                    sandbox=outcome.sandbox)
        reply = done.get(variant["index"])
        if reply is None:
            results.append(Variant(**base, failure=_ended(outcome, limits)))
        elif isinstance(reply[1], KernelResources):
            results.append(Variant(**base, resources=reply[1], seconds=reply[0]))
        else:
            results.append(Variant(**base, failure=CompileFailure(*reply[1]), seconds=reply[0]))
    return CompileReport(name, tuple(results), refused, outcome.output_tail, specialisation)


def _ended(outcome: jail.ChildOutcome, limits: SandboxLimits) -> CompileFailure:
    """Why a variant has no answer: the time limit, the output cap, memory, or the child ended."""
    if outcome.timed_out:
        return CompileFailure("time_limit", None, f"{limits.seconds:g} s")
    if outcome.flooded:
        return CompileFailure("output_limit", None, outcome.flooded)
    tail = outcome.output_tail[-2000:]
    if "MemoryError" in tail:
        return CompileFailure("memory_limit", None, tail)
    signal_note = f"\n(signal {-outcome.returncode})" if outcome.returncode and outcome.returncode < 0 else ""
    return CompileFailure("crashed", None, tail + signal_note)


def refuse_or_compile(source: str, kernel: str | None, given: list[str], gpus: list[GpuSpec], num_warps: int,
                      num_stages: int, limits: SandboxLimits = SandboxLimits()):
    """The whole path from text: gate, argument specs, compile. Raises SourceRefused or ArgSpecError."""
    from kernel_inspector.gate import check_source

    kernel_file = check_source(source)
    info = kernel_file.kernel(kernel)
    specs = argspec.merge(argspec.prefill(info), [argspec.parse_arg(text) for text in given])
    return kernel_file, specs, compile_kernel(kernel_file, info.name, specs, gpus, num_warps, num_stages, limits)


__all__ = ["CompileFailure", "CompileReport", "MAX_VARIANTS", "PACKAGE_ROOT", "SandboxLimits", "SourceRefused",
           "Variant", "bootstrap", "child_env", "compile_kernel", "refuse_or_compile", "variants_for"]
