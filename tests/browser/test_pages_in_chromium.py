"""The app's animations in a real browser: Debian's Chromium driven by Playwright against `streamlit run app.py`
on 127.0.0.1. An animation plays to its last frame and stops by itself, and a setting changed while it plays
pauses it. (Every page's render in both languages, with no exception box, no browser error and nothing asked
of another host, is tests/browser/test_fit_1280x720.py's; every animation is played, and paused, on its page
in presentation mode by tests/browser/test_presentation_mode.py.)
Students at once are tests/serve/'s: sixteen opening every page on a fresh server (test_concurrent_imports.py),
and students in English and Chinese going from page to page by the sidebar's links through the class proxy,
every page visited (test_proxy.py).

These tests do not skip: without Playwright or /usr/bin/chromium they fail and say what to install
(CI's .ci/run installs both). Timings are measured by classroom_tools/measure_speed.py, not asserted here.
"""
from __future__ import annotations

import time

import pytest

from classroom_tools import browser_kit as kit
from tests.support.browser import exception_texts, step_values

pytestmark = pytest.mark.slow                # a real browser against a real server

PAGES = kit.app_pages()
VIEWPORT = {"width": 1400, "height": 1000}
RENDER_TIMEOUT_MS = 90_000      # a page's first run on a cold server computes traces in Triton's interpreter
ADVANCE_TIMEOUT_MS = 20_000


def wait_rendered(page, what: str) -> None:
    try:
        page.wait_for_function(kit.RENDERED_JS, timeout=RENDER_TIMEOUT_MS)
    except Exception as exc:
        pytest.fail(f"{what} did not finish rendering within {RENDER_TIMEOUT_MS / 1000:.0f} s: {exc}")


def test_pages_discovered():
    assert PAGES[0].script == "app.py"
    paths = [p.url_path for p in PAGES]
    assert len(set(paths)) == len(paths), paths


def _open(browser, server, label: str):
    context = browser.new_context(viewport=VIEWPORT, locale="en-US")
    page = context.new_page()
    watch = kit.PageWatch().attach(page)
    app_page = next(p for p in PAGES if p.label == label)
    page.goto(app_page.url(server.base))
    wait_rendered(page, app_page.script)
    return context, page, watch


def wait_label(page, key: str, label: str, timeout_ms: int = ADVANCE_TIMEOUT_MS, *, equal: bool = True) -> None:
    """Wait until the button with key `key` says `label` (or, with equal=False, something else)."""
    page.wait_for_function("([sel, label, equal]) => { const b = document.querySelector(sel);"
                           " return !!b && (b.innerText === label) === equal; }",
                           arg=[f'[data-testid="stMain"] .st-key-{key} button', label, equal], timeout=timeout_ms)


def test_animation_plays_to_its_last_frame_and_stops_by_itself(browser, server):
    context, page, watch = _open(browser, server, "memory_traffic")
    try:
        button = page.locator('[data-testid="stMain"] .st-key-memory_play button')
        slider = page.locator('[data-testid="stMain"] .st-key-memory_step input[type=range]')
        idle = button.inner_text()
        last = slider.get_attribute("max")
        button.click()
        wait_label(page, "memory_play", idle, equal=False)         # playing: the button says Pause
        wait_label(page, "memory_play", idle, timeout_ms=60_000)   # six frames, 0.9 s apart, then Play again
        wait_rendered(page, "the memory page after its animation")
        assert slider.input_value() == last
        assert exception_texts(page) == [] and watch.problems() == [], watch.problems()
    finally:
        context.close()


def test_changing_a_setting_while_playing_pauses_the_animation(browser, server):
    """A widget outside the animation reruns the whole page; the animation pauses (the button says Play)
    instead of showing a Pause that nothing follows."""
    context, page, watch = _open(browser, server, "padding_chain")
    try:
        button = page.locator('[data-testid="stMain"] .st-key-padding_play button')
        idle = button.inner_text()
        button.click()
        wait_label(page, "padding_play", idle, equal=False)
        page.locator('[data-testid="stMain"] label:has([role="switch"])').first.click()   # "zoom"
        wait_label(page, "padding_play", idle)
        wait_rendered(page, "the padding page after the zoom switch")
        steps = '[data-testid="stMain"] .st-key-padding_step input[type=range]'
        stopped_at = step_values(page, steps)
        time.sleep(2.0)
        assert step_values(page, steps) == stopped_at, "the step kept moving after a full run"
        assert exception_texts(page) == [] and watch.problems() == [], watch.problems()
    finally:
        context.close()
