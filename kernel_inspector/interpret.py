"""Run a user's kernel once in Triton's interpreter (on the CPU, no GPU needed) and summarise what it wrote.

Running pasted code is more than compiling it, so this happens only where it was asked for explicitly (the
CLI's --interpret; on the page only where the teacher set measure.RUN_PASTED_ENV), in the same jailed child
as a compile (jail.py: namespaces, read-only view, its own tmpfs, time, memory, file-size and process limits;
its one result line validated before it is read), at small sizes (INTERPRETER_LIMITS, checked before anything runs). Inputs are random, of the shapes the user
gives. The wall time is the interpreter's on this machine's CPU: it says nothing about a GPU's speed.

Results are checked two ways: every tensor's values are summarised after the run (shape, whether the kernel
wrote it, NaN and infinity counts, min / max / mean of the finite values), and for the four examples
(examples.py) each output is compared with a float64 torch reference computed from the same inputs.
"""
from __future__ import annotations

import json
import math
import os
import sys
import time
from dataclasses import dataclass

from kernel_inspector import argspec, jail, replies
from kernel_inspector.argspec import ArgSpec, element_torch_dtype
from kernel_inspector.gate import KernelFile
from kernel_inspector.rules import Symbol
from kernel_inspector.sandbox import COMPILE_SLOTS, SandboxLimits


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
    # SOFTMAX_CORE_OFFLINE_COMPILER=1 would switch the interpreter off: this child is the interpreter's
    with COMPILE_SLOTS:
        outcome = jail.run_child("kernel_inspector.interpret", "child_main", request, limits.sandbox,
                                 {"TRITON_INTERPRET": "1", "SOFTMAX_CORE_OFFLINE_COMPILER": "0"})
    if outcome.timed_out:
        return InterpreterRun(False, "time_limit", f"{seconds:g} s")
    for line in outcome.replies:
        try:
            return run_reply(line)
        except replies.BadReply:
            continue
    if outcome.flooded:
        return InterpreterRun(False, "failed", f"output_limit: {outcome.flooded}")
    code = "memory_limit" if "MemoryError" in outcome.output_tail else "failed"
    return InterpreterRun(False, code, outcome.output_tail[-2000:] or f"exit status {outcome.returncode}")


def _finite(value) -> float | None:
    return None if value is None else replies.number(value, -1e308, 1e308)


def tensor_reply(obj) -> TensorSummary:
    f = replies.exact_keys(obj, {"name", "shape", "dtype", "written", "nan", "inf", "minimum", "maximum", "mean"},
                           {"reference_error", "reference_tolerance"})
    if not isinstance(f["shape"], list) or len(f["shape"]) > 8 or type(f["written"]) is not bool:
        raise replies.BadReply("tensor")
    return TensorSummary(replies.text(f["name"], 200), tuple(replies.integer(n) for n in f["shape"]),
                         replies.text(f["dtype"], 16), f["written"], replies.integer(f["nan"]),
                         replies.integer(f["inf"]), _finite(f["minimum"]), _finite(f["maximum"]), _finite(f["mean"]),
                         _finite(f.get("reference_error")), _finite(f.get("reference_tolerance")))


def run_reply(obj) -> InterpreterRun:
    """The child's one result line, validated field by field (replies.py)."""
    f = replies.exact_keys(obj, {"ok", "code"}, {"detail", "tensors", "wall_seconds"})
    if type(f["ok"]) is not bool or not isinstance(f.get("tensors", []), list) or len(f.get("tensors", [])) > 64:
        raise replies.BadReply("run")
    wall = f.get("wall_seconds")
    return InterpreterRun(f["ok"], replies.one_of(f["code"], RUN_CODES), replies.text(f.get("detail", "")),
                          tuple(tensor_reply(t) for t in f.get("tensors", [])),
                          None if wall is None else replies.number(wall))


def summary(torch, name: str, before, after, dtype: str) -> dict:
    """One tensor after a launch: its shape, whether the launch wrote it, NaN / infinity counts, the finite
    values' min / max / mean (the run's untrusted side: tensor_reply reads it back)."""
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
    results = os.fdopen(int(request["result_fd"]), "w", buffering=1)
    os.set_inheritable(results.fileno(), False)

    def answer(reply: dict) -> None:
        results.write(json.dumps(reply) + "\n")

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
                answer({"ok": False, "code": "missing_value", "detail": arg["name"]})
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
        answer({"ok": False, "code": "failed", "detail": f"{type(exc).__name__}: {exc}"[-2000:]})
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
        found = summary(torch, name, before[name], tensors[name], arg["dtype"])
        if name in expected:
            found.update(reference_error=examples.reference_error(tensors[name], expected[name]),
                         reference_tolerance=examples.reference_tolerance(arg["dtype"]))
        summaries.append(found)
    answer({"ok": True, "code": "ok", "tensors": summaries, "wall_seconds": wall})
