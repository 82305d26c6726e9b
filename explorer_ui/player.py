"""Step-by-step animation: a Play/Pause button, a step slider, and a fragment that redraws one frame.

The frame runs inside `st.fragment(run_every=...)`, so while playing only the fragment reruns (the rest of
the page stays put) and the charts it draws keep their spec: only their data change, which the browser
applies in place, without flicker. The button sits outside the fragment: its callback flips the state
and the full rerun that follows re-evaluates `run_every` (a running timer cannot be stopped from inside).
"""
from __future__ import annotations

from typing import Callable

import streamlit as st

from .i18n import t

DEFAULT_INTERVAL_S = 0.9


def _toggle(playing_key: str, step_key: str, last: int) -> None:
    playing = not st.session_state.get(playing_key, False)
    if playing and st.session_state.get(step_key, 0) >= last:
        st.session_state[step_key] = 0          # Play at the end starts over
    st.session_state[playing_key] = playing


def player(prefix: str, n_steps: int, render: Callable[[int], None], *, label: str | None = None,
           interval: float = DEFAULT_INTERVAL_S, format_step: Callable[[int], str] | None = None) -> None:
    """Draw the controls and the current frame. `render(step)` draws one frame (inside the fragment).

    Keys: "<prefix>_play" (the button), "<prefix>_step" (the slider), "<prefix>_playing" (the state).
    The step's initial value (e.g. from the URL) must already be in session state under "<prefix>_step".
    """
    step_key, playing_key = f"{prefix}_step", f"{prefix}_playing"
    last = max(n_steps - 1, 0)
    if st.session_state.get(step_key, 0) > last:
        st.session_state[step_key] = last
    st.session_state.setdefault(step_key, 0)
    playing = bool(st.session_state.get(playing_key, False)) and last > 0
    st.button(t("pause") if playing else t("play"), key=f"{prefix}_play", icon="⏸️" if playing else "▶️",
              on_click=_toggle, args=(playing_key, step_key, last), disabled=last == 0)

    @st.fragment(run_every=interval if playing else None)
    def frame() -> None:
        if st.session_state.get(playing_key) and last > 0:
            nxt = st.session_state.get(step_key, 0) + 1
            if nxt > last:
                st.session_state[playing_key] = False
                st.rerun()                      # a full rerun: the timer stops, the button says Play
            st.session_state[step_key] = nxt    # before the slider is created
        if last > 0:
            step = st.slider(label or t("step"), 0, last, key=step_key, format=None)
        else:
            step = 0
        if format_step is not None:
            st.markdown(format_step(step))
        if st.query_params.get("step") != str(step):
            st.query_params["step"] = str(step)
        render(step)

    frame()
