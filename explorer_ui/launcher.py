"""`softmax-explorer`: start the explorer from an installed copy (or a checkout), with a teacher's options.

    softmax-explorer [--address 0.0.0.0] [--port 8501] [--lang zh] [--no-present] [--allow-unsandboxed-compile]

It runs `streamlit run app.py` on the app's files: in a wheel they are explorer_ui/app/ (setup.py copies
app.py, pages/ and .streamlit/config.toml there), in a checkout the repository's top level. Streamlit reads
.streamlit/config.toml from its working directory, so the server starts in that folder.

No Streamlit is imported here: without the `[app]` extra, `--help` still answers and running says what to
install. Options are checked before the server starts (an address this machine does not have, a port another
program holds, a language the app has no text in): a one-line message and exit status 2. At start it says,
in the words table's sentence (explorer_ui/locales/launcher.*.toml, in --lang's language), whether pasted
kernels compile in the jail here (kernel_inspector/jail.py's live probe) and, where they cannot, what the
"Your kernel" page does about it on this address (kernel_inspector/policy.py).

Streamlit's cookie secret (what it signs cookies with; the class server gives every replica the same one)
never travels in an environment, where a process reading /proc/<pid>/environ would find it, nor on a command
line (/proc/<pid>/cmdline): the server is given the path of a file only its user can read
(COOKIE_SECRET_FILE_ENV, mode 0600), reads it as it starts and hands the secret to Streamlit's option parser
inside the process (hand_cookie_secret_to_streamlit). A STREAMLIT_SERVER_COOKIE_SECRET found in the teacher's environment
is moved into such a file and taken out of the server's environment.
"""
from __future__ import annotations

import argparse
import importlib
import importlib.metadata
import os
import socket
import sys
import tempfile
from pathlib import Path

from explorer_ui import server_options
from kernel_inspector import policy

PACKAGE_DIR = Path(__file__).resolve().parent
INSTALLED_APP_DIR = PACKAGE_DIR / "app"
CHECKOUT_APP_DIR = PACKAGE_DIR.parent
APP_EXTRA_HINT = ("the explorer needs its [app] extra: pip install 'fused-softmax-explorer[app]' "
                  "(in a checkout: pip install -r requirements.txt)")
USAGE_ERROR = 2
DISTRIBUTION = "fused-softmax-explorer"
COOKIE_SECRET_FILE_ENV = "SOFTMAX_EXPLORER_COOKIE_SECRET_FILE"    # the path of the file holding the secret
STREAMLIT_SECRET_ENV = "STREAMLIT_SERVER_COOKIE_SECRET"          # Streamlit's own variable, never passed on
SECRET_FOLDER = Path.home() / ".cache" / "fused-softmax-explorer" / "secrets"


def app_dir() -> Path:
    """The folder holding app.py, pages/ and .streamlit/: the wheel's copy when installed, else the checkout."""
    return INSTALLED_APP_DIR if (INSTALLED_APP_DIR / "app.py").is_file() else CHECKOUT_APP_DIR


def version() -> str:
    """The installed distribution's version; in a checkout that was not installed, the source's."""
    try:
        return importlib.metadata.version(DISTRIBUTION)
    except importlib.metadata.PackageNotFoundError:
        from softmax_core import __version__     # imports torch: only when not installed

        return __version__


def parser() -> argparse.ArgumentParser:
    ap = argparse.ArgumentParser(
        prog="softmax-explorer",
        description="Start the Fused Softmax Explorer (a Streamlit app) for a class. Students open "
                    "http://<address>:<port>/ in a browser; each gets a session of their own.",
        epilog=f"Needs the [app] extra: pip install 'fused-softmax-explorer[app]'. "
               f"Several processes behind a proxy for a large class: python deploy/serve_class.py --replicas N.")
    ap.add_argument("--address", default="127.0.0.1",
                    help="address to listen on (default 127.0.0.1, this machine only; 0.0.0.0 for a class)")
    ap.add_argument("--port", type=int, default=8501, help="port to listen on (default 8501)")
    ap.add_argument("--lang", default=None, help=f"language a session starts in when its link names none: "
                    f"{', '.join(server_options.languages())} (default: each browser's)")
    ap.add_argument("--no-present", dest="present", action="store_false",
                    help="start sessions in the normal layout (default: presentation mode, for a projector)")
    ap.add_argument("--allow-unsandboxed-compile", action="store_true",
                    help="where the bubblewrap jail does not work on this machine, still compile students' pasted "
                         "kernels on an address beyond 127.0.0.1 (each student then runs code as this server's "
                         "user; default: off)")
    ap.add_argument("--version", action="version", version=f"%(prog)s {version()}")
    return ap


def streamlit_installed() -> bool:
    try:
        import streamlit  # noqa: F401
    except ImportError:
        return False
    return True


def check_options(args: argparse.Namespace) -> str | None:
    """What is wrong with the options, in one line, or None."""
    if args.lang is not None and args.lang.strip().lower() not in server_options.languages():
        return f"unknown language {args.lang!r}: choose one of {', '.join(server_options.languages())}"
    if not 1 <= args.port <= 65535:
        return f"port {args.port} is not a TCP port (1-65535)"
    try:
        infos = socket.getaddrinfo(args.address, args.port, type=socket.SOCK_STREAM)
    except socket.gaierror as exc:
        return f"address {args.address!r} cannot be resolved ({exc.strerror})"
    family, _, _, _, sockaddr = infos[0]
    with socket.socket(family, socket.SOCK_STREAM) as probe:
        # as Streamlit's server binds: a port whose last connections linger in TIME_WAIT (a replica just
        # killed and started again by serve_class.py) is free for it
        probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            probe.bind(sockaddr)
        except OSError as exc:
            if exc.errno in (98, 48, 10048):     # EADDRINUSE on Linux, macOS, Windows
                return (f"port {args.port} on {args.address} is in use by another program: "
                        f"choose another with --port")
            return f"cannot listen on {args.address}:{args.port} ({exc.strerror})"
    return None


