"""Row schedule: which program handles which row, recorded by the real kernel (softmax_teaching.tutorial_trace), the
tl.range loop stepped through, programs placed on SMs, and a picture of num_stages overlapping loads."""
import explorer_ui.startup  # noqa: F401  first: one session imports the project while the others wait
import numpy as np
import pandas as pd
import streamlit as st

import softmax_core as sc
from explorer_ui import charts, code, data, defaults, fmt, layout, quiz, row_schedule, slides
from explorer_ui.i18n import limits_said, plan_said, sentences, t
from explorer_ui.player import player
from explorer_ui.urlstate import PageState, in_url
from softmax_teaching.launch_facts import program_placement
from softmax_teaching.pipeline import pipeline_timeline
from softmax_teaching.tutorial_trace import MAX_TRACE_BLOCK, MAX_TRACE_ROWS
from softmax_core.plans.tutorial import TUTORIAL_NUM_STAGES

# Rows traced per interaction: at the widest rows the interpreter needs a few ms per row, and a re-render
# should stay under a second.
MAX_ROWS = min(160, MAX_TRACE_ROWS)
GRID_WIDTH = 16            # cells per line in the row grid
PIPELINE_ITERATIONS = 6    # loop trips drawn in the num_stages picture
FULL_SIZE_M = defaults.CHAPTER_M    # the chapter's benchmark matrix height, for the "at full size" figures

layout.setup_page("schedule")
state = PageState("schedule")
layout.intro("schedule")
state.show_notes()

kgpu = layout.gpu_key_declared(state)
kN = state.int_key("N", defaults.SCHEDULE_N, 1, MAX_TRACE_BLOCK)
# Default rows: half again as many as the wrapper's grid for a matrix with rows to spare, so the strided walk
# and its uneven tail show.
try:
    slots = data.launch_facts(FULL_SIZE_M, st.session_state[kN], defaults.DTYPE, st.session_state[kgpu]).chapter_grid
except Exception:
    slots = MAX_ROWS
