"""GPU & occupancy: a GPU's figures with their sources, the launch plan from the real compiled kernel,
an occupancy calculator, what happens when a row no longer fits, and the compiled PTX / SASS."""
import explorer_ui.startup  # noqa: F401  first: one session imports the project while the others wait
import pandas as pd
import streamlit as st

from explorer_ui import charts, code, data, defaults, fmt, gpu_figures, layout, quiz, recorded_text
import softmax_core as sc

from explorer_ui.i18n import bound, limits_said, plan_said, say, t, toolchain_said
from explorer_ui.urlstate import PageState
from softmax_core.hardware.compile import RegisterSource
from softmax_core.hardware.occupancy import chapter_occupancy
from softmax_core.plans.tutorial import TUTORIAL_NUM_STAGES, TUTORIAL_STAGES_SHARED_THRESHOLD

MAX_N = defaults.GPU_PAGE_MAX_N
MAX_REGS_PER_THREAD = 255          # NVIDIA's per-thread ceiling (AMD: 512 VGPRs); the x-axis of the calculator
CHART_MIN_REGS = 16                # below this the register line shoots up and flattens the rest of the chart
BLOCK_SWEEP = defaults.BLOCK_SWEEP   # 32 ... 65536: each one a real compile (cached on disk, pre-warmed)
ASM_PREVIEW_LINES = 400
COMPARE_KERNELS = ("tutorial", "tuned")     # softmax_teaching.gpu_compare.KERNELS

layout.setup_page("gpu")
state = PageState("gpu")
layout.intro("gpu")
state.show_notes()

kM = state.int_key("M", defaults.CHAPTER_M, 1, defaults.GPU_PAGE_MAX_M)
kN = state.int_key("N", defaults.CHAPTER_N, 1, MAX_N)
kdtype = state.choice_key("dtype", defaults.DTYPE, data.DTYPE_NAMES)
c1, c2, c3, c4 = st.columns([2, 1, 1, 1])
gpu_key, gpu = layout.gpu_choice(state, c1, t("gpu_choice"))
M = int(c2.number_input(t("rows_M"), 1, defaults.GPU_PAGE_MAX_M, step=1, key=kM))
N = int(c3.number_input(t("cols_N"), 1, MAX_N, step=1, key=kN))
dtype = c4.selectbox(t("dtype"), data.DTYPE_NAMES, key=kdtype)

try:
    with layout.working("compile", t("acc_wait_compile", N=N, gpu=gpu.name)):
        plan = data.launch_plan(M, N, dtype, gpu_key)
except Exception as err:
    st.error(t("error_generic", error=err))
    state.sync()
    st.stop()

quiz.ask(quiz.programs_per_sm("gpu_fit", plan))

# -- the GPU's figures, each with its source ----------------------------------------------------------
FIGURES = gpu_figures.gpu_figures(gpu, t("gpu_cc"))
left, right = st.columns([1, 1])
with left:
    st.subheader(t("gpu_props_title"))
    marks, cited = gpu_figures.numbered_sources([recorded_text.source_text(gpu.source[k]) if k in gpu.source
                                                 else None for k, _ in FIGURES])
    props = pd.DataFrame({t("gpu_col_figure"): [t(f"gpu_fig_{k}") for k, _ in FIGURES],
                          t("gpu_col_value"): [v for _, v in FIGURES], t("gpu_col_source"): marks})
    layout.show_table(props)
    with st.expander(t("gpu_sources_title", n=len(cited))):
        for i, citation in enumerate(cited, 1):
            st.caption(f"[{i}] {citation}")
    if gpu.vendor == "amd":
        st.caption(t("gpu_amd_note", warp=gpu.warp_size))
