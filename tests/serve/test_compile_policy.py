"""Whether a server compiles pasted kernels (kernel_inspector/policy.py), what the teacher's commands say
about it, and what the class server does when a replica dies (deploy/serve_class.py's supervise)."""
import re
import subprocess
import sys
from pathlib import Path

import pytest

from deploy import serve_class
from explorer_ui import launcher
from kernel_inspector import policy

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.parametrize("address, allow, public, code", [
    ("127.0.0.1", False, None, "unsandboxed_local"),
    ("localhost", False, None, "unsandboxed_local"),
    ("::1", False, None, "unsandboxed_local"),
    ("0.0.0.0", False, None, "off_no_sandbox"),
    ("", False, None, "off_no_sandbox"),                     # Streamlit's default: every interface
    ("192.168.1.20", False, None, "off_no_sandbox"),
    ("0.0.0.0", True, None, "unsandboxed_allowed"),
    ("127.0.0.1", False, "0.0.0.0", "off_no_sandbox"),      # a replica behind the class's nginx
    ("127.0.0.1", True, "0.0.0.0", "unsandboxed_allowed"),
])
def test_without_the_jail_compiling_is_off_beyond_loopback_unless_the_teacher_says_so(monkeypatch, address, allow,
                                                                                     public, code):
    monkeypatch.delenv(policy.PUBLIC_ADDRESS_ENV, raising=False)
    monkeypatch.delenv(policy.ALLOW_UNSANDBOXED_ENV, raising=False)
    if allow:
        monkeypatch.setenv(policy.ALLOW_UNSANDBOXED_ENV, "1")
    if public:
        monkeypatch.setenv(policy.PUBLIC_ADDRESS_ENV, public)
    decided = policy.compile_policy(address, sandbox="none")
    assert decided.code == code and decided.allowed == (code != "off_no_sandbox")


def test_with_the_jail_compiling_is_on_everywhere(monkeypatch):
    monkeypatch.delenv(policy.ALLOW_UNSANDBOXED_ENV, raising=False)
    assert policy.compile_policy("0.0.0.0", sandbox="bubblewrap").code == "sandboxed"


def test_the_class_servers_names_are_the_policys():
    assert (serve_class.PUBLIC_ADDRESS_ENV, serve_class.ALLOW_UNSANDBOXED_ENV) == \
        (policy.PUBLIC_ADDRESS_ENV, policy.ALLOW_UNSANDBOXED_ENV)
    server = serve_class.ClassServer(address="0.0.0.0", allow_unsandboxed_compile=True)
    server._secret = "s"            # start() draws it
    env = server.environment(0)
    assert env[policy.PUBLIC_ADDRESS_ENV] == "0.0.0.0" and env[policy.ALLOW_UNSANDBOXED_ENV] == "1"


def test_the_launcher_passes_the_teachers_choice_and_its_help_names_only_real_files():
    args = launcher.parser().parse_args(["--allow-unsandboxed-compile"])
    assert launcher.server_environment(args)[policy.ALLOW_UNSANDBOXED_ENV] == "1"
    assert policy.ALLOW_UNSANDBOXED_ENV not in launcher.server_environment(launcher.parser().parse_args([])) or \
        policy.unsandboxed_allowed()
    text = subprocess.run([sys.executable, "-m", "explorer_ui.launcher", "--help"], capture_output=True, text=True,
                          cwd=ROOT, check=True).stdout
    named = re.findall(r"deploy/[\w.]+", text)
    assert named and all((ROOT / path).is_file() for path in named), named


def test_streamlit_run_binds_this_machine_only_unless_told():
    config = (ROOT / ".streamlit" / "config.toml").read_text()
    assert re.search(r'^address = "127\.0\.0\.1"', config, re.M)


class FakeServer(serve_class.ClassServer):
    """A class whose replicas are sleeping processes: what supervise() does, without Streamlit."""

    def start_replica(self, index):
        return subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])


def test_a_dead_replica_is_started_again_on_its_port_and_the_others_are_left_alone(tmp_path):
    server = FakeServer(replicas=2, ports=[serve_class_free_port(), serve_class_free_port()], run_dir=tmp_path)
    server.procs = [server.start_replica(i) for i in range(2)]
    try:
        survivor = server.procs[1]
        server.procs[0].kill()
        server.procs[0].wait()
        server.started_at[0] = 0              # long ago: no pause before the restart
        lines = server.supervise(port_wait=1)
        assert len(lines) == 1 and str(server.replica_ports[0]) in lines[0]
        assert server.procs[0].poll() is None and server.procs[1] is survivor
        assert server.supervise(port_wait=1) == []
    finally:
        for proc in server.procs:
            proc.kill()
            proc.wait()


def serve_class_free_port() -> int:
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]
