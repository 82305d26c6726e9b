"""The many-students driver (classroom_tools/many_students.py) through nginx and N replicas (deploy/serve_class.py),
for each N asked, on one machine: how long each page takes to render, what each replica used.

    python deploy/measure_class.py --students 20 --replicas 1,2 [--write-docs]

Each N gets fresh, empty shared caches (so the first visits compile, as in a new class) and the same students:
the same seeded tours as many_students.py, the same browser settings, the browsers at nice 10 on the same cores
as the servers. With --write-docs the table replaces the proxy section of docs/classroom.md.
"""
from __future__ import annotations

import argparse
import asyncio
import datetime as dt
import os
import random
import statistics
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(HERE))
from classroom_tools import browser_kit as kit  # noqa: E402
from classroom_tools import many_students as ms  # noqa: E402
import serve_class  # noqa: E402

DOCS = ROOT / "docs" / "classroom.md"
BEGIN, END = "<!-- measure_class:begin -->", "<!-- measure_class:end -->"


async def one_student(browser, base: str, i: int, tour, stagger: float, think: float) -> dict:
    """many_students.student, with anything it raises (e.g. a screenshot of a stuck page timing out under
    load) counted as that student's error instead of ending the measurement."""
    try:
        return await ms.student(browser, base, i, tour, stagger, think, False)
    except Exception as exc:
        return {"student": i, "stops": [], "played": 0, "reclicks": [], "reloads": [],
                "seconds": float("nan"),
                "errors": [f"the driver failed: {type(exc).__name__}: {str(exc).splitlines()[0]}"]}


async def lesson(base: str, n: int, stagger: float, think: float) -> tuple[list[dict], float]:
    from playwright.async_api import async_playwright

    pages = kit.app_pages()
    rng = random.Random(ms.SEED)
    tours = []
    for _ in range(n):
        tour = pages[:]
        rng.shuffle(tour)
        tours.append(tour)
    async with async_playwright() as p:
        browser = await p.chromium.launch(executable_path=kit.CHROMIUM, headless=True, args=kit.CHROMIUM_ARGS)
        t0 = time.perf_counter()
        results = await asyncio.gather(*(one_student(browser, base, i, tours[i], stagger, think)
                                         for i in range(n)))
        wall = time.perf_counter() - t0
        await browser.close()
    return results, wall


def measure(replicas: int, students: int, stagger: float, think: float) -> dict:
    with tempfile.TemporaryDirectory(prefix="measure-class-") as run:
        run = Path(run)
        ms.ARTIFACTS = run / "artifacts"
        ms.ARTIFACTS.mkdir()
        server = serve_class.ClassServer(replicas=replicas, address="127.0.0.1", port=kit.free_port(),
                                         ports=[kit.free_port() for _ in range(replicas)], run_dir=run,
                                         cache_dir=run / "cache", triton_cache_dir=run / "triton",
                                         extra_env={"SOFTMAX_EXPLORER_PREWARM": "0"})
        with server:
            # the servers at normal priority, this process and the browsers it starts at nice 10
            for proc in [*server.procs, server.nginx]:
                try:
                    os.setpriority(os.PRIO_PROCESS, proc.pid, 0)
                except OSError:
                    pass
            os.nice(max(0, ms.NICE - os.nice(0)))
            cpu0 = [ms.cpu_seconds(p.pid) for p in server.procs]
            results, wall = asyncio.run(lesson(server.base, students, stagger, think))
            cpu = [ms.cpu_seconds(p.pid) - c for p, c in zip(server.procs, cpu0)]
            rss = [ms.peak_rss_mb(p.pid) for p in server.procs]
            log = server.access_log.read_text().splitlines()
    sockets: dict[str, set] = {}
    for line in log:
        _, key, upstream, _, request = line.split(" ", 4)
        if request.strip('"').endswith("/_stcore/stream"):
            sockets.setdefault(key, set()).add(upstream)
    per_replica = [sum(1 for v in sockets.values() if v == {f"127.0.0.1:{p}"}) for p in server.replica_ports]
    return {"replicas": replicas, "results": results, "wall": wall, "cpu": cpu, "rss": rss,
            "per_replica": per_replica, "split": sum(1 for v in sockets.values() if len(v) > 1)}


def report(rows: list[dict], args) -> str:
    n_pages = len(kit.app_pages())
    lines = [BEGIN, "", f"Measured {dt.date.today().isoformat()} with `python deploy/measure_class.py "
             f"{' '.join(sys.argv[1:])}`.", "", f"Machine: {kit.machine()}. Versions: "
             + ", ".join(f"{k} {v}" for k, v in kit.versions().items()) + ".", "",
             "| replicas | students with no error | students per replica | sessions split across replicas "
             "| first page (median / max) | later pages by the sidebar (median / max) | whole class "
             "| server CPU (per replica) | peak memory (per replica) |",
             "|---|---|---|---|---|---|---|---|---|"]
    for r in rows:
        res = r["results"]
        ok = sum(1 for x in res if not x["errors"] and len(x["stops"]) == n_pages)
        first = [s for x in res for _, s, via in x["stops"] if via == "url"]
        later = [s for x in res for _, s, via in x["stops"] if via == "sidebar"]
        fmt = (lambda v: f"{statistics.median(v):.1f} s / {max(v):.1f} s" if v else "—")
        lines.append(f"| {r['replicas']} | {ok} of {len(res)} | {', '.join(map(str, r['per_replica']))} "
                     f"| {r['split']} | {fmt(first)} | {fmt(later)} | {r['wall']:.0f} s "
                     f"| {', '.join(f'{c:.0f} s' for c in r['cpu'])} "
                     f"| {', '.join(f'{m:.0f} MB' for m in r['rss'] if m)} |")
        errors = [f"student {x['student']}: {e.splitlines()[0][:160]}" for x in res for e in x["errors"]]
        if errors:
            lines += ["", f"Errors with {r['replicas']} replica(s) (first line of each, at most 10):", ""]
            lines += [f"- {e}" for e in errors[:10]]
    lines += ["", END]
    return "\n".join(lines)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--students", type=int, default=20)
    ap.add_argument("--replicas", default="1,2", help="comma-separated replica counts to measure")
    ap.add_argument("--stagger", type=float, default=0.25)
    ap.add_argument("--think", type=float, default=1.0)
    ap.add_argument("--write-docs", action="store_true")
    args = ap.parse_args()
    rows = []
    for replicas in [int(x) for x in args.replicas.split(",")]:
        print(f"{replicas} replica(s), {args.students} students ...", flush=True)
        rows.append(measure(replicas, args.students, args.stagger, args.think))
        print(report(rows[-1:], args), flush=True)
    section = report(rows, args)
    print(section)
    if args.write_docs:
        kit.replace_docs_section(DOCS, BEGIN, END, section)
        print(f"wrote {DOCS}")
    return 0 if all(not x["errors"] for r in rows for x in r["results"]) else 1


if __name__ == "__main__":
    sys.exit(main())
