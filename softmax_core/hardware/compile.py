"""The real resource needs of a compiled kernel: registers per thread and shared memory per program.

The tutorial learns them from `kernel.warmup()` on a live GPU. Without one, Triton still compiles the very
same kernel for a named GPU architecture (`triton.compile` with a `GPUTarget`); the cubin it produces is
what a driver would load, and `cuobjdump --dump-resource-usage` (shipped in the triton wheel) reads the
register count out of it. Under the interpreter that compile must happen in a child process, because
the interpreter patches triton's language layer; one long-lived child serves every request.

Results are cached in memory and on disk (keyed by triton version, kernel source and the job), so a
page or a test pays each compile once.
"""
from __future__ import annotations

import atexit
import contextvars
import hashlib
import importlib
import inspect
import json
import os
import re
import subprocess
import sys
import tempfile
import threading
from contextlib import contextmanager
from functools import lru_cache
from dataclasses import asdict, dataclass, field
from pathlib import Path

from softmax_core.hardware import runtime
from softmax_core.words import Code, Coded


# Bump when the way resources are read (or stored) changes, so that disk-cached results are recomputed.
RESOURCE_READER_VERSION = 4


class RegisterSource(Code):
    """Where a KernelResources' register count came from."""
    DRIVER = "driver"                    # loaded on this GPU; the driver reported it (the tutorial's way)
    CUOBJDUMP = "cuobjdump"              # NVIDIA: triton.compile for the target, cuobjdump on the cubin
    AMDGCN_METADATA = "amdgcn_metadata"  # AMD: triton.compile for the target, .vgpr_count in the metadata
    GIVEN = "given"                      # set by the caller (a what-if, a test), not read from a kernel
    RECORDED = "recorded"                # loaded on a real GPU elsewhere, its driver's count kept in a record


@dataclass(frozen=True)
class CompileJob:
    """One kernel specialisation, for one GPU architecture."""

    kernel: str                      # "module:function", e.g. "softmax_core.kernels.tutorial:tutorial_softmax_kernel"
    signature: tuple                 # ((arg name, triton type), ...) with "constexpr" for constexprs
    constexprs: tuple                # ((name, value), ...)
    num_warps: int
    num_stages: int
    target: tuple                    # GPUTarget(*target): ("cuda", 90, 32) or ("hip", "gfx942", 64)
    on_device: bool = False          # also load it on this machine's GPU and ask the driver (the tutorial's way)
    # Parameters the launch will see as multiples of 16 (a pointer: a 16-byte aligned address). Triton's JIT
    # specialises on exactly this, and it decides whether loads are 16-byte vectors, which changes the
    # registers a kernel needs (bf16 tiled forward on sm_90: 104 without, 63 with): compile what will run.
    divisible: tuple = ()

    def key(self) -> str:
        return job_key(self)


@lru_cache(maxsize=None)
def kernel_source(ref: str) -> str:
    """The source the kernel `ref` compiles from: its own and that of every @triton.jit function it calls,
    directly or through others (a change to a helper changes the compiled kernel as surely as one to the
    kernel), and the value of every constexpr global they name."""
    from triton.runtime.jit import KernelInterface
    import triton.language as tl

    parts: dict[str, str] = {}
    pending = [resolve_kernel(ref)]
    while pending:
        fn = pending.pop().fn
        name = f"{fn.__module__}:{fn.__qualname__}"
        if name in parts:
            continue
        parts[name] = inspect.getsource(fn)
        for global_name in fn.__code__.co_names:
            value = fn.__globals__.get(global_name)
            if isinstance(value, KernelInterface):
                pending.append(value)
            elif isinstance(value, tl.constexpr):
                parts[f"{name} {global_name}"] = repr(value.value)
    return "\n".join(f"# {name}\n{text}" for name, text in sorted(parts.items()))


