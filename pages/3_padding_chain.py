"""Padding chain: one row through load -> max -> subtract -> exp -> sum -> divide -> store, with the values
the real kernel recorded (softmax_teaching.tutorial_trace), and the "Break it" variants."""
import explorer_ui.startup  # noqa: F401  first: one session imports the project while the others wait
import numpy as np
import pandas as pd
import streamlit as st

from explorer_ui import charts, code, data, defaults, fmt, layout, padding, present, quiz, slides
from explorer_ui.i18n import bound, has, sentences, t
from explorer_ui.padding import FRAMES, LANE_STATES, MEMORY_STATES
from explorer_ui.player import player
from explorer_ui.urlstate import PageState
from softmax_teaching.tutorial_trace import MAX_TRACE_BLOCK, VARIANTS, launch_flags

# colours of padding.LANE_STATES and padding.MEMORY_STATES, in their order
COLORS = (charts.PALETTE["blue"], "#59627a", charts.PALETTE["light"], charts.PALETTE["orange"],
          charts.PALETTE["red"], charts.PALETTE["green"], "#eceff4", charts.PALETTE["purple"])
MEMORY_COLORS = (charts.PALETTE["green"], charts.PALETTE["yellow"], charts.PALETTE["red"],
                 charts.PALETTE["purple"], "#eceff4")

PRESENT_CODE_CONTEXT = 4     # lines shown around the step's own lines in presentation mode

layout.setup_page("padding")
state = PageState("padding")
layout.intro("padding")
state.show_notes()

kN = state.int_key("N", defaults.CHAPTER_N, 1, MAX_TRACE_BLOCK)
krows = state.int_key("rows", 4, 1, 8)
kvariant = state.choice_key("break", "correct", VARIANTS)
kzoom = state.bool_key("zoom", False)
c1, c2, c3 = st.columns([1, 1, 2])
N = int(c1.number_input(t("cols_N"), 1, MAX_TRACE_BLOCK, step=1, key=kN, help=t("padding_N_help")))
n_rows = c2.slider(t("padding_rows"), 1, 8, key=krows, help=t("padding_rows_help"))
variant = c3.radio(t("padding_break"), VARIANTS, key=kvariant, horizontal=True,
                   format_func=lambda v, tr=bound(): tr(f"padding_variant_{v}"))
krow = state.int_key("row", 0, 0, n_rows - 1)
c1, c2 = st.columns([2, 2])
with c1:
    row = st.slider(t("padding_row"), 0, n_rows - 1, key=krow) if n_rows > 1 else 0
with c2:
    zoom = st.toggle(t("padding_zoom"), key=kzoom, help=t("padding_zoom_help"))

gpu_key = layout.lesson_gpu_key()
try:
    with layout.working("trace", t("acc_wait_trace", rows=n_rows, N=N)):
        trace = data.trace(n_rows, N, num_programs=None, num_stages=None, dtype=defaults.DTYPE, variant=variant,
                           seed=0, poisoned_row=row if variant == "all_neg_inf" else 0, gpu_key=gpu_key,
                           keep_stages=True)
        footprint = data.store_footprint(n_rows, N, row, variant != "no_store_mask", defaults.DTYPE, gpu_key)
except Exception as err:  # e.g. the plan does not fit this GPU: explain instead of failing
    st.error(t("error_generic", error=err))
    state.sync()
    st.stop()

B = trace.block_size
n_pad = B - N
st.markdown(t("padding_block", N=N, B=B, pad=n_pad, programs=trace.num_programs, gpu=trace.plan.gpu.name))
lo = max(0, N - 48) if zoom else 0
lanes_idx = np.arange(lo, B)
state.int_key("step", 0, 0, len(FRAMES) - 1)


def frame_text(step: int) -> str:
    frame = FRAMES[step][0]
    facts = padding.frame_facts(trace, footprint, row, frame)
    text = t(f"padding_frame_{frame}", **facts)
    text_key = f"padding_frame_{frame}_{variant}"
    if n_pad == 0 and variant in ("pad_zero", "no_store_mask"):
        return sentences(text, t("padding_no_padding", **facts))
    if frame == "store" and variant == "no_store_mask":
        return sentences(text, t(text_key, **facts),
                         t("padding_stray_rows", **facts) if footprint.rows_hit() else "",
                         t("padding_stray_past", **facts) if len(footprint.past_matrix) else "")
    claim = padding.frame_claim(trace, row, frame)      # only said where this launch's values bear it out
    text = sentences(text, t(f"padding_claim_{claim}") if claim else "")
    if n_pad == 0 and variant == "correct":              # its sentences are about padded lanes: there are none
        return sentences(text, t("padding_no_padded_lanes", **facts))
    return sentences(text, t(text_key, **facts) if has(text_key) else "")


