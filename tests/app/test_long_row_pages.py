"""Pages 7 and 8 (long rows, sharing a row) under AppTest: every widget, both languages, links, bad input."""

import pytest
import torch
from streamlit.testing.v1 import AppTest

import softmax_core as sc
from tests.support.apptest import assert_ok, open_page
from tests.support.apptest import widget as shared_widget
from explorer_ui.pages_registry import script


PAGES = {script("longrows"): "longrows", script("sharing"): "sharing"}
SWEEPS = {
    script("longrows"): {
        "longrows_gpu": ["t4", "mi300x", "h200"], "longrows_dtype": ["bfloat16", "float16", "float32"],
        "longrows_N": [1, 100_000, 8192], "longrows_tile": [64, 16384, 1024],
        "longrows_pattern": ["random", "neg_inf_tiles", "all_neg_inf", "rising"], "longrows_step": [0, 8, 16],
        "predict_longrows_tiles_guess": [0.0, 8.0], "sidebar_lang": ["zh", "en"], "sidebar_present": [True, False]},
    script("sharing"): {
        "sharing_gpu": ["mi300x", "a100-80gb", "h200"], "sharing_dtype": ["bfloat16", "float32"],
        "sharing_N": [16, 1_048_576, 16384], "sharing_split": [2, 16, 4],
        "sharing_pattern": ["rising", "neg_inf_tiles", "all_neg_inf", "random"], "sharing_step": [0, 3, 6],
        "predict_sharing_chunk_guess": [0.0, 4096.0], "sidebar_lang": ["zh", "en"], "sidebar_present": [True, False]},
}
KINDS = ("slider", "number_input", "selectbox", "radio", "toggle", "select_slider")


def app_on(page: str, query: dict | None = None) -> AppTest:
    at = open_page(page, query)
    assert_ok(at)
    return at


def widget(at: AppTest, key: str):
    return shared_widget(at, key, KINDS)


@pytest.mark.slow                 # a crawl over every widget of the page, as test_every_widget_at_min_middle_and_max
@pytest.mark.parametrize("page", list(SWEEPS))
def test_every_widget_of_the_page_in_both_languages(page):
    at = app_on(page)
    keys = {w.key for kind in KINDS for w in getattr(at, kind) if w.key}
    assert keys == set(SWEEPS[page]), keys ^ set(SWEEPS[page])
    for key, values in SWEEPS[page].items():
        for value in values:
            widget(at, key).set_value(value).run()
            assert_ok(at)
            assert widget(at, key).value == value
    assert at.button(key=f"{PAGES[page]}_play").label == "Play"
    at.button(key=f"{PAGES[page]}_play").click().run()     # one animation tick: a full run pauses it again
    assert_ok(at)


def test_pages_in_chinese_show_chinese():
    from explorer_ui.i18n import TEXT

    at = app_on(script("longrows"), {"lang": "zh"})
    assert at.title[0].value == TEXT["longrows_title"]["zh"]
    assert any(TEXT["longrows_cliff_title"]["zh"] in h.value for h in at.header)
    at.switch_page(script("sharing")).run()
    assert_ok(at)
    assert at.title[0].value == TEXT["sharing_title"]["zh"]
    reasons = at.table[-1].value.iloc[:, -1].tolist()                  # the path map's "why" column
    assert all(not r.startswith(("A row", "a float32", "even")) for r in reasons), reasons


def test_link_opens_the_animation_in_that_state_and_bad_values_get_a_note():
    at = app_on(script("longrows"), {"N": "5000", "tile": "512", "pattern": "neg_inf_tiles", "step": "3"})
    assert widget(at, "longrows_N").value == 5000 and widget(at, "longrows_tile").value == 512
    assert widget(at, "longrows_step").value == 3
    assert "Pass 1, tile 3" in " ".join(m.value for m in at.markdown)
    at = app_on(script("sharing"), {"split": "99", "pattern": "zzz"})
    assert widget(at, "sharing_split").value == 16 and widget(at, "sharing_pattern").value == "random"
    assert len(at.info) >= 2


def test_too_many_tiles_is_a_message_not_a_traceback():
    at = open_page(script("longrows"))
    widget(at, "longrows_tile").set_value(64).run()
    widget(at, "longrows_N").set_value(100_000).run()
    assert not at.exception
    assert any("choose a wider tile" in e.value.lower() or "choose a wider tile" in e.value for e in at.error)


def test_h200_float32_cliff_and_split_plan_on_the_pages():
    at = app_on(script("longrows"), {"gpu": "h200", "dtype": "float32"})
    plans = [sc.plan_launch(1, 2 ** k, torch.float32, sc.catalog_gpu("h200")) for k in range(8, 18)]
    first = next(p for p in plans if not p.fits)
    text = " ".join(w.value for w in at.warning)
    assert f"N = {first.block_size // 2 + 1:,}" in text
    at = app_on(script("sharing"), {"gpu": "h200"})
    split = next(p for p in (sc.plan_softmax(4096, 2 ** k, torch.float32, sc.catalog_gpu("h200"))
                             for k in range(8, 21)) if p.path == "split")
    assert f"N = {split.n_cols:,}" in " ".join(m.value for m in at.markdown)
