"""A class beyond one process: N explorer processes behind nginx, with session affinity, started by one command.

    python deploy/serve_class.py --replicas 4 --address 0.0.0.0 --port 8080 [--lang zh] [--present]
                                 [--allow-unsandboxed-compile]

Each replica is `softmax-explorer` (explorer_ui/launcher.py) on 127.0.0.1 and its own port; nginx listens on
--address:--port and keeps each browser on one replica by a cookie it sets on the first visit (the config is
deploy/nginx.conf.template, filled in under the run directory). All replicas share one Triton cache
(TRITON_CACHE_DIR) and one project cache (SOFTMAX_EXPLORER_CACHE: compiled kernels' registers and shared
memory), so a kernel one replica compiled is read from disk by the others; what each keeps in memory
(Streamlit's caches, sessions) stays its own. Only the first replica runs the background pre-warm: the others
find its compiles on disk. Students get the normal layout unless --present.

It supervises: a replica that dies (a crash, a kill, memory) is started again on its own port, its students
get a fresh session there while the others never notice; nginx is started again too if it dies. Only Ctrl-C
(or SIGTERM) stops the class. Each replica is told the address students reach it on (PUBLIC_ADDRESS_ENV), so
its "Your kernel" page compiles pasted code only in the jail unless --allow-unsandboxed-compile
(kernel_inspector/policy.py). Streamlit's cookie secret, one for all replicas so that what one signs the
others read, is written to <run dir>/cookie-secret (mode 0600) and each replica is given only that file's
path (explorer_ui/launcher.py's COOKIE_SECRET_FILE_ENV): no replica's environment holds it. Needs nginx (Debian: `apt-get install nginx`; its service need not run: this starts an nginx of its own).
"""
from __future__ import annotations

import argparse
import os
import secrets
import shutil
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path

HERE = Path(__file__).resolve().parent
CHECKOUT = HERE.parent
TEMPLATE = HERE / "nginx.conf.template"
COOKIE = "explorer_replica"
MIME_TYPES = ("/etc/nginx/mime.types", "/usr/local/etc/nginx/mime.types", "/opt/homebrew/etc/nginx/mime.types")
USAGE_ERROR = 2
FAIL_SECONDS = 3
RESTART_PAUSE = 5.0                # seconds between two starts of one replica
if (CHECKOUT / "explorer_ui").is_dir() and str(CHECKOUT) not in sys.path:
    sys.path.insert(0, str(CHECKOUT))      # run from a checkout: its explorer_ui for the option checks
PUBLIC_ADDRESS_ENV = "SOFTMAX_EXPLORER_PUBLIC_ADDRESS"            # = kernel_inspector.policy's names
ALLOW_UNSANDBOXED_ENV = "SOFTMAX_EXPLORER_ALLOW_UNSANDBOXED_COMPILE"
COOKIE_SECRET_FILE_ENV = "SOFTMAX_EXPLORER_COOKIE_SECRET_FILE"    # = explorer_ui.launcher's names
STREAMLIT_SECRET_ENV = "STREAMLIT_SERVER_COOKIE_SECRET"


def find_nginx() -> str | None:
    return shutil.which("nginx") or next((p for p in ("/usr/sbin/nginx", "/usr/local/sbin/nginx")
                                          if Path(p).is_file()), None)


def nginx_config(listen: str, replica_ports: list[int], prefix: Path, workers: int | str = "auto") -> str:
    """deploy/nginx.conf.template with its @@FIELDS@@ filled in."""
    mime = next((p for p in MIME_TYPES if Path(p).is_file()), None)
    fields = {
        "WORKERS": str(workers),
        "PREFIX": str(prefix),
        "MIME_TYPES": mime or str(prefix / "mime.types"),
        "COOKIE": COOKIE,
        "LISTEN": listen,
        # a replica that stops answering is skipped for FAIL_SECONDS (its students go to the next one), then
        # tried again: once serve_class.py has restarted it, they are back on their own replica
        "SERVERS": "\n".join(f"        server 127.0.0.1:{port} max_fails=1 fail_timeout={FAIL_SECONDS}s;"
                             for port in replica_ports),
    }
    text = TEMPLATE.read_text()
    for name, value in fields.items():
        text = text.replace(f"@@{name}@@", value)
    if "@@" in text:
        raise ValueError("deploy/nginx.conf.template has a field serve_class.py does not fill")
    if mime is None:    # nginx without its mime.types: the app's scripts and styles must still be typed
        (prefix / "mime.types").write_text("types { text/html html; application/javascript js mjs; "
                                           "text/css css; image/svg+xml svg; font/woff2 woff2; }\n")
    return text


