"""Step-by-step animation: a Play/Pause button, a step slider and one frame, all inside one fragment.

While playing, a fragment run draws a frame, waits, and reruns itself (`st.rerun(scope="fragment")`): the
server paces the animation, one frame after the other in the same script run loop. Only the fragment is
redrawn (the rest of the page stays put), and the charts keep their spec while their data change, so the
browser updates them in place, without flicker. Nothing queues: the next frame is asked for only once the
last one is drawn, a click waits for at most one pause, and the pause grows with the time a frame took, so
under load the animation slows down instead of piling up (docs/classroom.md tells why a browser timer,
`st.fragment(run_every=...)`, is not used).

The button is inside the fragment, so Play and Pause rerun only the fragment. A full run of the page (any
other widget, the language, coming back to the page) cannot keep the loop going (Streamlit refuses a
fragment-scoped rerun there), so it pauses the animation: the button then says Play, never a Pause that
nothing follows.
"""
from __future__ import annotations

import itertools
import time
from typing import Callable

import streamlit as st

from . import urlstate
from .i18n import t

DEFAULT_INTERVAL_S = 0.9
# The pause after a frame is at least as long as the frame took to draw: a busy server spends at most half
# of each student's animation drawing it.
MIN_PAUSE_S = 0.05


def _toggle(playing_key: str, step_key: str, last: int) -> None:
    playing = not st.session_state.get(playing_key, False)
    if playing and st.session_state.get(step_key, 0) >= last:
        st.session_state[step_key] = 0          # Play at the end starts over
    st.session_state[playing_key] = playing


def next_frame(step: int, last: int) -> tuple[int, bool]:
    """The step a playing animation shows next, and whether it still plays after showing it."""
    step = min(step + 1, last)
    return step, step < last


def pause_after(frame_s: float, interval: float) -> float:
    return max(interval - frame_s, frame_s, MIN_PAUSE_S)


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
    # Streamlit calls `frame` once inline in the page's full run, then again for each fragment rerun: the
    # first call of this closure is the full run.
    calls = itertools.count()

    @st.fragment
    def frame() -> None:
        full_run = next(calls) == 0
        playing = bool(st.session_state.get(playing_key)) and last > 0
        if playing and full_run:
            playing = False                     # a full run pauses (see the module's docstring)
        if playing:
            step, playing = next_frame(st.session_state.get(step_key, 0), last)
            st.session_state[step_key] = step   # before the slider is created
        st.session_state[playing_key] = playing
        started = time.monotonic()
        st.button(t("pause") if playing else t("play"), key=f"{prefix}_play", icon="⏸️" if playing else "▶️",
                  on_click=_toggle, args=(playing_key, step_key, last), disabled=last == 0)
        if last > 0:
            step = st.slider(label or t("step"), 0, last, key=step_key, format=None)
        else:
            step = 0
        if format_step is not None:
            st.markdown(format_step(step))
        urlstate.write("step", step)       # a fragment run ends before the page's sync(): write it here
        render(step)
        if playing:
            time.sleep(pause_after(time.monotonic() - started, interval))
            st.rerun(scope="fragment")          # the next frame, in this same run loop

    frame()
