"""The boundary around pasted code: a child process in a bubblewrap jail, and its output read as untrusted.

Compiling a Triton kernel executes Python: the code generator evaluates attribute lookups, subscripts and
calls on real Python objects, so a kernel that passed the gate can still reach the builtins through objects
the compiler hands it. The gate (gate.py) is the friendly first answer; this is the boundary. The child runs
under bubblewrap (Debian's `bubblewrap`, the sandbox Flatpak uses) with:

- its own user, PID, network, IPC, UTS and mount namespaces (no network at all, not even 127.0.0.1; it sees
  only its own processes, so it can signal no one else) as an unprivileged uid;
- a read-only view of only what compiling needs: /usr (the C library, for ptxas and Python), the Python
  environment and the project's two packages; a tmpfs of bounded size as /tmp, home and Triton cache;
- no environment of the server's (--clearenv), its own session, death with its parent;
- the resource limits (CPU seconds, address space, file size, no core) and a bound on processes
  (RLIMIT_NPROC, which holds because the jail's uid is never root: jail_exec.py drops root first).

Its stdout and stderr are read as they come, capped in total (the child is killed past the cap), and only a
tail is kept. Results travel on a pipe of their own (the worker's result fd), never on stdout, so what the
kernel prints cannot pass for a result; each line there is capped too and returned as a plain JSON object
for the caller to validate against its schema (replies.py). Where bubblewrap is missing or does not work
(a live probe decides), the same child runs with the limits alone: `sandbox` then says "none", and the
server's policy (policy.py) decides whether pasted code may be compiled at all. The probe's answer is kept for
PROBE_SECONDS and forgotten at once when a jailed child fails to start its jail (bubblewrap removed, user
namespaces switched off), so a long-running server follows what is true now.

A run on the GPU (measure.py) goes through the same jail with two additions and nothing else: the NVIDIA
device nodes bound in (/dev/nvidiactl, /dev/nvidia0..., /dev/nvidia-uvm...), and the folders of the driver's
libraries read-only where they lie outside /usr. Its memory bound is on data (RLIMIT_DATA) instead of address
space: the CUDA driver reserves address space the size of the GPU's memory and more, which RLIMIT_AS refuses.
"""
from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass
from pathlib import Path

PACKAGE_ROOT = Path(__file__).resolve().parents[1]      # the folder holding softmax_core/ and kernel_inspector/
PACKAGES = ("kernel_inspector", "softmax_core")           # what the worker imports of the project
LAUNCHER = Path(__file__).with_name("jail_exec.py")
JAIL_UID = 65534                   # "nobody": the uid the jail runs as, inside and (for a root server) outside
JAIL_ROOT = "/sandbox/app"         # where the project's packages appear inside the jail
JAIL_WORK = "/tmp/work"            # the worker's folder inside: working directory, HOME, Triton cache
SANDBOX_CODES = ("bubblewrap", "none")   # what a result says it was compiled in
JAIL_SETUP_FAILED = "jail_exec:"  # how jail_exec.py's own failures begin (an exec, a mount, the uid change)
RESULT_FD_MARK = "@RESULT_FD@"     # in a command line: the result pipe's fd number, the same inside and out
PROBE_SECONDS = 300.0              # how long a probe's answer is kept before the jail is tried again
# The NVIDIA driver's device nodes: the control node, one per GPU, unified memory, and MIG's capabilities.
GPU_DEVICE_PATTERNS = ("/dev/nvidiactl", "/dev/nvidia[0-9]*", "/dev/nvidia-uvm", "/dev/nvidia-uvm-tools",
                       "/dev/nvidia-modeset", "/dev/nvidia-caps/*")
DRIVER_LIBRARIES = ("libcuda.so", "libnvidia-")     # how the driver's libraries' names begin


@dataclass(frozen=True)
class SandboxLimits:
    seconds: float = 60.0              # wall clock, enforced here; CPU seconds a little more, by the kernel
    memory_bytes: int = 6 << 30        # address space: triton + LLVM + ptxas need a few GB of it
    file_bytes: int = 256 << 20        # any one file the child writes
    processes: int = 64                # processes and threads of the child, together (RLIMIT_NPROC)
    tmpfs_bytes: int = 512 << 20       # the jail's /tmp (home and Triton cache)
    output_bytes: int = 1 << 20        # stdout + stderr, all told: past it the child is killed
    result_line_bytes: int = 8 << 20   # one result line (a variant with its PTX and SASS)
    result_bytes: int = 64 << 20       # every result line together