def figure(step: int) -> charts.Figure:
    frame, stage, _ = FRAMES[step]
    values = trace.stage(row, stage)[lo:]
    states = padding.lane_states(lanes_idx, values, N, frame, variant)
    labels = [t(f"padding_state_{s}") for s in LANE_STATES]
    label_of = dict(zip(LANE_STATES, labels))
    shown_states = [label_of[s] for s in states]
    df = pd.DataFrame({"lane": lanes_idx, "value": np.where(np.isfinite(values), values, np.nan),
                       "shown": [fmt.number(v) for v in values], "state": shown_states})
    strip = pd.DataFrame([{"lane": int(lanes_idx[a]), "lane_end": int(lanes_idx[b - 1]) + 1, "state": shown_states[a],
                           "lanes": f"{lanes_idx[a]}–{lanes_idx[b - 1]}"} for a, b in padding.runs(states)])
    return charts.lanes(df, strip, labels, list(COLORS), x_title=t("padding_lane"), y_title=t("padding_value"),
                        state_title=t("padding_state"), title=t("padding_chart_title", row=row),
                        block_size=B, first_lane=int(lo))


def render(step: int) -> None:
    frame, stage, anchors = FRAMES[step]
    left, right = st.columns([3, 2])
    with left:
        charts.show(figure(step), key="padding_lanes")
        divided = padding.frame_facts(trace, footprint, row, "divide")
        m = st.columns(4)
        m[0].metric(t("padding_metric_max"), fmt.number(trace.row_max[row]) if step >= 1 else "—")
        m[1].metric(t("padding_metric_sum"), fmt.number(trace.row_sum[row]) if step >= 4 else "—")
        m[2].metric(t("padding_metric_out_sum"), divided["out_sum"] if step >= 5 else "—",
                    help=t("padding_metric_out_sum_help"))
        m[3].metric(t("padding_metric_err"), divided["err"] if step >= 6 else "—",
                    help=t("padding_metric_err_help"))
    with right:
        if frame == "store" and variant == "no_store_mask":
            anchors = ("out_ptr", "store_unmasked")
        if frame == "load":
            anchors = anchors + ("pad_value",)
        if frame == "store":
            anchors = anchors + ("store_masked",)
        # the code as this launch ran it: its own PAD_VALUE and STORE_MASKED written in
        flags = launch_flags(variant)
        # on a projector only the lines of this step and a few around them, so they stay above the 720-px fold
        code.kernel_panel(*anchors, flags=flags, caption=t("padding_code_as_launched", pad=code.constexpr_text(
            flags["PAD_VALUE"]), masked=code.constexpr_text(flags["STORE_MASKED"])),
            context=PRESENT_CODE_CONTEXT if present.is_on() else None)
        edge = [c for c in range(max(0, N - 3), min(B, N + 3))]
        near = pd.DataFrame({t("padding_lane"): edge,
                             t("padding_in_row"): ["✓" if c < N else "✗" for c in edge],
                             t("padding_value"): [fmt.number(trace.stage(row, stage)[c]) for c in edge]})
        st.caption(t("padding_edge_caption"))
        st.dataframe(fmt.table(near), hide_index=True, width="stretch")


player("padding", len(FRAMES), render, format_step=frame_text, label=t("padding_step_label"),
       slides=slides.SlideSource("padding_chain", t("nav_padding"),
                                 {"N": N, "rows": n_rows, "row": row, "break": variant}, figure,
                                 shown={t("cols_N"): N, t("padding_rows"): n_rows, t("padding_row"): row,
                                        t("padding_break"): t(f"padding_variant_{variant}")}))
quiz.ask(quiz.padded_lane_after_exp(trace, row))

# -- the whole launch: what landed where ----------------------------------------------------------------
st.subheader(t("padding_memory_title"))
starts, ends, states, rows_of = zip(*padding.memory_segments(padding.memory_status(trace), N, trace.guard_start))
mem_labels = [t(f"padding_mem_{s}") for s in MEMORY_STATES]
mem_label = dict(zip(MEMORY_STATES, mem_labels))
segments = pd.DataFrame({"address": starts, "end": ends, "band": "y", "state": [mem_label[s] for s in states],
                         "row": [str(r) if r >= 0 else t("padding_guard") for r in rows_of]})
left, right = st.columns([3, 2])
with left:
    charts.show(charts.memory_strip(segments, mem_labels, list(MEMORY_COLORS), x_title=t("padding_address"),
                                    state_title=t("padding_state"), title=t("padding_memory_chart")),
                key="padding_memory", height=175)
    wrong = trace.wrong_rows().tolist()
    oob = trace.out_of_bounds_writes
    if variant == "no_store_mask":
        st.markdown(t("padding_launch_nomask", wrong=", ".join(map(str, wrong)) or t("padding_no_row_wrong"), oob=len(oob),
                      programs=trace.num_programs))
    elif variant == "pad_zero":
        st.markdown(t("padding_launch_padzero", wrong=len(wrong), rows=n_rows))
    elif variant == "all_neg_inf":
        st.markdown(t("padding_launch_neginf", row=row))
    else:
        st.markdown(t("padding_launch_correct", rows=n_rows, oob=len(oob)))
with right:
    per_row = pd.DataFrame({
        t("padding_col_row"): np.arange(n_rows), t("padding_col_program"): trace.program,
        t("padding_metric_max"): [fmt.number(v) for v in trace.row_max],
        t("padding_metric_sum"): [fmt.number(v) for v in trace.row_sum],
        t("padding_metric_out_sum"): [fmt.number(float(np.sum(trace.output[r]))) for r in range(n_rows)],
        t("padding_col_ok"): ["✗" if r in wrong else "✓" for r in range(n_rows)]})
    st.dataframe(fmt.table(per_row), hide_index=True, width="stretch")

layout.page_end()
state.sync()
