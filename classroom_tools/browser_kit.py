"""Driving the app in a real browser: shared by the browser tests (tests/browser/), measure_speed and
many_students.

- `app_pages()` lists Home and every page with the URL path Streamlit serves it under (from the app's page
  registry, so a renamed or added page is covered without touching the tests).
- `StreamlitServer` starts `streamlit run app.py` on 127.0.0.1 and a free port, and waits for /_stcore/health.
- `PageWatch` records what a browser page did that a classroom must not see: JavaScript errors, console
  errors, and requests that leave the machine.
- The browser is Debian's Chromium (/usr/bin/chromium), driven by Playwright. Never `playwright install`.
"""
from __future__ import annotations

import os
import platform
import re
import socket
import subprocess
import sys
import time
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import urlsplit

ROOT = Path(__file__).resolve().parents[1]
CHROMIUM = "/usr/bin/chromium"
# Launched with headless=True (Playwright adds --headless), and nothing that phones home: without the
# networking flags Chromium tries Google's hosts at every start.
# --disable-dev-shm-usage: Chromium's shared memory in /tmp, not /dev/shm, which a container can make small
# (64 MB under Docker's default); a class of tabs in one browser outgrows that.
CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking",
                 "--disable-component-update", "--disable-sync", "--no-first-run", "--disable-quic",
                 "--disable-dev-shm-usage"]
LOCAL_HOSTS = {"127.0.0.1", "localhost"}
# When a source file changes under a running server, Streamlit evicts the app's modules from sys.modules at
# the next run of any session, and another session importing them at that moment fails (seen:
# "KeyError: 'softmax_core'" while files were being edited). .streamlit/config.toml switches the watcher off
# for a class; tests and measurements run beside people editing, so they say so on the command line too, and
# stay safe should someone turn it back on in the config while developing.
NO_FILE_WATCHER = ("--server.fileWatcherType", "none")
LOCAL_SCHEMES = {"data", "blob", "about"}

INSTALL_HINT = ("The browser tests need Playwright (Python, from PyPI: `python -m pip install -r requirements.txt`) "
                "and Debian's Chromium (`apt-get install -y chromium`, giving /usr/bin/chromium). "
                "Never `playwright install`: it downloads a browser of its own.")


@dataclass(frozen=True)
class AppPage:
    label: str          # for test ids and file names: "home", "padding_chain", ...
    url_path: str       # what follows the server's address: "" for Home
    script: str         # relative to the repository root

    def url(self, base: str) -> str:
        return f"{base}/{self.url_path}"


def app_pages(root: Path = ROOT) -> list[AppPage]:
    """Home (app.py) then every page, in the story's order, under the URL path Streamlit serves it at: read
    from the app's page registry (explorer_ui/pages_registry.py), which tests/app/test_pages_registry.py holds to
    the pages/ folder and to Streamlit's own naming (`pages/3_padding_chain.py` -> `/padding_chain`)."""
    if str(root) not in sys.path:
        sys.path.insert(0, str(root))
    from explorer_ui import pages_registry

    return [AppPage(page.url_path or "home", page.url_path, page.script) for page in pages_registry.PAGES]


def chromium_version() -> str:
    try:
        out = subprocess.run([CHROMIUM, "--version"], capture_output=True, text=True, timeout=30).stdout
    except OSError:
        return "missing"
    return out.strip().split(" built on")[0] or "unknown"


def versions() -> dict[str, str]:
    import importlib.metadata as md
    out = {"python": platform.python_version()}
    for name in ("streamlit", "torch", "triton", "altair", "playwright"):
        try:
            out[name] = md.version(name)
        except md.PackageNotFoundError:
            out[name] = "missing"
    out["chromium"] = chromium_version().removeprefix("Chromium ")
    return out


def machine() -> str:
    """CPU cores, GPU (if torch sees one), OS, and the load average before a measurement starts."""
    gpu = "no GPU"
    try:
        import torch
        if torch.cuda.is_available():
            gpu = torch.cuda.get_device_name(0)
    except Exception:
        pass
    load = ", ".join(f"{x:.1f}" for x in os.getloadavg())
    return (f"{os.cpu_count()} CPU cores, {gpu}, {platform.system()} {platform.machine()} "
            f"(load average before the run: {load})")


