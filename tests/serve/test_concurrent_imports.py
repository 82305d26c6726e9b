"""A whole class arriving at once on a fresh server: every session's thread imports the project at the same
time, and none of them may fail (explorer_ui.startup says why they would)."""
from __future__ import annotations

import ast
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
ENTRY_SCRIPTS = [ROOT / "app.py"] + sorted((ROOT / "pages").glob("*.py"))
FIRST_IMPORT = "explorer_ui.startup"
REPEATS = 3

# Each thread runs one entry script's imports (its top-level import statements, in order, none of its page
# code), all released at once by a barrier, in an interpreter that has imported only streamlit, as a fresh
# `streamlit run` has.
RACE = textwrap.dedent("""
    import sys, threading, traceback
    import streamlit
    blocks = {blocks!r}
    barrier = threading.Barrier(len(blocks))
    failures = []

    def run(name, code):
        barrier.wait()
        try:
            exec(compile(code, name, "exec"), {{"__name__": "entry"}})
        except BaseException:
            failures.append(name + ": " + traceback.format_exc(limit=3))

    threads = [threading.Thread(target=run, args=item) for item in blocks.items()]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    print("\\n".join(failures) or "no failures")
    sys.exit(1 if failures else 0)
""")


def _import_block(script: Path) -> str:
    """The script's top-level import statements, in their order."""
    tree = ast.parse(script.read_text())
    imports = [node for node in tree.body if isinstance(node, (ast.Import, ast.ImportFrom))]
    return "\n".join(ast.unparse(node) for node in imports)


def _first_import(script: Path) -> str:
    tree = ast.parse(script.read_text())
    for node in tree.body:
        if isinstance(node, ast.Import):
            return node.names[0].name
        if isinstance(node, ast.ImportFrom) and node.module != "__future__":
            return node.module
    return ""


@pytest.mark.parametrize("script", ENTRY_SCRIPTS, ids=lambda p: p.name)
def test_every_entry_script_imports_startup_first(script):
    assert _first_import(script) == FIRST_IMPORT


@pytest.mark.parametrize("attempts", [1, pytest.param(REPEATS - 1, marks=pytest.mark.slow)],
                         ids=["first", "again"])
def test_startup_imports_serialise_a_class_arriving_at_once(attempts):
    """Two threads per entry script (a class on every page at once) and the warm-up of the pages' imports, in a
    fresh interpreter; REPEATS fresh interpreters in all, one in the fast subset and the others with the slow
    tests."""
    blocks = {}
    for script in ENTRY_SCRIPTS:
        for copy in range(2):
            blocks[f"{script.name}#{copy}"] = _import_block(script)
    # and the server's own warm-up of every page's imports (explorer_ui.prewarm.import_pages_soon), which runs
    # once the first page is drawn, beside the students' sessions
    blocks["prewarm imports"] = f"import {FIRST_IMPORT}\nfrom explorer_ui import prewarm\nprewarm.import_pages()"
    env = dict(os.environ, SOFTMAX_EXPLORER_PREWARM="0", PYTHONPATH=str(ROOT))
    for attempt in range(attempts):
        done = subprocess.run([sys.executable, "-c", RACE.format(blocks=blocks)], cwd=ROOT, env=env,
                              capture_output=True, text=True, timeout=300)
        assert done.returncode == 0, f"attempt {attempt}:\n{done.stdout}\n{done.stderr[-3000:]}"


# Every page opened at once, most of them twice: without explorer_ui.startup this failed at 16 students (at 8
# the race showed only sometimes). Each student opens one page: the race is in the first imports, and a later
# page's modules are loaded by then (its own first visitors imported them); going from page to page by the
# sidebar, several students at once, is tests/serve/test_proxy.py's.
STUDENTS_AT_ONCE = 16


@pytest.mark.slow
def test_a_class_arriving_at_once_on_a_fresh_server_all_see_their_pages(tmp_path, monkeypatch):
    """`streamlit run app.py` just started, nothing imported yet: sixteen students open every page at
    the same moment (classroom_tools.many_students, no stagger). Every one of them gets the page rendered, with
    no exception box and no browser error, and the server logs no import deadlock."""
    import asyncio

    from playwright.async_api import async_playwright

    from classroom_tools import browser_kit as kit
    from classroom_tools import many_students as ms

    monkeypatch.setattr(ms, "ARTIFACTS", tmp_path)
    pages = kit.app_pages()
    tours = [[pages[i % len(pages)]] for i in range(STUDENTS_AT_ONCE)]

    async def lesson():
        with kit.StreamlitServer(log_path=tmp_path / "server.log", env={"SOFTMAX_EXPLORER_PREWARM": "0"},
                                 extra_args=kit.NO_FILE_WATCHER) as server:
            async with async_playwright() as p:
                browser = await p.chromium.launch(executable_path=kit.CHROMIUM, headless=True,
                                                  args=kit.CHROMIUM_ARGS)
                results = await asyncio.gather(*(ms.student(browser, server.base, i, tours[i], stagger=0,
                                                            think=0, play=False)
                                                 for i in range(STUDENTS_AT_ONCE)))
                await browser.close()
            return results

    results = asyncio.run(lesson())
    log = (tmp_path / "server.log").read_text(errors="replace")
    failed = [(r["student"], r["errors"]) for r, tour in zip(results, tours)
              if r["errors"] or len(r["stops"]) != len(tour)]
    assert not failed, f"{failed}\nserver log:\n{log[-4000:]}"
    assert "DeadlockError" not in log and "partially initialized" not in log, log[-4000:]
