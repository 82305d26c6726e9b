"""Presentation mode in a real browser (Chromium, Playwright) at a projector's 1280 x 720, in English and 中文.

On every animated page (tests.support.browser.ANIMATED) opened with ?present=1: the Play button and the chart it
animates are both inside the window without scrolling, the sidebar is folded away, Streamlit's header (and its
running indicator) is not shown, nothing is asked of any host but the server (an offline classroom works), and,
in English, every animation on the page plays (its step advances) and Pause stops it; Previous / Next / Reset
move the step, which the URL then carries. A screenshot of each lands in
test-artifacts/browser/present_<page>_<lang>.png. Like tests/browser/test_pages_in_chromium.py these never skip.
"""
from __future__ import annotations

import time
from urllib.parse import parse_qs, urlparse

import pytest

from classroom_tools import browser_kit as kit
from tests.support import browser as support
from tests.support.browser import ANIMATED, ARTIFACTS, PROJECTOR

pytestmark = pytest.mark.slow                # a real browser against a real server

RENDER_TIMEOUT_MS = 90_000
# Pages whose animation is their second section: the teacher scrolls to it once; from there the controls and
# the picture must still be on one screen together.
SECOND_SECTION = {"long_rows", "layouts"}

# The first chart below the Play button, in the same fragment: the one the player animates.
GEOMETRY_JS = """(prefix) => {
  const box = el => { const r = el.getBoundingClientRect(); return [r.left, r.top, r.right, r.bottom]; };
  const play = document.querySelector(`[data-testid="stMain"] .st-key-${prefix}_play button`);
  if (!play) return null;
  const playTop = play.getBoundingClientRect().top;
  const charts = Array.from(document.querySelectorAll('[data-testid="stMain"] [data-testid="stVegaLiteChart"]'))
    .filter(c => c.getBoundingClientRect().top >= playTop);
  const drawn = charts.length ? charts[0].querySelector('canvas, svg') : null;
  const sidebar = document.querySelector('[data-testid="stSidebar"]');
  const header = document.querySelector('[data-testid="stHeader"]');
  return {play: box(play), chart: charts.length ? box(charts[0]) : null, drawn: !!drawn,
          width: window.innerWidth, height: window.innerHeight,
          sidebar: sidebar ? sidebar.getAttribute('data-collapsed') : null,
          headerShown: !!header && header.getBoundingClientRect().height > 0 &&
                       getComputedStyle(header).display !== 'none',
          scrolled: document.querySelector('[data-testid="stMain"]').scrollTop};
}"""


def open_page(browser, server, path: str, lang: str, query: str = ""):
    tab, watch = support.open_tab(browser, f"{server.base}/{path}?present=1&lang={lang}{query}", lang,
                                  RENDER_TIMEOUT_MS)
    return tab.context, tab, watch


def inside(box, width, height) -> bool:
    left, top, right, bottom = box
    return left >= 0 and top >= 0 and right <= width + 0.5 and bottom <= height + 0.5


@pytest.mark.parametrize("lang", ["en", "zh"])
@pytest.mark.parametrize("path", list(ANIMATED))
def test_play_and_its_chart_fit_a_projector(browser, server, path, lang):
    context, page, watch = open_page(browser, server, path, lang)
    try:
        if path in SECOND_SECTION:
            page.evaluate("(p) => { const main = document.querySelector('[data-testid=\"stMain\"]');"
                          " const play = main.querySelector(`.st-key-${p}_play button`);"
                          " main.scrollTop += play.getBoundingClientRect().top - 16; }", ANIMATED[path])
            support.wait_charts_settled(page)
        geo = page.evaluate(GEOMETRY_JS, ANIMATED[path])
        page.screenshot(path=str(ARTIFACTS / f"present_{path}_{lang}.png"))
        assert geo is not None, f"{path}: no Play button"
        assert geo["chart"] is not None and geo["drawn"], f"{path}: no drawn chart below the Play button"
        assert geo["scrolled"] == 0 or path in SECOND_SECTION
        assert inside(geo["play"], geo["width"], geo["height"]), (path, lang, geo)
        assert inside(geo["chart"], geo["width"], geo["height"]), (path, lang, geo)
        assert geo["sidebar"] == "true", f"{path}: the sidebar is not folded away"
        assert not geo["headerShown"], f"{path}: Streamlit's header is shown"
        assert page.get_by_test_id("stException").count() == 0
        if lang == "en":         # the player does not depend on the language: one run of each is enough
            played = [support.play_and_pause(page, key) for key in page.evaluate(kit.PLAY_KEYS_JS)]
            print(f"{path}: {len(played)} animation(s)", *played, sep="\n  ")
            assert support.exception_texts(page) == [], f"{path} shows an exception after playing"
        assert watch.requests > 0
        assert watch.problems() == [], "\n".join(watch.problems())
    finally:
        context.close()


