"""The real-browser tests' shared setup: Debian's Chromium under Playwright, and a tab on the app at a size and
in a language. The fixtures that hold one Chromium and one app server for all of tests/browser/ are in
tests/browser/conftest.py; tests/conftest.py gives the other folders a Chromium per module."""
from __future__ import annotations

import contextlib
import json
import time
from pathlib import Path

import pytest

from classroom_tools import browser_kit as kit

ROOT = Path(__file__).resolve().parents[2]
ARTIFACTS = ROOT / "test-artifacts" / "browser"      # screenshots and server logs (git-ignored)
PROJECTOR = {"width": 1280, "height": 720}
# The pages with an animation (a "<prefix>_play" button), by URL path, and the player's prefix.
# tests/browser/test_fit_1280x720.py holds every page to this list, so a page that gains or loses one fails there.
ANIMATED = {"memory_traffic": "memory", "padding_chain": "padding", "row_schedule": "schedule",
            "long_rows": "longrows", "sharing_a_row": "sharing", "layouts": "layouts"}
# Vega draws a chart after the script has finished, and may size it again once its box is known: a chart is
# settled when every chart holds its canvas (or svg) at a height and no chart's size changed since the last
# look (every CHARTS_POLL_MS). At most CHARTS_SETTLED_MS is waited; a chart unsettled then is left for the
# test to measure and report.
CHARTS_SETTLED_MS = 5_000
CHARTS_POLL_MS = 100
CHARTS_SETTLED_JS = """() => {
  const charts = Array.from(document.querySelectorAll('[data-testid="stMain"] [data-testid="stVegaLiteChart"]'));
  const sizes = charts.map(c => { const d = c.querySelector('canvas, svg'); if (!d) return null;
    const r = d.getBoundingClientRect(), b = c.getBoundingClientRect();
    return r.height > 0 ? [r.width, r.height, b.width, b.height].map(Math.round).join(',') : null; });
  const now = JSON.stringify(sizes), same = window.__chartSizes === now;
  window.__chartSizes = now;
  return same && !sizes.includes(null);
}"""

@contextlib.contextmanager
def chromium():
    """Chromium launched headless; a missing Playwright or Chromium fails the test and says what to install."""
    try:
        from playwright.sync_api import sync_playwright
    except ImportError as exc:
        pytest.fail(f"Playwright is not installed ({exc}).\n{kit.INSTALL_HINT}", pytrace=False)
    if not Path(kit.CHROMIUM).is_file():
        pytest.fail(f"Chromium is not installed: {kit.CHROMIUM} is missing.\n{kit.INSTALL_HINT}", pytrace=False)
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=kit.CHROMIUM, headless=True, args=kit.CHROMIUM_ARGS)
        try:
            yield browser
        finally:
            browser.close()


def wait_charts_settled(tab) -> None:
    tab.evaluate("() => { window.__chartSizes = undefined; }")
    with contextlib.suppress(Exception):
        tab.wait_for_function(CHARTS_SETTLED_JS, timeout=CHARTS_SETTLED_MS, polling=CHARTS_POLL_MS)


def wait_rendered(tab, timeout_ms: int) -> None:
    """The script has finished and its elements are on the page (kit.RENDERED_JS), and its charts are settled."""
    tab.wait_for_function(kit.RENDERED_JS, timeout=timeout_ms)
    wait_charts_settled(tab)


def full_screenshot(tab, path: Path, viewport: dict) -> None:
    """The whole page at `viewport`'s width: Streamlit scrolls inside its main area, so the window grows to the
    content first (at most 9000 px), and goes back to `viewport` after."""
    height = min(max(tab.evaluate(kit.MAIN_HEIGHT_JS), viewport["height"]), 9000)
    tab.set_viewport_size({"width": viewport["width"], "height": height})
    wait_charts_settled(tab)                    # charts lay out again at the new size
    tab.screenshot(path=str(path))
    tab.set_viewport_size(viewport)


def open_tab(browser, url: str, lang: str, timeout_ms: int, viewport: dict = PROJECTOR):
    """A new browser context (its own session) at `viewport` in `lang`'s locale, on `url`, rendered.
    Returns (tab, watch); close with tab.context.close()."""
    context = browser.new_context(viewport=viewport, locale="zh-CN" if lang == "zh" else "en-US")
    tab = context.new_page()
    watch = kit.PageWatch().attach(tab)
    tab.goto(url)
    wait_rendered(tab, timeout_ms)
    return tab, watch


# The animation player in a page: Play must move the step within PLAYER_ADVANCE_TIMEOUT_MS, and the page must
# finish its run after Pause within PLAYER_RENDER_TIMEOUT_MS.
PLAYER_ADVANCE_TIMEOUT_MS = 20_000
PLAYER_RENDER_TIMEOUT_MS = 90_000


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
            " !== before", arg=[steps, json.dumps(before)], timeout=PLAYER_ADVANCE_TIMEOUT_MS)
    except Exception:
        pytest.fail(f"{key}: the step did not advance within {PLAYER_ADVANCE_TIMEOUT_MS / 1000:.0f} s of Play "
                    f"(still {before}); exceptions on the page: {exception_texts(page)}")
    advanced = step_values(page, steps)
    if button.inner_text() != idle_label:           # still playing (it may have reached its end already)
        button.click()
        page.wait_for_function("([sel, label]) => { const b = document.querySelector(sel);"
                               " return b && b.innerText === label; }",
                               arg=[f'[data-testid="stMain"] .st-key-{key} button', idle_label],
                               timeout=PLAYER_ADVANCE_TIMEOUT_MS)
    page.wait_for_function(kit.RENDERED_JS, timeout=PLAYER_RENDER_TIMEOUT_MS)
    stopped_at = step_values(page, steps)
    time.sleep(2.0)                                 # two animation ticks and more
    assert step_values(page, steps) == stopped_at, f"{key}: the step kept moving after Pause"
    return f"{key}: {before} -> {advanced} -> paused at {stopped_at}"
