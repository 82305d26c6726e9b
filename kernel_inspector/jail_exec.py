"""The first program of a jailed child: limits, then the jail itself (bubblewrap), then the worker.

Run by path as `python -I -S jail_exec.py SPEC` (standard library only: nothing of the project is imported
here), SPEC being the JSON that jail.py wrote. In order:

1. the resource limits: CPU seconds, address space (or, for a run on the GPU, data), file size, no core dumps;
2. where the server runs as root, the jail must not: inside a private mount namespace, each folder the jail
   reads (the Python environment, the packages) is bound under a staging folder every user can enter, and
   then this process becomes the unprivileged JAIL_UID. A process bound (RLIMIT_NPROC) does not hold for
   root's processes; it does for that uid, which bubblewrap then maps into the jail's user namespace;
3. death with the parent (after the uid change, which would clear it);
4. exec of the command (bubblewrap and, inside it, the worker; or the worker alone where there is no jail).

A failure of its own (a mount, the uid change, an exec: bubblewrap removed since the probe) is one line on
stderr beginning with FAILED, exit status 1: jail.py reads it as the jail not working.
"""
from __future__ import annotations

import ctypes
import json
import os
import resource
import signal
import sys

CLONE_NEWNS = 0x00020000
MS_RDONLY, MS_BIND, MS_REC, MS_PRIVATE = 0x1, 0x1000, 0x4000, 0x40000
PR_SET_PDEATHSIG = 1
FAILED = "jail_exec:"              # = jail.JAIL_SETUP_FAILED


def set_limits(spec: dict) -> None:
    cpu = int(spec["cpu_seconds"])
    resource.setrlimit(resource.RLIMIT_CPU, (cpu, cpu + 1))
    for limit, key in ((resource.RLIMIT_AS, "memory_bytes"), (resource.RLIMIT_DATA, "data_bytes")):
        if spec.get(key) is not None:
            resource.setrlimit(limit, (spec[key], spec[key]))
    resource.setrlimit(resource.RLIMIT_FSIZE, (spec["file_bytes"], spec["file_bytes"]))
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))


def stage_and_drop(libc, spec: dict) -> None:
    """Bind each (source, staged) pair in a mount namespace of this process alone, then become JAIL_UID."""
    if libc.unshare(CLONE_NEWNS) != 0:
        raise OSError(ctypes.get_errno(), "unshare(CLONE_NEWNS)")
    # private: nothing bound here is seen outside this process and its children
    if libc.mount(None, b"/", None, MS_REC | MS_PRIVATE, None) != 0:
        raise OSError(ctypes.get_errno(), "mount --make-rprivate /")
    for source, staged in spec["stage"]:
        if libc.mount(source.encode(), staged.encode(), None, MS_BIND | MS_REC, None) != 0:
            raise OSError(ctypes.get_errno(), f"mount --bind {source} {staged}")
    uid = int(spec["drop_to_uid"])
    os.setgroups([])
    os.setresgid(uid, uid, uid)
    os.setresuid(uid, uid, uid)


def main() -> None:
    try:
        start(json.loads(sys.argv[1]))
    except OSError as exc:
        print(f"{FAILED} {type(exc).__name__}: {exc}", file=sys.stderr, flush=True)
        os._exit(1)


def start(spec: dict) -> None:
    parent = os.getppid()
    libc = ctypes.CDLL(None, use_errno=True)
    set_limits(spec)
    if spec.get("drop_to_uid") is not None:
        stage_and_drop(libc, spec)
    libc.prctl(PR_SET_PDEATHSIG, signal.SIGKILL)
    if os.getppid() != parent:             # the parent died before the death signal was armed
        os._exit(1)
    command = spec["command"]
    os.execve(command[0], command, spec["env"])


if __name__ == "__main__":
    main()