with right:
    st.subheader(t("gpu_plan_title", M=M, N=N, dtype=dtype))
    m = st.columns(3)
    m[0].metric("BLOCK_SIZE", f"{plan.block_size:,}", help=t("gpu_help_block"))
    m[1].metric("num_warps", plan.num_warps, help=t("gpu_help_warp", warp=gpu.warp_size))
    m[2].metric("num_stages", plan.num_stages, help=t("gpu_help_stages", threshold=TUTORIAL_STAGES_SHARED_THRESHOLD,
                                                      large=TUTORIAL_NUM_STAGES[0], small=TUTORIAL_NUM_STAGES[1]))
    m = st.columns(3)
    m[0].metric(t("gpu_n_regs"), plan.n_regs, help=t("gpu_help_regs"))
    m[1].metric(t("gpu_shared"), f"{plan.shared_bytes:,} B", help=t("gpu_help_shared"))
    m[2].metric(t("gpu_spills"), plan.n_spills, help=t("gpu_help_spills"))
    m = st.columns(3)
    m[0].metric(t("gpu_programs_per_sm"), plan.programs_per_sm, help=t("gpu_help_sm"))
    m[1].metric(t("gpu_grid"), f"{plan.num_programs:,}")
    m[2].metric(t("gpu_limiter"), limits_said(gpu_figures.formula_limits(plan)))
    st.caption(t("gpu_resources_how", how=say(plan.resources_how)))
    if plan.toolchain:
        st.caption(t("occupancy_toolchain", toolchain=toolchain_said(plan.toolchain)))
    if plan.resources_how.code == RegisterSource.RECORDED:      # the recorded GPU: the local compile beside it
        local = data.local_launch_plan(M, N, dtype, gpu_key)
        if (local.n_regs, local.n_spills, local.shared_bytes) != (plan.n_regs, plan.n_spills, plan.shared_bytes):
            st.caption(t("occupancy_local_differs", regs=local.n_regs, spills=local.n_spills,
                         shared=f"{local.shared_bytes:,}", per_sm=local.occupancy.programs_per_sm,
                         grid=f"{local.num_programs:,}", toolchain=local.toolchain))
    hw = plan.occupancy
    facts = data.launch_facts(M, N, dtype, gpu_key)     # the GPU's figures, as every page states them
    m = st.columns(3)
    m[0].metric(t("occupancy_hardware_per_sm"), facts.programs_per_sm, help=t("occupancy_hardware_help"))
    m[1].metric(t("occupancy_resident"), f"{facts.slots:,}")
    m[2].metric(t("occupancy_hardware_limiter"), limits_said(facts.limiters))
    if not facts.formula_agrees:
        st.warning(t("occupancy_differs", chapter=facts.chapter_programs_per_sm, hardware=facts.programs_per_sm,
                     why=t("occupancy_list_separator").join(say(d) for d in hw.differences)))
        st.code(say(hw.rule), language=None, wrap_lines=True)
    launched = dict(grid=facts.num_programs, slots=facts.slots, waiting=facts.waiting, waves=facts.waves)
    st.caption(t("occupancy_waves", **launched) if facts.any_waits else t("occupancy_no_wait", **launched))

explanation = plan_said(plan)
if plan.fits:
    st.success(explanation)
else:
    st.error(t("gpu_does_not_fit", explanation=explanation))

# -- the tutorial's arithmetic, with this plan's numbers, beside the code that does it ----------------------
st.subheader(t("gpu_formula_title"))
# the arithmetic at the page's full width: a line of it never wraps mid-expression
sram = (f"{gpu.max_shared_mem} // {plan.shared_bytes} = {plan.sram_occupancy}" if plan.sram_occupancy is not None
        else t("gpu_no_shared"))
reg_line = (f"{gpu.max_num_regs} // ({plan.n_regs} × {gpu.warp_size} × {plan.num_warps}) = "
            f"{plan.reg_occupancy}")
st.code(f"reg_occupancy   = {reg_line}\n"
        f"sram_occupancy  = {sram}\n"
        f"programs_per_sm = {plan.programs_per_sm}\n"
        f"num_programs    = min({gpu.multiprocessor_count} × {plan.programs_per_sm}, {M}) = {plan.num_programs}",
        language=None)
st.caption(gpu_figures.max_num_regs_said(gpu, t))
left, right = st.columns([2, 3])
with left:
    st.markdown(t("gpu_formula_text"))
    code.kernel_panel("block_size", "num_stages", "range", "load", caption=t("kernel_caption"), context=1)
with right:
    focus = tuple(gpu_figures.FORMULA_FOCUS[limit] for limit in gpu_figures.formula_limits(plan)
                  if limit in gpu_figures.FORMULA_FOCUS)
    code.source_panel(chapter_occupancy, focus + ("programs_per_sm = ",), caption=t("occupancy_chapter_caption"))

# -- occupancy calculator ----------------------------------------------------------------------------
st.subheader(t("gpu_calc_title"))
kvary = state.choice_key("vary", "regs", gpu_figures.VARY)
vary = st.radio(t("gpu_vary"), gpu_figures.VARY, key=kvary, horizontal=True,
                format_func=lambda v, tr=bound(): tr(f"gpu_vary_{v}"))
