"""English / 简体中文: every string the app shows, as data, in one place (explorer_ui/strings.py).

`t("key", **values)` returns the current language's text with the values formatted in. Numbers are
always passed in from softmax_core; no string here contains a figure of its own.
"""
from __future__ import annotations

import streamlit as st

from .strings import TEXT

LANGUAGES = {"en": "English", "zh": "简体中文"}


def language() -> str:
    lang = st.session_state.get("lang", "en")
    return lang if lang in LANGUAGES else "en"


def set_language(lang: str) -> None:
    st.session_state["lang"] = lang if lang in LANGUAGES else "en"


def t(key: str, **values) -> str:
    entry = TEXT.get(key)
    if entry is None:  # a missing key shows itself instead of breaking the page (a test lists them all)
        return key
    text = entry.get(language()) or entry["en"]
    return text.format(**values) if values else text


def bound():
    """`t` with the current language fixed, for widgets' format_func: Streamlit may call that function
    outside a script run (AppTest does), where the session's language cannot be read."""
    lang = language()

    def translate(key: str, **values) -> str:
        entry = TEXT.get(key)
        if entry is None:
            return key
        text = entry.get(lang) or entry["en"]
        return text.format(**values) if values else text

    return translate


def has(key: str) -> bool:
    return key in TEXT
