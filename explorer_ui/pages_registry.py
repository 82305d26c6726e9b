"""The app's pages, in the order of the story: each page's key, file, icon and label.

This is the one place a page's file is named. The sidebar, Home's list of steps, the presentation bar, each
page's "Next" link, the glossary's "where it matters" links and the tests all read it, so a page renamed,
added or moved in the story changes here only.

- `key` is what the page passes to `layout.setup_page` and the prefix of its texts: `nav_<key>` is its label
  in the sidebar (locales/common.*.toml), `nav_<key>_blurb` its line on Home, `<key>_title` and `<key>_intro`
  its heading.
- `script` is the file relative to app.py: what `st.page_link` and AppTest's `switch_page` take.
- `icon` is a Material Symbols name, shown beside the page's links: Streamlit ships that font, so the icon
  shows on a lab machine that has no emoji font (where an emoji would be an empty box). The browser tab's
  icon is not one of these (layout.TAB_ICON says why).
- A page marked `optional` may not be in the checkout yet (it is being written): it is left out of every list
  until its file exists. Every other page must exist (tests/app/test_pages_registry.py).
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from .i18n import t

APP_DIR = Path(__file__).resolve().parent.parent      # where app.py and pages/ are


@dataclass(frozen=True)
class Page:
    key: str
    script: str
    icon: str
    optional: bool = False

    @property
    def label_key(self) -> str:
        return f"nav_{self.key}"

    @property
    def blurb_key(self) -> str:
        return f"nav_{self.key}_blurb"

    @property
    def url_path(self) -> str:
        """The URL path Streamlit's multipage mode serves the page under: the file name without its number
        prefix and `.py` ("pages/3_padding_chain.py" -> "padding_chain"); "" for Home (app.py)."""
        if self.script == HOME_SCRIPT:
            return ""
        stem = self.script.rsplit("/", 1)[-1].removesuffix(".py")
        return re.sub(r"^\d+[_ -]*", "", stem)

    def label(self) -> str:
        """The page's name in the current language."""
        return t(self.label_key)

    def exists(self) -> bool:
        return (APP_DIR / self.script).is_file()


HOME_SCRIPT = "app.py"

DECLARED: tuple[Page, ...] = (
    Page("home", HOME_SCRIPT, ":material/home:"),
    Page("memory", "pages/2_memory_traffic.py", ":material/memory:"),
    Page("padding", "pages/3_padding_chain.py", ":material/padding:"),
    Page("schedule", "pages/4_row_schedule.py", ":material/format_list_numbered:"),
    Page("gpu", "pages/5_gpu_occupancy.py", ":material/developer_board:"),
    Page("bench", "pages/6_benchmark.py", ":material/speed:"),
    Page("layouts", "pages/12_layouts.py", ":material/grid_on:"),
    Page("longrows", "pages/7_long_rows.py", ":material/straighten:"),
    Page("sharing", "pages/8_sharing_a_row.py", ":material/call_split:"),
    Page("chapter", "pages/9_chapter_notes.py", ":material/menu_book:"),
    Page("your_kernel", "pages/11_your_kernel.py", ":material/science:", optional=True),
    Page("glossary", "pages/10_glossary.py", ":material/local_library:"),
)

# The pages of this checkout, in story order (an optional page whose file is missing is left out).
PAGES: tuple[Page, ...] = tuple(p for p in DECLARED if p.exists() or not p.optional)
KEYS: tuple[str, ...] = tuple(p.key for p in PAGES)
_BY_KEY = {p.key: p for p in PAGES}
_BY_SCRIPT = {p.script: p for p in PAGES}


def page(key: str) -> Page:
    """The page whose key is `key` ("memory"); KeyError, naming the known keys, for any other."""
    try:
        return _BY_KEY[key]
    except KeyError:
        raise KeyError(f"no page {key!r}; known: {', '.join(KEYS)}") from None


def script(key: str) -> str:
    """The file of the page `key`, relative to app.py: what `st.page_link` and AppTest's `switch_page` take."""
    return page(key).script


def by_script(path: str) -> Page:
    """The page whose file is `path` ("pages/2_memory_traffic.py")."""
    try:
        return _BY_SCRIPT[path]
    except KeyError:
        raise KeyError(f"no page file {path!r}; known: {', '.join(_BY_SCRIPT)}") from None


def home() -> Page:
    return PAGES[0]


def story() -> tuple[Page, ...]:
    """The pages after Home, in order: what Home lists as the story's steps."""
    return PAGES[1:]


def next_page(key: str) -> Page | None:
    """The page after `key` in the story; None after the last one."""
    i = KEYS.index(page(key).key)
    return PAGES[i + 1] if i + 1 < len(PAGES) else None


def previous_page(key: str) -> Page | None:
    """The page before `key`; None for Home."""
    i = KEYS.index(page(key).key)
    return PAGES[i - 1] if i > 0 else None