reg_label, sram_label, prog_label = t("gpu_line_regs"), t("gpu_line_sram"), t("gpu_line_programs")
hw_label = t("occupancy_line_hardware")
if vary == "regs":
    kwhat, what_kept = state.derived_int_key("regs", plan.n_regs, 1, MAX_REGS_PER_THREAD)
    what = st.slider(t("gpu_what_if_regs"), 1, MAX_REGS_PER_THREAD, key=kwhat, help=t("gpu_what_if_help"))
    if what_kept:
        st.caption(t("acc_kept", value=int(what), derived=plan.n_regs, gpu=gpu.name))
    regs = range(min(CHART_MIN_REGS, int(what), plan.n_regs), MAX_REGS_PER_THREAD + 1)
    curve = pd.DataFrame(gpu_figures.register_curve(gpu, plan.shared_bytes, plan.num_warps, regs))
    curve["limit"] = curve["limit"].map({"registers": reg_label, "shared memory": sram_label, "programs": prog_label,
                                         "hardware": hw_label})
    hypo = data.what_if_plan(M, N, dtype, gpu_key, int(what), plan.shared_bytes)
    marker = pd.DataFrame([{"x": int(what), "programs": hypo.programs_per_sm, "label": t("gpu_marker_what_if")}])
    x_title, scale = t("gpu_x_regs"), "linear"
else:
    with layout.working("sweep", t("gpu_compiling_sweep", n=len(BLOCK_SWEEP))):
        rows, failed = [], []
        for b in BLOCK_SWEEP:
            try:
                p = data.launch_plan(M, b, dtype, gpu_key)
            except Exception:
                failed.append(b)
                continue
            rows.append({"x": b, "programs": p.reg_occupancy, "limit": reg_label, "n_regs": p.n_regs})
            if p.sram_occupancy is not None:
                rows.append({"x": b, "programs": p.sram_occupancy, "limit": sram_label, "n_regs": p.n_regs})
            rows.append({"x": b, "programs": p.programs_per_sm, "limit": prog_label, "n_regs": p.n_regs})
            rows.append({"x": b, "programs": p.hardware_programs_per_sm, "limit": hw_label,
                         "n_regs": p.n_regs})
    curve = pd.DataFrame(rows)
    marker = pd.DataFrame([{"x": plan.block_size, "programs": plan.programs_per_sm, "label": t("gpu_marker_plan")}])
    x_title, scale = t("gpu_x_block"), "log"
    if failed:
        st.warning(t("gpu_sweep_failed", sizes=", ".join(map(str, failed))))
left, right = st.columns([3, 2])
with left:
    y_top = charts.occupancy_y_top(curve, prog_label)
    charts.show(charts.occupancy_curve(curve, marker, x_title=x_title, y_title=t("gpu_y_programs"),
                                       limit_title=t("gpu_limit"), title=t("gpu_calc_chart"),
                                       limits=[reg_label, sram_label, prog_label, hw_label], x_scale_type=scale,
                                       y_top=y_top),
                key="gpu_calc", height=340)
    if y_top is not None:
        highest = curve.loc[curve["programs"].idxmax()]
        st.caption(t("acc_axis_cut", top=y_top, highest=int(highest["programs"]), limit=highest["limit"]))
with right:
    if vary == "regs":
        st.markdown(t("gpu_what_if_text", regs=int(what), programs=hypo.programs_per_sm,
                      limiter=limits_said(gpu_figures.formula_limits(hypo)), grid=hypo.num_programs,
                      real=plan.n_regs, hardware=hypo.hardware_programs_per_sm))
        table = curve[curve["limit"] == prog_label].set_index("x")["programs"]
        steps = table[table.diff().fillna(1) != 0].reset_index()
        st.dataframe(fmt.table(steps.rename(columns={"x": t("gpu_x_regs"), "programs": t("gpu_y_programs")})),
                     hide_index=True, width="stretch", height=240)
    else:
        pivot = curve.pivot_table(index="x", columns="limit", values="programs").reset_index()
        st.dataframe(fmt.table(pivot.rename(columns={"x": "BLOCK_SIZE"}), digits=0), hide_index=True, width="stretch",
                     height=300)
    st.caption(t("gpu_calc_caption"))

# -- every GPU side by side ------------------------------------------------------------------------------
st.subheader(t("compare_title"))
kcompare = state.bool_key("compare", False)
kkernel = state.choice_key("kernel", "tutorial", COMPARE_KERNELS)
c1, c2 = st.columns([1, 2])
compare_on = c1.toggle(t("compare_toggle", n=len(sc.gpu_catalog())), key=kcompare, help=t("compare_help"))
kernel = c2.radio(t("compare_kernel"), COMPARE_KERNELS, key=kkernel, horizontal=True,
                  format_func=lambda k, tr=bound(): tr(f"compare_kernel_{k}"))