@lru_cache(maxsize=None)
def toolchain(target: tuple) -> str:
    """Which compiler turns a kernel into machine code for `target`, with versions: register counts for the
    same kernel differ between them (sm_120: 38 with triton 3.6, 32 with triton 3.9), so a count is only
    meaningful beside this. NVIDIA: triton's version and the ptxas it runs for that architecture (the wheel
    carries one for older GPUs and a newer one for recent architectures); AMD: triton's LLVM backend."""
    import triton

    if target[0] == "hip":
        return f"triton {triton.__version__} (LLVM AMDGPU backend, {target[1]})"
    arch = int(target[1])
    try:
        from triton.backends.nvidia.compiler import get_ptxas

        ptxas = get_ptxas(arch).path
    except (ImportError, AttributeError, TypeError):  # older triton: one ptxas for every architecture
        ptxas = nvidia_tool("ptxas")
    try:
        text = subprocess.run([ptxas, "--version"], capture_output=True, text=True, check=True).stdout
        found = re.search(r"release ([\d.]+), V([\d.]+)", text)
        version = found.group(2) if found else text.strip().splitlines()[-1]
    except (OSError, subprocess.CalledProcessError) as exc:
        version = f"unknown ({type(exc).__name__})"
    return f"triton {triton.__version__}, ptxas {version} ({Path(ptxas).name}, sm_{arch})"


@lru_cache(maxsize=4096)
def job_key(job: "CompileJob", version: int = RESOURCE_READER_VERSION) -> str:
    """The compile cache's name for a job's results (memoised: `job_key.cache_clear()` forgets the names).
    The toolchain is part of the key: a new triton or ptxas may allocate registers differently."""
    blob = json.dumps([version, toolchain(tuple(job.target)), kernel_source(job.kernel),
                       asdict(job)], sort_keys=True, default=str)
    return hashlib.sha256(blob.encode()).hexdigest()[:24]


@lru_cache(maxsize=4096)
def job_identity(job: "CompileJob") -> str:
    """The kernel a job compiles, its toolchain left out: the same name on every machine and triton version,
    so that a compile recorded on another machine (a real GPU, its own triton) can be found for a job asked
    here. Whether the kernel is loaded on a device is not part of it; its source, every helper and constexpr
    global it reaches, and the specialisation are."""
    spec = dict(asdict(job), on_device=False)
    blob = json.dumps([kernel_source(job.kernel), spec], sort_keys=True, default=str)
    return hashlib.sha256(blob.encode()).hexdigest()[:24]


@dataclass(frozen=True)
class KernelResources:
    n_regs: int                      # registers per thread (VGPRs per lane on AMD)
    n_spills: int                    # registers spilled to local memory (slow: a sign the row is too big)
    shared_bytes: int                # shared memory per program, as triton launches it
    source: RegisterSource           # how the numbers were obtained
    target: str = ""                 # the architecture compiled for ("sm_90", "gfx942")
    refused: str = ""                # the driver's error when it refused to load the kernel (then read offline)
    toolchain: str = ""              # which compiler produced them (compile.toolchain): show it beside n_regs
    asm: dict = field(default_factory=dict, compare=False, hash=False)  # "ptx"/"sass"/"amdgcn" when asked

    def __post_init__(self):
        object.__setattr__(self, "source", RegisterSource(self.source))

    @property
    def how(self) -> Coded:
        """Where the numbers came from, as a code and figures (softmax_core.words says it)."""
        return Coded.of(self.source, target=self.target, refused=self.refused)


def cache_dir() -> Path:
    root = os.environ.get("SOFTMAX_EXPLORER_CACHE") or Path.home() / ".cache" / "fused-softmax-explorer"
    path = Path(root) / "compile"
    path.mkdir(parents=True, exist_ok=True)
    return path


def resolve_kernel(ref: str):
    """The kernel a "module:name" reference names (a CompileJob names its kernel so)."""
    module, name = ref.split(":")
    return getattr(importlib.import_module(module), name)


def nvidia_tool(name: str) -> str:
    """The path of one of the CUDA tools triton ships (ptxas, cuobjdump, nvdisasm)."""
    import triton

    return str(Path(triton.__file__).parent / "backends" / "nvidia" / "bin" / name)


def triton_compile(job: CompileJob):
    """`job` through triton.compile in this process (it must not be interpreting): the CompiledKernel."""
    import triton
    from triton.backends.compiler import GPUTarget
    from triton.compiler import ASTSource

    fn = resolve_kernel(job.kernel)
    names = [name for name, _ in job.signature]
    attrs = {(names.index(name),): [["tt.divisibility", 16]] for name in job.divisible}
    src = ASTSource(fn=fn, signature=dict(job.signature), constexprs=dict(job.constexprs), attrs=attrs)
    return triton.compile(src, target=GPUTarget(*job.target),
                          options={"num_warps": job.num_warps, "num_stages": job.num_stages})


