"""The layouts and memory transactions page in Chromium at a projector's 1280 x 720, in English and 中文: it
renders with both kernels' requests drawn, no exception box, no browser error and nothing asked of another host,
and its player steps through the requests (Play moves the step, Pause stops it). Never skips, as the other
browser tests."""
from __future__ import annotations

import pytest

from classroom_tools import browser_kit as kit
from tests.support import browser as support

pytestmark = pytest.mark.slow

PAGE = next(p for p in kit.app_pages() if p.url_path == "layouts")
RENDER_TIMEOUT_MS = 240_000       # the first run records both kernels and compiles them for the GPU


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_the_layouts_page_draws_and_steps(browser, server, lang):
    tab, watch = support.open_tab(browser, f"{PAGE.url(server.base)}?lang={lang}", lang, RENDER_TIMEOUT_MS)
    try:
        assert support.exception_texts(tab) == []
        support.wait_charts_settled(tab)
        charts = tab.locator('[data-testid="stMain"] [data-testid="stVegaLiteChart"]')
        assert charts.count() == 2                     # the planner's kernel and the row walk, side by side
        support.play_and_pause(tab, "layouts_play")
        assert support.exception_texts(tab) == []
        assert watch.problems() == []
    finally:
        tab.context.close()