@dataclass(frozen=True)
class ChildOutcome:
    """What a child left: its result lines as JSON objects (not yet validated), the tail of its output,
    and how it ended."""

    replies: tuple
    output_tail: str
    timed_out: bool
    flooded: str | None                # "output" | "result_line" | "result_total": killed for it
    returncode: int | None
    sandbox: str                       # one of SANDBOX_CODES


def process_bound(processes: int) -> str:
    """Python code that bounds the child's processes and threads (RLIMIT_NPROC, counted in the jail's own user
    namespace, for its unprivileged uid): the first thing the child runs."""
    return f"import resource; resource.setrlimit(resource.RLIMIT_NPROC, ({processes}, {processes})); "


def bootstrap(module: str, function: str, processes: int) -> str:
    """`python -c` code run first in the child: the process bound, then `module.function()` with the packages
    on the path and softmax_core's __init__ not run (the child needs compile.py, not torch)."""
    return (process_bound(processes) + "import sys, types; "
            "root = sys.argv[1]; sys.path.insert(0, root); "
            "package = types.ModuleType('softmax_core'); package.__path__ = [root + '/softmax_core']; "
            "sys.modules['softmax_core'] = package; "
            f"from {module} import {function}; {function}()")


def child_env(work: Path) -> dict:
    """The child's whole environment: nothing of the server's but where its own folder is."""
    return {"PATH": "/usr/local/bin:/usr/bin:/bin", "HOME": str(work), "TMPDIR": str(work),
            "TRITON_CACHE_DIR": str(work / "triton-cache"), "TRITON_HOME": str(work),
            "TRITON_DUMP_DIR": str(work / "dump"), "TRITON_OVERRIDE_DIR": str(work / "override"),
            "PYTHONDONTWRITEBYTECODE": "1", "SOFTMAX_CORE_OFFLINE_COMPILER": "1", "LANG": "C.UTF-8",
            "TRITON_DEFAULT_FP_FUSION": "1"}   # triton's default, stated so that 3.9 does not warn about it


def python_roots() -> list[Path]:
    """The folders this Python runs from: its prefix (a venv's and its base's) and the interpreter's own."""
    roots = {Path(sys.prefix).resolve(), Path(sys.base_prefix).resolve(), Path(sys.exec_prefix).resolve(),
             Path(os.path.realpath(sys.executable)).parent.parent}
    return sorted(r for r in roots if not str(r).startswith("/usr/") and str(r) != "/usr")


def bwrap_path() -> str | None:
    return shutil.which("bwrap") or next((p for p in ("/usr/bin/bwrap",) if Path(p).is_file()), None)


def _system_binds() -> list[str]:
    """/usr read-only, and /lib, /lib64, /bin, /sbin as the host has them (links on a merged /usr)."""
    args = ["--ro-bind", "/usr", "/usr"]
    for name in ("/lib", "/lib64", "/lib32", "/bin", "/sbin"):
        if os.path.islink(name):
            args += ["--symlink", os.readlink(name), name]
        elif os.path.isdir(name):
            args += ["--ro-bind", name, name]
    return args + ["--ro-bind-try", "/etc/ld.so.cache", "/etc/ld.so.cache"]


