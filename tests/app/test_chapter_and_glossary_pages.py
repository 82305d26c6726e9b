"""AppTest for the chapter-notes and glossary pages, in English and 简体中文, and the glossary's data."""
import re
import tomllib
from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

import softmax_core as sc
from explorer_ui import data, glossary
from softmax_core.plans.tutorial import TUTORIAL_NUM_WARPS
from explorer_ui.i18n import LOCALES_DIR, TEXT, text_in
from tests.support import apptest
from explorer_ui.pages_registry import script

ROOT = Path(__file__).resolve().parents[2]
CHAPTER = script("chapter")
GLOSSARY = script(glossary.GLOSSARY)


def open_page(page: str, lang: str = "en", query: dict | None = None) -> AppTest:
    at = apptest.open_page(page, {"lang": lang, **(query or {})})
    apptest.assert_ok(at)
    return at


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_glossary_lists_every_term_with_its_figure(lang):
    at = open_page(GLOSSARY, lang)
    assert at.title[0].value == TEXT["glossary_title"][lang]
    headings = [h.value for h in at.subheader]
    assert headings == [TEXT[f"gloss_{term}_term"][lang] for term in glossary.TERM_KEYS]
    h200 = sc.catalog_gpu("h200")
    body = "\n".join(m.value for m in at.markdown)
    assert f"{h200.multiprocessor_count}" in body and f"{h200.max_num_regs:,}" in body
    plan = data.launch_plan(4096, 781, "float32", "h200")        # the H200's own compile (its device record)
    assert f"grid = {plan.grid}" in body


def test_glossary_figures_follow_the_gpu_and_N():
    at = open_page(GLOSSARY, query={"gpu": "h200", "N": "781"})
    other = next(g for g in sc.gpu_catalog() if g.vendor == "nvidia" and g.multiprocessor_count != 132)
    at.selectbox(key="glossary_gpu").set_value(other.key).run()
    body = "\n".join(m.value for m in at.markdown)
    assert f"{other.multiprocessor_count} SMs" in body and "132 SMs" not in body
    at.number_input(key="glossary_N").set_value(3000).run()
    body = "\n".join(m.value for m in at.markdown)
    assert "N = 3,000 → BLOCK_SIZE = 4,096" in body and "BLOCK_SIZE 4,096 → num_warps = 16" in body


def test_glossary_definitions_are_two_or_three_sentences_in_both_languages():
    for lang, end in (("en", r"[.!?](\s|$)"), ("zh", r"[。!?]")):
        entries = tomllib.loads((LOCALES_DIR / f"glossary.{lang}.toml").read_text(encoding="utf-8"))
        for term in glossary.TERM_KEYS:
            sentences = len(re.findall(end, entries[f"gloss_{term}_def"]))
            assert 2 <= sentences <= 3, (lang, term, sentences)


def test_glossary_links_and_first_use():
    assert glossary.link("sm", "SMs") == "[SMs](./glossary?lang=en&term=sm#gloss-sm)"
    first = glossary.FirstUse()
    assert first("shared_memory").startswith("[") and "#gloss-warp" in first("warp")
    assert first("shared_memory") == TEXT["gloss_shared_memory_term"]["en"]
    with pytest.raises(KeyError):
        glossary.link("no_such_term")
    for term in glossary.TERM_KEYS:
        assert glossary.page_of(term).exists(), term


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_chapter_notes_run_and_show_computed_parts(lang):
    at = open_page(CHAPTER, lang)
    assert len(at.header) == 7
    body = "\n".join(m.value for m in at.markdown)
    # the num_warps rule comes from the plan's table
    for threshold, warps in TUTORIAL_NUM_WARPS:
        if threshold:
            assert f"{threshold:,} → num_warps = {warps}" in body
    # the stride table: the sliced view's row stride is its parent's row length
    stride = at.dataframe[0].value
    assert list(stride["input_row_stride"]) == [10, 20, 40, 10]
    # the chapter's benchmark: one row per claim, the verdicts the library computes from the record
    from softmax_bench import chapter_claims
    from softmax_core.words import describe, piece
    claims = at.table[-1].value                     # sentences: a table whose cells wrap (layout.show_table)
    expected = [describe(c.verdict, lang=lang)
                for c in chapter_claims.check_claims(chapter_claims.load_chapter_runs())]
    assert list(claims[piece("chapter_pieces", "col_verdict", lang)]) == expected
    assert {describe(chapter_claims.REFUTED, lang=lang), describe(chapter_claims.HOLDS, lang=lang)} <= set(expected)


def test_chapter_stride_view_choice_changes_the_addresses():
    at = open_page(CHAPTER, query={"view": "every_other_row"})
    table = at.dataframe[1].value
    assert table.iloc[1, 1] == "40…49" and table.iloc[1, 2] == "10…19"
    at.radio(key="chapter_view").set_value("contiguous").run()
    assert at.dataframe[1].value.iloc[1, 1] == "10…19"


