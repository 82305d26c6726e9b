"""Run a user's kernel once in Triton's interpreter (on the CPU, no GPU needed) and summarise what it wrote.

Running pasted code is more than compiling it, so this happens only where it was asked for explicitly (the
CLI's --interpret; on the page only where the teacher set measure.RUN_PASTED_ENV), in the same limited child
as a compile (sandbox.limit_child: time, memory, file size, its own empty directory and Triton cache), at
small sizes (INTERPRETER_LIMITS, checked before anything runs). Inputs are random, of the shapes the user
gives. The wall time is the interpreter's on this machine's CPU: it says nothing about a GPU's speed.

Results are checked two ways: every tensor's values are summarised after the run (shape, whether the kernel
wrote it, NaN and infinity counts, min / max / mean of the finite values), and for the four examples
(examples.py) each output is compared with a float64 torch reference computed from the same inputs.
"""
from __future__ import annotations

import json
import math
import os
import signal
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

from kernel_inspector import argspec
from kernel_inspector.argspec import ArgSpec, element_torch_dtype
from kernel_inspector.gate import KernelFile
from kernel_inspector.rules import Symbol
from kernel_inspector.sandbox import COMPILE_SLOTS, PACKAGE_ROOT, SandboxLimits, bootstrap, child_env, limit_child


@dataclass(frozen=True)
class InterpreterLimits:
    """What the interpreter is given at most: it runs every program of the grid one after another in numpy."""

    elements: int = 1 << 21            # all tensors together
    programs: int = 4096               # the grid's programs
    sandbox: SandboxLimits = SandboxLimits()


INTERPRETER_LIMITS = InterpreterLimits()
RUN_CODES = ("ok", "too_large", "missing_value", "failed", "time_limit", "memory_limit")


@dataclass(frozen=True)
class TensorSummary:
    name: str
    shape: tuple[int, ...]
    dtype: str
    written: bool                      # some element differs from the random value it started with
    nan: int
    inf: int
    minimum: float | None              # of the finite values (None: none is finite)
    maximum: float | None
    mean: float | None
    reference_error: float | None = None   # examples.reference_error (the examples' outputs only)
    reference_tolerance: float | None = None

    @property
    def matches_reference(self) -> bool | None:
        if self.reference_error is None:
            return None
        return self.reference_error <= self.reference_tolerance


@dataclass(frozen=True)
class InterpreterRun:
    ok: bool
    code: str                          # one of RUN_CODES
    detail: str = ""                   # the argument's name, the figures over a limit, or the error's text
    tensors: tuple[TensorSummary, ...] = ()
    wall_seconds: float | None = None  # the launch in the interpreter, on this machine's CPU
    value: int | None = None           # with too_large: the figure over the limit ...
    limit: int | None = None           # ... and the limit


def check_size(sizes: dict, grid: tuple, limits: InterpreterLimits = INTERPRETER_LIMITS) -> InterpreterRun | None:
    """A refusal where the sizes or the grid are beyond what the interpreter is given, else None."""
    elements = sum(math.prod(shape) for shape in sizes.values())
    if elements > limits.elements:
        return InterpreterRun(False, "too_large", "elements", value=elements, limit=limits.elements)
    programs = math.prod(grid) if grid else 1
    if programs > limits.programs:
        return InterpreterRun(False, "too_large", "programs", value=programs, limit=limits.programs)
    return None


