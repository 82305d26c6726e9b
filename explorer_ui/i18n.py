"""English / 简体中文: every string the app shows, as data, in one place (explorer_ui/strings.py).

`t("key", **values)` returns the current language's text with the values formatted in. Numbers are
always passed in from softmax_core; no string here contains a figure of its own.
"""
from __future__ import annotations

import tomllib
from pathlib import Path

import streamlit as st

from .strings import TEXT as _DICT_TEXT

LOCALES_DIR = Path(__file__).resolve().parent / "locales"

LANGUAGES = {"en": "English", "zh": "简体中文"}


def load_locales(directory: Path = LOCALES_DIR) -> dict[str, dict[str, str]]:
    """Every `<topic>.<lang>.toml` under locales/, merged into {key: {lang: text}}. Keys are flat names;
    a key defined by two topic files is an error, so each string has one home."""
    text: dict[str, dict[str, str]] = {}
    origin: dict[tuple[str, str], str] = {}
    for path in sorted(directory.glob("*.toml")):
        topic, lang = path.stem.rsplit(".", 1)
        if lang not in LANGUAGES:
            raise ValueError(f"{path.name}: unknown language {lang!r}")
        for key, value in tomllib.loads(path.read_text(encoding="utf-8")).items():
            if (key, lang) in origin:
                raise ValueError(f"{key!r} ({lang}) is defined in {origin[key, lang]} and {path.name}")
            origin[key, lang] = path.name
            text.setdefault(key, {})[lang] = value
    return text


TEXT: dict[str, dict[str, str]] = {**_DICT_TEXT}
for _key, _entry in load_locales().items():
    if _key in TEXT:
        raise ValueError(f"{_key!r} is defined both in strings.py and in locales/")
    TEXT[_key] = _entry


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
