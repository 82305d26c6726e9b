"""The real-browser tests' shared setup: Debian's Chromium under Playwright, and a tab on the app at a size and
in a language. The fixtures that hold one Chromium and one app server for all of tests/browser/ are in
tests/browser/conftest.py; tests/conftest.py gives the other folders a Chromium per module."""
from __future__ import annotations

import contextlib
from pathlib import Path

import pytest

from classroom_tools import browser_kit as kit

ROOT = Path(__file__).resolve().parents[2]
ARTIFACTS = ROOT / "test-artifacts" / "browser"      # screenshots and server logs (git-ignored)
PROJECTOR = {"width": 1280, "height": 720}
# The pages with an animation (a "<prefix>_play" button), by URL path, and the player's prefix.
# tests/browser/test_fit_1280x720.py holds every page to this list, so a page that gains or loses one fails there.
ANIMATED = {"memory_traffic": "memory", "padding_chain": "padding", "row_schedule": "schedule",
            "long_rows": "longrows", "sharing_a_row": "sharing"}
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
