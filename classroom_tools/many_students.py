"""A class at once: N students (default 20) on one `streamlit run app.py` server on 127.0.0.1.

    python -m classroom_tools.many_students [--students 20] [--stagger 0.25] [--play] [--write-docs]

The server is the classroom command, with `--server.fileWatcherType none` repeated on the command line (the
config already says so; while this runs beside other work, an edited file must not disturb it). One Chromium, one browser context per student (its own cookies and Streamlit session), all driven at the same
time from one asyncio loop. Each student opens the app at a page of a seeded shuffled tour (half with a
Chinese browser locale), then visits every other page through the sidebar's links, as a student clicks; with
--play, on the animated pages they also press Play, let two frames go by and press Pause. Every stop is checked: rendered, no
exception box, no JavaScript or console error, no request outside 127.0.0.1.

Prints each page's time to render (from the click to the end of the run, over all students) and the whole
class's wall time; with --write-docs also replaces the many-students section of docs/classroom.md.
"""
from __future__ import annotations

import argparse
import asyncio
import datetime as dt
import os
import random
import shutil
import statistics
import sys
import time
from pathlib import Path

from classroom_tools import browser_kit as kit

SEED = 0
VIEWPORT = {"width": 1280, "height": 900}
STOP_TIMEOUT_MS = 180_000
NICE = 10
ARTIFACTS = kit.ROOT / "test-artifacts" / "many-students"   # the server's log; screenshots of a stuck student
DOCS = kit.ROOT / "docs" / "classroom.md"
MARKERS = {False: ("<!-- many_students:begin -->", "<!-- many_students:end -->"),
           True: ("<!-- many_students_play:begin -->", "<!-- many_students_play:end -->")}


# Once the server has sent a page (kit.SERVED_JS), the browser may still be loading the code of some of its
# elements (grey skeletons). One headless Chromium holding a whole class's tabs on two busy cores can stall
# there for good, which a student's own browser does not; such a tab is reloaded once, as a student would,
# and the reload is recorded.
SKELETON_GRACE_MS = 60_000
MAX_RECLICKS = 2
RECLICK_AFTER_MS = 20_000
# After a click on a sidebar link: the address or the tab's title changed, or the page shows a run going on.
SOMETHING_HAPPENED_JS = """([path, oldTitle]) => location.pathname.replace(/\\/+$/, '').split('/').pop() === path
  || document.title !== oldTitle
  || document.querySelector('[data-testid="stApp"]').getAttribute('data-test-script-state') !== 'notRunning'"""
# Where a student got stuck: address, script and connection state, the last script-state changes, and how
# many elements are still placeholders.
STUCK_STATE_JS = """() => { const a = document.querySelector('[data-testid="stApp"]');
  return {url: location.href, script: a && a.getAttribute('data-test-script-state'),
          connection: a && a.getAttribute('data-test-connection-state'),
          title: document.title,
          stale: document.querySelectorAll('[data-testid="stMain"] [data-stale="true"]').length,
          skeletons: document.querySelectorAll('[data-testid="stMain"] [data-testid="stSkeleton"]').length,
          elements: document.querySelectorAll('[data-testid="stMain"] [data-testid="stElementContainer"]').length}; }"""
LABEL_IS_JS = "([sel, label]) => { const b = document.querySelector(sel); return !!b && b.innerText === label; }"
LABEL_IS_NOT_JS = "([sel, label]) => { const b = document.querySelector(sel); return !!b && b.innerText !== label; }"


def cpu_seconds(pid: int) -> float | None:
    """User + system CPU time the process has used so far (Linux /proc), seconds."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return None
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def peak_rss_mb(pid: int) -> float | None:
    """The process's peak resident memory (Linux /proc), MB."""
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 1024
    except OSError:
        return None
    return None