def port_is_free(address: str, port: int) -> bool:
    """Whether a server could listen on `port` now. SO_REUSEADDR, as nginx and Streamlit's server set it: a
    port whose last connections linger in TIME_WAIT after a stop or a crash is free for them."""
    with socket.socket() as probe:
        probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            probe.bind((address, port))
        except OSError:
            return False
    return True


def wait_healthy(url: str, proc: subprocess.Popen | None, timeout: float) -> None:
    deadline = time.time() + timeout
    while time.time() < deadline:
        if proc is not None and proc.poll() is not None:
            raise RuntimeError(f"{url}: the process exited with status {proc.returncode} before answering")
        try:
            with urllib.request.urlopen(url, timeout=2) as answer:
                if answer.read().strip() == b"ok":
                    return
        except OSError:
            pass
        time.sleep(0.3)
    raise RuntimeError(f"{url} did not answer within {timeout:.0f} s")


@dataclass
class ClassServer:
    """nginx on `address`:`port` in front of `replicas` explorer processes (ports from `first_replica_port`)."""
    replicas: int = 2
    address: str = "127.0.0.1"
    port: int = 8080
    first_replica_port: int = 8601
    run_dir: Path = Path.home() / ".cache" / "fused-softmax-explorer" / "class"
    lang: str | None = None
    present: bool = False
    cache_dir: Path | None = None        # None: SOFTMAX_EXPLORER_CACHE, else <run_dir>/cache
    triton_cache_dir: Path | None = None  # None: TRITON_CACHE_DIR, else <cache>/triton
    extra_env: dict = field(default_factory=dict)
    allow_unsandboxed_compile: bool = False
    procs: list = field(default_factory=list)
    restarts: list = field(default_factory=list)   # (what, its exit status) of each process started again
    started_at: dict = field(default_factory=dict)  # replica index -> when it was last started
    nginx: subprocess.Popen | None = None
    ports: list[int] | None = None        # the replicas' ports; None: first_replica_port upwards

    @property
    def replica_ports(self) -> list[int]:
        return self.ports or [self.first_replica_port + i for i in range(self.replicas)]

    @property
    def base(self) -> str:
        host = "127.0.0.1" if self.address in ("0.0.0.0", "") else self.address
        return f"http://{host}:{self.port}"

    @property
    def prefix(self) -> Path:
        return self.run_dir / "nginx"

    @property
    def access_log(self) -> Path:
        return self.prefix / "access.log"

    @property
    def secret_file(self) -> Path:
        return self.run_dir / "cookie-secret"

    def write_secret(self) -> None:
        """The replicas' one cookie secret, in a file of mode 0600: the teacher's STREAMLIT_SERVER_COOKIE_SECRET
        where set, else a new one."""
        from explorer_ui.launcher import write_secret_file

        write_secret_file(os.environ.get(STREAMLIT_SECRET_ENV) or secrets.token_hex(16), self.secret_file)

    def environment(self, index: int) -> dict[str, str]:
        env = dict(os.environ)
        cache = Path(self.cache_dir or env.get("SOFTMAX_EXPLORER_CACHE") or self.run_dir / "cache")
        triton = Path(self.triton_cache_dir or env.get("TRITON_CACHE_DIR") or cache / "triton")
        env["SOFTMAX_EXPLORER_CACHE"], env["TRITON_CACHE_DIR"] = str(cache), str(triton)
        # One cookie secret for all, so anything Streamlit signs reads the same everywhere: the file's path
        # only, never the secret itself (a replica's environment is readable in /proc/<pid>/environ)
        env.pop(STREAMLIT_SECRET_ENV, None)
        env[COOKIE_SECRET_FILE_ENV] = str(self.secret_file)
        if index > 0:
            env["SOFTMAX_EXPLORER_PREWARM"] = "0"    # the first replica pre-warms the shared disk caches
        env[PUBLIC_ADDRESS_ENV] = self.address      # students reach it through nginx, not on 127.0.0.1
        if self.allow_unsandboxed_compile:
            env[ALLOW_UNSANDBOXED_ENV] = "1"
        if (CHECKOUT / "explorer_ui").is_dir():     # run from a checkout: its packages first
            env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(CHECKOUT), env.get("PYTHONPATH")]))
        env.update(self.extra_env)
        return env

    def check(self) -> str | None:
        """What stands in the way, in one line, or None."""
        if find_nginx() is None:
            return "nginx is not installed (Debian: apt-get install nginx)"
        if self.lang is not None:
            from explorer_ui import server_options

            if self.lang.strip().lower() not in server_options.languages():
                return f"unknown language {self.lang!r}: choose one of {', '.join(server_options.languages())}"
        if self.replicas < 1:
            return "--replicas must be at least 1"
        for address, port in [(self.address, self.port)] + [("127.0.0.1", p) for p in self.replica_ports]:
            if not port_is_free(address, port):
                return f"port {port} on {address} is in use: choose another (--port, --first-replica-port)"
        return None

    def start(self, timeout: float = 120.0) -> "ClassServer":
        problem = self.check()
        if problem:
            raise RuntimeError(problem)
        self.write_secret()
        for sub in ("tmp", "logs"):
            (self.prefix / sub).mkdir(parents=True, exist_ok=True)
        self.procs = [self.start_replica(index) for index in range(len(self.replica_ports))]
        for proc, port in zip(self.procs, self.replica_ports):
            wait_healthy(f"http://127.0.0.1:{port}/_stcore/health", proc, timeout)
        conf = self.prefix / "nginx.conf"
        conf.write_text(nginx_config(f"{self.address}:{self.port}", self.replica_ports, self.prefix))
        self.start_proxy()
        return self

    def start_replica(self, index: int) -> subprocess.Popen:
        port = self.replica_ports[index]
        command = [sys.executable, "-m", "explorer_ui.launcher", "--address", "127.0.0.1", "--port", str(port)]
        command += ["--lang", self.lang] if self.lang else []
        command += [] if self.present else ["--no-present"]
        self.started_at[index] = time.time()
        with open(self.prefix / "logs" / f"replica-{port}.log", "a") as log:
            return subprocess.Popen(command, env=self.environment(index), stdout=log, stderr=subprocess.STDOUT,
                                    stdin=subprocess.DEVNULL)

    def supervise(self, port_wait: float = 30.0) -> list[str]:
        """Start again whatever died: a replica on its own port (once the port is free), nginx on its own.
        Returns what was restarted, as lines for the teacher's terminal."""
        done = []
        for index, proc in enumerate(self.procs):
            if proc.poll() is None or time.time() - self.started_at.get(index, 0) < RESTART_PAUSE:
                continue            # alive, or died right after a start: wait a little before the next one
            port = self.replica_ports[index]
            deadline = time.time() + port_wait
            while not port_is_free("127.0.0.1", port) and time.time() < deadline:
                time.sleep(0.2)
            self.restarts.append((f"replica :{port}", proc.returncode))
            self.procs[index] = self.start_replica(index)
            done.append(f"replica :{port} stopped (status {proc.returncode}); started again on its port")
        if self.nginx is not None and self.nginx.poll() is not None:
            self.restarts.append(("nginx", self.nginx.returncode))
            status = self.nginx.returncode
            self.start_proxy()
            done.append(f"nginx stopped (status {status}); started again")
        return done

    def start_proxy(self) -> None:
        conf = self.prefix / "nginx.conf"
        self.nginx = subprocess.Popen([find_nginx(), "-p", str(self.prefix), "-c", str(conf), "-e",
                                       str(self.prefix / "error.log"), "-g", "daemon off;"],
                                      stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                                      stderr=open(self.prefix / "logs" / "nginx.out", "w"))
        wait_healthy(f"{self.base}/_stcore/health", self.nginx, 30)

    def restart_proxy(self) -> None:
        """Stop nginx and start it again: every browser's web socket drops and reconnects (as after a network
        blip); the replicas and their sessions stay."""
        self.nginx.terminate()
        self.nginx.wait(timeout=20)
        self.start_proxy()

    def exited(self) -> list[str]:
        """The processes that have stopped on their own."""
        named = [("nginx", self.nginx)] + [(f"replica :{p}", proc) for p, proc in zip(self.replica_ports, self.procs)]
        return [f"{name} (status {proc.returncode})" for name, proc in named if proc and proc.poll() is not None]

    def stop(self) -> None:
        for proc in [self.nginx, *self.procs]:
            if proc is not None and proc.poll() is None:
                proc.terminate()
        for proc in [self.nginx, *self.procs]:
            if proc is not None:
                try:
                    proc.wait(timeout=20)
                except subprocess.TimeoutExpired:
                    proc.kill()

    def __enter__(self) -> "ClassServer":
        try:
            return self.start()
        except BaseException:
            self.stop()
            raise

    def __exit__(self, *exc) -> None:
        self.stop()


