"""Glossary: every term the chapter leans on, in our own words, with its figure on the chosen GPU."""
import explorer_ui.startup  # noqa: F401  first: one session imports the project while the others wait
import streamlit as st

import softmax_core as sc
from explorer_ui import data, defaults, glossary, layout, pages_registry, quiz, urlstate
from explorer_ui.i18n import t
from explorer_ui.urlstate import PageState

layout.setup_page("glossary")
state = PageState("glossary")
layout.intro("glossary")
state.show_notes()

kN = state.int_key("N", defaults.CHAPTER_N, 1, 65536)
c1, c2 = st.columns([2, 1])
gpu_key, gpu = layout.gpu_choice(state, c1, t("glossary_gpu"))
N = int(c2.number_input(t("glossary_N"), 1, 65536, step=1, key=kN))
M = defaults.CHAPTER_M
try:
    plan = data.launch_plan(M, N, defaults.DTYPE, gpu_key)
except Exception as err:      # a GPU the kernel cannot be compiled for: definitions still show
    plan = None
    st.warning(t("glossary_plan_failed", error=err))
values = glossary.figure_values(gpu, plan, M, N)
quiz.ask(quiz.bandwidth_floor("glossary_floor", gpu, M, N, sc.bytes_moved(M, N, 4)))


def entry(term: str, page: pages_registry.Page) -> None:
    st.subheader(t(f"gloss_{term}_term"), anchor=glossary.anchor(term))
    st.markdown(t(f"gloss_{term}_def"))
    figure = glossary.figure_text(term, values)
    if figure:
        st.markdown(f"📏 **{t('glossary_figure', gpu=gpu.name)}** {figure}")
    st.page_link(page.script, label=t("glossary_where", page=page.label()), icon=page.icon)


asked = urlstate.url_value(glossary.TERM_PARAM)         # a link from another page names its term
if asked in glossary.TERM_KEYS:
    with st.container(border=True):
        entry(asked, glossary.page_of(asked))
for term in glossary.TERM_KEYS:
    if term != asked:
        entry(term, glossary.page_of(term))
layout.page_end()

state.sync()
