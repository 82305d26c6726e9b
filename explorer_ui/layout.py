"""What every page does first and last: page config, language, our own translated navigation, the device
banner; and the link to the next page.

The app uses Streamlit's classic multipage mode (a `pages/` folder, app.py is Home). Streamlit's own
sidebar navigation is hidden (`client.showSidebarNavigation = false`) and drawn here with
`st.page_link`, so that its labels follow the language switch. The pages and their order come from
explorer_ui.pages_registry. In presentation mode the sidebar is folded away and Streamlit's header (which
holds the control that reopens it) is hidden, so a bar at the top of the page keeps the way around: the
previous and next page, the other language, and the way out of the mode.
"""
from __future__ import annotations

import contextlib
import platform
from importlib.metadata import version

import streamlit as st

import softmax_core as sc

from . import data, glossary, pages_registry, present, prewarm, server_options, urlstate
from .i18n import LANGUAGES, language, say, set_language, t

# The browser tab's icon: an emoji, which Streamlit draws itself. A Material icon there would be fetched from
# Google's font server, and a classroom page makes no request outside this server.
TAB_ICON = "⚡"

# Session key: the page this run draws (its registry key), set by setup_page, read by page_end.
CURRENT_PAGE = "layout_current_page"


def setup_page(page: str) -> None:
    """Call first on every page: `page` is its key in explorer_ui.pages_registry ("home", "memory", ...)."""
    prewarm.start_once()      # the server's first page run starts compiling what later pages ask for
    _init_language()
    present.init()            # ?present=1: folded sidebar, larger type, animations fit a 1280 x 720 projector
    notes = _link_notes()     # read before the sidebar writes the values in use back into the URL
    this = pages_registry.page(page)
    st.session_state[CURRENT_PAGE] = this.key
    st.set_page_config(page_title=f"{this.label()} · {t('app_name')}", page_icon=TAB_ICON, layout="wide",
                       initial_sidebar_state=present.sidebar_state())
    present.style()
    _sidebar()
    for note in notes:
        urlstate.show_note(note)


def _link_notes() -> list[urlstate.UrlNote]:
    """The app-wide link values (?lang=, ?present=) that were not understood, each with what is used."""
    notes = []
    raw = urlstate.url_value("lang")
    if raw is not None and raw not in LANGUAGES:
        notes.append(urlstate.UrlNote("lang", raw, LANGUAGES[language()], clamped=False))
    raw = urlstate.url_value(present.URL_NAME)
    if raw is not None and present.parse(raw) is None:
        used = t("url_present_on") if present.is_on() else t("url_present_off")
        notes.append(urlstate.UrlNote(present.URL_NAME, raw, used, clamped=False))
    return notes


def page_end() -> None:
    """Call last on every page: a link to the next page of the story (after the last one, back to Home)."""
    this = pages_registry.page(st.session_state.get(CURRENT_PAGE, pages_registry.home().key))
    after = pages_registry.next_page(this.key)
    st.divider()
    if after is not None:
        st.page_link(after.script, label=t("nav_next", page=after.label()), icon=after.icon)
    else:
        home = pages_registry.home()
        st.page_link(home.script, label=t("nav_back_home", page=home.label()), icon=home.icon)
    prewarm.import_pages_soon()     # the server's first page is drawn: import what the next ones need


def stop_page() -> None:
    """End the page here, as st.stop() does, but with its "Next" link: a page that stops early (bad input,
    nothing to show) still leads on through the story."""
    page_end()
    st.stop()


def _other_language() -> str:
    return next(lang for lang in LANGUAGES if lang != language())


def _present_bar(this: pages_registry.Page, lead: str) -> None:
    """Presentation mode's way around, beside the page's title: the page's introduction (folded), all pages,
    the previous and the next page, the other language, and the way out of the mode. Every control says in
    words what it does (a lab machine may have no emoji font)."""
    before, after = pages_registry.previous_page(this.key), pages_registry.next_page(this.key)
    with st.container(horizontal=True, horizontal_alignment="right", vertical_alignment="center", gap="small",
                      key="present_bar"):
        with st.popover(t("present_about")):
            st.markdown(lead)
        with st.popover(t("present_bar_pages")):
            for entry in pages_registry.PAGES:
                st.page_link(entry.script, label=entry.label(), icon=entry.icon, disabled=entry == this)
        if before is not None:
            st.page_link(before.script, label=t("present_bar_previous"), help=before.label())
        if after is not None:
            st.page_link(after.script, label=t("present_bar_next"), help=after.label())
        other = _other_language()
        st.button(LANGUAGES[other], key="present_bar_lang", on_click=set_language, args=(other,),
                  help=t("present_bar_lang_help"))
        st.button(t("present_exit"), key="present_bar_exit", on_click=present.leave, help=t("present_exit_help"))


