"""Step-by-step animation: Reset, Previous, Play/Pause, Next, a speed choice, a step slider and one frame,
all inside one fragment; below it, the slide export of the whole animation.

While playing, a fragment run draws a frame, waits, and reruns itself (`st.rerun(scope="fragment")`): the
server paces the animation, one frame after the other in the same script run loop. Only the fragment is
redrawn (the rest of the page stays put), and the charts keep their spec while their data change, so the
browser updates them in place, without flicker.

Why not `st.fragment(run_every=...)` (this player's first version, see docs/classroom.md): that timer lives
in the browser and sends a rerun every interval whether or not the server has drawn the last one. With
twenty students playing on two cores the server fell behind, the requests queued up behind each other and
behind the Play/Pause clicks, and Streamlit 1.67 then dropped messages between runs: Pause clicks whose
redrawn button never arrived, and pages left blank by "Bad delta path index". Here nothing queues: the next
frame is asked for only once the last one is drawn, a click waits for at most one pause, and the pause
grows with the time a frame took, so under load the animation slows down instead of piling up.

The buttons are inside the fragment, so they rerun only the fragment. A click lands while the fragment
sleeps between two frames; Streamlit runs it as soon as that sleep ends, before the next frame would have
been drawn, so Pause (or Previous, Next, Reset) takes effect within one frame. A full run of the page (any
other widget, the language, coming back to the page) cannot keep the loop going (Streamlit refuses a
fragment-scoped rerun there), so it pauses the animation: the button then says Play, never a Pause that
nothing follows. The step is written to the URL every frame, so a copied link opens at that step.
"""
from __future__ import annotations

import itertools
import time
from typing import Callable

import streamlit as st

from . import present, urlstate
from .i18n import t

DEFAULT_INTERVAL_S = 0.9
# The pause after a frame is at least as long as the frame took to draw: a busy server spends at most half
# of each student's animation drawing it.
MIN_PAUSE_S = 0.05
SPEEDS = (0.5, 1.0, 2.0)         # multiples of the default pace


def _toggle(playing_key: str, step_key: str, last: int) -> None:
    playing = not st.session_state.get(playing_key, False)
    if playing and st.session_state.get(step_key, 0) >= last:
        st.session_state[step_key] = 0          # Play at the end starts over
    st.session_state[playing_key] = playing


def stepped(step: int, move: str, last: int) -> int:
    """Where Previous / Next / Reset take the animation from `step` (they also pause it)."""
    if move == "reset":
        return 0
    if move == "prev":
        return max(step - 1, 0)
    if move == "next":
        return min(step + 1, last)
    raise ValueError(f"unknown move {move!r}")


def _move(playing_key: str, step_key: str, last: int, move: str) -> None:
    st.session_state[playing_key] = False
    st.session_state[step_key] = stepped(int(st.session_state.get(step_key, 0)), move, last)


def next_frame(step: int, last: int) -> tuple[int, bool]:
    """The step a playing animation shows next, and whether it still plays after showing it."""
    step = min(step + 1, last)
    return step, step < last


def pause_after(frame_s: float, interval: float) -> float:
    return max(interval - frame_s, frame_s, MIN_PAUSE_S)


def interval_for(speed: float | None, base: float = DEFAULT_INTERVAL_S) -> float:
    return base / (speed if speed in SPEEDS else 1.0)


def _speed_label(speed: float) -> str:
    return f"{speed:g}×"


def player(prefix: str, n_steps: int, render: Callable[[int], None], *, label: str | None = None,
           interval: float = DEFAULT_INTERVAL_S, format_step: Callable[[int], str] | None = None,
           slides=None) -> None:
    """Draw the controls and the current frame. `render(step)` draws one frame (inside the fragment).

    Keys: "<prefix>_play" (the button), "<prefix>_prev" / "_next" / "_reset", "<prefix>_speed",
    "<prefix>_step" (the slider), "<prefix>_playing" (the state). The step's initial value (e.g. from the
    URL) must already be in session state under "<prefix>_step". `slides`, when given, is a
    `slides.SlideSource` and adds the GIF / PNG export under the animation.
    """
    step_key, playing_key, speed_key = f"{prefix}_step", f"{prefix}_playing", f"{prefix}_speed"
    last = max(n_steps - 1, 0)
    if st.session_state.get(step_key, 0) > last:
        st.session_state[step_key] = last
    st.session_state.setdefault(step_key, 0)
    st.session_state.setdefault(speed_key, 1.0)
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
        current = int(st.session_state.get(step_key, 0))
        # Presentation mode puts the step's text beside the controls, so that the picture starts higher up
        # and fits a 1280 x 720 projector; otherwise the text sits under the slider.
        presenting = present.is_on()
        controls, words = st.columns([5, 6]) if presenting else (st.container(),) * 2
        with controls:
            reset, prev, play, nxt = st.columns([1, 1, 2.2, 1], vertical_alignment="center")
            args = (playing_key, step_key, last)
            # Each button says what it does in words beside its icon (Material Symbols: Streamlit ships the font,
            # where an emoji would be an empty box on a machine without an emoji font).
            reset.button(t("player_reset_label"), key=f"{prefix}_reset", icon=":material/first_page:",
                         help=t("player_reset"), on_click=_move, args=args + ("reset",), disabled=last == 0,
                         width="stretch")
            prev.button(t("player_prev_label"), key=f"{prefix}_prev", icon=":material/chevron_left:",
                        help=t("player_prev"), on_click=_move, args=args + ("prev",), disabled=current <= 0,
                        width="stretch")
            play.button(t("pause") if playing else t("play"), key=f"{prefix}_play",
                        icon=":material/pause:" if playing else ":material/play_arrow:", on_click=_toggle,
                        args=args, disabled=last == 0, width="stretch")
            nxt.button(t("player_next_label"), key=f"{prefix}_next", icon=":material/chevron_right:",
                       icon_position="right", help=t("player_next"), on_click=_move, args=args + ("next",),
                       disabled=current >= last, width="stretch")
            along, pace = st.columns([3, 2], vertical_alignment="bottom")
            with along:
                if last > 0:
                    step = st.slider(label or t("step"), 0, last, key=step_key, format=None,
                                     label_visibility="collapsed" if presenting else "visible")
                else:
                    step = 0
            speed = pace.segmented_control(t("player_speed"), SPEEDS, key=speed_key, format_func=_speed_label,
                                           label_visibility="collapsed", required=True, help=t("player_speed"))
        if format_step is not None:
            with words:
                st.markdown(format_step(step))
        urlstate.write("step", step)       # a fragment run ends before the page's sync(): write it here
        render(step)
        if playing:
            time.sleep(pause_after(time.monotonic() - started, interval_for(speed, interval)))
            st.rerun(scope="fragment")          # the next frame, in this same run loop

    frame()
    if slides is not None:
        from . import slides as slides_module

        slides_module.export_controls(slides, n_steps, key=prefix)