def test_chapter_unit_test_runs_from_the_page():
    at = open_page(CHAPTER)
    assert not at.success or all("PASSED" not in s.value for s in at.success)
    at.button(key="chapter_run_test").click().run()
    passed = [s.value for s in at.success if s.value.startswith("PASSED")]
    assert passed and "1823 × 781" in passed[0], [s.value for s in at.success] + [e.value for e in at.error]


def test_chapter_keys_exist_in_both_languages_with_the_same_placeholders():
    for topic in ("chapter", "chapter_benchmark", "glossary", "slides"):
        en = tomllib.loads((LOCALES_DIR / f"{topic}.en.toml").read_text(encoding="utf-8"))
        zh = tomllib.loads((LOCALES_DIR / f"{topic}.zh.toml").read_text(encoding="utf-8"))
        assert set(en) == set(zh), topic
        for key in en:
            assert set(re.findall(r"\{(\w+)", en[key])) == set(re.findall(r"\{(\w+)", zh[key])), key


# -- the classroom kit on the existing pages ----------------------------------------------------------------
def test_step_buttons_move_and_pause_and_stay_in_range():
    from explorer_ui import player

    assert [player.stepped(3, m, 6) for m in ("prev", "next", "reset")] == [2, 4, 0]
    assert player.stepped(0, "prev", 6) == 0 and player.stepped(6, "next", 6) == 6
    assert player.interval_for(2.0) == player.DEFAULT_INTERVAL_S / 2 and player.interval_for(None) == player.DEFAULT_INTERVAL_S
    at = open_page(script("memory"), query={"step": "2"})
    assert at.slider(key="memory_step").value == 2
    for key, expected in (("memory_next", 3), ("memory_next", 4), ("memory_prev", 3), ("memory_reset", 0)):
        at.button(key=key).click().run()
        assert at.slider(key="memory_step").value == expected, key
        assert at.query_params["step"] == [str(expected)] or at.query_params["step"] == str(expected)
    assert at.button(key="memory_prev").disabled and not at.button(key="memory_next").disabled


def test_presentation_mode_from_the_link_and_the_switch():
    at = open_page(script("padding"), query={"present": "1"})
    assert at.toggle(key="sidebar_present").value is True
    css = "".join(h.proto.body for h in at.get("html"))
    assert 'stHeader' in css and "stStatusWidget" in css
    at.toggle(key="sidebar_present").set_value(False).run()
    assert at.toggle(key="sidebar_present").value is False and "present" not in at.query_params
    css = "".join(h.proto.body for h in at.get("html"))
    assert "stStatusWidget" in css and "stHeader" not in css      # the running indicator stays hidden


def test_predict_then_reveal_on_the_memory_page():
    import softmax_core as sc

    at = open_page(script("memory"), query={"M": "4096", "N": "781"})
    reveal = at.button(key="predict_memory_speedup_reveal")
    assert reveal.disabled                                      # no guess yet
    at.number_input(key="predict_memory_speedup_guess").set_value(4.0).run()
    at.button(key="predict_memory_speedup_reveal").click().run()
    speedup = sc.memory_traffic(4096, 781).predicted_speedup
    told = [s.value for s in at.success] + [w.value for w in at.warning]
    assert any(f"{speedup:,.3f}×" in text for text in told), told       # 4.003, not "4.00"
    at.number_input(key="memory_N").set_value(1024).run()       # new settings: a new question, unrevealed
    told = [s.value for s in at.success] + [w.value for w in at.warning]
    assert not any("×" in text for text in told)


def test_page_intros_link_their_terms_to_the_glossary():
    for lang in ("en", "zh"):
        at = open_page(script("gpu"), lang)
        intro = next(m.value for m in at.markdown if "#gloss-" in m.value)
        assert f"./glossary?lang={lang}&term=register#gloss-register" in intro and "&term=sm#gloss-sm)" in intro
        assert intro.count("#gloss-sm)") == 1                    # the first use only


def test_slides_export_from_the_padding_page():
    import io

    from PIL import Image

    from explorer_ui.padding import FRAMES

    at = open_page(script("padding"), query={"N": "100", "rows": "2"})
    at.button(key="padding_slides_make").click().run()
    assert not at.exception and not at.error, [e.value for e in at.error]
    made = at.session_state["padding_slides"]
    assert made.stem == "padding_chain_N100_rows2_row0_break-correct"
    assert Image.open(io.BytesIO(made.gif)).n_frames == len(FRAMES)
    assert made.captions[0].endswith("1/7") or "1/" in made.captions[0]


def test_a_link_to_a_term_shows_its_entry_first():
    at = open_page(GLOSSARY, "zh", query={"term": "occupancy"})
    headings = [h.value for h in at.subheader]
    assert headings[0] == TEXT["gloss_occupancy_term"]["zh"] and len(headings) == len(glossary.TERM_KEYS)


def test_a_link_after_a_colon_is_not_read_as_a_streamlit_directive():
    # ":内核的[寄存器](…)" would be Streamlit's ":name[text]" syntax and lose the link's text (seen in 中文)
    linked = glossary.link_terms("figures:registers and shared memory")      # Chinese writes no space there
    assert linked.startswith("figures\\:[registers](") and "[shared memory](" in linked
    assert glossary.link_terms("a: the registers").startswith("a: the [registers]")
