"""Sharing a row: the split kernel's exchange of (max, sum) words animated from a real trace, why its programs
must all be resident, which path plan_softmax takes for each N and why, and the same merge in FlashAttention."""
import explorer_ui.startup  # noqa: F401  first: one session imports the project while the others wait
import numpy as np
import pandas as pd
import streamlit as st

from explorer_ui import charts, code, data, defaults, fmt, layout, quiz, slides
from explorer_ui import long_row_frames as lr
from explorer_ui.i18n import bound, plan_said, t, toolchain_said
from explorer_ui.player import player
from explorer_ui.urlstate import PageState
from softmax_teaching import long_row_trace as lrt
from softmax_teaching.long_row_trace import MAX_TRACE_VALUES, attention_walk
from softmax_core.kernels.shared_rows import softmax_split_kernel

MAX_SPLIT = 16
PATHS = lr.PATH_NAMES[1:]              # rows, tiled, split: the paths plan_softmax chooses between
# The FlashAttention example reads the trace page 7 opens with, so its numbers are the ones seen there.
FA_N, FA_TILE, FA_PATTERN = 8192, 1024, "rising"

layout.setup_page("sharing")
state = PageState("sharing")
layout.intro("sharing")
state.show_notes()

kdtype = state.choice_key("dtype", defaults.DTYPE, data.DTYPE_NAMES)
c1, c2 = st.columns([2, 1])
gpu_key, gpu = layout.gpu_choice(state, c1, t("gpu_choice"))
dtype = c2.selectbox(t("dtype"), data.DTYPE_NAMES, key=kdtype, help=t("sharing_dtype_help"))

# -- 4. the split path ----------------------------------------------------------------------------------------
st.header(t("sharing_split_title"))
st.markdown(t("sharing_split_intro"))
kN = state.int_key("N", 16384, 16, MAX_TRACE_VALUES)
ksplit = state.int_key("split", 4, 2, MAX_SPLIT)
kpattern = state.choice_key("pattern", "random", lr.PATTERNS)
c1, c2, c3 = st.columns([1, 1, 2])
N = int(c1.number_input(t("cols_N"), 16, MAX_TRACE_VALUES, step=1, key=kN,
                        help=t("longrows_N_help", max=f"{MAX_TRACE_VALUES:,}")))
split = c2.slider(t("sharing_split"), 2, MAX_SPLIT, key=ksplit, help=t("sharing_split_help"))
pattern = c3.radio(t("longrows_pattern"), lr.PATTERNS, key=kpattern, horizontal=True,
                   format_func=lambda p, tr=bound(): tr(f"longrows_pattern_{p}"))
strace = None
try:
    with st.spinner(t("computing")):
        strace = data.split_trace(N, split, pattern)
except Exception as err:
    st.error(t("error_generic", error=err))

