"""Glossary: every term the chapter leans on, in our own words, with its figure on the chosen GPU."""
import streamlit as st

import softmax_core as sc
from explorer_ui import data, defaults, glossary, layout, quiz, urlstate
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
labels = {path: (t(key), icon) for path, key, icon in layout.PAGES}



def entry(term: str, page: str) -> None:
    st.subheader(t(f"gloss_{term}_term"), anchor=glossary.anchor(term))
    st.markdown(t(f"gloss_{term}_def"))
    figure = glossary.figure_text(term, values)
    if figure:
        st.markdown(f"📏 **{t('glossary_figure', gpu=gpu.name)}** {figure}")
    label, icon = labels.get(page, (None, None))
    if label:
        st.page_link(page, label=t("glossary_where", page=label), icon=icon)


asked = urlstate.url_value(glossary.TERM_PARAM)         # a link from another page names its term
if asked in glossary.TERM_KEYS:
    with st.container(border=True):
        entry(asked, glossary.page_of(asked))
for term, page in glossary.TERMS:
    if term != asked:
        entry(term, page)

state.sync()
