"""Each page's inputs live in the URL (?N=781&step=4), so a teacher can send a link to an exact state.

A page declares its inputs through a `PageState`. On the first run of the page in a session (the widget's
key is not in session state yet) the value comes from the URL — parsed, validated and clamped, with a
note for anything that had to be changed — or else from the default. After that the widget owns the
value, and `sync()` writes the current values back to the URL at the end of every run.
Widget keys carry the page's prefix ("padding_N"); URL names are short ("N").

This module is the URL's only writer: `write()` (the page's inputs at the end of a run, the language in the
sidebar, the animation's step inside its fragment). `in_url()` and `url_value()` read it.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import streamlit as st

from .i18n import t

BOOL_WORDS = {"1": True, "true": True, "yes": True, "on": True,
              "0": False, "false": False, "no": False, "off": False}


@dataclass(frozen=True)
class UrlNote:
    name: str
    raw: str
    used: str
    clamped: bool        # True: out of range, clamped; False: not understood, ignored


# -- pure: URL text <-> values -------------------------------------------------------------------------------


def parse_int(name: str, raw: str, default: int, lo: int, hi: int) -> tuple[int, UrlNote | None]:
    """The integer a URL value asks for, clamped to [lo, hi]; a note when it was clamped or not understood.
    Numbers like "12.0" or "1e3" are understood and rounded."""
    try:
        number = float(raw.strip())
    except ValueError:
        number = math.nan
    if not math.isfinite(number):
        return default, UrlNote(name, raw, str(default), clamped=False)
    clamped = min(max(int(round(number)), lo), hi)
    return clamped, (UrlNote(name, raw, str(clamped), clamped=True) if clamped != number else None)


def parse_choice(name: str, raw: str, default, options, label=str) -> tuple[object, UrlNote | None]:
    """The option whose text is `raw`, else the default with a note that names it by `label` (a GPU's
    name, not its catalog key)."""
    match = [o for o in options if str(o) == raw]
    return (match[0], None) if match else (default, UrlNote(name, raw, label(default), clamped=False))


def parse_multi(name: str, raw: str, default: list, options: list[str]) -> tuple[list, UrlNote | None]:
    """The known entries of a comma-separated list (the default when none is known); a note when any entry
    was dropped."""
    asked = [part.strip() for part in raw.split(",") if part.strip()]
    known = [a for a in asked if a in options]
    note = None
    if len(known) != len(asked) or not known:
        note = UrlNote(name, raw, ",".join(known or default), clamped=False)
    return list(dict.fromkeys(known or default)), note


def parse_bool(name: str, raw: str, default: bool) -> tuple[bool, UrlNote | None]:
    parsed = BOOL_WORDS.get(raw.strip().lower())
    if parsed is None:
        return default, UrlNote(name, raw, str(default).lower(), clamped=False)
    return parsed, None


def url_text(value) -> str:
    """How a value is written into the URL: booleans in lower case, lists comma-separated."""
    if isinstance(value, bool):
        return str(value).lower()
    if isinstance(value, (list, tuple)):
        return ",".join(map(str, value))
    return str(value)


# -- the URL -------------------------------------------------------------------------------------------------


def url_value(name: str) -> str | None:
    return st.query_params.get(name)


def in_url(name: str) -> bool:
    return name in st.query_params


def write(name: str, value) -> None:
    """Put `value` into the URL under `name` (only when it changed: each write is a message to the browser)."""
    text = url_text(value)
    if st.query_params.get(name) != text:
        st.query_params[name] = text


def drop(name: str) -> None:
    """Take `name` out of the URL (only when it is there)."""
    if name in st.query_params:
        del st.query_params[name]


def show_note(note: UrlNote) -> None:
    """Say what a link asked for that could not be used, and what is used instead."""
    figures = dict(name=note.name, raw=note.raw, used=note.used)
    st.info(t("url_clamped", **figures) if note.clamped else t("url_ignored", **figures), icon="🔗")


class PageState:
    def __init__(self, prefix: str):
        self.prefix = prefix
        self._names: dict[str, str] = {}      # URL name -> widget key
        self._notes_box = None
        self._notes_key = f"{prefix}__url_notes"
        if self._notes_key not in st.session_state:
            st.session_state[self._notes_key] = {}

    def key(self, name: str) -> str:
        return f"{self.prefix}_{name}"

    # -- declaring inputs: each returns the widget's key (the value is then in session state) ---------------

    def int_key(self, name: str, default: int, lo: int, hi: int) -> str:
        """Declare an integer input in [lo, hi]."""
        key = self._declare(name)
        if key not in st.session_state:
            st.session_state[key] = self._from_url(name, default, lambda raw: parse_int(name, raw, default, lo, hi))
        else:
            self.clamp(name, lo, hi)
        return key

    def choice_key(self, name: str, default, options, label=str) -> str:
        """Declare an input that must be one of `options` (compared as strings in the URL); `label` names
        an option for people, as its widget does."""
        options = list(options)
        key = self._declare(name)
        if key not in st.session_state:
            st.session_state[key] = self._from_url(name, default,
                                                   lambda raw: parse_choice(name, raw, default, options, label))
        elif st.session_state[key] not in options:
            st.session_state[key] = default
        return key

    def multi_key(self, name: str, default, options) -> str:
        """Declare a multi-choice input; in the URL a comma-separated list. Unknown entries are dropped."""
        options = [str(o) for o in options]
        key = self._declare(name)
        if key not in st.session_state:
            known_default = [d for d in default if d in options]
            st.session_state[key] = list(dict.fromkeys(self._from_url(
                name, known_default, lambda raw: parse_multi(name, raw, known_default, options))))
        else:
            st.session_state[key] = [v for v in st.session_state[key] if v in options]
        return key

    def text_key(self, name: str, default: str, max_chars: int = 200) -> str:
        """Declare a free-text input (a shape typed by hand): the URL's text, cut at `max_chars`, or the
        default. What it means is the page's to check, with an error box for text it cannot use."""
        key = self._declare(name)
        if key not in st.session_state:
            st.session_state[key] = self._from_url(name, default, lambda raw: (raw[:max_chars], None))
        return key

    def bool_key(self, name: str, default: bool) -> str:
        key = self._declare(name)
        if key not in st.session_state:
            st.session_state[key] = self._from_url(name, default, lambda raw: parse_bool(name, raw, default))
        return key

    def derived_int_key(self, name: str, default: int, lo: int, hi: int) -> tuple[str, bool]:
        """Declare an integer input whose default is derived from other inputs (the GPU, the compiled kernel).
        While the user leaves it alone it follows that default: switch the GPU and it takes the new GPU's
        value. Once the user has set it — in the link, or by hand — it is kept. Returns (key, kept): `kept`
        is True when the value was kept although the derived default is now different, so the page can say so."""
        key, mark, user = self.key(name), f"{self.key(name)}__derived", f"{self.key(name)}__user_set"
        fresh = key not in st.session_state
        self.int_key(name, default, lo, hi)
        state = st.session_state
        if mark not in state:                       # the page's first run in this session
            state[user] = fresh and in_url(name)
        elif not fresh and state[key] != state[mark]:
            state[user] = True                      # moved away from the default it was following: by hand
        if not state[user]:
            state[key] = min(max(int(default), lo), hi)
        state[mark] = state[key] if not state[user] else min(max(int(default), lo), hi)
        return key, bool(state[user]) and state[key] != min(max(int(default), lo), hi)

    def clamp(self, name: str, lo: int, hi: int) -> int:
        """Keep an already-set value inside a range that depends on other inputs (e.g. a row index when
        the number of rows shrinks), so that no widget is ever created with an out-of-range value."""
        key = self.key(name)
        value = st.session_state.get(key, lo)
        clamped = min(max(int(value), lo), hi)
        if clamped != value:
            st.session_state[key] = clamped
        return clamped

    # -- URL in, URL out --------------------------------------------------------------------------------

    def _declare(self, name: str) -> str:
        key = self.key(name)
        self._names[name] = key
        return key

    def _from_url(self, name: str, default, parse):
        """The URL's value for `name` through `parse` (noting what had to change), or the default."""
        raw = url_value(name)
        if raw is None:
            return default
        value, note = parse(raw)
        if note is not None:
            st.session_state[self._notes_key][note.name] = note
        return value

    def show_notes(self) -> None:
        """Reserve the place, under the page's title, where `sync()` will list every URL value that was
        clamped or ignored (inputs are declared after this point, so the notes are known only at the end)."""
        self._notes_box = st.container()

    def _render_notes(self) -> None:
        with self._notes_box or st.container():
            for note in st.session_state[self._notes_key].values():
                show_note(note)

    def sync(self) -> None:
        """Show the URL notes, and write every declared input's current value to the URL."""
        self._render_notes()
        for name, key in self._names.items():
            if key in st.session_state:
                write(name, st.session_state[key])