async def student(browser, base: str, number: int, tour: list[kit.AppPage], stagger: float, think: float,
                  play: bool) -> dict:
    await asyncio.sleep(number * stagger)
    locale = "zh-CN" if number % 2 else "en-US"
    context = await browser.new_context(viewport=VIEWPORT, locale=locale)
    page = await context.new_page()
    watch = kit.PageWatch().attach(page)
    result = {"student": number, "locale": locale, "stops": [], "errors": [], "played": 0, "reclicks": [],
              "reloads": []}
    started = time.perf_counter()
    try:
        for stop, app_page in enumerate(tour):
            t0 = time.perf_counter()
            try:
                if stop == 0:
                    await page.goto(app_page.url(base), wait_until="commit", timeout=STOP_TIMEOUT_MS)
                    await page.wait_for_function(kit.SERVED_JS, timeout=STOP_TIMEOUT_MS)
                    try:
                        await page.wait_for_function(kit.RENDERED_JS, timeout=SKELETON_GRACE_MS)
                    except Exception:
                        result["reloads"].append((app_page.label, await page.evaluate(STUCK_STATE_JS)))
                        await page.reload(wait_until="commit", timeout=STOP_TIMEOUT_MS)
                        await page.wait_for_function(kit.RENDERED_JS, timeout=STOP_TIMEOUT_MS)
                else:
                    old_title = await page.title()
                    link = page.locator(kit.nav_link_selector(app_page))
                    await link.click(timeout=STOP_TIMEOUT_MS)
                    for _ in range(MAX_RECLICKS):   # a click that starts nothing in 20 s: noted, clicked again
                        try:
                            await page.wait_for_function(SOMETHING_HAPPENED_JS, arg=[app_page.url_path, old_title],
                                                         timeout=RECLICK_AFTER_MS)
                            break
                        except Exception:
                            result["reclicks"].append(app_page.label)
                            await link.click(timeout=STOP_TIMEOUT_MS)
                    await page.wait_for_function(kit.ARRIVED_JS, arg=[app_page.url_path, old_title],
                                                 timeout=STOP_TIMEOUT_MS)
            except Exception as exc:
                state = await page.evaluate(STUCK_STATE_JS)
                await page.screenshot(path=str(ARTIFACTS / f"student{number:02d}-stuck-{app_page.label}.png"))
                result["errors"].append(f"{app_page.script}: did not render ({str(exc).splitlines()[0]}; "
                                        f"page state {state})")
                break
            result["stops"].append((app_page.label, time.perf_counter() - t0, "url" if stop == 0 else "sidebar"))
            await page.wait_for_timeout(think * 1000)    # the student reads the page
            for text in await page.get_by_test_id("stException").all_inner_texts():
                result["errors"].append(f"{app_page.script}: exception {text.strip()[:200]}")
            for key in (await page.evaluate(kit.PLAY_KEYS_JS)) if play else []:
                button = page.locator(f'[data-testid="stMain"] .st-key-{key} button')
                if await button.is_disabled():
                    continue
                label = await button.inner_text()
                sel = f'[data-testid="stMain"] .st-key-{key} button'
                await button.click()
                step = "the button never turned into Pause"
                try:            # playing: the button says Pause; let two frames go by, then press it
                    await page.wait_for_function(LABEL_IS_NOT_JS, arg=[sel, label], timeout=STOP_TIMEOUT_MS)
                    await page.wait_for_timeout(2000)
                    step = "after Pause the button never said Play again"
                    if await button.inner_text() != label:
                        await button.click()
                    await page.wait_for_function(LABEL_IS_JS, arg=[sel, label], timeout=STOP_TIMEOUT_MS)
                    step = "after Pause the page never finished rendering"
                    await page.wait_for_function(kit.RENDERED_JS, timeout=STOP_TIMEOUT_MS)
                except Exception:
                    state = await page.evaluate(STUCK_STATE_JS)
                    await page.screenshot(path=str(ARTIFACTS / f"student{number:02d}-stuck-playing-{app_page.label}.png"))
                    result["errors"].append(f"{app_page.script}: {key}: {step} ({STOP_TIMEOUT_MS // 1000} s; "
                                            f"page state {state})")
                    break
                result["played"] += 1
                for text in await page.get_by_test_id("stException").all_inner_texts():
                    result["errors"].append(f"{app_page.script} after Play: exception {text.strip()[:200]}")
            if result["errors"]:
                break
    finally:
        result["seconds"] = time.perf_counter() - started
        result["errors"] += watch.problems()
        await context.close()
    return result


async def run_class(n: int, stagger: float, think: float, play: bool) -> tuple[list[dict], dict]:
    from playwright.async_api import async_playwright

    pages = kit.app_pages()
    rng = random.Random(SEED)
    tours = []
    for _ in range(n):
        tour = pages[:]
        rng.shuffle(tour)
        tours.append(tour)
    with kit.StreamlitServer(log_path=ARTIFACTS / "server.log", extra_args=kit.NO_FILE_WATCHER) as server:
        # The students' browsers run on their own machines in a class; here they share the server's two cores.
        # The server keeps its priority; this process, Playwright and Chromium (started after) yield to it.
        os.nice(NICE)
        async with async_playwright() as p:
            browser = await p.chromium.launch(executable_path=kit.CHROMIUM, headless=True, args=kit.CHROMIUM_ARGS)
            t0, cpu0 = time.perf_counter(), cpu_seconds(server.proc.pid)
            results = await asyncio.gather(*(student(browser, server.base, i, tours[i], stagger, think, play)
                                             for i in range(n)))
            wall = time.perf_counter() - t0
            cpu = cpu_seconds(server.proc.pid)
            await browser.close()
        server_info = {"wall_s": wall, "server_peak_rss_mb": peak_rss_mb(server.proc.pid),
                       "server_cpu_s": cpu - cpu0 if cpu is not None and cpu0 is not None else None,
                       "server_log_tail": server.log_tail(20)}
    return results, server_info


