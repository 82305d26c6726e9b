"""A class beyond one process (deploy/): nginx on loopback in front of two explorer replicas, driven by real
browsers through it.

- the proxy's cookie sends a browser to one replica and keeps it there: every request of every student (the
  page, its web socket, reconnects) reaches the replica its first visit was given, and every replica serves
  some of the students (the many-students driver, classroom_tools/many_students.py, through the proxy);
- a kernel compiled by one replica is read by the other from the shared disk cache, not compiled again;
- a web socket cut off and reconnected lands on the same replica, and the page carries on;
- no replica's environment or command line holds Streamlit's cookie secret (they read it from a 0600 file);
- a replica killed mid-tour is started again on its port, the other replica's students never notice.

Needs Debian's nginx (`apt-get install nginx`; .ci/run installs it) and Chromium; skipped, with the reason, where
nginx is absent.
"""
from __future__ import annotations

import asyncio
import collections
import urllib.request
from pathlib import Path

import pytest

from classroom_tools import browser_kit as kit
from deploy import serve_class

pytestmark = [pytest.mark.proxy, pytest.mark.slow,
              pytest.mark.skipif(serve_class.find_nginx() is None,
                                 reason="nginx is not installed (Debian: apt-get install nginx; .ci/run does)")]

REPLICAS = 2
STUDENTS_PER_REPLICA = 2
FRESH_STUDENTS = 1      # no cookie at all: their browser's first visit gets one from the proxy
# The restart blocks this test's event loop while nginx stops and starts again, so by the time the test could
# poll, the front end may have lost its socket and reconnected already. An observer set up before the restart
# records every connection state the app passes through; the test then asks whether one was not CONNECTED.
WATCH_CONNECTION_JS = """() => {
  const app = document.querySelector('[data-testid="stApp"]');
  window.__connectionStates = [];
  new MutationObserver(() => window.__connectionStates.push(app.getAttribute('data-test-connection-state')))
    .observe(app, {attributes: true, attributeFilter: ['data-test-connection-state']});
}"""
WAS_DISCONNECTED_JS = """() => window.__connectionStates.some(state => state !== 'CONNECTED')
  || document.querySelector('[data-testid="stApp"]').getAttribute('data-test-connection-state') !== 'CONNECTED'"""
TOUR_PAGES = 3         # the first by its address, two by the sidebar
COMPILING_PAGE = "padding_chain"   # its first visit compiles the chapter's launch plan (offline, for the H200)


@pytest.fixture(scope="module")
def class_server(tmp_path_factory):
    """Two replicas behind nginx. Their project cache (compiled kernels' registers and shared memory, what the
    test watches) starts empty; their Triton cache is Triton's own, the one the other tests fill: a kernel
    found there is still compiled for the project cache by the first replica (without Triton's code
    generation), and the second replica must read the first one's result, not compile again."""
    import triton

    run = tmp_path_factory.mktemp("class")
    ports = [kit.free_port() for _ in range(REPLICAS)]
    server = serve_class.ClassServer(replicas=REPLICAS, address="127.0.0.1", port=kit.free_port(), ports=ports,
                                     run_dir=run, cache_dir=run / "cache",
                                     triton_cache_dir=Path(triton.knobs.cache.dir),
                                     extra_env={"SOFTMAX_EXPLORER_PREWARM": "0"})
    with server:
        yield server
    assert not [e for e in server.exited() if "status 0" not in e and "status -15" not in e]


def replica_of(server, cookie: str | None) -> tuple[str, str]:
    """(the replica the proxy sends `cookie` to, the cookie): with None, the proxy hands out a new one."""
    request = urllib.request.Request(f"{server.base}/_stcore/health")
    if cookie:
        request.add_header("Cookie", f"{serve_class.COOKIE}={cookie}")
    with urllib.request.urlopen(request, timeout=10) as answer:
        replica = answer.headers["X-Explorer-Replica"]
        issued = next((c for c in answer.headers.get_all("Set-Cookie") or []
                       if c.startswith(f"{serve_class.COOKIE}=")), None)
    if cookie is None:
        assert issued and issued.startswith(f"{serve_class.COOKIE}="), issued
        cookie = issued.split(";")[0].split("=", 1)[1]
    else:
        assert issued is None, "a browser that has the cookie must not be given another"
    return replica, cookie


def cookies_for_each_replica(server, per_replica: int) -> dict[str, list[str]]:
    """Cookies the proxy issued on first visits, `per_replica` for each replica (drawn until each has them)."""
    found: dict[str, list[str]] = collections.defaultdict(list)
    for _ in range(200):
        replica, cookie = replica_of(server, None)
        assert replica_of(server, cookie)[0] == replica, "the cookie's second request went elsewhere"
        if len(found[replica]) < per_replica:
            found[replica].append(cookie)
        if len(found) == REPLICAS and all(len(v) == per_replica for v in found.values()):
            return dict(found)
    pytest.fail(f"200 first visits did not reach every replica: {dict(found)}")