# The texts triton.compile writes on its way to the binary that compiler_texts hands back: the TTGIR (the
# distributed layout it gave every tensor) and the target's assembly (PTX on NVIDIA, AMDGCN on AMD).
COMPILER_TEXTS = ("ttgir", "ptx", "amdgcn")


def compiler_texts(job: CompileJob) -> dict[str, str]:
    """`job`'s TTGIR and PTX or AMDGCN (COMPILER_TEXTS), compiled here or, when this process interprets
    kernels, by the compiler child (not cached: its reader keeps what it reads)."""
    if runtime.INTERPRETED:
        return compiler_process.texts(job)
    compiled = triton_compile(job)
    return {kind: compiled.asm[kind] for kind in COMPILER_TEXTS if kind in compiled.asm}


def compile_for_target(job: CompileJob, want_asm: bool = False) -> KernelResources:
    """Compile in this process (it must not be interpreting) and read the resource usage."""
    compiled = triton_compile(job)
    shared = int(compiled.metadata.shared)
    asm: dict = {}
    refused = ""
    arch = job.target[1] if job.target[0] == "hip" else f"sm_{job.target[1]}"
    if job.on_device:
        # What the tutorial's warmup does: load the binary, and the driver reports registers and spills.
        # A kernel that needs more shared memory than the GPU has is refused (OutOfResources): then read
        # its registers from the cubin instead, so the plan can explain why it does not fit.
        from triton.runtime.errors import OutOfResources

        try:
            compiled._init_handles()
            if want_asm:
                asm = {k: compiled.asm[k] for k in ("ptx", "amdgcn") if k in compiled.asm}
            return KernelResources(int(compiled.n_regs), int(compiled.n_spills), shared, RegisterSource.DRIVER,
                                   arch, "", toolchain(tuple(job.target)), asm)
        except OutOfResources as exc:
            refused = str(exc)
    if job.target[0] == "hip":
        amdgcn = compiled.asm["amdgcn"]
        regs = int(re.search(r"\.vgpr_count:\s*(\d+)", amdgcn).group(1))
        spill = re.search(r"\.vgpr_spill_count:\s*(\d+)", amdgcn)
        spills = int(spill.group(1)) if spill else 0
        source = RegisterSource.AMDGCN_METADATA
        if want_asm:
            asm["amdgcn"] = amdgcn
    else:
        with tempfile.TemporaryDirectory() as tmp:
            cubin = Path(tmp) / "kernel.cubin"
            cubin.write_bytes(compiled.asm["cubin"])
            usage = subprocess.run([nvidia_tool("cuobjdump"), "--dump-resource-usage", str(cubin)],
                                   capture_output=True, text=True, check=True).stdout
            if want_asm:
                asm["ptx"] = compiled.asm["ptx"]
                # -g: each run of instructions headed by the source line it comes from (the cubin's
                # .debug_line, which Triton has ptxas write), so SASS links to the kernel's lines as PTX does
                asm["sass"] = subprocess.run([nvidia_tool("nvdisasm"), "-c", "-g", str(cubin)],
                                             capture_output=True, text=True).stdout
        regs = int(re.search(r"REG:(\d+)", usage).group(1))
        # Registers that did not fit were spilled to the thread's stack / local memory (slow, in DRAM/L1):
        # count them in 4-byte words.
        stack = re.search(r"STACK:(\d+)", usage)
        local = re.search(r"LOCAL:(\d+)", usage)
        spills = (int(stack.group(1)) if stack else 0) + (int(local.group(1)) if local else 0)
        spills //= 4
        source = RegisterSource.CUOBJDUMP
    return KernelResources(regs, spills, shared, source, arch, refused, toolchain(tuple(job.target)), asm)