if compare_on:
    catalog = [g.key for g in sc.gpu_catalog()]
    rows, failed = [], []
    bar = st.progress(0.0)
    with layout.working(f"compare_{kernel}", t("compare_wait", kernel=t(f"compare_kernel_{kernel}"), n=len(catalog))):
        for i, key in enumerate(catalog):
            bar.progress(i / len(catalog), text=t("compare_progress", gpu=data.gpu_by_key(key).name, i=i + 1,
                                                    n=len(catalog)))
            try:
                rows.append(data.gpu_comparison(kernel, M, N, dtype, key))
            except Exception as err:        # one GPU that cannot compile this is named, the others still shown
                failed.append(f"{data.gpu_by_key(key).name}: {err}")
    bar.empty()
    if rows:
        table = pd.DataFrame([{
            t("compare_col_gpu"): r.gpu.name, t("gpu_n_regs"): r.n_regs, t("gpu_spills"): r.n_spills,
            t("occupancy_hardware_per_sm"): r.programs_per_sm, t("gpu_programs_per_sm"): r.chapter_programs_per_sm,
            t("occupancy_hardware_limiter"): limits_said(r.limiters), t("gpu_grid"): r.grid,
            t("occupancy_resident"): r.resident_programs,
            t("compare_col_floor"): "—" if r.time_floor_us is None else f"{r.time_floor_us:,.1f}",
            t("compare_col_path"): r.path, t("compare_col_toolchain"): toolchain_said(r.toolchain)} for r in rows])
        figures = [t("compare_fig_hardware"), t("compare_fig_chapter")]
        bars = pd.DataFrame([{"gpu": r.gpu.name, "figure": f, "programs": v} for r in rows
                             for f, v in zip(figures, (r.programs_per_sm, r.chapter_programs_per_sm))])
        charts.show(charts.compare_bars(bars, x_title=t("compare_col_gpu"), y_title=t("gpu_y_programs"),
                                        color_title=t("compare_figure"), title=t("compare_chart", N=N, M=M),
                                        figures=figures),
                    key="gpu_compare", height=90 + 30 * len(rows))
        st.dataframe(fmt.table(table), hide_index=True, width="stretch")
        st.caption(t("compare_caption", bytes=fmt.fmt_bytes(rows[0].bytes_moved),
                     differ=sum(not r.agrees for r in rows), n=len(rows)))
    for line in failed:
        st.caption(t("error_generic", error=line))

# -- when a row no longer fits ------------------------------------------------------------------------
st.subheader(t("gpu_long_title"))
tuned = None
try:
    with layout.working("tuned", t("acc_wait_tuned", N=N, gpu=gpu.name)):
        tuned = data.softmax_plan(M, N, dtype, gpu_key)
except Exception as err:
    st.caption(t("error_generic", error=err))
if plan.fits:
    st.markdown(t("gpu_long_fits", N=N))
else:
    st.markdown(t("gpu_long_fails", shared=plan.shared_bytes, limit=gpu.max_shared_mem, N=N))
if tuned is not None:
    st.info(t("gpu_tuned_path", path=t(f"gpu_path_{tuned.path}"), reason=plan_said(tuned)), icon="🧭")
    st.caption(t("gpu_tuned_toolchain", toolchain=toolchain_said(tuned.resources.toolchain) or say(tuned.resources.how)))
    if tuned.resources.source == RegisterSource.RECORDED:      # the recorded GPU: the local compile beside it
        local_tuned = data.local_softmax_plan(M, N, dtype, gpu_key)
        if gpu_figures.tuned_figures(local_tuned) != gpu_figures.tuned_figures(tuned):
            st.caption(t("gpu_tuned_local_differs", toolchain=local_tuned.resources.toolchain,
                         path=t(f"gpu_path_{local_tuned.path}"), **gpu_figures.tuned_figures(local_tuned)))

# -- compiled code -------------------------------------------------------------------------------------
st.subheader(t("gpu_asm_title"))
kasm = state.bool_key("asm", False)
if st.toggle(t("gpu_asm_toggle"), key=kasm):
    try:
        with layout.working("asm", t("acc_wait_asm", gpu=gpu.name)):
            asm = data.kernel_asm(plan.block_size, plan.num_warps, plan.num_stages, dtype, gpu_key)
    except Exception as err:
        asm = {}
        st.error(t("error_generic", error=err))
    if asm:
        tabs = st.tabs([name.upper() for name in asm])
        for tab, (name, text) in zip(tabs, asm.items()):
            with tab:
                lines = text.splitlines()
                st.caption(t("gpu_asm_caption", shown=min(len(lines), ASM_PREVIEW_LINES), total=len(lines)))
                st.code("\n".join(lines[:ASM_PREVIEW_LINES]), language=None, height=420, wrap_lines=True)
                st.download_button(t("gpu_asm_download", name=name.upper()), text,
                                   file_name=f"tutorial_softmax_{plan.block_size}_{gpu.arch}.{name}",
                                   key=f"gpu_asm_dl_{name}")
    else:
        st.caption(t("gpu_asm_none"))

layout.page_end()
state.sync()