def access_log(server) -> list[tuple[str, str, str, str]]:
    """(key, replica, status, request) for every request nginx has logged (a web socket when it closed)."""
    rows = []
    for line in server.access_log.read_text().splitlines():
        _, key, replica, status, request = line.split(" ", 4)
        rows.append((key, replica, status, request.strip('"')))
    return rows


def cache_files(folder: Path) -> dict[str, int]:
    """Every file under `folder` with its inode: a file written again (tmp + rename) gets a new one."""
    return {str(p.relative_to(folder)): p.stat().st_ino for p in folder.rglob("*") if p.is_file()}


class CookieBrowser:
    """A browser whose new contexts start with the proxy's cookie, as if their first visit had been made."""

    def __init__(self, browser, base: str, cookie: str | None):
        self.browser, self.base, self.cookie = browser, base, cookie

    async def new_context(self, **options):
        context = await self.browser.new_context(**options)
        if self.cookie:
            await context.add_cookies([{"name": serve_class.COOKIE, "value": self.cookie, "url": self.base}])
        return context


async def open_and_render(browser, base: str, cookie: str, path: str):
    context = await CookieBrowser(browser, base, cookie).new_context(viewport={"width": 1280, "height": 900})
    page = await context.new_page()
    watch = kit.PageWatch().attach(page)
    await page.goto(f"{base}/{path}", wait_until="commit", timeout=180_000)
    await page.wait_for_function(kit.RENDERED_JS, timeout=180_000)
    assert await page.get_by_test_id("stException").count() == 0
    return context, page, watch


def test_a_kernel_one_replica_compiled_is_read_from_disk_by_the_other(class_server, tmp_path):
    from playwright.async_api import async_playwright

    (a_replica, (a_cookie,)), (b_replica, (b_cookie,)) = cookies_for_each_replica(class_server, 1).items()
    cache = class_server.run_dir / "cache"

    async def visit():
        async with async_playwright() as p:
            browser = await p.chromium.launch(executable_path=kit.CHROMIUM, headless=True, args=kit.CHROMIUM_ARGS)
            context, _, watch = await open_and_render(browser, class_server.base, a_cookie, COMPILING_PAGE)
            await context.close()
            after_a = cache_files(cache)
            context, page, watch_b = await open_and_render(browser, class_server.base, b_cookie, COMPILING_PAGE)
            # Reconnect: the proxy restarts, the web socket drops, the front end reconnects by itself.
            await page.evaluate(WATCH_CONNECTION_JS)
            class_server.restart_proxy()
            await page.wait_for_function(WAS_DISCONNECTED_JS, timeout=60_000)
            await page.wait_for_function(kit.RENDERED_JS, timeout=180_000)
            await page.reload(wait_until="commit")         # and a reload: a new web socket, same cookie
            await page.wait_for_function(kit.RENDERED_JS, timeout=180_000)
            assert await page.get_by_test_id("stException").count() == 0
            await context.close()
            await browser.close()
            return after_a, cache_files(cache), watch.problems() + watch_b.problems()

    after_a, after_b, problems = asyncio.run(visit())
    assert not problems, problems
    compiled = [name for name in after_a if name.startswith("compile/")]
    assert compiled, f"the first visit to {COMPILING_PAGE} compiled nothing into {cache}"
    rewritten = [name for name in compiled if after_b.get(name) != after_a[name]]
    assert not rewritten, f"replica {b_replica} compiled again what {a_replica} had on disk: {rewritten}"
    assert set(after_b) == set(after_a), f"the second replica wrote {set(after_b) - set(after_a)}"
    log = access_log(class_server)
    # B's sockets in the log: the one after the restart and the reload's (the one the restart cut off was
    # dropped by the stopping nginx before it could log it).
    for cookie, replica, sockets in ((a_cookie, a_replica, 1), (b_cookie, b_replica, 2)):
        mine = [row for row in log if row[0] == cookie]
        assert {row[1] for row in mine} == {replica}, mine
        streams = [row for row in mine if row[3].endswith("/_stcore/stream")]
        assert len(streams) >= sockets and all(row[2] == "101" for row in streams), streams


