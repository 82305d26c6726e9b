"""Pasted code against the jail (kernel_inspector/jail.py), by attack class.

Compiling a kernel runs Python the gate never sees: the code generator evaluates attribute lookups,
subscripts and calls on real objects, and a kernel can walk from a helper's `used_global_vals` to a module's
globals and on to the builtins. So one test drives that walk end to end through the real compile path; the
others hand the jail the payload directly as Python (what the walk reaches), one attack class each: writing
outside, reading the server's environment and files, signalling the server, outliving the child, connecting
to 127.0.0.1, forking without bound, flooding output. Each asserts the attack's effect is absent and the
server (this test process) unharmed; where it is cheap and safe, the same payload run without the jail shows
that the test would see the effect.
"""
from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

import softmax_core as sc
from kernel_inspector import jail, sandbox

pytestmark = pytest.mark.skipif(jail.probe() != "bubblewrap",
                                reason="bubblewrap is not installed or user namespaces are off (.ci/run installs it)")

A100 = [sc.catalog_gpu("a100-80gb")]
SECRET = "softmax-explorer-test-secret-4711"
# The walk from a @triton.jit helper to the builtins, as a kernel file that passes the gate: the IfExp hides
# the dict from Triton's dependency finder, the calls on plain Python objects run during code generation.
ESCAPE = '''import triton
import triton.language as tl

C = 1


@triton.jit
def helper(x):
    return x + C


@triton.jit
def k(x_ptr):
    list((helper.used_global_vals if True else 0).values()).pop()[1].get("__builtins__").get("__import__")("os").system("PAYLOAD")
    tl.store(x_ptr, helper(1.0))
'''


def payload(code: str, limits: jail.SandboxLimits = jail.SandboxLimits(seconds=20), jailed: bool = True,
            extra_env: dict | None = None) -> jail.ChildOutcome:
    """Run `code` as the child's Python (stdlib only); it finds the result fd's number in `fd`."""
    prelude = "import os, sys, json; fd = int(sys.argv[1])\n"
    return jail.run_command([sys.executable, "-I", "-S", "-c", prelude + code, jail.RESULT_FD_MARK], limits,
                     extra_env or {}, jailed, None)


def test_the_codegen_walk_to_the_builtins_runs_inside_the_jail_and_writes_nothing_outside(tmp_path):
    marker = tmp_path / "escaped"
    source = ESCAPE.replace("PAYLOAD", f"id > {marker}; cat /proc/1/environ /proc/$PPID/environ >> {marker}")
    kf, specs, report = sandbox.refuse_or_compile(source, None, ["x_ptr=*fp32"], A100, 4, 3)
    assert report.variants[0].sandbox == "bubblewrap"
    assert not marker.exists(), "the kernel's shell command wrote outside the jail"
    # the server carries on: the next compile works
    _, _, again = sandbox.refuse_or_compile(source.replace("list((", "0 and list(("), None, ["x_ptr=*fp32"],
                                            A100, 4, 3)
    assert again.variants[0].sandbox == "bubblewrap"


@pytest.mark.slow
def test_without_the_jail_the_same_walk_does_run_a_shell_command(tmp_path, monkeypatch):
    """The sanity check of the test above: the walk is real, only the jail stops it."""
    marker = tmp_path / "escaped"
    monkeypatch.setattr(jail, "probe", lambda: "none")
    _, _, report = sandbox.refuse_or_compile(ESCAPE.replace("PAYLOAD", f"touch {marker}"), None, ["x_ptr=*fp32"],
                                             A100, 4, 3)
    assert report.variants[0].sandbox == "none"
    assert marker.exists()


def test_writing_outside_the_jail_leaves_nothing(tmp_path):
    targets = [tmp_path / "written", Path(sys.prefix) / "written-by-jail", Path(jail.PACKAGE_ROOT) / "written"]
    code = (f"targets = {[str(t) for t in targets]!r}\nmade = []\n"
            "for t in targets:\n"
            "    try:\n        open(t, 'w').write('x'); made.append(t)\n    except OSError:\n        pass\n"
            "os.write(fd, json.dumps(made).encode())")
    outcome = payload(code)
    assert outcome.replies == ([],) and not any(t.exists() for t in targets)
    unjailed = payload(code.replace(repr([str(t) for t in targets]), repr([str(targets[0])])), jailed=False)
    assert unjailed.replies == ([str(targets[0])],) and targets[0].exists()


def test_the_servers_environment_and_files_cannot_be_read(tmp_path, monkeypatch):
    monkeypatch.setenv("STREAMLIT_SERVER_COOKIE_SECRET", SECRET)
    (tmp_path / "secret.txt").write_text(SECRET)
    paths = ["/proc/1/environ", "/proc/self/environ", f"/proc/{os.getpid()}/environ", str(tmp_path / "secret.txt")]
    code = (f"seen = [repr(dict(os.environ))]\nfor p in {paths!r} + ['/proc/%d/environ' % os.getppid()]:\n"
            "    try:\n        seen.append(open(p, 'rb').read().decode(errors='replace'))\n"
            "    except OSError as e:\n        seen.append(type(e).__name__)\n"
            "print(seen)\nos.write(fd, json.dumps(seen).encode())")
    outcome = payload(code)
    assert outcome.replies and SECRET not in repr(outcome.replies) + outcome.output_tail
    unjailed = payload(code, jailed=False)
    assert SECRET in repr(unjailed.replies)          # the file is readable to a plain child: the test can see it


