"""Every page at 1280 x 720 with the sidebar open, in a real browser (Chromium, Playwright), English and 中文:
nothing the page states is cut, and the way around is always on screen. Each language is one student's
session: the first page opened by its URL, every other reached by the sidebar's link to it.

Measured in the page, not judged from a picture:
- no metric label or value is cut (an element wider inside than its box: scrollWidth > clientWidth),
- no page's name in the sidebar is cut (the same measure; the open page's name is bold, so wider),
- no table cell is cut (st.table's cells wrap; a grid cell never holds a sentence: tests/app/test_pages_registry.py),
- no code block scrolls sideways: a long line wraps, hanging under its own indentation,
- no chart draws outside its box, and none is squeezed below a readable plot,
- the page ends with a link to the next page of the story (explorer_ui/pages_registry.py);
- and it renders as a classroom needs: no exception box, no JavaScript or console error, nothing asked of
  another host; it has a Play button exactly when tests.support.browser.ANIMATED lists it (those pages'
  animations are played by tests/browser/test_presentation_mode.py).
In presentation mode, where Streamlit's header and the sidebar are hidden, the bar beside the title goes to the
next page, switches the language and leaves the mode. Screenshots land in test-artifacts/browser/fit_*.png.
"""
from __future__ import annotations

import pytest

from explorer_ui import pages_registry
from explorer_ui.i18n import TEXT

from classroom_tools import browser_kit as kit
from tests.support import browser as support
from tests.support.browser import ANIMATED, ARTIFACTS

pytestmark = pytest.mark.slow

RENDER_TIMEOUT_MS = 120_000
MIN_CHART_HEIGHT = 120          # a chart drawn shorter than this is a strip, not a picture

FIT_JS = """() => {
  const main = document.querySelector('[data-testid="stMain"]');
  const text = el => (el.innerText || '').trim().slice(0, 60);
  const cut = el => el.scrollWidth > el.clientWidth + 1;
  const out = {metrics: [], cells: [], code: [], charts: [], links: [], nav: []};
  // the sidebar's page names, the current page's in bold among them: none cut (Streamlit ends a long one with '…')
  for (const a of document.querySelectorAll('[data-testid="stSidebar"] [data-testid="stPageLink"] a'))
    if ([a, ...a.querySelectorAll('*')].some(cut)) out.nav.push(text(a).split('\\n').pop());
  for (const m of main.querySelectorAll('[data-testid="stMetricLabel"], [data-testid="stMetricValue"]'))
    for (const el of [m, ...m.querySelectorAll('*')])
      if (cut(el) && getComputedStyle(el).overflow !== 'visible') out.metrics.push(text(m));
  for (const td of main.querySelectorAll('[data-testid="stTable"] td, [data-testid="stTable"] th'))
    if (cut(td)) out.cells.push(text(td));
  // no code block scrolls sideways: st.code's <pre> and the code panels (explorer_ui.code.code_html), and a
  // wrapped line of a panel hangs under its own indentation (its text-indent is negative)
  for (const pre of main.querySelectorAll('pre, .code-panel'))
    if (cut(pre)) out.code.push(`scrolls ${pre.scrollWidth - pre.clientWidth} px: ` + text(pre));
  for (const line of main.querySelectorAll('.code-panel > div > div'))
    if (parseFloat(getComputedStyle(line).textIndent) >= 0) out.code.push('no hanging indent: ' + text(line));
  for (const c of main.querySelectorAll('[data-testid="stVegaLiteChart"]')) {
    const drawn = c.querySelector('canvas, svg');
    if (!drawn) { out.charts.push('not drawn'); continue; }
    const box = c.getBoundingClientRect(), d = drawn.getBoundingClientRect();
    if (d.height > box.height + 2 || d.width > box.width + 2)
      out.charts.push(`drawn ${Math.round(d.width)}x${Math.round(d.height)} in ${Math.round(box.width)}x${Math.round(box.height)}`);
    if (d.height < %(min_height)d) out.charts.push(`only ${Math.round(d.height)} px high`);
  }
  // a link's text after its icon (a Material icon is a ligature: its name is the text of its glyph)
  out.links = [...main.querySelectorAll('[data-testid="stPageLink"] a')]
    .map(a => [a.innerText.trim().split('\\n').pop(), a.getAttribute('href')]);
  return out;
}""" % {"min_height": MIN_CHART_HEIGHT}

