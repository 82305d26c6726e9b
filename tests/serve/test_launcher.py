"""`softmax-explorer` (explorer_ui/launcher.py): its options checked before a server starts, `--help` without
Streamlit, the server's language and presentation default reaching a session, and (slow) a real start from
another directory."""
from __future__ import annotations

import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest

from explorer_ui import launcher, server_options

ROOT = Path(__file__).resolve().parents[2]


def run_main(capsys, *argv) -> tuple[int, str]:
    code = launcher.main(list(argv))
    return code, capsys.readouterr().err


def test_unknown_language_is_refused_with_the_choices(capsys):
    code, err = run_main(capsys, "--lang", "fr")
    assert code == 2
    assert "unknown language 'fr'" in err and "en, zh" in err


def test_a_port_in_use_is_refused(capsys):
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        code, err = run_main(capsys, "--port", str(port))
    assert code == 2
    assert f"port {port} on 127.0.0.1 is in use" in err


@pytest.mark.parametrize("argv, words", [(("--port", "70000"), "not a TCP port"),
                                         (("--address", "no.such.host.invalid"), "cannot be resolved")])
def test_bad_port_or_address_is_refused(capsys, argv, words):
    code, err = run_main(capsys, *argv)
    assert code == 2 and words in err


def test_a_non_number_port_is_refused_by_argparse():
    with pytest.raises(SystemExit) as stop:
        launcher.parser().parse_args(["--port", "eighty"])
    assert stop.value.code == 2


# In a fresh interpreter where Streamlit cannot be imported: `--help`, then a start, each by the launcher's main.
WITHOUT_STREAMLIT = """
import contextlib, io, sys
sys.modules["streamlit"] = None
from explorer_ui.launcher import main
helped = io.StringIO()
with contextlib.redirect_stdout(helped):
    try:
        main(["--help"])
        code = None
    except SystemExit as stop:
        code = stop.code
print("help exit", code, helped.getvalue())
print("start exit", main([]))
"""


def test_help_and_a_start_without_streamlit_say_what_to_install():
    """With Streamlit hidden (as when the [app] extra is not installed): --help answers, a start exits 2
    naming the extra."""
    done = subprocess.run([sys.executable, "-c", WITHOUT_STREAMLIT], cwd=ROOT, capture_output=True, text=True)
    assert "start exit" in done.stdout, done.stderr[-3000:]
    helped, started = done.stdout.split("start exit")
    assert helped.startswith("help exit 0 ") and "--no-present" in helped and "[app]" in helped, done.stdout
    assert started.strip() == "2" and "fused-softmax-explorer[app]" in done.stderr, (done.stdout, done.stderr)


def test_server_environment_carries_language_and_presentation():
    args = launcher.parser().parse_args(["--lang", "ZH", "--no-present"])
    env = launcher.server_environment(args)
    assert env[server_options.LANG_ENV] == "zh" and env[server_options.PRESENT_ENV] == "0"
    env = launcher.server_environment(launcher.parser().parse_args([]))
    assert env[server_options.PRESENT_ENV] == "1" and server_options.LANG_ENV not in env


def test_a_session_starts_in_the_servers_language_and_presentation_mode(monkeypatch):
    from streamlit.testing.v1 import AppTest

    monkeypatch.setenv(server_options.LANG_ENV, "zh")
    monkeypatch.setenv(server_options.PRESENT_ENV, "1")
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=120).run()
    assert not at.exception
    assert at.session_state["lang"] == "zh" and at.session_state["present"] is True
    # a link's own ?lang= and ?present= still win
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=120)
    at.query_params["lang"] = "en"
    at.query_params["present"] = "0"
    at.run()
    assert at.session_state["lang"] == "en" and at.session_state["present"] is False


def test_app_dir_is_the_checkout_here():
    assert launcher.app_dir() == ROOT and (launcher.app_dir() / "pages").is_dir()


@pytest.mark.slow
def test_entry_point_serves_the_app_from_another_directory(tmp_path):
    port = free_port()
    proc = subprocess.Popen([sys.executable, "-m", "explorer_ui.launcher", "--port", str(port), "--lang", "zh"],
                            cwd=tmp_path, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                            env=with_root_on_path())
    try:
        deadline = time.time() + 90
        while time.time() < deadline:
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{port}/_stcore/health", timeout=2) as answer:
                    assert answer.read() == b"ok"
                    break
            except OSError:
                time.sleep(0.5)
        else:
            pytest.fail("the server never answered its health check")
    finally:
        proc.terminate()
        proc.wait(timeout=20)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def with_root_on_path() -> dict:
    import os

    env = dict(os.environ)
    env["PYTHONPATH"] = str(ROOT) + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
    return env


def test_the_server_imports_the_whole_library_before_streamlit_starts():
    """Sessions start in threads of their own; a library imported by many of them at once can deadlock on
    Python's module locks, so the server's Python imports all of it first (explorer_ui.launcher.RUN_STREAMLIT)."""
    args = launcher.parser().parse_args([])
    command = launcher.streamlit_command(args)
    assert command[1] == "-c" and "import_library()" in command[2] and command[3] == "run"
    code = ("import sys; from explorer_ui.launcher import import_library; import_library(); "
            "print(sorted(m for m in sys.modules if m.startswith('softmax_core.')))")
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=300)
    loaded = set(eval(out.stdout.strip().splitlines()[-1]))
    on_disk = {".".join(p.relative_to(ROOT).with_suffix("").parts) for p in (ROOT / "softmax_core").rglob("*.py")
               if p.name not in ("__init__.py", "__main__.py")}
    assert on_disk <= loaded, on_disk - loaded