def run(kernel_file: KernelFile, kernel: str, specs: tuple[ArgSpec, ...], sizes: dict, grid: tuple,
        num_warps: int = 4, num_stages: int = 3, reference: str | None = None,
        limits: InterpreterLimits = INTERPRETER_LIMITS) -> InterpreterRun:
    """One launch in the interpreter, in a limited child. `reference`: an example's name (examples.EXAMPLES)
    whose float64 reference the outputs are compared with."""
    if refused := check_size(sizes, grid, limits):
        return refused
    info = kernel_file.kernel(kernel)
    config = info.configs[0] if info.configs else None           # an autotuned kernel runs its first config
    _, constexprs = argspec.compile_inputs(specs, config)
    request = {"source": kernel_file.source, "kernel": info.name, "grid": list(grid) or [1],
               "num_warps": config.num_warps or num_warps if config else num_warps,
               "num_stages": config.num_stages or num_stages if config else num_stages,
               "autotuned": bool(info.configs), "reference": reference,
               "constexprs": [[n, {"symbol": v.path} if isinstance(v, Symbol) else v] for n, v in constexprs],
               "args": [{"name": s.name, "kind": s.kind, "dtype": s.dtype, "value": s.value,
                         "shape": list(sizes.get(s.name, ()))} for s in specs if s.kind != "constexpr"]}
    seconds = limits.sandbox.seconds
    with COMPILE_SLOTS, tempfile.TemporaryDirectory(prefix="your-kernel-interpret-") as tmp:
        env = {**child_env(Path(tmp)), "TRITON_INTERPRET": "1"}
        env.pop("SOFTMAX_CORE_OFFLINE_COMPILER")          # that flag switches the interpreter off
        proc = subprocess.Popen([sys.executable, "-I", "-c", bootstrap("kernel_inspector.interpret", "child_main"),
                                 str(PACKAGE_ROOT)], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE, text=True, cwd=tmp, env=env,
                                preexec_fn=limit_child(limits.sandbox))
        try:
            out, err = proc.communicate(json.dumps(request), timeout=seconds)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.communicate()
            return InterpreterRun(False, "time_limit", f"{seconds:g} s")
    lines = [line for line in out.splitlines() if line.startswith("{")]
    if not lines:
        code = "memory_limit" if "MemoryError" in err else "failed"
        return InterpreterRun(False, code, err[-2000:] or f"exit status {proc.returncode}")
    reply = json.loads(lines[-1])
    tensors = tuple(TensorSummary(**{**t, "shape": tuple(t["shape"])}) for t in reply.pop("tensors", ()))
    return InterpreterRun(**reply, tensors=tensors)


def _summary(torch, name: str, before, after, dtype: str) -> dict:
    values = after.double()
    finite = values[torch.isfinite(values)]
    return {"name": name, "shape": list(after.shape), "dtype": dtype,
            "written": bool((before != after).any()) if before is not None else True,
            "nan": int(torch.isnan(values).sum()), "inf": int(torch.isinf(values).sum()),
            "minimum": float(finite.min()) if finite.numel() else None,
            "maximum": float(finite.max()) if finite.numel() else None,
            "mean": float(finite.mean()) if finite.numel() else None}


def child_main() -> None:
    """In the child (TRITON_INTERPRET=1): random inputs, one launch, the summaries and the reference check."""
    request = json.loads(sys.stdin.read())
    import torch

    from softmax_core.hardware import runtime      # first: makes triton's own library functions interpretable
    from kernel_inspector import examples, gate
    from kernel_inspector.worker import load_kernel, symbol_value

    gate.check_source(request["source"])
    module = load_kernel(request["source"], request["kernel"])
    kernel = getattr(module, request["kernel"])
    if request["autotuned"]:
        kernel = kernel.fn                  # the first config's values come in `constexprs`; no benchmarking
    generator = torch.Generator().manual_seed(0)
    args, tensors, scalars = [], {}, {}
    for arg in request["args"]:
        if arg["kind"] == "pointer":
            dtype = element_torch_dtype(arg["dtype"])
            shape = arg["shape"] or [1]
            tensor = (torch.randn(shape, generator=generator).to(dtype) if dtype.is_floating_point
                      else torch.randint(0, 8, shape, generator=generator, dtype=dtype))
            tensors[arg["name"]] = tensor
            args.append(tensor)
        else:
            if arg["value"] is None:
                print(json.dumps({"ok": False, "code": "missing_value", "detail": arg["name"]}))
                return
            scalars[arg["name"]] = arg["value"]
            args.append(arg["value"])
    constexprs = {}
    for name, value in request["constexprs"]:
        constexprs[name] = symbol_value(value["symbol"]) if isinstance(value, dict) else value
    before = {name: t.clone() for name, t in tensors.items()}
    assert runtime.INTERPRETED
    started = time.perf_counter()
    try:              # num_warps / num_stages mean nothing to the interpreter (and a kernel may name a constexpr so)
        kernel[tuple(request["grid"])](*args, **constexprs)
    except Exception as exc:          # the user's kernel failed in the interpreter: say so, in its own words
        print(json.dumps({"ok": False, "code": "failed", "detail": f"{type(exc).__name__}: {exc}"[-2000:]}))
        return
    wall = time.perf_counter() - started
    expected = {}
    if request["reference"] in examples.REFERENCES:
        expected = examples.REFERENCES[request["reference"]](before, {**scalars, **constexprs}, request["grid"])
    summaries = []
    for arg in request["args"]:
        if arg["kind"] != "pointer":
            continue
        name = arg["name"]
        summary = _summary(torch, name, before[name], tensors[name], arg["dtype"])
        if name in expected:
            summary.update(reference_error=examples.reference_error(tensors[name], expected[name]),
                           reference_tolerance=examples.reference_tolerance(arg["dtype"]))
        summaries.append(summary)
    print(json.dumps({"ok": True, "code": "ok", "tensors": summaries, "wall_seconds": wall}))
