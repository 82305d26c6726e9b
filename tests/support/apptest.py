"""The app under Streamlit's AppTest, opened the way a student opens it: Home first, then a page from the
sidebar. Every AppTest in the suite starts here, so all of them wait for a script run the same time."""
from __future__ import annotations

from pathlib import Path

from streamlit.testing.v1 import AppTest

from explorer_ui.i18n import TEXT

ROOT = Path(__file__).resolve().parents[2]
# Seconds one script run may take: a page's first run computes traces in Triton's interpreter, and on a
# 2-core machine shared with other work that has taken minutes.
RUN_TIMEOUT_S = 300
WIDGET_KINDS = ("slider", "number_input", "selectbox", "radio", "toggle", "select_slider", "multiselect")


def open_page(page: str = "app.py", query: dict | None = None) -> AppTest:
    """A fresh session on Home with `query` in its URL, switched to `page` (a path like "pages/3_padding_chain.py")
    unless that is Home; fails if a run raised."""
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=RUN_TIMEOUT_S)
    at.query_params.update(query or {})
    at.run()
    if page != "app.py":
        at.switch_page(page).run()
    assert not at.exception, [e.value for e in at.exception]
    return at


def assert_ok(at: AppTest, *, expected_errors: tuple[str, ...] = ()) -> None:
    """No exception and no error box, except those whose text starts with one of `expected_errors` (the text
    keys of errors a page shows on purpose, e.g. "this plan cannot launch on that GPU")."""
    assert not at.exception, [e.value for e in at.exception]
    allowed = tuple(TEXT[key][lang].split("{")[0] for key in expected_errors for lang in TEXT[key])
    unexpected = [e.value for e in at.error if not (allowed and e.value.startswith(allowed))]
    assert not unexpected, unexpected


def widget(at: AppTest, key: str, kinds: tuple[str, ...] = WIDGET_KINDS):
    """The widget with this key, whichever of `kinds` it is."""
    for kind in kinds:
        found = [w for w in getattr(at, kind) if w.key == key]
        if found:
            return found[0]
    raise AssertionError(f"no widget {key!r}")


def widget_keys(at: AppTest, kinds: tuple[str, ...] = WIDGET_KINDS) -> set[str]:
    return {w.key for kind in kinds for w in getattr(at, kind) if w.key}