# The server process imports the whole library before Streamlit starts taking sessions. Otherwise the first
# students' pages, each run in its own thread, import softmax_core's modules at the same moment, and Python's
# per-module import locks can meet in a cycle: seen with twelve students arriving 0.25 s apart on a fresh
# process ("_DeadlockError: deadlock detected by _ModuleLock('softmax_teaching')", then "module
# 'softmax_core' has no attribute 'memory_traffic'" in the sessions that found it half imported).
RUN_STREAMLIT = ("import sys; from explorer_ui.launcher import import_library, hand_cookie_secret_to_streamlit; "
                 "import_library(); hand_cookie_secret_to_streamlit(); "
                 "from streamlit.web.cli import main; sys.exit(main())")


# The library and the packages beside it that the pages read.
EXPLORER_PACKAGES = ("softmax_core", "softmax_teaching", "softmax_bench", "kernel_inspector")


def import_library() -> None:
    """Choose the backend as the explorer does (the interpreter without a GPU, before any kernel is defined),
    then import every module of the library and its neighbours (no Streamlit in them, so nothing binds to a
    runtime)."""
    import pkgutil

    import softmax_core

    softmax_core.runtime.use_interpreter_without_gpu()
    for name in EXPLORER_PACKAGES:
        package = importlib.import_module(name)
        for module in pkgutil.walk_packages(package.__path__, f"{name}."):
            if not module.name.endswith("__main__"):
                importlib.import_module(module.name)


def write_secret_file(secret: str, path: Path) -> Path:
    """`secret` in a file of mode 0600 at `path` (its folder 0700), written whole before it has its name."""
    path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
    descriptor, draft = tempfile.mkstemp(dir=path.parent, prefix=".secret-")    # mkstemp's files are 0600
    with os.fdopen(descriptor, "w") as out:
        out.write(secret)
    os.replace(draft, path)
    return path


def hand_cookie_secret_to_streamlit() -> None:
    """In the server process, before Streamlit starts: the secret from the file COOKIE_SECRET_FILE_ENV names
    joins the options Streamlit's loader lays over its config files, as a command-line flag's would (Streamlit
    rightly refuses the secret as a real flag, which /proc/<pid>/cmdline would show). Nothing where no file is
    named: Streamlit then draws a secret of its own."""
    path = os.environ.get(COOKIE_SECRET_FILE_ENV)
    if not path:
        return
    secret = Path(path).read_text().strip()
    from streamlit.web import bootstrap

    load = bootstrap.load_config_options

    def load_with_secret(flag_options: dict) -> None:
        load({**flag_options, "server_cookieSecret": secret})

    bootstrap.load_config_options = load_with_secret


def streamlit_command(args: argparse.Namespace) -> list[str]:
    """`streamlit run app.py ...`, in a Python that has imported the library first (RUN_STREAMLIT)."""
    return [sys.executable, "-c", RUN_STREAMLIT, "run", str(app_dir() / "app.py"),
            "--server.address", args.address, "--server.port", str(args.port), "--server.headless", "true"]


def server_environment(args: argparse.Namespace) -> dict[str, str]:
    env = dict(os.environ)
    env[server_options.PRESENT_ENV] = "1" if args.present else "0"
    if args.lang is not None:
        env[server_options.LANG_ENV] = args.lang.strip().lower()
    else:
        env.pop(server_options.LANG_ENV, None)
    if args.allow_unsandboxed_compile:
        env[policy.ALLOW_UNSANDBOXED_ENV] = "1"
    secret = env.pop(STREAMLIT_SECRET_ENV, None)
    if secret and not env.get(COOKIE_SECRET_FILE_ENV):
        env[COOKIE_SECRET_FILE_ENV] = str(write_secret_file(secret, SECRET_FOLDER / f"cookie-{args.port}"))
    return env


def sandbox_line(args: argparse.Namespace) -> str:
    """One line on how pasted kernels are compiled by this server, from the jail's live probe, in the words
    table's sentence (--lang's language; English where none is given)."""
    from explorer_ui.i18n import LANGUAGES, text_in

    if args.allow_unsandboxed_compile:
        os.environ[policy.ALLOW_UNSANDBOXED_ENV] = "1"
    decided = policy.compile_policy(args.address)
    lang = (args.lang or "en").strip().lower()
    text_key = f"launcher_sandbox_{decided.code}"
    return text_in(lang if lang in LANGUAGES else "en", text_key, address=args.address or "0.0.0.0",
                   env=policy.ALLOW_UNSANDBOXED_ENV)


def main(argv: list[str] | None = None) -> int:
    args = parser().parse_args(argv)
    if not streamlit_installed():
        print(f"softmax-explorer: {APP_EXTRA_HINT}", file=sys.stderr)
        return USAGE_ERROR
    problem = check_options(args)
    if problem:
        print(f"softmax-explorer: {problem}", file=sys.stderr)
        return USAGE_ERROR
    command = streamlit_command(args)
    print(f"softmax-explorer: serving {app_dir() / 'app.py'} on http://{args.address}:{args.port}/", flush=True)
    print(f"softmax-explorer: {sandbox_line(args)}", flush=True)
    os.chdir(app_dir())          # Streamlit reads .streamlit/config.toml from its working directory
    os.execve(command[0], command, server_environment(args))


if __name__ == "__main__":
    sys.exit(main())
