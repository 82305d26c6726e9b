"""Compile a pasted kernel in a child process that can do little harm: the parent side.

The source has passed the gate (gate.py) before any of this; the child checks it again. The child gets:
- a time limit (wall clock, enforced here, and CPU seconds, enforced by the kernel: RLIMIT_CPU),
- a memory limit (RLIMIT_AS) and a bound on any file it writes (RLIMIT_FSIZE), no core dumps,
- an empty temporary directory as its working directory, HOME, TMPDIR and TRITON_CACHE_DIR / TRITON_HOME
  (never the shared Triton cache), removed when it ends,
- an environment with nothing of the server's but PATH,
and it dies with its parent. A few compiles run at once (COMPILE_SLOTS); more wait their turn, so a class
pasting at once queues instead of exhausting the machine.
"""
from __future__ import annotations

import json
import os
import resource
import signal
import subprocess
import sys
import tempfile
import threading
from dataclasses import dataclass, field
from pathlib import Path

from kernel_inspector import argspec
from kernel_inspector.gate import KernelFile
from kernel_inspector.rules import ConfigSpec, Refusal, SourceRefused, Symbol
from softmax_core.hardware.compile import KernelResources
from softmax_core.hardware.gpu import GpuSpec

PACKAGE_ROOT = Path(__file__).resolve().parents[1]        # the folder holding softmax_core/ and kernel_inspector/
CONFIG_DEFAULT_WARPS, CONFIG_DEFAULT_STAGES = 4, 3     # triton.Config's own defaults
SLOTS_ENV = "SOFTMAX_EXPLORER_COMPILE_SLOTS"
COMPILE_SLOTS = threading.BoundedSemaphore(max(1, int(os.environ.get(SLOTS_ENV, "2") or 2)))
# The child imports only what compiling needs: softmax_core's __init__ (torch, the project's kernels) is
# skipped by registering the package folder without running it.
def bootstrap(module: str, function: str = "main") -> str:
    """`python -c` code that runs `module.function()` with softmax_core registered but its __init__ not run."""
    return ("import sys, types; root = sys.argv[1]; sys.path.insert(0, root); "
            "package = types.ModuleType('softmax_core'); package.__path__ = [root + '/softmax_core']; "
            "sys.modules['softmax_core'] = package; "
            f"from {module} import {function}; {function}()")


BOOTSTRAP = bootstrap("kernel_inspector.worker")


@dataclass(frozen=True)
class SandboxLimits:
    seconds: float = 60.0
    memory_bytes: int = 6 << 30        # address space: triton + LLVM + ptxas need a few GB of it
    file_bytes: int = 256 << 20


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


@dataclass(frozen=True)
class CompileReport:
    kernel: str
    variants: tuple[Variant, ...]
    refused: Refusal | None = None
    stderr_tail: str = field(default="", compare=False)
    specialisation: argspec.Specialisation | None = None     # what the compile assumed of the values


def _json_value(value):
    return {"symbol": value.path} if isinstance(value, Symbol) else value


def limit_child(limits: SandboxLimits):
    """The preexec_fn of a sandboxed child: its own process group, the rlimits, death with the parent."""
    def apply() -> None:
        os.setsid()                                    # its own process group: killed as a whole
        cpu = int(limits.seconds) + 5
        resource.setrlimit(resource.RLIMIT_CPU, (cpu, cpu + 1))
        resource.setrlimit(resource.RLIMIT_AS, (limits.memory_bytes, limits.memory_bytes))
        resource.setrlimit(resource.RLIMIT_FSIZE, (limits.file_bytes, limits.file_bytes))
        resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
        try:                                           # Linux: die with the parent
            import ctypes

            ctypes.CDLL("libc.so.6", use_errno=True).prctl(1, signal.SIGKILL)   # PR_SET_PDEATHSIG
        except OSError:
            pass
    return apply