rows_default = min(MAX_ROWS, max(1, slots * 3 // 2))
krows, rows_kept = state.derived_int_key("rows", rows_default, 1, MAX_ROWS)
c1, c2, c3 = st.columns(3)
gpu_key, _ = layout.gpu_choice(state, c1, t("gpu_choice"), help=t("schedule_gpu_help"))
N = int(c2.number_input(t("cols_N"), 1, MAX_TRACE_BLOCK, step=1, key=kN, help=t("schedule_N_help")))
n_rows = c3.slider(t("schedule_rows"), 1, MAX_ROWS, key=krows)
if rows_kept:
    c3.caption(t("acc_kept", value=n_rows, derived=rows_default, gpu=data.gpu_by_key(gpu_key).name))

try:
    with layout.working("compile", t("acc_wait_compile", N=N, gpu=data.gpu_by_key(gpu_key).name)):
        plan = data.launch_plan(n_rows, N, defaults.DTYPE, gpu_key)
        full = data.launch_plan(FULL_SIZE_M, N, defaults.DTYPE, gpu_key)
except Exception as err:
    st.error(t("error_generic", error=err))
    state.sync()
    st.stop()

if not plan.fits:     # the tutorial kernel cannot launch this row length on this GPU: nothing to schedule
    st.warning(t("schedule_no_fit", explanation=plan_said(plan)))
    state.sync()
    st.stop()
# A link that names P means "this many programs", not the plan's number.
kauto = state.bool_key("auto", not in_url("P"))
kP = state.int_key("P", max(plan.num_programs, 1), 1, n_rows)
kstages, stages_kept = state.derived_int_key("stages", plan.num_stages, 1, 8)
kload = state.int_key("load", 3, 1, 10)
c1, c2, c3, c4 = st.columns([1, 2, 1, 1])
with c1:
    auto = st.toggle(t("schedule_auto"), key=kauto, help=t("schedule_auto_help"))
if auto:
    st.session_state[kP] = min(max(plan.num_programs, 1), n_rows)
P = c2.slider(t("schedule_P"), 1, n_rows, key=kP, disabled=auto) if n_rows > 1 else 1
stages = c3.slider(t("schedule_stages"), 1, 8, key=kstages, help=t("schedule_stages_help"))
if stages_kept:
    c3.caption(t("acc_kept", value=stages, derived=plan.num_stages, gpu=plan.gpu.name))
load = c4.slider(t("schedule_load"), 1, 10, key=kload, help=t("schedule_load_help"))

# One source for programs per SM, slots, waves and who waits: softmax_teaching.launch_facts (the GPU's
# rules); the chapter formula's figure is named as the formula's wherever it is stated.
facts = data.launch_facts(n_rows, N, defaults.DTYPE, gpu_key)
full_facts = data.launch_facts(FULL_SIZE_M, N, defaults.DTYPE, gpu_key)
limiter = limits_said(facts.limiters)
formula = dict(chapter_per_sm=facts.chapter_programs_per_sm, planned=facts.chapter_grid, rows=n_rows)
at_full = dict(M=FULL_SIZE_M, full=full_facts.num_programs, per_program=full.rows_per_program, slots=full_facts.slots,
               waiting=full_facts.waiting, waves=full_facts.waves)
st.markdown(sentences(*[
    t("schedule_plan", gpu=plan.gpu.name, sms=facts.multiprocessor_count, per_sm=facts.programs_per_sm,
      limiter=limiter, slots=facts.slots),
    t("schedule_formula_same", **formula) if facts.formula_agrees else t("schedule_formula_differs", **formula),
    t("schedule_full_waves", **at_full) if full_facts.any_waits else t("schedule_full_once", **at_full)]))

try:
    with layout.working("trace", t("acc_wait_trace", rows=n_rows, N=N)):
        # which program takes which row does not depend on num_stages (that only overlaps work within a
        # program), so the trace runs with the plan's and the slider redraws only the pipeline picture
        trace = data.trace(n_rows, N, num_programs=P, num_stages=None, dtype=defaults.DTYPE, variant="correct", seed=0,
                           poisoned_row=0, gpu_key=gpu_key, keep_stages=False)
except Exception as err:
    st.error(t("error_generic", error=err))
    state.sync()
    st.stop()

K = trace.n_iterations
n_frames = K + 2                   # launch, one frame per loop iteration, done
state.int_key("step", 0, 0, n_frames - 1)
rows = np.arange(n_rows)
rows_per = np.bincount(trace.program, minlength=P)      # recorded: how many rows each program handled


def frame_text(step: int) -> str:
    if step == 0:
        return t("schedule_frame_launch", P=P)
    if step == n_frames - 1:
        most, fewest = int(rows_per.max()), int(rows_per.min())
        done = dict(rows=n_rows, P=P, K=K, most=most, fewest=fewest, n_most=int((rows_per == most).sum()),
                    n_fewest=int((rows_per == fewest).sum()), util=n_rows / (P * K))
        return t("schedule_frame_done", **done) if most != fewest else t("schedule_frame_done_even", **done)
    it = step - 1
    now = rows[trace.iteration == it]
    if it == 0:
        return t("schedule_frame_first", K=K, first=int(now.min()), last=int(now.max()))
    return t("schedule_frame_iteration", it=it, K=K, count=len(now), first=int(now.min()), last=int(now.max()),
             idle=P - len(now), step=P)


def frame_data(step: int) -> pd.DataFrame:
    phase = row_schedule.phase_of(step, n_frames, trace.iteration)
    return pd.DataFrame({"row": rows, "gx": rows % GRID_WIDTH, "gy": rows // GRID_WIDTH, "program": trace.program,
                         "iteration": trace.iteration, "phase": phase})


def figure(step: int) -> charts.Figure:
    return charts.row_grid(frame_data(step), n_iterations=K, iteration_title=t("schedule_iteration"),
                           title=t("schedule_grid_title"))


GRID_HEIGHT = min(60 + 26 * (n_rows // GRID_WIDTH + 1), 480)


def render(step: int) -> None:
    df = frame_data(step)
    left, right = st.columns([3, 2])
    with left:
        charts.show(figure(step), key="schedule_grid", height=GRID_HEIGHT)
        st.caption(t("schedule_grid_caption", P=P, rows=row_schedule.row_list(trace.rows_of_program(0), 4)))
        charts.show(charts.program_grid(df, x_title=t("schedule_program"), y_title=t("schedule_iteration"),
                                        title=t("schedule_by_program_title") if P <= charts.PROGRAM_GRID_LABELLED_UP_TO
                                        else t("schedule_by_program_title_plain"),
                                        n_programs=P, n_iterations=K),
                    key="schedule_by_program", height=min(200 + 22 * K, 420))
    with right:
        anchors = ("program_id", "num_programs") if step == 0 else ("range", "row_ptr") \
            if step < n_frames - 1 else ("store",)
        code.kernel_panel(*anchors, caption=t("kernel_caption"))
        if 0 < step < n_frames - 1:
            now = rows[trace.iteration == step - 1]
            table = pd.DataFrame({t("schedule_col_row"): now, t("schedule_program"): trace.program[now]})
            st.caption(t("schedule_now_caption", it=step - 1))
            st.dataframe(fmt.table(table), hide_index=True, width="stretch", height=200)


player("schedule", n_frames, render, format_step=frame_text, label=t("schedule_step_label"),
       slides=slides.SlideSource("row_schedule", t("nav_schedule"), {"gpu": gpu_key, "N": N, "rows": n_rows, "P": P},
                                 figure, height=GRID_HEIGHT,
                                 shown={t("gpu_choice"): plan.gpu.name, t("cols_N"): N, t("schedule_rows"): n_rows,
                                        t("schedule_P"): P}))
quiz.ask(quiz.rows_of_program("schedule_rows", n_rows, P))

# -- programs on SMs ----------------------------------------------------------------------------------
st.subheader(t("schedule_sm_title"))
gpu = plan.gpu
shown = data.launch_facts(n_rows, N, defaults.DTYPE, gpu_key, num_programs=P)     # the grid drawn: P programs
placed = program_placement(P, gpu.multiprocessor_count, shown.programs_per_sm)
handled = {p: trace.rows_of_program(p) for p in range(P)}


sm_df = pd.DataFrame([{"sm": pl.sm, "slot": pl.slot, "program": pl.program, "wave": pl.wave,
                       "rows": row_schedule.row_list(handled[pl.program], 8)} for pl in placed])
used_sms = sm_df["sm"].nunique()
left, right = st.columns([3, 2])
with left:
    charts.show(charts.sm_slots(sm_df, x_title=t("schedule_sm"), y_title=t("schedule_slot"),
                                program_title=t("schedule_program"), title=t("schedule_sm_chart"), n_programs=P),
                key="schedule_sms", height=min(220 + 18 * max(shown.programs_per_sm, 1), 440))
    origin = t("schedule_sm_origin_plan") if shown.grid_from_plan else t("schedule_sm_origin_hand")
    slots = dict(P=P, slots=shown.slots, waiting=shown.waiting)
    st.markdown(sentences(*[
        t("schedule_sm_text", P=P, origin=origin, used=used_sms, sms=gpu.multiprocessor_count,
          per_sm=shown.programs_per_sm, waves=shown.waves),
        t("schedule_sm_some_wait", **slots) if shown.any_waits else t("schedule_sm_none_waits", **slots)]))
with right:
    per_program = pd.DataFrame({t("schedule_program"): np.arange(P), t("schedule_col_rows"): rows_per,
                                t("schedule_col_which"): [row_schedule.row_list(handled[p], 6) for p in range(P)]})
    st.dataframe(fmt.table(per_program), hide_index=True, width="stretch", height=260)

# -- num_stages: overlapping the next row's load with this row's math ---------------------------------
st.subheader(t("schedule_pipe_title"))
phase_labels = [t(f"schedule_phase_{p}") for p in row_schedule.PIPELINE_PHASES]
lanes = []
for label, s in ((t("schedule_pipe_serial"), 1), (t("schedule_pipe_staged", stages=stages), stages)):
    for span in pipeline_timeline(PIPELINE_ITERATIONS, s, float(load)):
        lanes.append({"lane": label, "label": f"{s} · {t('schedule_row_n', n=span.iteration)}",
                      "iteration": span.iteration, "phase": phase_labels[row_schedule.PIPELINE_PHASES.index(span.phase)],
                      "start": span.start, "end": span.end})
pipe = pd.DataFrame(lanes)
left, right = st.columns([3, 2])
with left:
    charts.show(charts.gantt(pipe, x_title=t("schedule_time"), y_title=None, phase_title=t("schedule_phase"),
                             title=t("schedule_pipe_chart"), phases=phase_labels,
                             colors=[charts.PALETTE["blue"], charts.PALETTE["orange"], charts.PALETTE["green"]]),
                key="schedule_pipeline", height=380)
with right:
    finish = pipe[pipe["phase"] == phase_labels[1]].groupby("lane", sort=False)["end"].max()
    serial, staged = float(finish.iloc[0]), float(finish.iloc[-1])
    pipe_figures = dict(serial=serial, staged=staged, ratio=serial / staged, stages=stages, load=load,
                        large=TUTORIAL_NUM_STAGES[0], n=PIPELINE_ITERATIONS)
    st.markdown(t("schedule_pipe_text", **pipe_figures) if staged < serial else
                t("schedule_pipe_text_same", **pipe_figures))
    code.kernel_panel("range", caption=t("kernel_caption"), context=3)

layout.page_end()
state.sync()