def parser() -> argparse.ArgumentParser:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter,
                                 epilog="\n".join(__doc__.split("\n")[3:]))
    ap.add_argument("--replicas", type=int, default=os.cpu_count() or 2,
                    help="explorer processes (default: one per CPU core)")
    ap.add_argument("--address", default="0.0.0.0", help="address nginx listens on (default 0.0.0.0)")
    ap.add_argument("--port", type=int, default=8080, help="port nginx listens on (default 8080)")
    ap.add_argument("--first-replica-port", type=int, default=8601,
                    help="the replicas listen on 127.0.0.1 from this port up (default 8601)")
    ap.add_argument("--run-dir", type=Path, default=ClassServer.run_dir,
                    help="nginx's config, logs and the shared caches' default home (default %(default)s)")
    ap.add_argument("--lang", default=None, help="language sessions start in (default: each browser's)")
    ap.add_argument("--present", action="store_true", help="start sessions in presentation mode")
    ap.add_argument("--allow-unsandboxed-compile", action="store_true",
                    help="where the bubblewrap jail does not work here, still compile students' pasted kernels "
                         "(each student then runs code as this server's user; default: off)")
    return ap


def main(argv: list[str] | None = None) -> int:
    from explorer_ui import launcher      # the one start-up line on how pasted kernels compile, as softmax-explorer says it

    args = parser().parse_args(argv)
    server = ClassServer(replicas=args.replicas, address=args.address, port=args.port,
                         first_replica_port=args.first_replica_port, run_dir=args.run_dir, lang=args.lang,
                         present=args.present, allow_unsandboxed_compile=args.allow_unsandboxed_compile)
    problem = server.check()
    if problem:
        print(f"serve_class: {problem}", file=sys.stderr)
        return USAGE_ERROR
    stop = []
    signal.signal(signal.SIGTERM, lambda *_: stop.append("SIGTERM"))
    try:
        with server:
            print(f"serve_class: {args.replicas} replicas on 127.0.0.1:{server.replica_ports[0]}-"
                  f"{server.replica_ports[-1]}, nginx on {args.address}:{args.port}; logs in {server.prefix}",
                  flush=True)
            print(f"serve_class: {launcher.sandbox_line(args)}", flush=True)
            while not stop:          # only the teacher stops the class: whatever else dies is started again
                for line in server.supervise():
                    print(f"serve_class: {line}", file=sys.stderr, flush=True)
                time.sleep(1)
    except KeyboardInterrupt:
        pass
    except RuntimeError as exc:
        print(f"serve_class: {exc}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