def jail_command(binds: list[tuple[str, str]], env: dict, inner: list[str], limits: SandboxLimits,
                 devices: tuple[str, ...] = ()) -> list[str]:
    """The bubblewrap command line: `binds` are (host path, path inside), all read-only; `devices` are device
    nodes bound in as they are (the GPU's, for a run on it)."""
    args = [bwrap_path() or "bwrap", "--unshare-user", "--unshare-pid", "--unshare-net", "--unshare-ipc",
            "--unshare-uts", "--unshare-cgroup-try", "--die-with-parent", "--new-session",
            "--uid", str(JAIL_UID), "--gid", str(JAIL_UID), "--hostname", "sandbox", *_system_binds()]
    for source, inside in binds:
        args += ["--ro-bind", source, inside]
    args += ["--proc", "/proc", "--dev", "/dev"]
    for node in devices:               # after --dev: bound into the jail's own /dev
        args += ["--dev-bind", node, node]
    args += ["--size", str(limits.tmpfs_bytes), "--tmpfs", "/tmp",
             "--dir", JAIL_WORK, "--chdir", JAIL_WORK, "--remount-ro", "/", "--clearenv"]
    for name, value in env.items():
        args += ["--setenv", name, value]
    return args + ["--", *inner]


def gpu_devices() -> tuple[str, ...]:
    """The NVIDIA device nodes this machine has (GPU_DEVICE_PATTERNS): what a jailed run on the GPU is given."""
    import glob
    import stat

    found = set()
    for pattern in GPU_DEVICE_PATTERNS:
        for path in glob.glob(pattern):
            try:
                if stat.S_ISCHR(os.stat(path).st_mode):
                    found.add(path)
            except OSError:
                pass
    return tuple(sorted(found))


def driver_library_dirs() -> tuple[str, ...]:
    """The folders holding the NVIDIA driver's libraries (libcuda.so.1, libnvidia-*.so) that the jail does not
    already show: those outside /usr and the /lib folders. Found as the loader finds them: ldconfig's cache,
    then LD_LIBRARY_PATH."""
    ldconfig = next((p for p in ("/sbin/ldconfig", "/usr/sbin/ldconfig") if Path(p).is_file()), None)
    paths = []
    if ldconfig:
        try:
            listing = subprocess.run([ldconfig, "-p"], capture_output=True, text=True, timeout=10).stdout
        except (OSError, subprocess.SubprocessError):
            listing = ""
        paths += [line.rpartition("=>")[2].strip() for line in listing.splitlines() if "=>" in line]
    for folder in filter(None, os.environ.get("LD_LIBRARY_PATH", "").split(":")):
        try:
            paths += [str(Path(folder) / name) for name in os.listdir(folder)]
        except OSError:
            pass
    dirs = {str(Path(path).parent) for path in paths if Path(path).name.startswith(DRIVER_LIBRARIES)}
    shown = ("/usr/", "/lib/", "/lib64/", "/lib32/")
    return tuple(sorted(d for d in dirs if not (d + "/").startswith(shown) and Path(d).is_dir()))


def gpu_env(library_dirs: tuple[str, ...]) -> dict:
    """What a run on the GPU adds to the child's environment: where the driver's libraries are (only where
    they lie outside the loader's default folders), and which GPU the server was given."""
    env = {}
    if library_dirs:
        env["LD_LIBRARY_PATH"] = ":".join(library_dirs)
        with_cuda = [d for d in library_dirs if any(Path(d).glob("libcuda.so*"))]
        if with_cuda:
            env["TRITON_LIBCUDA_PATH"] = with_cuda[0]
    if "CUDA_VISIBLE_DEVICES" in os.environ:
        env["CUDA_VISIBLE_DEVICES"] = os.environ["CUDA_VISIBLE_DEVICES"]
    return env


def _binds(extra_dirs: tuple[str, ...] = ()) -> list[tuple[str, str]]:
    return ([(str(r), str(r)) for r in python_roots()]
            + [(str(PACKAGE_ROOT / p), f"{JAIL_ROOT}/{p}") for p in PACKAGES]
            + [(d, d) for d in extra_dirs])


