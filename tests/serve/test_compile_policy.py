"""Whether a server compiles pasted kernels (kernel_inspector/policy.py), and that the answer follows the
jail's truth in a long-running server (re-probed after a jail failure and after PROBE_SECONDS); what the
teacher's commands say about it, in the words tables' sentences; that Streamlit's cookie secret reaches no
replica's environment while every replica still signs with the same one; and what the class server does when
a replica dies (deploy/serve_class.py's supervise)."""
import os
import re
import stat
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

from deploy import serve_class
from explorer_ui import launcher
from kernel_inspector import jail, policy

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
    assert (serve_class.COOKIE_SECRET_FILE_ENV, serve_class.STREAMLIT_SECRET_ENV) == \
        (launcher.COOKIE_SECRET_FILE_ENV, launcher.STREAMLIT_SECRET_ENV)
    server = serve_class.ClassServer(address="0.0.0.0", allow_unsandboxed_compile=True)
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


SECRET = "cookie-secret-of-the-test-5b1d"


def test_the_class_servers_cookie_secret_is_in_a_private_file_and_in_no_replicas_environment(monkeypatch,
                                                                                             tmp_path):
    monkeypatch.setenv(launcher.STREAMLIT_SECRET_ENV, SECRET)        # the teacher's own, kept
    server = serve_class.ClassServer(replicas=2, run_dir=tmp_path)
    server.write_secret()
    assert server.secret_file.read_text() == SECRET
    assert stat.S_IMODE(server.secret_file.stat().st_mode) == 0o600
    for index in range(2):
        env = server.environment(index)
        assert SECRET not in repr(env) and env[launcher.COOKIE_SECRET_FILE_ENV] == str(server.secret_file)
        monkeypatch.setattr(os, "environ", dict(env))       # what the replica's launcher then passes on
        passed = launcher.server_environment(launcher.parser().parse_args(["--port", str(8601 + index)]))
        assert SECRET not in repr(passed) and passed[launcher.COOKIE_SECRET_FILE_ENV] == str(server.secret_file)


def test_softmax_explorer_moves_a_teachers_secret_out_of_its_environment(monkeypatch, tmp_path):
    monkeypatch.setenv(launcher.STREAMLIT_SECRET_ENV, SECRET)
    monkeypatch.delenv(launcher.COOKIE_SECRET_FILE_ENV, raising=False)
    monkeypatch.setattr(launcher, "SECRET_FOLDER", tmp_path / "secrets")
    env = launcher.server_environment(launcher.parser().parse_args(["--port", "8555"]))
    path = Path(env[launcher.COOKIE_SECRET_FILE_ENV])
    assert SECRET not in repr(env) and path.read_text() == SECRET and stat.S_IMODE(path.stat().st_mode) == 0o600
    assert stat.S_IMODE(path.parent.stat().st_mode) == 0o700


# A replica's start as launcher.RUN_STREAMLIT makes it (Streamlit's own command line), up to Streamlit
# reading its options: then the secret
# Streamlit will sign with, and whether the process's environment or command line shows it.
SERVER_START = """
import os, sys
from explorer_ui import launcher
from streamlit import config
from streamlit.web import bootstrap, cli

def started(file, args=None, flag_options=None):
    bootstrap.load_config_options(flag_options=flag_options or {})
    secret = config.get_option("server.cookieSecret")
    seen = open("/proc/self/environ", "rb").read() + open("/proc/self/cmdline", "rb").read()
    print(secret, secret.encode() in seen)
    sys.exit(0)

cli._main_run = started
launcher.hand_cookie_secret_to_streamlit()
sys.argv = ["streamlit", "run", sys.argv[1], "--server.headless", "true"]
cli.main()
"""


def test_every_replica_signs_with_the_files_secret_which_its_environ_does_not_show(tmp_path):
    secret_file = launcher.write_secret_file(SECRET, tmp_path / "cookie-secret")
    env = {k: v for k, v in os.environ.items() if k != launcher.STREAMLIT_SECRET_ENV}
    env[launcher.COOKIE_SECRET_FILE_ENV] = str(secret_file)
    answers = [subprocess.run([sys.executable, "-c", SERVER_START, str(ROOT / "app.py")], env=env, cwd=ROOT,
                              capture_output=True, text=True, timeout=120) for _ in range(2)]
    for done in answers:
        assert done.returncode == 0, done.stderr[-2000:]
        assert done.stdout.split()[-2:] == [SECRET, "False"], done.stdout
    env.pop(launcher.COOKIE_SECRET_FILE_ENV)     # without the file, Streamlit draws its own: the test can fail
    alone = subprocess.run([sys.executable, "-c", SERVER_START, str(ROOT / "app.py")], env=env, cwd=ROOT,
                           capture_output=True, text=True, timeout=120)
    assert alone.stdout.split()[-2] != SECRET


