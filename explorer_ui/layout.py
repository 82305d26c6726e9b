"""What every page does first: page config, language, our own translated navigation, the device banner.

The app uses Streamlit's classic multipage mode (a `pages/` folder, app.py is Home). Streamlit's own
sidebar navigation is hidden (`client.showSidebarNavigation = false`) and drawn here with
`st.page_link`, so that its labels follow the language switch.
"""
from __future__ import annotations

import contextlib
import platform

import streamlit as st

import softmax_core as sc

from . import data, glossary, present, prewarm, urlstate
from .fmt import fmt_bytes  # noqa: F401  (pages and the glossary ask layout for it; it lives in fmt)
from .i18n import LANGUAGES, language, say, set_language, t

# (script path relative to app.py, translation key of its label, icon)
PAGES = (
    ("app.py", "nav_home", "🏠"),
    ("pages/2_memory_traffic.py", "nav_memory", "🧮"),
    ("pages/3_padding_chain.py", "nav_padding", "🧩"),
    ("pages/4_row_schedule.py", "nav_schedule", "🗂️"),
    ("pages/5_gpu_occupancy.py", "nav_gpu", "🔧"),
    ("pages/6_benchmark.py", "nav_bench", "⏱️"),
    ("pages/7_long_rows.py", "nav_longrows", "📏"),
    ("pages/8_sharing_a_row.py", "nav_sharing", "🤝"),
    ("pages/9_chapter_notes.py", "nav_chapter", "📖"),
    ("pages/10_glossary.py", "nav_glossary", "📚"),
    ("pages/11_your_kernel.py", "nav_your_kernel", "🧪"),
)


def setup_page(page: str) -> None:
    """Call first on every page: `page` is the nav key's suffix ("home", "memory", ...)."""
    prewarm.start_once()      # the server's first page run starts compiling what later pages ask for
    _init_language()
    present.init()            # ?present=1: folded sidebar, larger type, animations fit a 1280 x 720 projector
    icon = next((i for _, key, i in PAGES if key == f"nav_{page}"), "⚡")
    st.set_page_config(page_title=f"{t(f'nav_{page}')} · {t('app_name')}", page_icon=icon, layout="wide",
                       initial_sidebar_state=present.sidebar_state())
    present.style()
    _sidebar()


def _init_language() -> None:
    """Language: kept in session state across pages; first from ?lang=, else the browser's locale."""
    if "lang" in st.session_state:
        return
    raw = urlstate.url_value("lang")
    if raw in LANGUAGES:
        set_language(raw)
        return
    locale = None
    try:
        locale = st.context.locale
    except Exception:
        pass
    set_language("zh" if isinstance(locale, str) and locale.lower().startswith("zh") else "en")


def _on_language_change() -> None:
    set_language(st.session_state["sidebar_lang"])


def _sidebar() -> None:
    st.session_state["sidebar_lang"] = language()
    with st.sidebar:
        st.selectbox("Language / 语言", list(LANGUAGES), format_func=LANGUAGES.get, key="sidebar_lang",
                     on_change=_on_language_change)
        present.toggle(t("present_toggle"), t("present_help"))
        st.markdown(f"**{t('app_name')}**")
        for path, key, icon in PAGES:
            st.page_link(path, label=t(key), icon=icon)
        st.divider()
        live = data.live_gpu()
        st.caption(t("sidebar_gpu", name=live.name) if live else t("sidebar_no_gpu"))
        with st.expander(t("about")):
            import altair
            import torch
            import triton

            st.markdown(t("about_text"))
            st.caption(f"softmax_core · torch {torch.__version__} · triton {triton.__version__} · "
                       f"streamlit {st.__version__} · altair {altair.__version__} · "
                       f"Python {platform.python_version()}")
            st.caption(say(sc.runtime.backend()))
    urlstate.write("lang", language())
    present.write_url()


def device_banner() -> None:
    """Which machine the kernels run on, in one box: the live GPU's figures, or the interpreter."""
    live = data.live_gpu()
    if live is not None:
        st.success(t("banner_gpu", name=live.name, sms=live.multiprocessor_count, regs=live.max_num_regs,
                     smem=live.max_shared_mem, warp=live.warp_size), icon="🟢")
    else:
        st.info(t("banner_cpu", gpu=sc.default_gpu().name), icon="💻")


def intro(page: str) -> None:
    """Title and the page's short explanation (in presentation mode folded into a button beside the title,
    to leave the projector's height to the picture)."""
    if present.is_on():
        head, more = st.columns([5, 1], vertical_alignment="center")
        head.title(t(f"{page}_title"))
        with more.popover(t("present_about"), width="stretch"):
            st.markdown(glossary.link_terms(t(f"{page}_intro")))
        return
    st.title(t(f"{page}_title"))
    st.markdown(glossary.link_terms(t(f"{page}_intro")))   # each glossary term's first use links to its entry


def spread_sentence(figures: dict) -> str:
    """How sure a measured speedup is, in words: its interval, what the interval is made of, the verdict
    (explorer_ui.measured's rule). `figures`: data.measured_speedup's answer."""
    return t("acc_measured_spread", lo=figures["lo"], hi=figures["hi"], kind=t(f"acc_kind_{figures['spread_kind']}"),
             verdict=t(f"acc_verdict_{figures['verdict']}"))


# -- first-time waits ------------------------------------------------------------------------------------------
# How long real work took in this server (compiles, traces), per kind: the next wait of that kind is announced
# with the median. Only waits longer than WAIT_WORTH_SAYING count; a cache hit is not "work".
WAIT_WORTH_SAYING = 0.3
_waits: dict[str, list[float]] = {}


def expected_seconds(kind: str) -> float | None:
    """The median of this server's recorded waits of `kind`, or None before the first one."""
    seen = sorted(_waits.get(kind, ()))
    return seen[len(seen) // 2] if seen else None


def record_wait(kind: str, seconds: float) -> None:
    if seconds >= WAIT_WORTH_SAYING:
        _waits.setdefault(kind, []).append(seconds)
        del _waits[kind][:-20]


@contextlib.contextmanager
def working(kind: str, what: str):
    """A spinner that says what is being done and about how long it takes the first time (this server's own
    median for `kind`, else that it can take several seconds), with the time spent so far. Cached work
    returns before the spinner is seen."""
    import time

    expected = expected_seconds(kind)
    about = t("acc_wait_about", seconds=expected) if expected else t("acc_wait_first")
    start = time.perf_counter()
    with st.spinner(f"{what} {about}", show_time=True):
        yield
    record_wait(kind, time.perf_counter() - start)


def gpu_choice(state: urlstate.PageState, where, label: str) -> tuple[str, sc.GpuSpec]:
    """The page's GPU: a catalog (or live) GPU chosen in `where`, kept in the URL as `gpu`, labelled by
    name. Returns the key (what the cached plans take) and its GpuSpec."""
    key = state.choice_key("gpu", data.default_gpu_key(), data.gpu_keys())
    gpu_key = where.selectbox(label, data.gpu_keys(), key=key, format_func=data.gpu_labeler())
    return gpu_key, data.gpu_by_key(gpu_key)
