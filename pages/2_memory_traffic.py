"""Memory traffic: the naive five kernels against one fused kernel, counted by softmax_core.memory."""
import pandas as pd
import streamlit as st

import softmax_core as sc
from explorer_ui import charts, code, data, defaults, layout
from explorer_ui.i18n import t
from explorer_ui.player import player
from explorer_ui.urlstate import PageState
from softmax_core import dtypes

layout.setup_page("memory")
state = PageState("memory")
layout.intro("memory")
state.show_notes()

kM = state.int_key("M", defaults.CHAPTER_M, 1, 1_048_576)
kN = state.int_key("N", defaults.CHAPTER_N, 1, 1_048_576)
kdtype = state.choice_key("dtype", defaults.DTYPE, data.DTYPE_NAMES)
c1, c2, c3 = st.columns(3)
M = c1.number_input(t("rows_M"), 1, 1_048_576, step=1, key=kM)
N = c2.number_input(t("cols_N"), 1, 1_048_576, step=1, key=kN)
dtype = c3.selectbox(t("dtype"), data.DTYPE_NAMES, key=kdtype)

traffic = sc.memory_traffic(int(M), int(N), dtypes.torch_dtype(dtype))
steps = list(traffic.naive_steps)
n_frames = len(steps) + 1                      # each naive kernel, then the fused one
state.int_key("step", 0, 0, n_frames - 1)
step_names = [f"{i} {t(f'memory_step_{s.name}')}" for i, s in enumerate(steps, 1)] + [t("memory_step_fused")]
naive_label, fused_label = t("memory_naive", n=len(steps)), t("memory_fused")


def frame_text(step: int) -> str:
    if step < len(steps):
        s = steps[step]
        so_far = sum(x.bytes for x in steps[: step + 1])
        return t("memory_frame_naive", k=step + 1, n=len(steps), code=s.code, read=s.elements_read,
                 written=s.elements_written, bytes=layout.fmt_bytes(s.bytes), total=layout.fmt_bytes(so_far))
    return t("memory_frame_fused", read=traffic.fused.elements_read, written=traffic.fused.elements_written,
             bytes=layout.fmt_bytes(traffic.fused_bytes), naive=layout.fmt_bytes(traffic.naive_bytes))


def render(step: int) -> None:
    rows = [{"impl": naive_label, "step": step_names[i], "order": i, "code": s.code, "read": s.elements_read,
             "written": s.elements_written, "mb": s.bytes / 1e6, "active": i <= step}
            for i, s in enumerate(steps)]
    rows.append({"impl": fused_label, "step": step_names[-1], "order": 0, "code": traffic.fused.code,
                 "read": traffic.fused.elements_read, "written": traffic.fused.elements_written,
                 "mb": traffic.fused_bytes / 1e6, "active": step == len(steps)})
    left, right = st.columns([3, 2])
    with left:
        charts.show(charts.stacked_traffic(pd.DataFrame(rows), x_title=t("memory_x"), y_title=t("memory_y"),
                                           color_title=t("memory_color"), title=t("memory_chart_title"),
                                           steps=step_names), key="memory_chart", height=260)
    with right:
        if step < len(steps):
            code.naive_panel(steps[step].code, caption=t("memory_naive_caption"))
        else:
            code.kernel_panel("load", "store", caption=t("kernel_caption"), context=1)


player("memory", n_frames, render, format_step=frame_text)

st.subheader(t("memory_totals_title"))
table = pd.DataFrame([{t("memory_col_step"): step_names[i], t("memory_col_code"): s.code,
                       t("memory_col_read"): s.elements_read, t("memory_col_written"): s.elements_written,
                       t("memory_col_bytes_read"): s.bytes_read, t("memory_col_bytes_written"): s.bytes_written}
                      for i, s in enumerate(steps + [traffic.fused])])
st.dataframe(table, hide_index=True, width="stretch")
left, right = st.columns([3, 2])
with left:
    st.markdown(t("memory_formula", M=int(M), N=int(N), naive=traffic.naive_elements, fused=traffic.fused_elements,
                  elt=traffic.element_size, **sc.memory.traffic_formulas()))
with right:
    a, b = st.columns(2)
    a.metric(t("memory_predicted"), f"{traffic.predicted_speedup:.2f}×", help=t("memory_predicted_help"))
    measured = data.measured_speedup(dtype, int(N))
    if measured:
        b.metric(t("memory_measured"), f"{measured['speedup']:.2f}×",
                 help=t("memory_measured_help", **measured))
        st.caption(t("memory_measured_caption", **measured))
    else:
        b.metric(t("memory_measured"), "—")
        st.caption(t("memory_no_measured"))

table = data.speedup_table(dtype)
if table is not None:
    curve = table.melt(id_vars=["N"], value_vars=["predicted", "measured"], var_name="kind", value_name="speedup")
    curve["kind"] = curve["kind"].map({"predicted": t("memory_predicted"), "measured": t("memory_measured")})
    st.subheader(t("memory_curve_title"))
    left, right = st.columns([3, 2])
    with left:
        charts.show(charts.speedup_lines(curve, x_title=t("cols_N"), y_title=t("memory_speedup_axis"),
                                         color_title=t("memory_kind"), title=t("memory_curve_chart")),
                    key="memory_curve")
    with right:
        shown = table[["N", "M", "predicted", "measured"]].round(2)
        st.dataframe(shown.rename(columns={"predicted": t("memory_predicted"), "measured": t("memory_measured")}),
                     hide_index=True, width="stretch")
    st.caption(t("memory_curve_caption", gpu=table["gpu"].iloc[0], date=table["date"].iloc[0],
                 M=int(table["M"].iloc[0])))

state.sync()