def launch_spec(limits: SandboxLimits, inner: list[str], env: dict, jailed: bool, stage_dir: Path | None,
                 gpu: bool = False) -> dict:
    """What jail_exec.py does: the limits, the staging and uid drop (a root server), the command. On the GPU
    the memory bound is RLIMIT_DATA (the driver's address-space reservations are not data)."""
    spec = {"cpu_seconds": int(limits.seconds) + 5, "memory_bytes": None if gpu else limits.memory_bytes,
            "data_bytes": limits.memory_bytes if gpu else None,
            "file_bytes": limits.file_bytes, "drop_to_uid": None, "stage": [], "env": {}}
    if not jailed:
        spec.update(command=inner, env=env)
        return spec
    library_dirs = driver_library_dirs() if gpu else ()
    binds = _binds(library_dirs)
    if stage_dir is not None:          # root: the jail's uid may not be able to enter the sources' folders
        staged = []
        for number, (source, inside) in enumerate(binds):
            target = stage_dir / str(number)
            target.mkdir(mode=0o755)
            spec["stage"].append([source, str(target)])
            staged.append((str(target), inside))
        binds = staged
        spec["drop_to_uid"] = JAIL_UID
    devices = gpu_devices() if gpu else ()
    spec["command"] = jail_command(binds, {**env, **(gpu_env(library_dirs) if gpu else {})}, inner, limits,
                                   devices)
    return spec


_probed: list = []                 # [(time.monotonic() of the probe, its answer)], at most one
_probe_lock = threading.RLock()       # re-entered: a failing probe forgets the answer it is about to replace


def probe() -> str:
    """Whether the jail works here: "bubblewrap" or "none", tried live at the first call, again once
    PROBE_SECONDS have passed, and again after forget_probe() (a jailed child that could not start its jail)."""
    with _probe_lock:
        if not _probed or time.monotonic() - _probed[0][0] > PROBE_SECONDS:
            _probed[:] = [(time.monotonic(), probe_now())]
        return _probed[0][1]


def forget_probe() -> None:
    """Drop the kept answer: the next probe() tries the jail again."""
    with _probe_lock:
        _probed.clear()


def probe_now() -> str:
    """Whether the jail works here, tried now: "bubblewrap" or "none". Inside, the probe checks what the jail
    promises: an unprivileged uid, its own PID namespace, a network of its own loopback
    only (the host's 127.0.0.1 is another network's)."""
    if bwrap_path() is None:
        return "none"
    check = ("import json, os, socket, sys\n"
             "interfaces = sorted(name for _, name in socket.if_nameindex())\n"
             "os.write(int(sys.argv[1]), json.dumps([os.getuid(), os.getpid(), interfaces]).encode())")
    outcome = run_command([sys.executable, "-I", "-S", "-c", check, RESULT_FD_MARK], SandboxLimits(seconds=30),
                          {}, jailed=True, request=None)
    answer = outcome.replies[0] if outcome.replies else None
    return "bubblewrap" if answer == [JAIL_UID, 2, ["lo"]] else "none"


def run_child(module: str, function: str, request: dict, limits: SandboxLimits, extra_env: dict | None = None,
              jailed: bool | None = None, gpu: bool = False) -> ChildOutcome:
    """Run `module.function()` in a child (jailed where the probe says the jail works), `request` on its
    stdin with the result pipe's fd number added ("result_fd"); its result lines come back as JSON objects.
    `gpu`: the jail is given the GPU (gpu_devices, driver_library_dirs); never without the jail."""
    jailed = probe() == "bubblewrap" if jailed is None else jailed
    if gpu and not jailed:
        raise ValueError("a run on the GPU goes through the jail or not at all")
    root = JAIL_ROOT if jailed else str(PACKAGE_ROOT)
    inner = [sys.executable, "-I", "-c", bootstrap(module, function, limits.processes), root]
    return run_command(inner, limits, extra_env or {}, jailed, request, gpu)


def run_command(inner: list[str], limits: SandboxLimits, extra_env: dict, jailed: bool, request: dict | None,
                gpu: bool = False) -> ChildOutcome:
    """Run the command `inner` (its RESULT_FD_MARK replaced by the result pipe's fd) in the jail or under the
    limits alone; `request`, with "result_fd" added, goes to its stdin as JSON. Where a jailed child could
    not start its jail, the probe's kept answer is forgotten (the next probe tries again)."""
    with tempfile.TemporaryDirectory(prefix="your-kernel-") as tmp:
        work = Path(JAIL_WORK) if jailed else Path(tmp)
        env = {**child_env(work), **extra_env}
        stage = _stage_folder() if jailed and os.geteuid() == 0 else None
        stage_dir = Path(stage.name) if stage else None
        result_read, result_write = os.pipe()
        try:
            inner_now = [part.replace(RESULT_FD_MARK, str(result_write)) for part in inner]
            spec = launch_spec(limits, inner_now, env, jailed, stage_dir, gpu)
            body = None if request is None else {**request, "result_fd": result_write}
            proc = subprocess.Popen([sys.executable, "-I", "-S", str(LAUNCHER), json.dumps(spec)],
                                    stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                                    cwd=tmp, env={}, start_new_session=True, pass_fds=(result_write,))
        finally:
            os.close(result_write)
        try:
            outcome = _collect(proc, result_read, body, limits, "bubblewrap" if jailed else "none")
        finally:
            if stage:
                stage.cleanup()
    if jailed and jail_failed(outcome):
        forget_probe()
    return outcome