class _CompilerChild:
    """A long-lived `python -m softmax_core.hardware.compile` that compiles without the interpreter."""

    def __init__(self):
        self._proc = None
        self._lock = threading.Lock()

    def request(self, job: CompileJob, want_asm: bool) -> KernelResources:
        return KernelResources(**self._ask({"job": asdict(job), "want_asm": want_asm}))

    def texts(self, job: CompileJob) -> dict[str, str]:
        return self._ask({"job": asdict(job), "texts": True})["texts"]

    def _ask(self, message: dict) -> dict:
        with self._lock:
            if self._proc is None or self._proc.poll() is not None:
                env = {k: v for k, v in os.environ.items() if k != "TRITON_INTERPRET"}
                env[runtime.OFFLINE_COMPILER_ENV] = "1"
                self._proc = subprocess.Popen(
                    [sys.executable, "-m", "softmax_core.hardware.compile"], stdin=subprocess.PIPE,
                    stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True, env=env,
                    cwd=str(Path(__file__).resolve().parents[2]))
                atexit.register(self._proc.kill)
            self._proc.stdin.write(json.dumps(message) + "\n")
            self._proc.stdin.flush()
            line = self._proc.stdout.readline()
        if not line:
            raise RuntimeError("the offline compiler process exited unexpectedly")
        reply = json.loads(line)
        if "error" in reply:
            raise RuntimeError(reply["error"])
        return reply


compiler_process = _CompilerChild()   # compiles for kernel_resources when kernels are interpreted here
_memory: dict[tuple, KernelResources] = {}


def forget_in_memory() -> None:
    """Drop this process's remembered results: the next question is answered from the disk cache, or compiled."""
    _memory.clear()


def _read_cached(path: Path) -> KernelResources | None:
    if path.exists():
        try:
            return KernelResources(**json.loads(path.read_text()))
        except (ValueError, TypeError, KeyError):
            pass  # a torn or stale file: compile again
    return None


# A function job -> KernelResources | None asked before any compile (answered_first); per thread and task, so
# that one page's record never answers another session's question.
_first_answer: contextvars.ContextVar = contextvars.ContextVar("first_answer", default=None)


@contextmanager
def answered_first(lookup):
    """Within the block, kernel_resources asks `lookup(job)` first and compiles only where it returns None: a
    record of compiles made on a real GPU with another toolchain (a planner then chooses its path from that
    GPU's own figures, and every compile it asks for is looked up the same way). Assembly is never looked up."""
    token = _first_answer.set(lookup)
    try:
        yield
    finally:
        _first_answer.reset(token)


def kernel_resources(job: CompileJob, want_asm: bool = False) -> KernelResources:
    """Registers and shared memory of `job`'s kernel, compiled for `job.target` (cached); inside
    answered_first, its lookup's answer where it has one."""
    lookup = _first_answer.get()
    if lookup is not None and not want_asm:
        found = lookup(job)
        if found is not None:
            return found
    key = job.key()
    hit = _memory.get((key, want_asm)) or (_memory.get((key, True)) if not want_asm else None)
    if hit:
        return hit
    suffix = f"{'-asm' if want_asm else ''}.json"
    path = cache_dir() / f"{key}{suffix}"
    result = _read_cached(path)
    if result is not None:
        _memory[(key, want_asm)] = result
        return result
    if runtime.INTERPRETED:
        result = compiler_process.request(job, want_asm)
    else:
        result = compile_for_target(job, want_asm)
    tmp = path.with_suffix(f".{os.getpid()}.tmp")
    tmp.write_text(json.dumps(asdict(result)))
    tmp.replace(path)
    _memory[(key, want_asm)] = result
    return result


def job_from_json(spec: dict) -> CompileJob:
    """A CompileJob from its JSON form (`dataclasses.asdict`), with tuples where the dataclass holds tuples, so
    its key and identity are those of the job that was written."""
    return CompileJob(kernel=spec["kernel"], signature=tuple(map(tuple, spec["signature"])),
                      constexprs=tuple(map(tuple, spec["constexprs"])), num_warps=spec["num_warps"],
                      num_stages=spec["num_stages"], target=tuple(spec["target"]),
                      on_device=spec.get("on_device", False), divisible=tuple(spec.get("divisible", ())))


def _serve() -> None:
    """Child side: one JSON job per line on stdin (its resources, or with "texts" its compiler_texts), one JSON
    reply per line on stdout."""
    for line in sys.stdin:
        try:
            msg = json.loads(line)
            spec = msg["job"]
            job = job_from_json(spec)
            if msg.get("texts"):
                reply = {"texts": compiler_texts(job)}
            else:
                reply = asdict(compile_for_target(job, msg["want_asm"]))
        except Exception as exc:  # report, keep serving
            reply = {"error": f"{type(exc).__name__}: {exc}"}
        sys.stdout.write(json.dumps(reply) + "\n")
        sys.stdout.flush()


if __name__ == "__main__":
    _serve()