@pytest.mark.parametrize("code", policy.POLICY_CODES)
@pytest.mark.parametrize("lang", ["en", "zh"])
def test_the_start_up_line_is_the_words_tables_sentence(monkeypatch, code, lang):
    from explorer_ui.i18n import TEXT

    monkeypatch.setattr(policy, "compile_policy", lambda address: policy.CompilePolicy(code, "none", address))
    args = launcher.parser().parse_args(["--address", "0.0.0.0", "--lang", lang])
    line = launcher.sandbox_line(args)
    assert line == TEXT[f"launcher_sandbox_{code}"][lang].format(address="0.0.0.0", env=policy.ALLOW_UNSANDBOXED_ENV)


def fake_bwrap_folder() -> Path:
    """A folder, enterable by the jail's uid, holding a `bwrap` that fails as bubblewrap does where user
    namespaces are off."""
    folder = Path(tempfile.mkdtemp(prefix="fake-bwrap-", dir="/tmp"))
    os.chmod(folder, 0o755)
    fake = folder / "bwrap"
    fake.write_text("#!/bin/sh\necho 'bwrap: setting up uid map: Permission denied' >&2\nexit 1\n")
    fake.chmod(0o755)
    return folder


needs_the_jail = pytest.mark.skipif(jail.probe_now() != "bubblewrap",
                                    reason="bubblewrap is not installed or user namespaces are off (.ci/run installs it)")


@needs_the_jail
def test_a_jail_that_stops_working_is_noticed_at_its_first_failure(monkeypatch):
    """A long-running server whose probe said "bubblewrap": bubblewrap then fails (a fake one first on PATH).
    The first compile fails, the kept answer is forgotten, and the policy follows the truth at once: off on a
    public address. With the real one back, the next probe finds it again."""
    from kernel_inspector import sandbox
    import softmax_core as sc

    monkeypatch.delenv(policy.ALLOW_UNSANDBOXED_ENV, raising=False)
    monkeypatch.delenv(policy.PUBLIC_ADDRESS_ENV, raising=False)
    monkeypatch.setattr(jail, "PROBE_SECONDS", 3600.0)
    jail.forget_probe()
    assert policy.compile_policy("0.0.0.0").code == "sandboxed"
    folder = fake_bwrap_folder()
    monkeypatch.setenv("PATH", f"{folder}:{os.environ['PATH']}")
    source = "import triton\nimport triton.language as tl\n\n\n@triton.jit\ndef k(x_ptr):\n    tl.store(x_ptr, 1.0)\n"
    _, _, report = sandbox.refuse_or_compile(source, None, ["x_ptr=*fp32"], [sc.catalog_gpu("a100-80gb")], 4, 3)
    (variant,) = report.variants
    assert variant.failure is not None and variant.failure.hint == "crashed" and "bwrap:" in variant.failure.message
    assert policy.compile_policy("0.0.0.0").code == "off_no_sandbox"        # re-probed: the fake fails
    assert policy.compile_policy("127.0.0.1").code == "unsandboxed_local"
    monkeypatch.setenv("PATH", os.environ["PATH"].split(":", 1)[1])
    jail.forget_probe()
    assert policy.compile_policy("0.0.0.0").code == "sandboxed"


@needs_the_jail
def test_the_kept_answer_is_tried_again_after_its_interval(monkeypatch):
    """No failure needed: once PROBE_SECONDS have passed, the next probe is live."""
    clock = [1000.0]
    monkeypatch.setattr(jail.time, "monotonic", lambda: clock[0])
    monkeypatch.setattr(jail, "PROBE_SECONDS", 60.0)
    jail.forget_probe()
    assert jail.probe() == "bubblewrap"
    folder = fake_bwrap_folder()
    monkeypatch.setenv("PATH", f"{folder}:{os.environ['PATH']}")
    clock[0] += 30
    assert jail.probe() == "bubblewrap"           # kept: within the interval
    clock[0] += 31
    assert jail.probe() == "none"                 # tried again: the fake fails
    monkeypatch.setenv("PATH", os.environ["PATH"].split(":", 1)[1])
    clock[0] += 61
    assert jail.probe() == "bubblewrap"
    jail.forget_probe()