def test_many_students_through_the_proxy_each_stay_on_one_replica(class_server, tmp_path, monkeypatch):
    from classroom_tools import many_students as ms
    from playwright.async_api import async_playwright

    monkeypatch.setattr(ms, "ARTIFACTS", tmp_path)
    issued = cookies_for_each_replica(class_server, STUDENTS_PER_REPLICA)
    cookies = [c for pair in zip(*issued.values()) for c in pair] + [None] * FRESH_STUDENTS
    pages = kit.app_pages()
    # each student a different stretch of the pages, TOUR_PAGES long, one after the other's: every page (and
    # the media it serves) is visited through the proxy by someone
    length = max(TOUR_PAGES, -(-len(pages) // len(cookies)))
    tours = [[pages[(i * length + k) % len(pages)] for k in range(length)] for i in range(len(cookies))]
    assert {p.url_path for tour in tours for p in tour} == {p.url_path for p in pages}
    before = len(access_log(class_server))

    async def lesson():
        async with async_playwright() as p:
            browser = await p.chromium.launch(executable_path=kit.CHROMIUM, headless=True, args=kit.CHROMIUM_ARGS)
            results = await asyncio.gather(*(
                ms.student(CookieBrowser(browser, class_server.base, cookie), class_server.base, i, tours[i],
                           stagger=0.25, think=0, play=False)
                for i, cookie in enumerate(cookies)))
            await browser.close()
            return results

    results = asyncio.run(lesson())
    failed = [(r["student"], r["errors"]) for r, tour in zip(results, tours) if r["errors"] or len(r["stops"]) != len(tour)]
    assert not failed, failed
    rows = access_log(class_server)[before:]
    sockets = collections.defaultdict(set)
    for key, replica, status, request in rows:
        if request.endswith("/_stcore/stream"):
            sockets[key].add(replica)
    assert len(sockets) >= len(cookies), f"{len(sockets)} web-socket keys for {len(cookies)} students"
    for key in sockets:
        served = {replica for k, replica, _, _ in rows if k == key}
        assert len(served) == 1, f"key {key} was served by {served}"
    for replica, given in issued.items():
        for cookie in given:
            assert sockets[cookie] == {replica}, (cookie, sockets.get(cookie), replica)
    students_per_replica = collections.Counter(next(iter(v)) for v in sockets.values())
    assert set(students_per_replica) == {f"127.0.0.1:{p}" for p in class_server.replica_ports}, students_per_replica


def test_no_replicas_environment_or_command_line_holds_the_cookie_secret(class_server):
    import stat

    secret = class_server.secret_file.read_text().strip()
    assert len(secret) >= 32 and stat.S_IMODE(class_server.secret_file.stat().st_mode) == 0o600
    for proc in [*class_server.procs, class_server.nginx]:
        seen = Path(f"/proc/{proc.pid}/environ").read_bytes() + Path(f"/proc/{proc.pid}/cmdline").read_bytes()
        assert secret.encode() not in seen, proc.args
    replica = Path(f"/proc/{class_server.procs[0].pid}/environ").read_bytes()
    assert f"{serve_class.COOKIE_SECRET_FILE_ENV}={class_server.secret_file}".encode() in replica


def test_a_killed_replica_is_started_again_and_the_other_replicas_students_carry_on(class_server):
    """Mid-tour, one replica is killed: the other replica's student goes on to the next page undisturbed, the
    supervisor (ClassServer.supervise, the loop of serve_class.main) starts the killed one again on its port,
    and its student's page answers again from it."""
    import signal
    import threading

    from playwright.async_api import async_playwright

    (a_replica, (a_cookie,)), (b_replica, (b_cookie,)) = cookies_for_each_replica(class_server, 1).items()
    a_index = [f"127.0.0.1:{p}" for p in class_server.replica_ports].index(a_replica)
    first, second = (p.url_path for p in kit.app_pages()[:2])
    stop = threading.Event()

    def supervisor():
        while not stop.is_set():
            class_server.supervise()
            stop.wait(0.5)

    async def tour():
        async with async_playwright() as p:
            browser = await p.chromium.launch(executable_path=kit.CHROMIUM, headless=True, args=kit.CHROMIUM_ARGS)
            a_context, a_page, a_watch = await open_and_render(browser, class_server.base, a_cookie, first)
            b_context, b_page, b_watch = await open_and_render(browser, class_server.base, b_cookie, first)
            class_server.procs[a_index].send_signal(signal.SIGKILL)
            class_server.procs[a_index].wait(timeout=10)
            watcher = threading.Thread(target=supervisor, daemon=True)
            watcher.start()
            await b_page.goto(f"{class_server.base}/{second}", wait_until="commit", timeout=180_000)
            await b_page.wait_for_function(kit.RENDERED_JS, timeout=180_000)
            assert await b_page.get_by_test_id("stException").count() == 0
            port = class_server.replica_ports[a_index]
            await asyncio.to_thread(serve_class.wait_healthy, f"http://127.0.0.1:{port}/_stcore/health", None, 180)
            await asyncio.sleep(serve_class.FAIL_SECONDS + 1)       # nginx tries the restarted replica again
            await a_page.goto(f"{class_server.base}/{second}", wait_until="commit", timeout=180_000)
            await a_page.wait_for_function(kit.RENDERED_JS, timeout=180_000)
            assert await a_page.get_by_test_id("stException").count() == 0
            problems = b_watch.problems()
            for context in (a_context, b_context):
                await context.close()
            await browser.close()
            return problems

    try:
        problems = asyncio.run(tour())
    finally:
        stop.set()
    assert not problems, problems
    assert [what for what, _ in class_server.restarts] == [f"replica :{class_server.replica_ports[a_index]}"]
    assert replica_of(class_server, b_cookie)[0] == b_replica
    assert replica_of(class_server, a_cookie)[0] == a_replica, "the killed replica's students did not come back"
