"""Run a user's kernel on this machine's GPU and time it beside a plain copy of the same bytes.

Running pasted code is more than compiling it, so it happens only when asked for explicitly (the CLI's
--measure; on the page only where the teacher set RUN_PASTED_ENV), and only in the jail (jail.py: its own
user, PID, network, IPC and mount namespaces, a read-only view of the Python environment, no environment of
the server's, the time, data, file-size and process limits), given the GPU's device nodes and the driver's
libraries and nothing more. Where the jail does not work here, or cannot reach the GPU, the answer is a
refusal ("no_sandbox", "jail_no_gpu"), never a run without it.

Inputs are random, of the shapes the user gives. For the four examples (examples.py) the outputs of one launch
are compared with a float64 torch reference computed from the same inputs, before anything is timed. Times
are triton.testing.do_bench quantiles (20 %, 50 %, 80 %): the spread, not one number. The child answers on
its result pipe; its one line is validated field by field (measure_reply), and the figures the parent asked
for (bytes moved, flops) are the parent's own, never read back.
"""
from __future__ import annotations

import importlib
import json
import math
import os
import sys
from dataclasses import dataclass, field, replace

from kernel_inspector import jail, replies
from kernel_inspector.argspec import ArgSpec, element_torch_dtype, value_text
from kernel_inspector.interpret import TensorSummary, tensor_reply
from kernel_inspector.rules import Symbol
from kernel_inspector.gate import KernelFile
from kernel_inspector.sandbox import COMPILE_SLOTS, SandboxLimits

RUN_PASTED_ENV = "SOFTMAX_EXPLORER_RUN_PASTED"
QUANTILES = (0.2, 0.5, 0.8)
MEASURE_CODES = ("ok", "no_gpu", "no_sandbox", "jail_no_gpu", "missing_value", "failed", "time_limit")
# A run on the GPU: torch and the CUDA driver start threads of their own (about one per core), so more
# processes than a compile; the data bound is the compile's address-space bound (jail.py says why).
MEASURE_LIMITS = SandboxLimits(seconds=120.0, processes=256)


def running_pasted_allowed() -> bool:
    """True only where the teacher turned it on: SOFTMAX_EXPLORER_RUN_PASTED=1 (never inferred)."""
    return os.environ.get(RUN_PASTED_ENV, "").strip() == "1"


@dataclass(frozen=True)
class Measurement:
    ok: bool
    code: str                        # one of MEASURE_CODES
    detail: str = ""                 # the failing argument's name, or the error's text
    kernel_ms: tuple = ()            # QUANTILES of the kernel's time
    copy_ms: tuple = ()              # the same quantiles for a device copy of bytes_moved
    bytes_moved: int = 0
    flops: float | None = None
    gpu_name: str = ""
    tensors: tuple[TensorSummary, ...] = ()   # an example's outputs after one launch, with the reference check
    sandbox: str = "none"            # what it ran in: one of jail.SANDBOX_CODES ("none": it did not run)
    output_tail: str = field(default="", compare=False)   # the child's own output (untrusted; never shown)

    @property
    def achieved_gbps(self) -> tuple:
        """GB/s at each quantile (the fastest time gives the highest rate, so the order flips)."""
        return tuple(self.bytes_moved / (ms * 1e-3) / 1e9 for ms in reversed(self.kernel_ms))

    @property
    def copy_gbps(self) -> tuple:
        return tuple(self.bytes_moved / (ms * 1e-3) / 1e9 for ms in reversed(self.copy_ms))

    @property
    def achieved_tflops(self) -> tuple:
        return tuple(self.flops / (ms * 1e-3) / 1e12 for ms in reversed(self.kernel_ms)) if self.flops else ()

    @property
    def fraction_of_copy(self) -> float | None:
        """Median kernel rate / median copy rate: the share of achievable bandwidth."""
        return self.copy_ms[1] / self.kernel_ms[1] if self.kernel_ms and self.copy_ms else None


def _quantiles(value) -> tuple:
    if not isinstance(value, list) or len(value) != len(QUANTILES):
        raise replies.BadReply("quantiles")
    return tuple(replies.number(v, 1e-9, 1e6) for v in value)


