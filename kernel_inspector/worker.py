"""The child side of sandbox.py: compile one pasted kernel file for every requested GPU and config.

It runs in the jail (jail.py) or, where there is none, in an empty temporary directory, under the limits
the parent set, and is started so that the softmax_core package's __init__ (torch, the kernels) is not
imported: only the gate, compile.py and triton are. It reads one JSON request on stdin, checks the source
with the gate again, writes it to `user_kernel.py` here, imports it, and answers one JSON line per compile
on the result pipe (the request's "result_fd"), never on stdout: what the kernel prints while it compiles
(tl.static_print) goes to stdout and cannot pass for a result. The parent validates every line it reads
(replies.py): a line the kernel managed to write there itself is still only figures of the schema.
"""
from __future__ import annotations

import importlib.util
import json
import os
import sys
import time
import types
from dataclasses import asdict
from pathlib import Path

from kernel_inspector import gate, hints
from softmax_core.hardware.compile import CompileJob, compile_for_target

SOURCE_NAME = "user_kernel.py"
MODULE_NAME = "user_kernel"
COMPILED_MODULE = "user_kernel_compiled"     # holds the bare JITFunction under the kernel's name


def symbol_value(path: str):
    """A triton.language member by the path the gate checked ("triton.language.float16")."""
    module, _, name = path.rpartition(".")
    return getattr(importlib.import_module(module), name)


def _value(value):
    if isinstance(value, dict) and "symbol" in value:
        return symbol_value(value["symbol"])
    return value


def load_kernel(source: str, kernel: str):
    path = Path.cwd() / SOURCE_NAME
    path.write_text(source)
    spec = importlib.util.spec_from_file_location(MODULE_NAME, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[MODULE_NAME] = module
    spec.loader.exec_module(module)
    obj = getattr(module, kernel)
    jit = obj.fn if hasattr(obj, "configs") else obj           # an Autotuner wraps the JITFunction
    shim = types.ModuleType(COMPILED_MODULE)
    setattr(shim, kernel, jit)
    sys.modules[COMPILED_MODULE] = shim
    return module


def _failure(exc: BaseException, module, def_lines: dict) -> dict:
    """Triton's message, the line of the user's file it points at, and the hint code."""
    from triton.compiler.errors import CompilationError

    if isinstance(exc, MemoryError):
        return {"hint": "memory_limit", "line": None, "message": "MemoryError"}
    line = None
    message = f"{type(exc).__name__}: {exc}"
    if isinstance(exc, CompilationError):
        message = str(exc.error_message or exc).strip()
        node_line = getattr(exc.node, "lineno", None)
        for name, def_line in def_lines.items():
            fn = getattr(module, name, None)
            fn = getattr(fn, "fn", fn) if hasattr(fn, "configs") else fn
            if node_line and getattr(fn, "src", None) == exc.src:
                line = def_line + node_line - 1
                break
    return {"hint": hints.hint_for(message), "line": line, "message": message[-4000:]}


def result_channel(request: dict):
    """The result pipe as a text file, closed on exec (the compiler's own tools never get it)."""
    fd = int(request["result_fd"])
    os.set_inheritable(fd, False)
    return os.fdopen(fd, "w", buffering=1)


def main() -> None:
    request = json.loads(sys.stdin.read())
    results = result_channel(request)
    try:
        kernel_file = gate.check_source(request["source"])
        kernel_file.kernel(request["kernel"])
    except gate.SourceRefused as refused:
        results.write(json.dumps({"kind": "refused", "refusal": asdict(refused.refusal)}) + "\n")
        return
    module = load_kernel(request["source"], request["kernel"])
    def_lines = {info.name: info.line for info in kernel_file.kernels}
    for variant in request["variants"]:
        started = time.perf_counter()
        job = CompileJob(kernel=f"{COMPILED_MODULE}:{request['kernel']}",
                         signature=tuple(map(tuple, request["signature"])),
                         constexprs=tuple((n, _value(v)) for n, v in variant["constexprs"]),
                         num_warps=variant["num_warps"], num_stages=variant["num_stages"],
                         target=tuple(variant["target"]), divisible=tuple(request["divisible"]))
        try:
            reply = {"kind": "compiled", "resources": asdict(compile_for_target(job, want_asm=True))}
        except Exception as exc:           # report it for this variant, compile the next one
            reply = {"kind": "failed", "failure": _failure(exc, module, def_lines)}
        reply.update(index=variant["index"], seconds=round(time.perf_counter() - started, 3))
        results.write(json.dumps(reply, default=str) + "\n")

