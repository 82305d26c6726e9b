"""English / 简体中文: every string the app shows, as data, in explorer_ui/locales/<topic>.<lang>.toml.

`t(key, **values)` returns the current language's text with the values formatted in. The key (and every
other leading argument of these functions) is positional-only, so a placeholder may have any name, `text`
and `key` included. Numbers are always
passed in from code (softmax_core, explorer_ui.defaults); no string contains a figure of its own.

Keys are flat names, each defined by exactly one topic file, in both languages, with the same {placeholders}
(tests/ui/test_locales.py checks all of that, and that every key is used).

Plurals: English nouns follow their number, written in the placeholder's format spec after a bar:
`{n:,|program|programs}` gives "1 program" and "1,024 programs" (the number, a space, the word). Chinese
needs no plural: its text writes `{n:,}` and the word itself. Both languages still share the placeholder `n`.

The library's codes (softmax_core.words: why a plan launches what it launches, where a register count came
from, why a benchmark row was not timed, ...) keep their words in the library's own tables, one per
language; `say(code_or_coded, **figures)` reads them in the page's language, so the app, the command line
and the library's exceptions share one sentence per code.

A missing key: under the tests (SOFTMAX_EXPLORER_STRICT_TEXT=1, set by tests/conftest.py and so inherited by
the servers the browser tests start) `t` raises KeyError, so a page that asks for a key that does not exist
fails its test. In a classroom the page shows the key itself instead: a visible slip, not a broken page.
"""
from __future__ import annotations

import os
from pathlib import Path

import streamlit as st

from softmax_core import words
from softmax_core.words import format_counted

LOCALES_DIR = Path(__file__).resolve().parent / "locales"
LANGUAGES = {"en": "English", "zh": "简体中文"}
STRICT_ENV = "SOFTMAX_EXPLORER_STRICT_TEXT"


def load_locales(directory: Path = LOCALES_DIR) -> dict[str, dict[str, str]]:
    """Every `<topic>.<lang>.toml` under locales/, merged into {key: {lang: text}}. Keys are flat names;
    a key defined by two topic files is an error, so each string has one home."""
    text: dict[str, dict[str, str]] = {}
    origin: dict[tuple[str, str], str] = {}
    for name, lang, parsed in words.topic_files(directory.glob("*.toml")):
        for key, value in parsed.items():
            if (key, lang) in origin:
                raise ValueError(f"{key!r} ({lang}) is defined in {origin[key, lang]} and {name}")
            origin[key, lang] = name
            text.setdefault(key, {})[lang] = value
    return text


TEXT: dict[str, dict[str, str]] = load_locales()


def strict() -> bool:
    return os.environ.get(STRICT_ENV, "").strip().lower() in ("1", "true", "yes", "on")


def language() -> str:
    lang = st.session_state.get("lang", "en")
    return lang if lang in LANGUAGES else "en"


def set_language(lang: str) -> None:
    st.session_state["lang"] = lang if lang in LANGUAGES else "en"


def format_text(text: str, /, **values) -> str:
    """`text` with `values` formatted in (counted nouns understood: softmax_core.words.format_counted)."""
    if not values:
        return text
    return format_counted(text, **values)


def text_in(lang: str, key: str, /, **values) -> str:
    """`key`'s text in `lang`, formatted with `values`."""
    entry = TEXT.get(key)
    if entry is None or lang not in entry:
        if strict():
            raise KeyError(f"no text {key!r} ({lang}) in {LOCALES_DIR}")
        return key
    return format_text(entry[lang], **values)


def t(key: str, /, **values) -> str:
    return text_in(language(), key, **values)


def said_in(lang: str, subject, /, **figures) -> str:
    """A library code's words in `lang` (softmax_core.words.describe). `subject`: a Code with `figures`, or
    a Coded / PlanReason. Missing words raise under the tests; in a classroom the code's value shows."""
    try:
        return words.describe(subject, figures or None, lang)
    except KeyError:
        if strict():
            raise
        return str(getattr(subject, "code", subject))


def say(subject, /, **figures) -> str:
    """`said_in` the page's language."""
    return said_in(language(), subject, **figures)


def toolchain_said(text: str) -> str:
    """Which compiler made a figure, in the page's language: a device record's label (explorer_ui.device_compiles)
    as the page's words put it; a local toolchain as it is (names and versions)."""
    from explorer_ui.device_compiles import label_parts

    parts = label_parts(text)
    return t("toolchain_recorded", **parts) if parts else text


def cache_named(gpu):
    """`gpu`'s last cache before DRAM as a figure for words (softmax_core.hardware.gpu.CacheKind): "L2", or the
    Infinity Cache on AMD CDNA 3/4 (the catalog's last_level_cache)."""
    from softmax_core.hardware.gpu import CacheKind

    return CacheKind(gpu.last_level_cache)


def plan_said(plan, /, **figures) -> str:
    """A plan's reason (a tuned or any-dim plan, or a launch plan) in the page's language, its cache named as
    the plan's GPU names it."""
    return say(plan.reason, **{"cache": cache_named(plan.gpu), **figures})


def limits_said(limiters) -> str:
    """A set of limits (softmax_core.hardware.occupancy.Limiter) in the page's language: the one that runs out
    first, or every one of a tie, named as a tie. "—" for none."""
    from softmax_core.hardware.occupancy import Limiter

    names = [say(Limiter(limit)) for limit in limiters]
    if len(names) < 2:
        return names[0] if names else "—"
    listed = t("occupancy_list_separator").join(names[:-1]) + t("limits_and") + names[-1]
    return t("limits_tie", names=listed)


def bound():
    """`t` with the current language fixed, for widgets' format_func: Streamlit may call that function
    outside a script run (AppTest does), where the session's language cannot be read."""
    lang = language()
    return lambda key, /, **values: text_in(lang, key, **values)


# Sentences of one paragraph in a row: English puts a space between them; Chinese, whose sentences end in a
# full-width 。, none (a space there reads as a gap: "。 波动").
SENTENCE_GAP = {"en": " ", "zh": ""}


def sentences(*parts: str) -> str:
    """Sentences joined as the page's language writes them; empty parts are left out."""
    return SENTENCE_GAP.get(language(), " ").join(p for p in parts if p)


def has(key: str) -> bool:
    return key in TEXT
