"""One GPU for the lesson in a real browser at 1280 x 720: a T4 picked on the GPU page is the GPU the row
schedule opens on after a click in the sidebar, and the one in its link."""
from __future__ import annotations

import pytest

from classroom_tools import browser_kit as kit
from explorer_ui.i18n import TEXT
from tests.support.browser import exception_texts, open_tab, wait_rendered

pytestmark = pytest.mark.slow                # a real browser against a real server

RENDER_TIMEOUT_MS = 90_000
PAGES = {p.label: p for p in kit.app_pages()}


def picked(tab, key: str) -> str:
    """The selectbox's shown choice (its combobox's value, or the text beside it)."""
    box = tab.locator(f'[data-testid="stMain"] .st-key-{key}')
    combo = box.locator('[role="combobox"]')
    value = combo.input_value() if combo.evaluate("e => e.tagName") == "INPUT" else ""
    return value or box.text_content()


def test_a_gpu_picked_on_one_page_is_the_next_pages_gpu_after_a_sidebar_click(browser, server):
    tab, watch = open_tab(browser, PAGES["gpu_occupancy"].url(server.base), "en", RENDER_TIMEOUT_MS)
    try:
        assert "H200" in picked(tab, "gpu_gpu")
        tab.locator('[data-testid="stMain"] .st-key-gpu_gpu [role="combobox"]').click()   # as a student does
        tab.locator('[role="listbox"] [role="option"]', has_text="NVIDIA T4").first.click()
        tab.wait_for_function("() => location.search.includes('gpu=t4')", timeout=RENDER_TIMEOUT_MS)
        wait_rendered(tab, RENDER_TIMEOUT_MS)
        tab.locator('[data-testid="stSidebar"]').get_by_role("link", name=TEXT["nav_schedule"]["en"]).click()
        tab.wait_for_url(f"**/{PAGES['row_schedule'].url_path}**", timeout=RENDER_TIMEOUT_MS)
        wait_rendered(tab, RENDER_TIMEOUT_MS)
        tab.wait_for_function("() => location.search.includes('gpu=t4')", timeout=RENDER_TIMEOUT_MS)
        assert "T4" in picked(tab, "schedule_gpu")
        assert exception_texts(tab) == [] and watch.problems() == [], watch.problems()
    finally:
        tab.context.close()