def _init_language() -> None:
    """Language: kept in session state across pages; first from ?lang=, else the server's, else the browser's
    locale."""
    if "lang" in st.session_state:
        return
    raw = urlstate.url_value("lang")
    if raw in LANGUAGES:
        set_language(raw)
        return
    if server_options.default_language():      # the server's --lang (softmax-explorer)
        set_language(server_options.default_language())
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
        for entry in pages_registry.PAGES:
            st.page_link(entry.script, label=entry.label(), icon=entry.icon)
        st.divider()
        live = data.live_gpu()
        st.caption(t("sidebar_gpu", name=live.name) if live else t("sidebar_no_gpu"))
        with st.expander(t("about")):
            st.markdown(t("about_text"))
            # versions from the installed packages' metadata: importing altair only for its version would cost
            # the home page's first run a third of a second (no chart there needs it)
            st.caption(f"softmax_core · torch {version('torch')} · triton {version('triton')} · "
                       f"streamlit {st.__version__} · altair {version('altair')} · "
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
        st.info(t("banner_cpu", gpu=data.gpu_by_key(lesson_gpu_key()).name), icon="💻")


def intro(page: str, title: str | None = None, lead: str | None = None) -> None:
    """Title and the page's short explanation (default: its `<page>_title` and `<page>_intro` texts, each
    glossary term's first use linked to its entry). In presentation mode the explanation folds into a button
    in the bar beside the title, which also holds the way around (all pages, previous, next, language, exit):
    one line, leaving the projector's height to the picture."""
    title = title if title is not None else t(f"{page}_title")
    lead = lead if lead is not None else glossary.link_terms(t(f"{page}_intro"))
    if present.is_on():
        head, bar = st.columns([1, 1], vertical_alignment="center")
        head.title(title)
        with bar:
            _present_bar(pages_registry.page(page), lead)
        return
    st.title(title)
    st.markdown(lead)


# A table cell longer than this holds a sentence (a source, a reason). st.dataframe draws its grid on a canvas
# and cuts such a cell at the column's width with no way to read the rest ("why" on the Sharing page), so a
# table with one is drawn as an HTML table, whose cells wrap.
SENTENCE_CHARS = 40


def longest_text(frame) -> int:
    """The length of the longest text in `frame`'s cells and column names."""
    cells = [str(v) for column in frame.columns for v in frame[column].tolist() if isinstance(v, str)]
    return max((len(x) for x in [*map(str, frame.columns), *cells]), default=0)


def show_table(frame) -> None:
    """`frame` without its index, readable at 1280 x 720: a grid (sortable, scrolls) when every cell is short,
    a table whose cells wrap when one holds a sentence."""
    if longest_text(frame) > SENTENCE_CHARS:
        st.table(frame, hide_index=True)
    else:
        st.dataframe(frame, hide_index=True, width="stretch")


def spread_sentence(figures: dict) -> str:
    """How sure a measured speedup is, in words: its interval, what the interval is made of, the verdict
    (softmax_bench.trust's rule). `figures`: data.measured_speedup's answer."""
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


# The lesson's GPU: one for every page of a session. The first page that declares a GPU takes it from its link
# (?gpu=) or the one default (data.default_gpu_key: this machine's GPU, else the catalog's H200); a choice on
# any page is carried to every other, and each page writes it back into its own link.
LESSON_GPU = "lesson_gpu"


def lesson_gpu_key() -> str:
    """The GPU the lesson is on now (a page without a GPU picker of its own, e.g. the padding chain, uses it)."""
    keys = data.gpu_keys()
    chosen = st.session_state.get(LESSON_GPU)
    if chosen in keys:
        return chosen
    raw = urlstate.url_value("gpu")
    return raw if raw in keys else data.default_gpu_key()


def _carry_gpu(key: str) -> None:
    st.session_state[LESSON_GPU] = st.session_state[key]


def gpu_choice(state: urlstate.PageState, where, label: str, *, cache_model: bool = False,
               help: str | None = None) -> tuple[str, sc.GpuSpec]:
    """The page's GPU: the lesson's GPU (LESSON_GPU), chosen in `where`, kept in the URL as `gpu`, labelled
    by name, with vendor_notes under it. Returns the key (what the cached plans take) and its GpuSpec.
    `cache_model`: the page predicts from the size of the last cache before DRAM (say which cache that is)."""
    key = gpu_key_declared(state)
    gpu_key = where.selectbox(label, data.gpu_keys(), key=key, format_func=data.gpu_labeler(),
                              on_change=_carry_gpu, args=(key,), help=help)
    gpu = data.gpu_by_key(gpu_key)
    vendor_notes(gpu, where, cache_model=cache_model)
    return gpu_key, gpu


def gpu_key_declared(state: urlstate.PageState) -> str:
    """Declare the page's `gpu` input, set to the lesson's GPU (the first page of a session reads its link)."""
    keys = data.gpu_keys()
    key = state.choice_key("gpu", lesson_gpu_key(), keys, label=data.gpu_labeler())
    if st.session_state.get(LESSON_GPU) in keys:
        st.session_state[key] = st.session_state[LESSON_GPU]
    else:
        st.session_state[LESSON_GPU] = st.session_state[key]
    return key


def vendor_notes(gpu: sc.GpuSpec, where=st, *, cache_model: bool = False) -> None:
    """Where an AMD GPU is chosen: the pages' NVIDIA words (SM, warp) stand for AMD's CU and wavefront; and,
    on a page that predicts from the cache, that it counts the Infinity Cache, not the per-XCD L2."""
    if gpu.vendor != "amd":
        return
    where.caption(t("amd_terms", warp=gpu.warp_size))
    if cache_model and gpu.infinity_cache_mib:
        where.caption(t("amd_infinity_cache", gpu=gpu.name, l2=f"{gpu.l2_mib:,g}", ic=f"{gpu.infinity_cache_mib:,g}"))
