"""Presentation mode: for a projector at 1280 x 720. `?present=1` in a link or the sidebar's switch turns it
on for the session (it then follows the teacher from page to page).

What changes: the sidebar starts folded away, the type is larger, the page's margins and the gaps between
blocks shrink, the page's introduction folds into a button, and Streamlit's header (its menu, the control that
reopens the sidebar, and the "Running…" indicator with its Stop button) is hidden, so that on an animated page
the player's controls and the picture they drive are on one screen. The way around stays on screen: a bar beside
every page's title (explorer_ui.layout.intro) lists all pages, links the previous and next one, switches the
language and leaves the mode. The CSS is the only styling the app adds; it targets Streamlit's
data-testid attributes, which Streamlit's own tests rely on too.

Streamlit's running indicator is hidden in normal mode as well while a page animates: every frame is a
script run, and the indicator would otherwise flash "Running… Stop" in the corner once per frame. Pause is
the animation's stop button; a page's long computations show their own spinner.
"""
from __future__ import annotations

import streamlit as st

from . import server_options, urlstate

URL_NAME = "present"
STATE_KEY = "present"
TOGGLE_KEY = "sidebar_present"
TRUE_WORDS = {"1", "true", "yes", "on"}
FALSE_WORDS = {"0", "false", "no", "off"}

# The largest picture an animated page may draw in presentation mode, in CSS pixels: a 720-pixel-high window
# keeps about 160 px for the browser's own bars; the player's buttons, slider and caption take ~170.
CHART_HEIGHT = 220

_HIDE_RUNNING = """
[data-testid="stStatusWidget"] { visibility: hidden; }
"""

# What keeps every page readable at 1280 x 720 with the sidebar open (about 900 px left for the page), in both
# modes. Streamlit cuts a metric's label and value that do not fit with an ellipsis ("limited by: regist…",
# "12,30…"): here they wrap instead, and the value's type is a little smaller so that a figure with its unit
# stays on one line in a quarter of the page. The page's side margins shrink from Streamlit's 5rem to 2rem.
_FIT = """
[data-testid="stMainBlockContainer"] { padding-left: 2rem; padding-right: 2rem; }
[data-testid="stMetricLabel"] .stMarkdownEllipsis, [data-testid="stMetricValue"] .stMarkdownEllipsis {
  white-space: normal; overflow: visible; text-overflow: clip; }
[data-testid="stMetricLabel"] p { white-space: normal; overflow-wrap: break-word; }
[data-testid="stMetricValue"] { font-size: 1.75rem; }
[data-testid="stMetricValue"] p { white-space: normal; overflow-wrap: break-word; }
"""

_PRESENT = """
[data-testid="stHeader"] { display: none; }
[data-testid="stMainBlockContainer"] { padding-top: 0.6rem; padding-bottom: 1rem; padding-left: 2rem;
  padding-right: 2rem; max-width: 100%; }
[data-testid="stMain"] { font-size: 1.12rem; }
[data-testid="stMain"] h1 { font-size: 1.5rem; padding: 0 0 0.2rem 0; }
[data-testid="stMain"] h2 { font-size: 1.4rem; padding: 0.3rem 0; }
[data-testid="stMain"] [data-testid="stVerticalBlock"] { gap: 0.5rem; }
[data-testid="stMain"] [data-testid="stMarkdownContainer"] p { margin-bottom: 0.2rem; }
[data-testid="stMain"] [data-testid="stWidgetLabel"] p { font-size: 1rem; }
[data-testid="stMain"] [data-testid="stMetricValue"] { font-size: 1.6rem; }
.st-key-present_bar { gap: 0.4rem; flex-wrap: nowrap; }
.st-key-present_bar button, .st-key-present_bar a { min-height: 2rem; padding: 0.1rem 0.6rem; }
.st-key-present_bar p { font-size: 0.9rem; }
"""


def parse(raw: str | None) -> bool | None:
    """True / False for a URL value that says so, None for anything else (ignored)."""
    if raw is None:
        return None
    word = raw.strip().lower()
    return True if word in TRUE_WORDS else False if word in FALSE_WORDS else None


# The URL value this session last applied or wrote: a ?present= that differs from it is new (a link was
# opened) and wins over the session's state; the same value is our own echo and changes nothing.
_URL_SEEN_KEY = "present__url_seen"


def init() -> None:
    """Before the page config: take ?present= from a link that was just opened."""
    raw = urlstate.url_value(URL_NAME)
    if raw != st.session_state.get(_URL_SEEN_KEY):
        asked = parse(raw)
        if asked is not None:
            st.session_state[STATE_KEY] = asked
        st.session_state[_URL_SEEN_KEY] = raw
    st.session_state.setdefault(STATE_KEY, server_options.present_by_default())   # softmax-explorer's default


def is_on() -> bool:
    return bool(st.session_state.get(STATE_KEY, False))


def sidebar_state() -> str:
    return "collapsed" if is_on() else "expanded"


def _on_toggle() -> None:
    st.session_state[STATE_KEY] = bool(st.session_state[TOGGLE_KEY])


def leave() -> None:
    """A callback: presentation mode off for this session (the bar's exit button)."""
    st.session_state[STATE_KEY] = False


def toggle(label: str, help_text: str) -> None:
    """The sidebar's switch; call inside `with st.sidebar`."""
    st.session_state[TOGGLE_KEY] = is_on()
    st.toggle(label, key=TOGGLE_KEY, on_change=_on_toggle, help=help_text)


def write_url() -> None:
    """Keep the URL saying what the session does, so a copied link keeps presentation mode."""
    if is_on():
        urlstate.write(URL_NAME, "1")
        st.session_state[_URL_SEEN_KEY] = "1"
    else:
        urlstate.drop(URL_NAME)
        st.session_state[_URL_SEEN_KEY] = None


def style() -> None:
    """The CSS for this run: always the hidden running indicator and the rules that fit 1280 x 720, and the
    presentation rules when on."""
    css = _HIDE_RUNNING + _FIT + (_PRESENT if is_on() else "")
    st.html(f"<style>{css}</style>")


def chart_height(default: int | None) -> int | None:
    """The height a chart gets: capped in presentation mode, the page's own otherwise. A chart that sizes
    itself (None: e.g. two charts stacked in one) keeps its own; its builder uses `compact`."""
    if not is_on() or default is None:
        return default
    return min(default, CHART_HEIGHT)


def pick(normal, presenting):
    """What a chart builder uses in presentation mode instead of its normal value (a smaller height, a
    legend beside the chart instead of under it)."""
    return presenting if is_on() else normal