def measure_reply(obj) -> Measurement:
    """The child's one result line, validated field by field (replies.py): codes, the six times, a GPU name
    and the example's tensor summaries; nothing else is taken from it."""
    f = replies.exact_keys(obj, {"ok", "code"}, {"detail", "kernel_ms", "copy_ms", "gpu_name", "tensors"})
    tensors = f.get("tensors", [])
    if type(f["ok"]) is not bool or not isinstance(tensors, list) or len(tensors) > 64:
        raise replies.BadReply("measurement")
    ok = f["ok"]
    if ok and ("kernel_ms" not in f or "copy_ms" not in f):
        raise replies.BadReply("times")
    return Measurement(ok, replies.one_of(f["code"], MEASURE_CODES), replies.text(f.get("detail", "")),
                       _quantiles(f["kernel_ms"]) if ok else (), _quantiles(f["copy_ms"]) if ok else (),
                       gpu_name=replies.text(f.get("gpu_name", ""), 200),
                       tensors=tuple(tensor_reply(t) for t in tensors))


def refusal() -> Measurement | None:
    """The answer, with nothing run, where a jailed run cannot be given the GPU here: the jail does not work
    ("no_sandbox") or the driver's device nodes are absent ("jail_no_gpu"); None where it can. (Whether the
    GPU then answers inside is the run's own answer, "jail_no_gpu" too.)"""
    if jail.probe() != "bubblewrap":
        return Measurement(False, "no_sandbox")
    if not jail.gpu_devices():
        return Measurement(False, "jail_no_gpu", "no NVIDIA device nodes (/dev/nvidiactl, /dev/nvidia0) here")
    return None


def measure(kernel_file: KernelFile, kernel: str, specs: tuple[ArgSpec, ...], sizes: dict, grid: tuple,
            num_warps: int, num_stages: int, bytes_moved: int, flops: float | None = None,
            seconds: float = MEASURE_LIMITS.seconds, reference: str | None = None,
            limits: SandboxLimits = MEASURE_LIMITS) -> Measurement:
    """One jailed run on this machine's GPU: the example's reference check (`reference`: an example's name,
    examples.EXAMPLES) and the timings. A refusal, with nothing run, where the jail cannot have the GPU."""
    if refused := refusal():
        return refused
    request = {"source": kernel_file.source, "kernel": kernel, "grid": list(grid), "num_warps": num_warps,
               "num_stages": num_stages, "bytes_moved": bytes_moved, "reference": reference,
               "autotuned": bool(kernel_file.kernel(kernel).configs),
               "args": [{"name": s.name, "kind": s.kind, "dtype": s.dtype, "value": value_text(s.value) if isinstance(s.value, Symbol) else s.value,
                         "tuned": s.tuned, "shape": list(sizes.get(s.name, ()))} for s in specs]}
    limits = replace(limits, seconds=seconds)
    with COMPILE_SLOTS:
        # the child compiles for the GPU it runs on: SOFTMAX_CORE_OFFLINE_COMPILER=1 would forbid that
        outcome = jail.run_child("kernel_inspector.measure", "child_main", request, limits,
                                 {"SOFTMAX_CORE_OFFLINE_COMPILER": "0"}, jailed=True, gpu=True)
    tail = outcome.output_tail
    if outcome.timed_out:
        return Measurement(False, "time_limit", f"{seconds:g} s", sandbox=outcome.sandbox, output_tail=tail)
    for line in outcome.replies:
        try:
            reply = measure_reply(line)
        except replies.BadReply:
            continue
        return replace(reply, bytes_moved=bytes_moved, flops=flops, sandbox=outcome.sandbox, output_tail=tail)
    if jail.jail_failed(outcome):
        return Measurement(False, "no_sandbox", tail[-2000:], output_tail=tail)
    detail = f"output_limit: {outcome.flooded}" if outcome.flooded else (tail[-2000:] or
                                                                          f"exit status {outcome.returncode}")
    return Measurement(False, "failed", detail, sandbox=outcome.sandbox, output_tail=tail)


