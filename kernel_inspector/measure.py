"""Run a user's kernel on this machine's GPU and time it beside a plain copy of the same bytes.

Running pasted code is more than compiling it, so it happens only when asked for explicitly (the CLI's
--measure; on the page only where the teacher set RUN_PASTED_ENV), in a child process with a time limit,
an empty working directory and its own Triton cache. Inputs are random, of the shapes the user gives.
Times are triton.testing.do_bench quantiles (20 %, 50 %, 80 %): the spread, not one number.
"""
from __future__ import annotations

import importlib
import json
import os
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

from kernel_inspector.argspec import ArgSpec, element_torch_dtype, value_text
from kernel_inspector.rules import Symbol
from kernel_inspector.gate import KernelFile
from kernel_inspector.sandbox import PACKAGE_ROOT, child_env

RUN_PASTED_ENV = "SOFTMAX_EXPLORER_RUN_PASTED"
QUANTILES = (0.2, 0.5, 0.8)


def running_pasted_allowed() -> bool:
    """True only where the teacher turned it on: SOFTMAX_EXPLORER_RUN_PASTED=1 (never inferred)."""
    return os.environ.get(RUN_PASTED_ENV, "").strip() == "1"


@dataclass(frozen=True)
class Measurement:
    ok: bool
    code: str                        # "ok" | "no_gpu" | "missing_value" | "failed" | "time_limit"
    detail: str = ""                 # the failing argument's name, or the error's text
    kernel_ms: tuple = ()            # QUANTILES of the kernel's time
    copy_ms: tuple = ()              # the same quantiles for a device copy of bytes_moved
    bytes_moved: int = 0
    flops: float | None = None
    gpu_name: str = ""

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


def measure(kernel_file: KernelFile, kernel: str, specs: tuple[ArgSpec, ...], sizes: dict, grid: tuple,
            num_warps: int, num_stages: int, bytes_moved: int, flops: float | None = None,
            seconds: float = 120.0) -> Measurement:
    request = {"source": kernel_file.source, "kernel": kernel, "grid": list(grid), "num_warps": num_warps,
               "num_stages": num_stages, "bytes_moved": bytes_moved, "flops": flops,
               "autotuned": bool(kernel_file.kernel(kernel).configs),
               "args": [{"name": s.name, "kind": s.kind, "dtype": s.dtype, "value": value_text(s.value) if isinstance(s.value, Symbol) else s.value,
                         "tuned": s.tuned, "shape": list(sizes.get(s.name, ()))} for s in specs]}
    boot = ("import sys; sys.path.insert(0, sys.argv[1]); from kernel_inspector.measure import child_main; "
            "child_main()")
    with tempfile.TemporaryDirectory(prefix="your-kernel-run-") as tmp:
        env = {**child_env(Path(tmp)), "CUDA_VISIBLE_DEVICES": os.environ.get("CUDA_VISIBLE_DEVICES", "0")}
        env.pop("SOFTMAX_CORE_OFFLINE_COMPILER")
        try:
            done = subprocess.run([sys.executable, "-I", "-c", boot, str(PACKAGE_ROOT)], input=json.dumps(request),
                                  capture_output=True, text=True, cwd=tmp, env=env, timeout=seconds)
        except subprocess.TimeoutExpired:
            return Measurement(False, "time_limit", f"{seconds:g} s")
    lines = [line for line in done.stdout.splitlines() if line.startswith("{")]
    if not lines:
        return Measurement(False, "failed", done.stderr[-2000:])
    reply = json.loads(lines[-1])
    for key in ("kernel_ms", "copy_ms"):
        reply[key] = tuple(reply.get(key, ()))
    return Measurement(**reply)


def child_main() -> None:
    """In the child: random inputs, the launch, do_bench for it and for a copy of the same bytes."""
    request = json.loads(sys.stdin.read())
    import torch

    if not torch.cuda.is_available():
        print(json.dumps({"ok": False, "code": "no_gpu"}))
        return
    import triton

    from kernel_inspector import gate
    from kernel_inspector.argspec import parse_value
    from kernel_inspector.worker import load_kernel

    gate.check_source(request["source"])
    module = load_kernel(request["source"], request["kernel"])
    kernel = getattr(module, request["kernel"])
    args, constexprs = [], {}
    for arg in request["args"]:
        if arg["kind"] == "pointer":
            dtype = element_torch_dtype(arg["dtype"])
            shape = arg["shape"] or [1]
            tensor = (torch.randn(shape, device="cuda", dtype=dtype) if dtype.is_floating_point
                      else torch.randint(0, 8, shape, device="cuda", dtype=dtype))
            args.append(tensor)
        elif arg["kind"] == "scalar":
            if arg["value"] is None:
                print(json.dumps({"ok": False, "code": "missing_value", "detail": arg["name"]}))
                return
            args.append(arg["value"])
        elif not arg["tuned"]:
            value = arg["value"]
            value = parse_value(value) if isinstance(value, str) else value
            if isinstance(value, Symbol):
                module_path, _, name = value.path.rpartition(".")
                value = getattr(importlib.import_module(module_path), name)
            constexprs[arg["name"]] = value
    options = {} if request["autotuned"] else {"num_warps": request["num_warps"], "num_stages": request["num_stages"]}
    # a kernel may name a constexpr num_stages (the tutorial's softmax does): its value is the launch option too
    options = {k: v for k, v in options.items() if k not in constexprs}
    grid = tuple(request["grid"]) or (1,)

    def run():
        kernel[grid](*args, **constexprs, **options)

    try:
        kernel_ms = triton.testing.do_bench(run, quantiles=list(QUANTILES))
        n = max(request["bytes_moved"] // 2, 1)
        src, dst = torch.empty(n, dtype=torch.uint8, device="cuda"), torch.empty(n, dtype=torch.uint8, device="cuda")
        copy_ms = triton.testing.do_bench(lambda: dst.copy_(src), quantiles=list(QUANTILES))
    except Exception as exc:          # the user's kernel failed to launch or run: say so, in its own words
        print(json.dumps({"ok": False, "code": "failed", "detail": f"{type(exc).__name__}: {exc}"[-2000:]}))
        return
    print(json.dumps({"ok": True, "code": "ok", "kernel_ms": kernel_ms, "copy_ms": copy_ms,
                      "bytes_moved": request["bytes_moved"], "flops": request["flops"],
                      "gpu_name": torch.cuda.get_device_name()}))