if strace is not None:
    if data.live_gpu() is None:
        st.info(t("sharing_two_phases"), icon="💻")
    else:
        st.info(t("sharing_two_phases_gpu"), icon="🟢")
    if strace.split != split:
        st.caption(t("sharing_split_rounded", asked=split, used=strace.split, chunk=f"{strace.chunk:,}", N=f"{N:,}"))
    steps = lr.split_steps(strace)
    state.int_key("step", 0, 0, len(steps) - 1)
    env = lr.envelope(strace.x[0])
    y_dom = lr.y_extent(strace.x[0])
    top, total = strace.merged(0)
    lines = lr.kernel_lines_of(softmax_split_kernel)
    anchors = {"load": ("x = x_next",), "publish": ("chunk_max = tl.max(x", "chunk_sum = tl.sum(",
                                                     "_publish(row_slots + part"),
               "merge": ("maxes, sums = _unpack(", "row_max = tl.max(maxes", "scaled = tl.where(sums",
                         "row_sum = tl.sum(scaled"),
               "write": ("y = fast_exp(x.to(tl.float32) - row_shift", "tl.store(y_ptr + row64")}

    def frame_text(step: int) -> str:
        kind, p = steps[step]
        if kind == "publish":
            a, b = strace.chunk_columns(p)
            return t("sharing_frame_publish", p=p, a=f"{a:,}", b=f"{b - 1:,}", m=fmt.number(strace.maxes[0, p]),
                     d=fmt.number(strace.sums[0, p]), word=lrt.word_hex(strace.words[0, p]),
                     left=strace.split - p - 1)
        if kind == "merge":
            return t("sharing_frame_merge", split=strace.split, M=fmt.number(top, 8), D=fmt.number(total, 8))
        if kind == "write":
            if not np.isfinite(top):
                return t("sharing_frame_write_nan")
            return t("sharing_frame_write", M=fmt.number(top), D=fmt.number(total), ysum=fmt.number(float(np.nansum(strace.y[0])), 8))
        return t("sharing_frame_load", split=strace.split, chunk=f"{strace.chunk:,}",
                 empty=lrt.word_hex(strace.before[0, 0]))

    def figure(step: int) -> charts.Figure:
        return charts.chunk_chart(env, lr.slot_table(strace, 0, step), x_title=t("longrows_column"), y_title="x",
                              program_title=t("sharing_program"),
                              title=t("sharing_chunk_chart", N=f"{N:,}", split=strace.split, chunk=f"{strace.chunk:,}"),
                              n_cols=N, y_domain=y_dom, n_programs=strace.split)

    def render(step: int) -> None:
        kind, _ = steps[step]
        slots = lr.slot_table(strace, 0, step)
        left, right = st.columns([3, 2])
        with left:
            charts.show(figure(step), key="sharing_chunks", height=300)
            charts.show(charts.slots_chart(slots, x_title=t("sharing_program"), state_title=t("sharing_slot"),
                                       yes=t("sharing_slot_yes"), no=t("sharing_slot_no"),
                                       title=t("sharing_slots_chart"), words=False),
                        key="sharing_slots", height=150)
            m = st.columns(3)
            m[0].metric(t("sharing_metric_M"), fmt.number(top) if kind in ("merge", "write") else "—")
            m[1].metric(t("sharing_metric_D"), fmt.number(total) if kind in ("merge", "write") else "—")
            m[2].metric("Σy", fmt.number(float(np.nansum(strace.y[0]))) if kind == "write" else "—")
        with right:
            numbers = [n for n in (code.find_line(lines, a) for a in anchors[kind]) if n is not None]
            code.render_code(lines, numbers, caption=t("sharing_code_caption"), max_height=420, context=10)
        shown = slots[["program", "columns", "word", "max", "sum", "share"]].rename(columns={
            "program": t("sharing_program"), "columns": t("longrows_column"), "word": t("sharing_word"),
            "max": t("sharing_col_max"), "sum": t("sharing_col_sum"), "share": t("sharing_share")})
        st.dataframe(shown, hide_index=True, width="stretch")

    player("sharing", len(steps), render, format_step=frame_text, label=t("sharing_step_label"),
           slides=slides.SlideSource("sharing_a_row", t("nav_sharing"), {"N": N, "split": split, "pattern": pattern},
                                     figure, height=300,
                                     shown={t("cols_N"): N, t("sharing_split"): split,
                                            t("longrows_pattern"): t(f"longrows_pattern_{pattern}")}))
    quiz.ask(quiz.chunk_per_program("sharing_chunk", N, strace.split, strace.chunk))
    m_ref, d_ref = lrt.reference_pairs(strace.x[:1])
    st.caption(t("sharing_check", M=fmt.number(top, 8), D=fmt.number(total, 8), m_t=fmt.number(m_ref[0], 8),
                 d_t=fmt.number(d_ref[0], 8)))

# -- why the programs of a row must all be resident ------------------------------------------------------------
st.subheader(t("sharing_resident_title"))
st.markdown(t("sharing_resident_intro"))
try:
    with st.spinner(t("computing")):
        dtype_plans = data.path_plans(gpu_key, dtype)
except Exception as err:
    st.error(t("error_generic", error=err))
    dtype_plans = ()
split_plans = [p for p in dtype_plans if p.path == "split"]
if split_plans:
    p = split_plans[0]
    per_sm = p.occupancy.programs_per_sm       # the plan's own fact: the hardware's rules for its kernel
    st.markdown(t("sharing_resident_plan", dtype=dtype, gpu=gpu.name, N=f"{p.n_cols:,}", split=p.split, chunk=f"{p.block_n:,}",
                  warps=p.num_warps, regs=p.resources.n_regs, per_sm=per_sm, sms=gpu.multiprocessor_count,
                  slots=f"{per_sm * gpu.multiprocessor_count:,}", groups=p.num_programs // p.split,
                  grid=f"{p.num_programs:,}", rows=f"{p.n_rows:,}"))
    st.caption(t("sharing_toolchain", toolchain=toolchain_said(p.resources.toolchain)))
    last = split_plans[-1]
    beyond = [q for q in dtype_plans if q.n_cols > last.n_cols and q.path != "split"]
    if beyond:
        st.markdown(t("sharing_resident_fallback", N=f"{beyond[0].n_cols:,}",
                      path=t(f"longrows_path_{beyond[0].path}")))