def jail_failed(outcome: ChildOutcome) -> bool:
    """Whether bubblewrap itself failed (it exits 1 with a line "bwrap: ..." before running anything), or
    jail_exec.py could not set the jail up: no reply, and the output says so."""
    return (not outcome.replies and outcome.returncode not in (0, None) and not outcome.flooded
            and not outcome.timed_out and any(line.startswith(("bwrap:", JAIL_SETUP_FAILED))
                                              for line in outcome.output_tail.splitlines()))


def _stage_folder() -> tempfile.TemporaryDirectory:
    """An empty folder the jail's uid can enter, for a root server's staged binds: under /run or /tmp itself,
    never under TMPDIR (which may sit in a folder only root can enter)."""
    parent = next((p for p in ("/run", "/tmp") if os.access(p, os.W_OK)), None)
    stage = tempfile.TemporaryDirectory(prefix="softmax-explorer-jail-", dir=parent)
    os.chmod(stage.name, 0o755)
    return stage


def _collect(proc: subprocess.Popen, result_read: int, request: dict | None, limits: SandboxLimits,
             sandbox: str) -> ChildOutcome:
    flooded: list[str] = []
    tail = bytearray()
    replies: list = []

    def kill(reason: str | None) -> None:
        """Kill the child's process group (bubblewrap's; the jail dies with it), saying why where it flooded."""
        if reason and not flooded:
            flooded.append(reason)
        try:
            os.killpg(proc.pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass

    def read_output() -> None:
        total = 0
        while chunk := proc.stdout.read1(65536):
            total += len(chunk)
            tail.extend(chunk)
            del tail[:-8192]
            if total > limits.output_bytes:
                kill("output")
                return

    def read_results() -> None:
        total, line = 0, bytearray()
        with open(result_read, "rb", buffering=0) as results:
            while chunk := results.read(65536):
                total += len(chunk)
                if total > limits.result_bytes:
                    kill("result_total")
                    return
                line.extend(chunk)
                *complete, rest = line.split(b"\n")
                line = bytearray(rest)
                if len(line) > limits.result_line_bytes:
                    kill("result_line")
                    return
                for text in complete:
                    replies.append(_parse(text))
            if line:
                replies.append(_parse(bytes(line)))

    readers = [threading.Thread(target=read_output, daemon=True), threading.Thread(target=read_results, daemon=True)]
    for reader in readers:
        reader.start()
    try:
        proc.stdin.write(json.dumps(request).encode() if request is not None else b"")
        proc.stdin.close()
    except (BrokenPipeError, OSError):
        pass
    deadline = time.monotonic() + limits.seconds
    timed_out = False
    try:
        proc.wait(timeout=limits.seconds)
    except subprocess.TimeoutExpired:
        timed_out = True
        kill(None)
        proc.wait()
    for reader in readers:
        reader.join(timeout=max(1.0, deadline - time.monotonic()))
    if any(r.is_alive() for r in readers):     # a grandchild outside the jail still holds a pipe open
        kill(None)
    return ChildOutcome(tuple(r for r in replies if r is not None), bytes(tail).decode(errors="replace"),
                        timed_out, flooded[0] if flooded else None, proc.returncode, sandbox)


def _parse(text: bytes):
    """A result line as JSON (a dict, a string, ...), or None where it is not JSON."""
    try:
        return json.loads(text)
    except (ValueError, RecursionError):
        return None
