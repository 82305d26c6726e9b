"""The page registry (explorer_ui/pages_registry.py) against the checkout and Streamlit, and the navigation
every page draws from it: the sidebar lists every page, each page ends with a link to the next one, and
presentation mode keeps a way around (previous / next page, all pages, language, exit)."""
from __future__ import annotations

import re
from pathlib import Path

import pytest
from streamlit.source_util import page_icon_and_name
from streamlit.string_util import validate_material_icon
from streamlit.testing.v1 import AppTest

from explorer_ui import glossary, pages_registry
from explorer_ui.i18n import TEXT
from tests.support.apptest import open_page

ROOT = Path(__file__).resolve().parents[2]


def test_the_registry_is_the_checkouts_pages():
    assert pages_registry.PAGES[0].script == "app.py" == pages_registry.home().script
    files = {f"pages/{p.name}" for p in (ROOT / "pages").glob("*.py") if p.name != "__init__.py"}
    assert {p.script for p in pages_registry.story()} == files        # none missing, none unlisted
    for page in pages_registry.DECLARED:
        assert page.exists() or page.optional, page
    assert len(set(pages_registry.KEYS)) == len(pages_registry.KEYS)
    assert len({p.url_path for p in pages_registry.PAGES}) == len(pages_registry.PAGES)


def test_url_paths_are_streamlits():
    for page in pages_registry.story():
        assert page.url_path == page_icon_and_name(ROOT / page.script)[1], page
    assert pages_registry.home().url_path == ""


def test_every_page_has_its_label_blurb_title_and_a_font_icon():
    for page in pages_registry.PAGES:
        assert set(TEXT[page.label_key]) == {"en", "zh"}
        validate_material_icon(page.icon)           # Material Symbols: Streamlit ships the font
        if page is not pages_registry.home():
            assert set(TEXT[page.blurb_key]) == {"en", "zh"}
            assert f"{page.key}_title" in TEXT and f"{page.key}_intro" in TEXT


def test_next_and_previous_walk_the_story_once():
    seen, page = [], pages_registry.home()
    while page is not None:
        seen.append(page.key)
        after = pages_registry.next_page(page.key)
        if after is not None:
            assert pages_registry.previous_page(after.key) == page
        page = after
    assert seen == list(pages_registry.KEYS)
    assert pages_registry.previous_page("home") is None
    with pytest.raises(KeyError, match="known"):
        pages_registry.page("no_such_page")


def test_an_optional_page_without_its_file_is_left_out():
    optional = [p for p in pages_registry.DECLARED if p.optional]
    for page in optional:
        assert (page in pages_registry.PAGES) == page.exists()


def test_the_glossary_points_at_registered_pages():
    for term in glossary.TERM_KEYS:
        assert glossary.page_of(term) in pages_registry.PAGES
    assert f"(./{pages_registry.page(glossary.GLOSSARY).url_path}?" in glossary.link("sm")


def test_no_page_file_is_named_outside_the_registry():
    """A page's file name is written once: in the registry (tests ask it too)."""
    names = [Path(p.script).name for p in pages_registry.story()]
    pattern = re.compile("|".join(re.escape(n) for n in names))
    sources = [ROOT / "app.py", *(ROOT / "pages").glob("*.py"), *(ROOT / "explorer_ui").glob("*.py")]
    found = [str(path.relative_to(ROOT)) for path in sources
             if path.name != "pages_registry.py" and pattern.search(path.read_text(encoding="utf-8"))]
    assert not found


def _open(page: str, query: dict) -> AppTest:
    return open_page(pages_registry.script(page), query)


def _links(at: AppTest) -> list[tuple[str, str]]:
    return [(link.proto.label, link.proto.page) for link in at.get("page_link")]


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_home_lists_the_story_and_ends_with_next(lang):
    at = _open("home", {"lang": lang})
    links = _links(at)
    sidebar = [(TEXT[p.label_key][lang], p.url_path) for p in pages_registry.PAGES]
    assert links[-len(sidebar):] == sidebar                       # the sidebar lists every page
    nxt = pages_registry.next_page("home")
    assert (TEXT["nav_next"][lang].format(page=TEXT[nxt.label_key][lang]), nxt.url_path) in links
    assert not [b for b in at.button if b.key and b.key.startswith("present_bar")]


def test_presentation_mode_keeps_a_way_around_and_out():
    at = _open("padding", {"lang": "en", "present": "1"})
    before, after = pages_registry.previous_page("padding"), pages_registry.next_page("padding")
    links = _links(at)
    assert (TEXT["present_bar_previous"]["en"], before.url_path) in links
    assert (TEXT["present_bar_next"]["en"], after.url_path) in links
    assert (TEXT["nav_next"]["en"].format(page=TEXT[after.label_key]["en"]), after.url_path) in links
    at.button(key="present_bar_lang").click().run()
    assert at.title[0].value == TEXT["padding_title"]["zh"]
    at.button(key="present_bar_exit").click().run()
    assert not at.exception
    assert not [b for b in at.button if b.key and b.key.startswith("present_bar")]
    assert at.session_state["present"] is False


def test_the_last_page_leads_back_home():
    last = pages_registry.PAGES[-1]
    at = _open(last.key, {"lang": "en"})
    home = pages_registry.home()
    assert (TEXT["nav_back_home"]["en"].format(page=TEXT[home.label_key]["en"]), home.url_path) in _links(at)


@pytest.mark.slow
@pytest.mark.parametrize("page", pages_registry.KEYS, ids=[f"{key}_page" for key in pages_registry.KEYS])
def test_no_grid_cuts_a_sentence(page):
    """A canvas grid (st.dataframe) cuts a long cell at its column's width: every table holding a sentence is
    an HTML table (layout.show_table), whose cells wrap. English: the longer language of the two."""
    from explorer_ui.layout import SENTENCE_CHARS, longest_text

    at = _open(page, {"lang": "en"})
    assert not [(page, i, longest_text(f.value)) for i, f in enumerate(at.dataframe)
                if longest_text(f.value) > SENTENCE_CHARS]