BAR_JS = """() => {
  const bar = document.querySelector('[data-testid="stMain"] .st-key-present_bar');
  if (!bar) return null;
  const inside = el => { const r = el.getBoundingClientRect();
    return r.width > 0 && r.height > 0 && r.left >= 0 && r.top >= 0 && r.right <= innerWidth && r.bottom <= innerHeight; };
  const seen = {};     // a control's text -> whether one element with it is on screen (Streamlit keeps hidden copies)
  for (const el of bar.querySelectorAll('a, button')) {
    const text = el.innerText.trim().split('\\n')[0];
    seen[text] = seen[text] || inside(el);
  }
  return seen;
}"""


def open_page(browser, server, page_key: str, lang: str, query: str = ""):
    path = pages_registry.page(page_key).url_path
    return support.open_tab(browser, f"{server.base}/{path}?lang={lang}{query}", lang, RENDER_TIMEOUT_MS)


@pytest.fixture(scope="module")
def sessions(browser, server):
    """One session per language, going from page to page by the sidebar's links as a student does: a page
    switch costs a script run, not a new connection and the front end's code again. lang -> (tab, watch)."""
    opened: dict = {}
    yield opened
    for tab, _ in opened.values():
        tab.context.close()


def visit(sessions, browser, server, page_key: str, lang: str):
    """The language's session on `page_key`: opened there by URL the first time, then by the sidebar's link.
    The watch holds what happened since this visit began."""
    if lang not in sessions:
        sessions[lang] = open_page(browser, server, page_key, lang)
        return sessions[lang]
    tab, watch = sessions[lang]
    watch.clear()
    page = pages_registry.page(page_key)
    old_title = tab.title()
    tab.locator(kit.nav_link_selector(page)).click()
    tab.wait_for_function(kit.ARRIVED_JS, arg=[page.url_path, old_title], timeout=RENDER_TIMEOUT_MS)
    support.wait_rendered(tab, RENDER_TIMEOUT_MS)
    return tab, watch


def label(key: str, lang: str, **values) -> str:
    return TEXT[key][lang].format(**values)


CASES = [(key, lang) for key in pages_registry.KEYS for lang in ("en", "zh")]


@pytest.mark.parametrize("page_key, lang", CASES, ids=[f"{k}_page-{lang}" for k, lang in CASES])
def test_page_fits_1280x720_with_the_sidebar_open(browser, server, sessions, page_key, lang):
    tab, watch = visit(sessions, browser, server, page_key, lang)
    try:
        assert f"lang={lang}" in tab.url or lang == "en", tab.url     # the language stays with the session
        found = tab.evaluate(FIT_JS)
        tab.screenshot(path=str(ARTIFACTS / f"fit_{page_key}_{lang}.png"))
        assert tab.locator('[data-testid="stSidebar"]').get_attribute("aria-expanded") != "false"
        assert not found["metrics"], found["metrics"]
        assert not found["nav"], found["nav"]
        assert not found["cells"], found["cells"]
        assert not found["code"], found["code"]
        assert not found["charts"], found["charts"]
        after = pages_registry.next_page(page_key)
        last_text, last_href = found["links"][-1]
        if after is not None:
            assert last_text == label("nav_next", lang, page=TEXT[after.label_key][lang])
            assert last_href.rstrip("/").rsplit("/", 1)[-1] == after.url_path, last_href
        else:
            assert last_text == label("nav_back_home", lang, page=TEXT[pages_registry.home().label_key][lang])
        assert tab.get_by_test_id("stException").all_inner_texts() == []
        # the pages with an animation are the ones tests/browser/ plays (tests.support.browser.ANIMATED)
        assert bool(tab.evaluate(kit.PLAY_KEYS_JS)) == (pages_registry.page(page_key).url_path in ANIMATED)
        assert not watch.problems()
    except Exception:
        sessions.pop(lang, None)            # the next page in this language starts from a fresh session
        tab.context.close()
        raise


