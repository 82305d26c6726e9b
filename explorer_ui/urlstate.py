"""Each page's inputs live in the URL (?N=781&step=4), so a teacher can send a link to an exact state.

A page declares its inputs through a `PageState`. On the first run of the page in a session (the widget's
key is not in session state yet) the value comes from the URL — parsed, validated and clamped, with a
note for anything that had to be changed — or else from the default. After that the widget owns the
value, and `sync()` writes the current values back to the URL at the end of every run.
Widget keys carry the page's prefix ("padding_N"); URL names are short ("N").
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import streamlit as st

from .i18n import t


@dataclass(frozen=True)
class UrlNote:
    name: str
    raw: str
    used: str
    clamped: bool        # True: out of range, clamped; False: not understood, ignored


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

    # -- declaring inputs ------------------------------------------------------------------------------

    def int(self, name: str, default: int, lo: int, hi: int) -> str:
        """Declare an integer input in [lo, hi]; returns the widget key (its value is then in session state)."""
        key = self._declare(name)
        if key not in st.session_state:
            st.session_state[key] = self._int_from_url(name, default, lo, hi)
        else:
            self.clamp(name, lo, hi)
        return key

    def choice(self, name: str, default, options) -> str:
        """Declare an input that must be one of `options` (compared as strings in the URL)."""
        options = list(options)
        key = self._declare(name)
        if key not in st.session_state or st.session_state[key] not in options:
            value = default
            raw = st.query_params.get(name) if key not in st.session_state else None
            if raw is not None:
                match = [o for o in options if str(o) == raw]
                if match:
                    value = match[0]
                else:
                    self._note(UrlNote(name, raw, str(default), clamped=False))
            st.session_state[key] = value
        return key

    def multi(self, name: str, default, options) -> str:
        """Declare a multi-choice input; in the URL a comma-separated list. Unknown entries are dropped."""
        options = [str(o) for o in options]
        key = self._declare(name)
        if key not in st.session_state:
            value = [d for d in default if d in options]
            raw = st.query_params.get(name)
            if raw is not None:
                asked = [part.strip() for part in raw.split(",") if part.strip()]
                known = [a for a in asked if a in options]
                if len(known) != len(asked) or not known:
                    self._note(UrlNote(name, raw, ",".join(known or value), clamped=False))
                value = known or value
            st.session_state[key] = list(dict.fromkeys(value))
        else:
            st.session_state[key] = [v for v in st.session_state[key] if v in options]
        return key

    def bool(self, name: str, default: bool) -> str:
        key = self._declare(name)
        if key not in st.session_state:
            value = default
            raw = st.query_params.get(name)
            if raw is not None:
                parsed = {"1": True, "true": True, "yes": True, "on": True,
                          "0": False, "false": False, "no": False, "off": False}.get(raw.strip().lower())
                if parsed is None:
                    self._note(UrlNote(name, raw, str(default).lower(), clamped=False))
                else:
                    value = parsed
            st.session_state[key] = value
        return key

    def clamp(self, name: str, lo: int, hi: int) -> int:
        """Keep an already-set value inside a range that depends on other inputs (e.g. a row index when
        the number of rows shrinks), so that no widget is ever created with an out-of-range value."""
        key = self.key(name)
        value = st.session_state.get(key, lo)
        clamped = min(max(int(value), lo), hi)
        if clamped != value:
            st.session_state[key] = clamped
        return clamped

    def value(self, name: str):
        return st.session_state[self.key(name)]

    def set(self, name: str, value) -> None:
        st.session_state[self.key(name)] = value

    # -- URL in, URL out --------------------------------------------------------------------------------

    def _declare(self, name: str) -> str:
        key = self.key(name)
        self._names[name] = key
        return key

    def _note(self, note: UrlNote) -> None:
        st.session_state[self._notes_key][note.name] = note

    def _int_from_url(self, name: str, default: int, lo: int, hi: int) -> int:
        raw = st.query_params.get(name)
        if raw is None:
            return default
        try:
            number = float(raw.strip())
        except ValueError:
            number = math.nan
        if not math.isfinite(number):
            self._note(UrlNote(name, raw, str(default), clamped=False))
            return default
        value = int(round(number))
        clamped = min(max(value, lo), hi)
        if clamped != number:
            self._note(UrlNote(name, raw, str(clamped), clamped=True))
        return clamped

    def show_notes(self) -> None:
        """Reserve the place, under the page's title, where `sync()` will list every URL value that was
        clamped or ignored (inputs are declared after this point, so the notes are known only at the end)."""
        self._notes_box = st.container()

    def _render_notes(self) -> None:
        with getattr(self, "_notes_box", None) or st.container():
            for note in st.session_state[self._notes_key].values():
                figures = dict(name=note.name, raw=note.raw, used=note.used)
                st.info(t("url_clamped", **figures) if note.clamped else t("url_ignored", **figures), icon="🔗")

    def sync(self) -> None:
        """Show the URL notes, and write every declared input's current value to the URL."""
        self._render_notes()
        for name, key in self._names.items():
            if key in st.session_state:
                value = st.session_state[key]
                if isinstance(value, bool):
                    text = str(value).lower()
                elif isinstance(value, (list, tuple)):
                    text = ",".join(map(str, value))
                else:
                    text = str(value)
                if st.query_params.get(name) != text:
                    st.query_params[name] = text