else:
    st.info(t("sharing_resident_none", gpu=gpu.name, dtype=dtype))

# -- 5. which path, where ---------------------------------------------------------------------------------------
st.header(t("sharing_map_title"))
st.markdown(t("sharing_map_intro", M=f"{lr.MAP_ROWS:,}"))
try:
    with st.spinner(t("computing")):
        plans = data.path_plans(gpu_key, dtype)
except Exception as err:
    st.error(t("error_generic", error=err))
    plans = ()
if plans:
    record, provenance = data.recorded_tuned(dtype)
    on_h200 = gpu.key == "h200" or "H200" in gpu.name
    table = lr.path_table(plans, record if on_h200 else None)
    labels = [t(f"longrows_path_{p}") for p in PATHS]
    charts.show(charts.path_map_chart(table, x_title="N", y_title=t("longrows_path"), path_title=t("longrows_path"),
                                  paths=list(PATHS), labels=labels, ratio_title=t("sharing_recorded_ratio"),
                                  title=t("sharing_map_chart", gpu=gpu.name, dtype=dtype)), key="sharing_map", height=230)
    if on_h200 and provenance:
        st.caption(t("sharing_record_source", gpu=provenance.get("gpu", "?"), date=str(provenance.get("date", "?"))[:10],
                     file=provenance.get("csv", "?")))
    elif not on_h200:
        st.caption(t("sharing_record_other_gpu", gpu=gpu.name))
    rows = []
    for plan, (_, r) in zip(plans, table.iterrows()):
        rows.append({"N": f"{plan.n_cols:,}", t("longrows_path"): t(f"longrows_path_{plan.path}"),
                     t("sharing_recorded_ratio"): f"{r['recorded_ratio']:.2f}×" if np.isfinite(r["recorded_ratio"]) else "—",
                     t("sharing_reason"): plan_said(plan)})
    layout.show_table(pd.DataFrame(rows))
    st.caption(t("sharing_reason_note"))
    st.caption(t("sharing_map_toolchain", toolchain=t("occupancy_list_separator").join(
        dict.fromkeys(toolchain_said(p.resources.toolchain) for p in plans))))

# -- 6. to FlashAttention ---------------------------------------------------------------------------------------
st.header(t("sharing_fa_title"))
try:
    with st.spinner(t("computing")):
        fa_trace = data.online_trace(FA_N, FA_TILE, FA_PATTERN)
except Exception as err:
    st.error(t("error_generic", error=err))
    fa_trace = None
if fa_trace is not None:
    values = lr.attention_values(FA_N)
    walk = attention_walk(fa_trace, 0, values)
    expected = lr.attention_reference(fa_trace.x[0], values)
    st.markdown(t("sharing_fa_intro", N=f"{FA_N:,}", tile=FA_TILE, tiles=fa_trace.n_tiles))
    grew = next((s for s in walk if s.m_after > s.m_before and s.tile > 0), walk[-1])
    st.markdown(t("sharing_fa_step", tile=grew.tile, m_before=fmt.number(grew.m_before), m_after=fmt.number(grew.m_after),
                  rescale=fmt.number(grew.rescale), o_before=fmt.number(grew.o_before),
                  o_rescaled=fmt.number(grew.o_before * grew.rescale), tile_o=fmt.number(grew.tile_o),
                  o_after=fmt.number(grew.o_after), d_after=fmt.number(grew.d_after)))
    fa = lr.attention_table(walk).rename(columns={"tile": t("longrows_col_tile"),
                                                  "rescale": t("longrows_metric_rescale"),
                                                  "o_over_d": "o / d"})
    st.dataframe(fa, hide_index=True, width="stretch")
    st.success(t("sharing_fa_check", out=fmt.number(walk[-1].output, 8), ref=fmt.number(expected, 8),
                 err=f"{abs(walk[-1].output - expected):.1e}"))
    st.markdown(t("sharing_fa_lesson"))

layout.page_end()
state.sync()