def test_the_checks_see_a_cut_metric_a_cut_page_name_and_a_code_block_scrolling_sideways(browser, server):
    """The measurements find what they look for: the same page with Streamlit's own cutting put back."""
    tab, _ = open_page(browser, server, "gpu", "en")
    try:
        tab.add_style_tag(content='[data-testid="stMetricValue"] .stMarkdownEllipsis { width: 2ch !important; '
                                  'white-space: nowrap !important; overflow: hidden !important; } '
                                  '[data-testid="stMetricValue"] p { white-space: nowrap !important; } '
                                  '[data-testid="stMain"] .code-panel > div > div { white-space: pre !important; }'
                                  '[data-testid="stMain"] .code-panel { overflow-x: auto !important; } '
                                  '[data-testid="stSidebar"] [data-testid="stPageLink"] a span { max-width: 6ch; }')
        found = tab.evaluate(FIT_JS)
        assert found["metrics"] and found["code"]
        assert TEXT["nav_gpu"]["en"] in found["nav"]
    finally:
        tab.context.close()


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_presentation_mode_keeps_a_way_around_and_a_way_out(browser, server, lang):
    tab, watch = open_page(browser, server, "padding", lang, "&present=1")
    try:
        after = pages_registry.next_page("padding")
        controls = tab.evaluate(BAR_JS) or {}
        tab.screenshot(path=str(ARTIFACTS / f"fit_present_bar_{lang}.png"))
        other = "zh" if lang == "en" else "en"
        wanted = [label("present_about", lang), label("present_bar_pages", lang),
                  label("present_bar_previous", lang), label("present_bar_next", lang),
                  {"en": "English", "zh": "简体中文"}[other], label("present_exit", lang)]
        for text in wanted:
            assert controls.get(text) is True, (text, controls)          # there, and on screen
        # Next goes to the next page, still presenting
        bar = tab.locator('.st-key-present_bar')
        bar.get_by_role("link", name=label("present_bar_next", lang)).click()
        tab.wait_for_url(f"**/{after.url_path}**", timeout=RENDER_TIMEOUT_MS)
        support.wait_rendered(tab, RENDER_TIMEOUT_MS)
        tab.get_by_role("heading", name=TEXT[f"{after.key}_title"][lang]).first.wait_for(timeout=RENDER_TIMEOUT_MS)
        assert "present=1" in tab.url
        # the other language
        bar.get_by_role("button", name={"en": "English", "zh": "简体中文"}[other]).click()
        tab.get_by_role("heading", name=TEXT[f"{after.key}_title"][other]).first.wait_for(timeout=RENDER_TIMEOUT_MS)
        # and out: the sidebar with every page comes back
        bar.get_by_role("button", name=TEXT["present_exit"][other]).click()
        tab.locator('[data-testid="stSidebar"] [data-testid="stPageLink"]').first.wait_for(timeout=RENDER_TIMEOUT_MS)
        # the sidebar is drawn early in the run that leaves; the bar goes, and the URL changes, when it ends
        tab.locator('.st-key-present_bar').wait_for(state="detached", timeout=RENDER_TIMEOUT_MS)
        tab.wait_for_function("() => !new URLSearchParams(location.search).has('present')",
                              timeout=RENDER_TIMEOUT_MS)
        support.wait_rendered(tab, RENDER_TIMEOUT_MS)
        assert tab.locator('.st-key-present_bar').count() == 0
        assert "present=1" not in tab.url
        sidebar_links = tab.locator('[data-testid="stSidebar"] [data-testid="stPageLink"] a')
        assert sidebar_links.count() == len(pages_registry.PAGES)
        box = tab.locator('[data-testid="stSidebar"]').bounding_box()
        assert box and box["width"] > 100
        assert not watch.problems()
    finally:
        tab.context.close()