def report(results: list[dict], info: dict, args) -> str:
    begin, end = MARKERS[args.play]
    n, n_pages = len(results), len(kit.app_pages())
    ok = [r for r in results if not r["errors"] and len(r["stops"]) == n_pages]
    by_page: dict[str, list[float]] = {}
    first = [seconds for r in results for _, seconds, via in r["stops"] if via == "url"]
    for r in results:
        for label, seconds, via in r["stops"]:
            if via == "sidebar":
                by_page.setdefault(label, []).append(seconds)
    played = f"; {sum(r['played'] for r in results)} animations played and paused" if args.play else ""
    rss = info["server_peak_rss_mb"]
    memory = f" Server peak memory: {rss:.0f} MB." if rss else ""
    if info.get("server_cpu_s") is not None:
        memory += (f" The server used {info['server_cpu_s']:.0f} s of CPU time in those {info['wall_s']:.0f} s "
                   f"({info['server_cpu_s'] / info['wall_s']:.2f} cores on average); the browsers took the rest.")
    rc = [f"student {r['student']}: {label}" for r in results for label in r["reclicks"]]
    reclicks = (f" **Sidebar clicks that started nothing within {RECLICK_AFTER_MS // 1000} s** and were "
                f"clicked again: {len(rc)} ({', '.join(rc)})." if rc else "")
    rl = [f"student {r['student']}: {label}" for r in results for label, _ in r["reloads"]]
    reclicks += (f" **Tabs reloaded** after {SKELETON_GRACE_MS // 1000} s of skeletons once the server had sent "
                 f"the page: {len(rl)} ({', '.join(rl)})." if rl else "")
    summary = (f"**{len(ok)} of {n} students** went through all {n_pages} pages with no error (pages rendered, "
               f"no exception box, no browser error, no request outside 127.0.0.1){played}. Whole class: "
               f"{info['wall_s']:.0f} s wall time (students started {args.stagger:g} s apart); one student's tour "
               f"took {statistics.median(r['seconds'] for r in results):.0f} s at the median, "
               f"{max(r['seconds'] for r in results):.0f} s at most.{memory} Each student read every page for "
               f"{args.think:g} s; the browsers ran at nice {NICE} beside the server on the same cores.{reclicks}")
    if first:
        summary += (f" Each student's first page, opened by its address (all {len(first)} at about the same time, "
                    f"each loading Streamlit's front end): {statistics.median(first):.1f} s at the median, "
                    f"{max(first):.1f} s at most. The pages after it, by the sidebar:")
    lines = [begin, "", f"Measured {info['date']} with `{info['command']}`.", "",
             f"Machine: {info['machine']}. Versions: "
             + ", ".join(f"{k} {v}" for k, v in info["versions"].items()) + ".", "", summary, "",
             "| page | visits | median time to render | max |", "|---|---|---|---|"]
    for label, times in by_page.items():
        lines.append(f"| {label} | {len(times)} | {statistics.median(times):.1f} s | {max(times):.1f} s |")
    errors = [f"student {r['student']}: {e.splitlines()[0]}" for r in results for e in r["errors"]]
    if errors:
        lines += ["", "Errors (first line of each):", ""] + [f"- {e}" for e in errors[:40]]
    lines += ["", end]
    return "\n".join(lines)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--students", type=int, default=20)
    ap.add_argument("--stagger", type=float, default=0.25, help="seconds between two students' starts")
    ap.add_argument("--think", type=float, default=1.0, help="seconds a student reads each page (default 1)")
    ap.add_argument("--play", action="store_true", help="on animated pages also press Play, let two frames go "
                    "by, and press Pause")
    ap.add_argument("--write-docs", action="store_true", help=f"update {DOCS.relative_to(kit.ROOT)}")
    args = ap.parse_args()
    info = {"date": dt.date.today().isoformat(), "machine": kit.machine(), "versions": kit.versions(),
            "command": "python -m classroom_tools.many_students " + " ".join(sys.argv[1:])}
    shutil.rmtree(ARTIFACTS, ignore_errors=True)
    ARTIFACTS.mkdir(parents=True)
    results, server_info = asyncio.run(run_class(args.students, args.stagger, args.think, args.play))
    info.update(server_info)
    for r in results:
        print(f"student {r['student']:2d} ({r['locale']}): {len(r['stops'])} pages in {r['seconds']:.1f} s, "
              f"{r['played']} played, {len(r['errors'])} errors, re-clicked {r['reclicks']}, "
              f"reloaded {[label for label, _ in r['reloads']]}", flush=True)
    section = report(results, info, args)
    print(section)
    if args.write_docs:
        kit.replace_docs_section(DOCS, *MARKERS[args.play], section)
        print(f"wrote {DOCS}")
    return 0 if all(not r["errors"] for r in results) else 1


if __name__ == "__main__":
    sys.exit(main())
