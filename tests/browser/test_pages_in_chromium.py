"""The app in a real browser: Debian's Chromium driven by Playwright against `streamlit run app.py` on 127.0.0.1.

For every page with an animation (tests.support.browser.ANIMATED; every page's render in both languages is
tests/browser/test_fit_1280x720.py's, which also holds the pages to that list):
- it renders with no exception box, no JavaScript error and no console error;
- it asks nothing of any host but the server (an offline classroom works);
- every animation ("<page>_play" button) plays: the step slider advances, and Pause stops it;
- a screenshot of the whole page lands in test-artifacts/browser/ (git-ignored), beside the server's log.
Students at once are tests/serve/'s: sixteen opening every page on a fresh server (test_concurrent_imports.py),
and students in English and Chinese going from page to page by the sidebar's links through the class proxy,
every page visited (test_proxy.py).

These tests do not skip: without Playwright or /usr/bin/chromium they fail and say what to install
(CI's .ci/run installs both). Timings are measured by classroom_tools/measure_speed.py, not asserted here.
"""
from __future__ import annotations

import json
import time

import pytest

from classroom_tools import browser_kit as kit
from tests.support import browser as support
from tests.support.browser import ANIMATED, ARTIFACTS

pytestmark = pytest.mark.slow                # a real browser against a real server

PAGES = kit.app_pages()
# Every page's render (no exception box, no browser error, nothing asked of another host) is checked in both
# languages by tests/browser/test_fit_1280x720.py; here the pages with an animation are opened again to play it.
ANIMATED_PAGES = [p for p in PAGES if p.url_path in ANIMATED]
VIEWPORT = {"width": 1400, "height": 1000}
RENDER_TIMEOUT_MS = 90_000      # a page's first run on a cold server computes traces in Triton's interpreter
ADVANCE_TIMEOUT_MS = 20_000


def wait_rendered(page, what: str) -> None:
    try:
        page.wait_for_function(kit.RENDERED_JS, timeout=RENDER_TIMEOUT_MS)
    except Exception as exc:
        pytest.fail(f"{what} did not finish rendering within {RENDER_TIMEOUT_MS / 1000:.0f} s: {exc}")


def exception_texts(page) -> list[str]:
    return [t.strip()[:2000] for t in page.get_by_test_id("stException").all_inner_texts()]


def step_values(page, selector: str) -> list[str]:
    return page.evaluate(kit.SLIDER_VALUES_JS, selector)


def play_and_pause(page, key: str) -> str:
    """Press Play, see the step slider advance, press Pause, see it stay put. Returns what happened."""
    prefix = key[: -len("_play")]
    button = page.locator(f'[data-testid="stMain"] .st-key-{key} button')
    steps = f'[data-testid="stMain"] .st-key-{prefix}_step input[type=range]'
    if page.locator(steps).count() == 0:            # no "<prefix>_step" slider: watch every slider
        steps = '[data-testid="stMain"] input[type=range]'
    assert page.locator(steps).count() > 0, f"{key}: no slider shows the animation's step"
    if button.is_disabled():
        return f"{key}: disabled (a single frame)"
    idle_label = button.inner_text()
    before = step_values(page, steps)
    button.click()
    try:
        page.wait_for_function(
            "([sel, before]) => JSON.stringify(Array.from(document.querySelectorAll(sel)).map(e => e.value))"
            " !== before", arg=[steps, json.dumps(before)], timeout=ADVANCE_TIMEOUT_MS)
    except Exception:
        pytest.fail(f"{key}: the step did not advance within {ADVANCE_TIMEOUT_MS / 1000:.0f} s of Play "
                    f"(still {before}); exceptions on the page: {exception_texts(page)}")
    advanced = step_values(page, steps)
    if button.inner_text() != idle_label:           # still playing (it may have reached its end already)
        button.click()
        page.wait_for_function("([sel, label]) => { const b = document.querySelector(sel);"
                               " return b && b.innerText === label; }",
                               arg=[f'[data-testid="stMain"] .st-key-{key} button', idle_label],
                               timeout=ADVANCE_TIMEOUT_MS)
    page.wait_for_function(kit.RENDERED_JS, timeout=RENDER_TIMEOUT_MS)
    stopped_at = step_values(page, steps)
    time.sleep(2.0)                                 # two animation ticks and more
    assert step_values(page, steps) == stopped_at, f"{key}: the step kept moving after Pause"
    return f"{key}: {before} -> {advanced} -> paused at {stopped_at}"


def test_pages_discovered():
    assert PAGES[0].script == "app.py"
    paths = [p.url_path for p in PAGES]
    assert len(set(paths)) == len(paths), paths


@pytest.mark.parametrize("app_page", ANIMATED_PAGES, ids=[p.label for p in ANIMATED_PAGES])
def test_page_renders_offline_and_animations_play(browser, server, app_page):
    context = browser.new_context(viewport=VIEWPORT, locale="en-US")
    page = context.new_page()
    watch = kit.PageWatch().attach(page)
    try:
        page.goto(app_page.url(server.base))
        wait_rendered(page, app_page.script)
        assert exception_texts(page) == [], f"{app_page.script} shows an exception"
        support.full_screenshot(page, ARTIFACTS / f"{PAGES.index(app_page):02d}_{app_page.label}.png", VIEWPORT)

        played = [play_and_pause(page, key) for key in page.evaluate(kit.PLAY_KEYS_JS)]
        assert played, f"{app_page.script}: no Play button"
        print(f"{app_page.script}: {len(played)} animation(s)", *played, sep="\n  ")
        assert exception_texts(page) == [], f"{app_page.script} shows an exception after playing"
        assert watch.requests > 0
        assert watch.problems() == [], f"{app_page.script}: " + "\n".join(watch.problems())
    finally:
        context.close()


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