def child_main() -> None:
    """In the jailed child: random inputs, one launch checked against the example's reference, then do_bench
    for the kernel and for a copy of the same bytes. Answers on the result pipe."""
    request = json.loads(sys.stdin.read())
    results = os.fdopen(int(request["result_fd"]), "w", buffering=1)
    os.set_inheritable(results.fileno(), False)

    def answer(reply: dict) -> None:
        results.write(json.dumps(reply) + "\n")

    import torch

    if not torch.cuda.is_available():
        try:
            torch.cuda.init()
            why = "torch.cuda.is_available() is False"
        except Exception as exc:          # the driver's own reason
            why = f"{type(exc).__name__}: {exc}"
        answer({"ok": False, "code": "jail_no_gpu", "detail": why[-2000:]})
        return
    import triton

    from kernel_inspector import examples, gate
    from kernel_inspector.argspec import parse_value
    from kernel_inspector.interpret import summary
    from kernel_inspector.worker import load_kernel

    gate.check_source(request["source"])
    module = load_kernel(request["source"], request["kernel"])
    kernel = getattr(module, request["kernel"])
    args, tensors, values = [], {}, {}
    for arg in request["args"]:
        if arg["kind"] == "pointer":
            dtype = element_torch_dtype(arg["dtype"])
            shape = arg["shape"] or [1]
            tensor = (torch.randn(shape, device="cuda", dtype=dtype) if dtype.is_floating_point
                      else torch.randint(0, 8, shape, device="cuda", dtype=dtype))
            tensors[arg["name"]] = tensor
            args.append(tensor)
        elif arg["kind"] == "scalar":
            if arg["value"] is None:
                answer({"ok": False, "code": "missing_value", "detail": arg["name"]})
                return
            values[arg["name"]] = arg["value"]
            args.append(arg["value"])
        elif not arg["tuned"]:
            value = arg["value"]
            value = parse_value(value) if isinstance(value, str) else value
            if isinstance(value, Symbol):
                module_path, _, name = value.path.rpartition(".")
                value = getattr(importlib.import_module(module_path), name)
            values[arg["name"]] = value
    constexprs = {a["name"]: values[a["name"]] for a in request["args"] if a["name"] in values
                  and a["kind"] not in ("pointer", "scalar")}
    options = {} if request["autotuned"] else {"num_warps": request["num_warps"], "num_stages": request["num_stages"]}
    # a kernel may name a constexpr num_stages (the tutorial's softmax does): its value is the launch option too
    options = {k: v for k, v in options.items() if k not in constexprs}
    grid = tuple(request["grid"]) or (1,)

    def run():
        kernel[grid](*args, **constexprs, **options)

    try:
        before = {name: t.clone() for name, t in tensors.items()}
        run()
        torch.cuda.synchronize()
        checked = []
        if request["reference"] in examples.REFERENCES:
            expected = examples.REFERENCES[request["reference"]](before, values, grid)
            for arg in request["args"]:
                name = arg["name"]
                if name in expected:
                    error = examples.reference_error(tensors[name], expected[name])
                    checked.append({**summary(torch, name, before[name], tensors[name], arg["dtype"]),
                                    # NaN written where a number belongs: an error as large as the schema takes
                                    "reference_error": error if math.isfinite(error) else 1e308,
                                    "reference_tolerance": examples.reference_tolerance(arg["dtype"])})
        kernel_ms = triton.testing.do_bench(run, quantiles=list(QUANTILES))
        n = max(request["bytes_moved"] // 2, 1)
        src, dst = torch.empty(n, dtype=torch.uint8, device="cuda"), torch.empty(n, dtype=torch.uint8, device="cuda")
        copy_ms = triton.testing.do_bench(lambda: dst.copy_(src), quantiles=list(QUANTILES))
    except Exception as exc:          # the user's kernel failed to launch or run: say so, in its own words
        answer({"ok": False, "code": "failed", "detail": f"{type(exc).__name__}: {exc}"[-2000:]})
        return
    answer({"ok": True, "code": "ok", "kernel_ms": list(kernel_ms), "copy_ms": list(copy_ms),
            "gpu_name": torch.cuda.get_device_name(), "tensors": checked})