def child_env(tmp: Path) -> dict:
    cache = tmp / "triton-cache"
    return {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": str(tmp), "TMPDIR": str(tmp),
            "TRITON_CACHE_DIR": str(cache), "TRITON_HOME": str(tmp), "TRITON_DUMP_DIR": str(tmp / "dump"),
            "TRITON_OVERRIDE_DIR": str(tmp / "override"), "PYTHONDONTWRITEBYTECODE": "1",
            "SOFTMAX_CORE_OFFLINE_COMPILER": "1", "LANG": "C.UTF-8",
            "TRITON_DEFAULT_FP_FUSION": "1"}   # triton's default, stated so that 3.9 does not warn about it


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
    request = {"source": kernel_file.source, "kernel": name, "signature": [list(p) for p in signature],
               "divisible": list(specialisation.divisible_by_16), "variants": variants}
    replies, stderr_tail, timed_out = _run_child(request, limits)
    results = []
    for variant in variants:
        reply = replies.get(variant["index"])
        base = dict(gpu=variant["gpu"], config=variant["config"], num_warps=variant["num_warps"],
                    num_stages=variant["num_stages"], constexprs=tuple(map(tuple, variant["constexprs"])))
        if reply is None:
            hint = "time_limit" if timed_out else ("memory_limit" if "MemoryError" in stderr_tail else "crashed")
            message = f"{limits.seconds:g} s" if timed_out else stderr_tail[-2000:]
            results.append(Variant(**base, failure=CompileFailure(hint, None, message)))
        elif "resources" in reply:
            results.append(Variant(**base, resources=KernelResources(**reply["resources"]), seconds=reply["seconds"]))
        else:
            results.append(Variant(**base, failure=CompileFailure(**reply["failure"]), seconds=reply["seconds"]))
    refused = replies.get("refused")
    return CompileReport(name, tuple(results), Refusal(**refused) if refused else None, stderr_tail,
                         specialisation)


def _run_child(request: dict, limits: SandboxLimits) -> tuple[dict, str, bool]:
    """Replies by variant index (and "refused"), the tail of the child's stderr, whether it ran out of time."""
    replies: dict = {}
    with COMPILE_SLOTS, tempfile.TemporaryDirectory(prefix="your-kernel-") as tmp:
        tmp_path = Path(tmp)
        stderr_path = tmp_path / "stderr.txt"
        with open(stderr_path, "wb") as stderr:
            proc = subprocess.Popen([sys.executable, "-I", "-c", BOOTSTRAP, str(PACKAGE_ROOT)],
                                    stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=stderr, cwd=tmp,
                                    env=child_env(tmp_path), preexec_fn=limit_child(limits))

            def read() -> None:
                for line in proc.stdout:
                    try:
                        reply = json.loads(line)
                    except ValueError:
                        continue
                    replies["refused" if "refused" in reply else reply.get("index")] = reply.get("refused", reply)

            reader = threading.Thread(target=read, daemon=True)
            reader.start()
            try:
                proc.stdin.write(json.dumps(request).encode())
                proc.stdin.close()
            except BrokenPipeError:
                pass
            reader.join(timeout=limits.seconds)
            timed_out = reader.is_alive()
            if timed_out or proc.poll() is None:
                try:
                    os.killpg(proc.pid, signal.SIGKILL)
                except ProcessLookupError:
                    pass
            proc.wait()
            reader.join(timeout=5)
        tail = stderr_path.read_text(errors="replace")[-4000:]
    if proc.returncode and proc.returncode < 0 and not timed_out:
        tail += f"\n(signal {-proc.returncode})"
    return replies, tail, timed_out


def refuse_or_compile(source: str, kernel: str | None, given: list[str], gpus: list[GpuSpec], num_warps: int,
                      num_stages: int, limits: SandboxLimits = SandboxLimits()):
    """The whole path from text: gate, argument specs, compile. Raises SourceRefused or ArgSpecError."""
    from kernel_inspector.gate import check_source

    kernel_file = check_source(source)
    info = kernel_file.kernel(kernel)
    specs = argspec.merge(argspec.prefill(info), [argspec.parse_arg(text) for text in given])
    return kernel_file, specs, compile_kernel(kernel_file, info.name, specs, gpus, num_warps, num_stages, limits)


__all__ = ["CompileFailure", "CompileReport", "SandboxLimits", "SourceRefused", "Variant", "bootstrap", "child_env",
           "compile_kernel", "limit_child", "refuse_or_compile", "variants_for"]