def replace_docs_section(path: Path, begin: str, end: str, section: str) -> None:
    """Put `section` (which starts with `begin` and ends with `end`) in place of the old one, or append it."""
    text = path.read_text() if path.exists() else ""
    if begin in text and end in text:
        head, rest = text.split(begin, 1)
        text = head + section + rest.split(end, 1)[1]
    else:
        text = text.rstrip() + "\n\n" + section + "\n"
    path.write_text(text)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@dataclass
class StreamlitServer:
    """`python -m streamlit run app.py --server.headless true --server.port P --server.address 127.0.0.1`.

    Everything else comes from the project's own .streamlit/config.toml, as for a teacher who runs it."""
    root: Path = ROOT
    log_path: Path | None = None
    extra_args: tuple[str, ...] = ()
    env: dict[str, str] = field(default_factory=dict)     # added to this process's environment
    port: int = field(default_factory=free_port)
    proc: subprocess.Popen | None = None
    started_at: float = 0.0

    @property
    def base(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def command(self) -> list[str]:
        return [sys.executable, "-m", "streamlit", "run", "app.py", "--server.headless", "true",
                "--server.port", str(self.port), "--server.address", "127.0.0.1", *self.extra_args]

    def start(self) -> "StreamlitServer":
        out = subprocess.DEVNULL
        if self.log_path is not None:
            self.log_path.parent.mkdir(parents=True, exist_ok=True)
            out = open(self.log_path, "wb")
        self.started_at = time.perf_counter()
        self.proc = subprocess.Popen(self.command(), cwd=self.root, stdout=out, stderr=subprocess.STDOUT,
                                     env={**os.environ, "PYTHONUNBUFFERED": "1", **self.env})
        if out is not subprocess.DEVNULL:
            out.close()         # the child holds its own handle
        return self

    def wait_healthy(self, timeout: float = 60.0) -> float:
        """Seconds from start() until /_stcore/health answers "ok"."""
        deadline = time.perf_counter() + timeout
        while time.perf_counter() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(f"streamlit exited with code {self.proc.returncode}\n{self.log_tail()}")
            try:
                with urllib.request.urlopen(f"{self.base}/_stcore/health", timeout=2) as r:
                    if r.read().strip() == b"ok":
                        return time.perf_counter() - self.started_at
            except OSError:
                pass
            time.sleep(0.05)
        raise RuntimeError(f"streamlit did not answer /_stcore/health within {timeout:.0f} s\n{self.log_tail()}")

    def log_tail(self, n: int = 40) -> str:
        if self.log_path is None or not self.log_path.exists():
            return ""
        return "\n".join(self.log_path.read_text(errors="replace").splitlines()[-n:])

    def stop(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()

    def __enter__(self) -> "StreamlitServer":
        self.start()
        try:
            self.wait_healthy()
        except BaseException:
            self.stop()
            raise
        return self

    def __exit__(self, *exc) -> None:
        self.stop()


def is_local(url: str) -> bool:
    parts = urlsplit(url)
    if parts.scheme in LOCAL_SCHEMES:
        return True
    return parts.scheme in {"http", "https", "ws", "wss"} and parts.hostname in LOCAL_HOSTS


# Streamlit's front end finds the server's base path by probing: on /padding_chain it first asks
# /padding_chain/_stcore/health and /padding_chain/_stcore/host-config, gets 404, and falls back to /.
# Chromium logs each 404 as a console error; it is Streamlit's design, not the app's fault.
_BASE_PATH_PROBE = re.compile(r"^https?://[^/]+/[^/]+/_stcore/(health|host-config)$")


@dataclass
class PageWatch:
    """Attach to a Playwright page (sync or async API) before it navigates."""
    page_errors: list[str] = field(default_factory=list)
    console_errors: list[str] = field(default_factory=list)
    external: list[str] = field(default_factory=list)
    requests: int = 0

    def attach(self, page) -> "PageWatch":
        page.on("pageerror", lambda e: self.page_errors.append(str(e)))
        page.on("console", self._on_console)
        page.on("request", self._on_request)
        page.on("websocket", lambda ws: self._check_url(ws.url))
        return self

    def _on_console(self, msg) -> None:
        if msg.type != "error":
            return
        where = (msg.location or {}).get("url", "")
        if msg.text.startswith("Failed to load resource: the server responded with a status of 404") \
                and _BASE_PATH_PROBE.match(where):
            return
        self.console_errors.append(f"{msg.text} [{where}]" if where else msg.text)

    def _on_request(self, request) -> None:
        self.requests += 1
        self._check_url(request.url)

    def _check_url(self, url: str) -> None:
        if not is_local(url):
            self.external.append(url)

    def clear(self) -> None:
        """Forget what was seen so far: the page goes on in the same tab (a student's next page by the sidebar),
        and what counts from here is what happens next."""
        self.page_errors.clear()
        self.console_errors.clear()
        self.external.clear()
        self.requests = 0

    def problems(self) -> list[str]:
        out = [f"JavaScript error: {e}" for e in self.page_errors]
        out += [f"console error: {e}" for e in self.console_errors]
        out += [f"request outside 127.0.0.1: {u}" for u in sorted(set(self.external))]
        return out


# In the page: Streamlit sets data-test-script-state on the stApp element ("initial", "running",
# "notRunning", ...). Rendered = connected, the script has finished, the main area holds elements, none of
# them left over from the previous run (data-stale), and none of them still a skeleton (the front end loads some widgets' code lazily: a slider can be a grey
# placeholder for a moment after the script has finished).
_PAGE_IS = """() => {
  const app = document.querySelector('[data-testid="stApp"]');
  if (!app) return false;
  return app.getAttribute('data-test-connection-state') === 'CONNECTED'
      && app.getAttribute('data-test-script-state') === 'notRunning'
      && document.querySelectorAll('[data-testid="stMain"] [data-testid="stElementContainer"]').length > 0
      && document.querySelectorAll('[data-testid="stMain"] [data-stale="true"]').length === 0%s;
}"""
RENDERED_JS = _PAGE_IS % """
      && document.querySelectorAll('[data-testid="stMain"] [data-testid="stSkeleton"]').length === 0"""
# The server's part of a render done (the same, skeletons allowed: front-end code may still be loading).
SERVED_JS = _PAGE_IS % ""

# Keys of the app's play buttons: Streamlit gives a widget with key K a container with class "st-key-K".
PLAY_KEYS_JS = r"""() => Array.from(document.querySelectorAll('[data-testid="stMain"] [class*="st-key-"]'))
  .flatMap(el => Array.from(el.classList))
  .filter(c => /^st-key-.+_play$/.test(c))
  .map(c => c.slice('st-key-'.length))"""

SLIDER_VALUES_JS = """(sel) => Array.from(document.querySelectorAll(sel)).map(e => e.value)"""

# Timestamps (performance.now()) of every change of the script state, for timing re-runs: one entry per
# mutation with the state it left, then one with the state now (a run that starts and ends within one task
# still leaves a "running" entry). It watches the whole document, not one element: should the front end
# replace the stApp element (it can, e.g. on a reconnect), the log goes on.
SCRIPT_STATE_LOG_JS = """() => {
  if (window.__stStateLog) return;
  window.__stStateLog = [];
  const state = () => { const a = document.querySelector('[data-testid="stApp"]');
                        return a && a.getAttribute('data-test-script-state'); };
  new MutationObserver(records => {
    const now = performance.now();
    for (const r of records) window.__stStateLog.push([now, r.oldValue]);
    window.__stStateLog.push([now, state()]);
  }).observe(document.documentElement, {subtree: true, attributes: true, attributeOldValue: true,
                                        attributeFilter: ['data-test-script-state']});
}"""

# After a click on a sidebar link: the address shows the page (`url_path`), the tab's title is no longer the
# old page's (`old_title`: each page sets its own), and the page is rendered. Not "a run was seen to start":
# under load the front end can receive a whole run in one go and its script state never visibly leaves
# "notRunning" (seen with twenty sessions on two cores).
ARRIVED_JS = """([path, oldTitle]) => {
  const here = location.pathname.replace(/\\/+$/, '').split('/').pop();
  return here === path && document.title !== oldTitle && (%s)();
}""" % RENDERED_JS

# Height of the scrolling main area: Streamlit scrolls inside [data-testid=stMain], so a "full page"
# screenshot needs a viewport that tall.
MAIN_HEIGHT_JS = """() => { const m = document.querySelector('[data-testid="stMain"]');
  return m ? m.scrollHeight : document.documentElement.scrollHeight; }"""


def nav_link_selector(app_page: AppPage) -> str:
    """The sidebar link to a page (st.page_link renders <a data-testid=stPageLink-NavLink href="url_path">); any
    page with a url_path will do (an AppPage, or explorer_ui.pages_registry's Page)."""
    return f'[data-testid="stSidebar"] a[data-testid="stPageLink-NavLink"][href="{app_page.url_path}"]'
