"""Fused Softmax Explorer: the home page. Start with `streamlit run app.py`.

Every page lives in pages/ (Streamlit's classic multipage mode) and starts with explorer_ui.setup_page;
the numbers on this page come from softmax_core and from recorded benchmark runs.
"""
import explorer_ui.startup  # noqa: F401  first: one session imports the project while the others wait
import streamlit as st

import softmax_core as sc
from explorer_ui import data, defaults, fmt, layout, pages_registry, quiz
from explorer_ui.i18n import sentences, t
from softmax_core.hardware import dtypes

layout.setup_page("home")
layout.intro("home", title=t("app_name"), lead=t("home_lead"))
layout.device_banner()

M, N = defaults.CHAPTER_M, defaults.CHAPTER_N
traffic = sc.memory_traffic(M, N, dtypes.torch_dtype(defaults.DTYPE))
quiz.ask(quiz.fused_speedup("home_speedup", traffic, M, N, defaults.DTYPE))
left, right = st.columns(2)
with left:
    st.subheader(t("home_why_title"))
    st.markdown(t("home_why", M=M, N=N, naive=fmt.fmt_bytes(traffic.naive_bytes),
                  fused=fmt.fmt_bytes(traffic.fused_bytes), speedup=traffic.predicted_speedup))
    c1, c2, c3 = st.columns(3)
    c1.metric(t("home_naive_bytes"), fmt.fmt_bytes(traffic.naive_bytes))
    c2.metric(t("home_fused_bytes"), fmt.fmt_bytes(traffic.fused_bytes))
    c3.metric(t("home_predicted"), f"{traffic.predicted_speedup:.3f}×")
    measured = data.measured_speedup(defaults.DTYPE, N, M)
    if measured and measured["exact"] and "fused_eff" in measured:     # the speedup, split into its parts
        st.markdown(sentences(t("home_measured_parts", **measured), layout.spread_sentence(measured)))
    elif measured and measured["exact"]:
        st.markdown(sentences(t("home_measured", **measured), layout.spread_sentence(measured)))
    elif measured:
        st.markdown(sentences(t("acc_not_at_shape", asked_M=M, asked_N=N, **measured), layout.spread_sentence(measured)))
    else:
        st.caption(t("home_no_measured"))
with right:
    st.subheader(t("home_story_title"))
    for page in pages_registry.story():
        st.page_link(page.script, label=page.label(), icon=page.icon)
        st.caption(t(page.blurb_key))
layout.page_end()