def test_step_buttons_move_the_step_and_the_url_carries_it(browser, server):
    context, page, watch = open_page(browser, server, "padding_chain", "en", "&step=2")
    try:
        slider = page.locator('[data-testid="stMain"] .st-key-padding_step input[type=range]')
        assert slider.input_value() == "2"                 # the link opened at its step
        for key, expected in (("padding_next", "3"), ("padding_next", "4"), ("padding_prev", "3"),
                              ("padding_reset", "0")):
            page.locator(f'[data-testid="stMain"] .st-key-{key} button').first.click()
            page.wait_for_function("([sel, v]) => document.querySelector(sel).value === v",
                                   arg=['[data-testid="stMain"] .st-key-padding_step input[type=range]', expected],
                                   timeout=20_000)
            page.wait_for_function(kit.RENDERED_JS, timeout=RENDER_TIMEOUT_MS)
            page.wait_for_function("(v) => new URLSearchParams(location.search).get('step') === v", arg=expected,
                                   timeout=20_000)
        query = parse_qs(urlparse(page.url).query)
        assert query.get("present") == ["1"] and query.get("step") == ["0"]
        assert page.get_by_test_id("stException").count() == 0 and watch.problems() == []
    finally:
        context.close()


def test_pause_takes_effect_within_one_frame(browser, server):
    context, page, watch = open_page(browser, server, "padding_chain", "en")
    try:
        button = page.locator('[data-testid="stMain"] .st-key-padding_play button')
        steps = '[data-testid="stMain"] .st-key-padding_step input[type=range]'
        idle = button.inner_text()
        button.click()
        page.wait_for_function("(sel) => document.querySelector(sel).value !== '0'", arg=steps, timeout=20_000)
        at_click = int(page.locator(steps).input_value())
        button.click()
        page.wait_for_function("([sel, label]) => document.querySelector(sel).innerText === label",
                               arg=['[data-testid="stMain"] .st-key-padding_play button', idle], timeout=20_000)
        page.wait_for_function(kit.RENDERED_JS, timeout=RENDER_TIMEOUT_MS)
        stopped = int(page.locator(steps).input_value())
        assert stopped <= at_click + 1, f"paused at {stopped}, clicked at {at_click}: more than one frame later"
        time.sleep(2.0)
        assert int(page.locator(steps).input_value()) == stopped
        assert watch.problems() == []
    finally:
        context.close()


def test_no_running_indicator_flashes_while_an_animation_plays(browser, server):
    """Outside presentation mode too: every frame is a script run, and Streamlit's "Running… Stop" corner
    would flash once per frame; the app hides it (Pause is the animation's stop button)."""
    context = browser.new_context(viewport=PROJECTOR, locale="en-US")
    page = context.new_page()
    try:
        page.goto(f"{server.base}/memory_traffic?lang=en")
        page.wait_for_function(kit.RENDERED_JS, timeout=RENDER_TIMEOUT_MS)
        page.locator('[data-testid="stMain"] .st-key-memory_play button').click()
        seen_running, shown = 0, []
        for _ in range(30):
            state = page.evaluate("""() => [document.querySelector('[data-testid="stApp"]')
                .getAttribute('data-test-script-state'),
              Array.from(document.querySelectorAll('[data-testid="stStatusWidget"]'))
                .filter(e => getComputedStyle(e).visibility !== 'hidden' && e.getBoundingClientRect().width > 0)
                .map(e => e.innerText)]""")
            seen_running += state[0] == "running"
            shown += state[1]
            page.wait_for_timeout(100)
        assert seen_running > 0, "the animation never ran a frame while we watched"
        assert shown == [], f"the running indicator was visible: {shown[:3]}"
    finally:
        context.close()