def test_signals_reach_no_process_outside():
    bystander = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    try:
        code = (f"import signal\nfor pid in (os.getppid(), {os.getpid()}, {bystander.pid}, -1):\n"
                "    try:\n        os.kill(pid, signal.SIGKILL)\n    except OSError:\n        pass\n")
        payload(code)
        time.sleep(0.3)
        assert bystander.poll() is None, "the jail killed a process outside it"
        payload(f"os.kill({bystander.pid}, 9)", jailed=False)      # a plain child can: the test would see it
        assert bystander.wait(timeout=5) == -signal.SIGKILL
    finally:
        bystander.kill()
        bystander.wait()


def _processes_with(token: str) -> list[int]:
    found = []
    for entry in Path("/proc").iterdir():
        try:
            if entry.name.isdigit() and token.encode() in (entry / "cmdline").read_bytes():
                found.append(int(entry.name))
        except OSError:
            pass
    return found


def test_a_setsid_grandchild_does_not_outlive_the_child():
    token = f"outlive-{os.getpid()}-{time.monotonic_ns()}"
    code = (f"import subprocess\nsubprocess.Popen(['{sys.executable}', '-S', '-c', "
            f"'import time; time.sleep(60)', '{token}'], start_new_session=True, stdout=subprocess.DEVNULL, "
            f"stderr=subprocess.DEVNULL)\nos.write(fd, b'1')")
    started = time.monotonic()
    outcome = payload(code)
    assert outcome.replies == (1,) and time.monotonic() - started < 15
    deadline = time.monotonic() + 5
    while _processes_with(token) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert not _processes_with(token), "a process of the jail outlived it"


def test_no_connection_reaches_the_hosts_loopback():
    with socket.socket() as server:
        server.bind(("127.0.0.1", 0))
        server.listen(1)
        server.setblocking(False)
        port = server.getsockname()[1]
        code = ("import socket\ns = socket.socket(); s.settimeout(2)\n"
                f"try:\n    s.connect(('127.0.0.1', {port})); r = 'connected'\nexcept OSError as e:\n    r = 'refused'\n"
                "os.write(fd, json.dumps(r).encode())")
        assert payload(code).replies == ("refused",)
        with pytest.raises(BlockingIOError):
            server.accept()
        assert payload(code, jailed=False).replies == ("connected",)      # the plain child reaches it
        server.accept()[0].close()


def test_a_fork_bomb_is_bounded_by_the_process_limit():
    limits = jail.SandboxLimits(seconds=20, processes=16)
    code = ("import time\nmade = 0\nfor _ in range(300):\n    try:\n        pid = os.fork()\n"
            "    except OSError:\n        break\n    if pid == 0:\n        time.sleep(5); os._exit(0)\n    made += 1\n"
            "os.write(fd, json.dumps(made).encode())")
    # the child's first line, as bootstrap() writes it for the worker
    outcome = jail.run_command([sys.executable, "-I", "-S", "-c", jail.process_bound(limits.processes)
                                + f"\nimport os, sys, json; fd = int(sys.argv[1])\n{code}", jail.RESULT_FD_MARK],
                               limits, {}, True, None)
    (made,) = outcome.replies
    assert made < limits.processes


def test_an_output_flood_is_cut_off_and_not_kept():
    limits = jail.SandboxLimits(seconds=30, output_bytes=1 << 20)
    started = time.monotonic()
    outcome = payload("chunk = b'x' * 65536 + b'\\n'\nfor _ in range(4000):\n    os.write(1, chunk)", limits)
    assert outcome.flooded == "output" and len(outcome.output_tail) <= 8192
    assert time.monotonic() - started < 20


def test_a_result_line_past_its_cap_kills_the_child():
    limits = jail.SandboxLimits(seconds=30, result_line_bytes=1 << 16)
    outcome = payload("for _ in range(1000):\n    os.write(fd, b'[' * 4096)", limits)
    assert outcome.flooded == "result_line" and outcome.replies == ()


def test_printed_json_is_not_a_result():
    """What the kernel prints at compile time goes to stdout; results come only from the result pipe."""
    forged = '{"kind": "compiled", "index": 0, "seconds": 0.1, "resources": {"n_regs": 1, "n_spills": 0, ' \
             '"shared_bytes": 0, "source": "cuobjdump"}}'
    source = ("import triton\nimport triton.language as tl\n\n\n@triton.jit\ndef k(x_ptr):\n"
              f"    tl.static_print({forged!r})\n    tl.static_print('{{\"refused\": 1}}')\n"
              "    tl.store(x_ptr, 1.0)\n")
    _, _, report = sandbox.refuse_or_compile(source, None, ["x_ptr=*fp32"], A100, 4, 3)
    (variant,) = report.variants
    assert report.refused is None and variant.failure is None and variant.resources.n_regs != 1


@pytest.mark.slow
def test_a_static_print_flood_at_compile_time_ends_in_output_limit():
    """The flood of the issue, through the compile path: a long string printed in an unrolled loop."""
    source = ("import triton\nimport triton.language as tl\n\n\n@triton.jit\ndef k(x_ptr):\n"
              "    for i in tl.static_range(100000):\n        tl.static_print('x' * 4000)\n    tl.store(x_ptr, 1.0)\n")
    limits = sandbox.SandboxLimits(seconds=60, output_bytes=1 << 20)
    started = time.monotonic()
    _, _, report = sandbox.refuse_or_compile(source, None, ["x_ptr=*fp32"], A100, 4, 3, limits)
    assert report.variants[0].failure.hint == "output_limit"
    assert len(report.stderr_tail) <= 8192 and time.monotonic() - started < 50
