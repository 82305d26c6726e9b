"""Chapter notes: the parts of the chapter the pictures do not show, each run here with its real numbers —
registers and shared memory (warmup vs offline compile), strides, tl.range and num_stages, the num_warps
rule, the chapter's unit test, the 3-D grid and tl.exp's error. Computed by softmax_teaching.chapter_notes."""
import explorer_ui.startup  # noqa: F401  first: one session imports the project while the others wait
import pandas as pd
import streamlit as st

from explorer_ui import chapter_benchmark, charts, code, data, defaults, layout, quiz, recorded_text
from explorer_ui.i18n import say, sentences, t, toolchain_said
from explorer_ui.urlstate import PageState
from softmax_teaching import chapter_notes as sc_chapter
from softmax_core.hardware import dtypes, runtime
from softmax_core.plans.tutorial import TUTORIAL_STAGES_SHARED_THRESHOLD, tutorial_num_stages

STRIDE_M, STRIDE_N = sc_chapter.STRIDE_DEMO
TRACE_ROWS, TRACE_PROGRAMS = 10, 3  # the tl.range demo: 10 rows over 3 persistent programs

layout.setup_page("chapter")
state = PageState("chapter")
layout.intro("chapter")
state.show_notes()

kN = state.int_key("N", defaults.CHAPTER_N, 1, 65536)
c1, c2 = st.columns([2, 1])
gpu_key, gpu = layout.gpu_choice(state, c1, t("chapter_gpu"))
N = int(c2.number_input(t("cols_N"), 1, 65536, step=1, key=kN))
M, dtype = defaults.CHAPTER_M, defaults.DTYPE
try:
    plan = data.launch_plan(M, N, dtype, gpu_key)
except Exception as err:
    plan = None
    st.warning(t("chapter_plan_failed", error=err))

# -- 1. registers and shared memory ---------------------------------------------------------------------------
st.header(t("chapter_res_title"), anchor="resources")
st.markdown(t("chapter_res_intro"))
left, right = st.columns(2)
with left:
    st.markdown(t("chapter_res_live_head"))
    code.source_panel(sc_chapter.warmup_resources, ("tutorial_softmax_kernel.warmup(", "kernel._init_handles()", "kernel.n_regs"))
    live = None
    if gpu.live:
        try:
            live = data.warmup_resources(M, N, dtype)
        except sc_chapter.WarmupDoesNotFit as err:
            st.warning(t("chapter_res_does_not_fit", N=N, block=err.block_size, required=err.required,
                         limit=err.limit))
        except Exception as err:
            st.error(t("error_generic", error=err))
    if live is not None:
        a, b, c = st.columns(3)
        a.metric("n_regs", live.n_regs)
        b.metric("metadata.shared (B)", f"{live.shared_bytes:,}")
        c.metric("n_spills", live.n_spills)
    else:
        st.info(t("chapter_res_no_gpu", gpu=gpu.name) if runtime.INTERPRETED else
                t("chapter_res_catalog_gpu", gpu=gpu.name), icon="💻")
with right:
    st.markdown(t("chapter_res_offline_head"))
    try:
        offline = data.offline_resources(N, dtype, gpu_key)
    except Exception as err:
        offline = None
        st.error(t("error_generic", error=err))
    if offline is not None:
        a, b, c = st.columns(3)
        a.metric("n_regs", offline.n_regs)
        b.metric(t("chapter_shared"), f"{offline.shared_bytes:,}")
        c.metric("n_spills", offline.n_spills)
        st.caption(t("chapter_res_how", how=say(offline.how), block=offline.block_size, warps=offline.num_warps,
                     stages=offline.num_stages, gpu=gpu.name))
if live is not None and offline is not None:
    figures = dict(live_regs=live.n_regs, off_regs=offline.n_regs, live_shared=f"{live.shared_bytes:,}",
                   off_shared=f"{offline.shared_bytes:,}")
    if (live.n_regs, live.shared_bytes) == (offline.n_regs, offline.shared_bytes):
        st.success(t("chapter_res_same", **figures))
    else:
        st.warning(t("chapter_res_differ", **figures))
st.markdown(t("chapter_props_intro"))
props = (("multiprocessor_count", "multiprocessor_count", gpu.multiprocessor_count),
         ("max_num_regs", "max_num_regs", gpu.max_num_regs),
         ("max_shared_mem", "max_shared_mem", gpu.max_shared_mem),
         ("warpSize", "warp_size", gpu.warp_size))
layout.show_table(pd.DataFrame([{t("chapter_col_property"): f'properties["{name}"]', t("chapter_col_value"): f"{value:,}",
                                 t("chapter_col_source"): recorded_text.source_text(gpu.source[field]) if field in gpu.source else "—"} for name, field, value in props]))

# -- 2. strides -----------------------------------------------------------------------------------------------
st.header(t("chapter_stride_title"), anchor="strides")
st.markdown(t("chapter_stride_intro", N=STRIDE_N))
cases = data.stride_cases(STRIDE_M, STRIDE_N)
yes, no = t("chapter_yes"), t("chapter_no")
st.dataframe(pd.DataFrame([{
    t("chapter_col_view"): c.expression, "shape": str(c.shape), "x.stride()": str(c.stride),
    "is_contiguous()": yes if c.contiguous else no, t("chapter_col_copies"): yes if c.copies else no,
    "input_row_stride": c.kernel_row_stride, t("chapter_col_error"): f"{c.tutorial_error:.1e}",
    t("chapter_col_softmax_error"): f"{c.softmax_error:.1e}",
    t("chapter_col_trusting_error"): f"{c.assumed_contiguous_error:.2f}"} for c in cases]),
    hide_index=True, width="stretch")
left, right = st.columns([3, 2])
with left:
    names = [c.name for c in cases]
    kcase = state.choice_key("view", "column_slice", names)
    pick = st.radio(t("chapter_stride_pick"), names, key=kcase, horizontal=True,
                    format_func=lambda n: next(c.expression.split("#")[0].strip() for c in cases if c.name == n))
    case = next(c for c in cases if c.name == pick)
    rows = sc_chapter.stride_addresses(case.kernel_row_stride, STRIDE_M, STRIDE_N)
    packed = sc_chapter.stride_addresses(STRIDE_N, STRIDE_M, STRIDE_N)
    st.dataframe(pd.DataFrame({"row_idx": range(STRIDE_M),
                               t("chapter_col_reads", stride=case.kernel_row_stride): [f"{a}…{b}" for a, b in rows],
                               t("chapter_col_reads_packed", N=STRIDE_N): [f"{a}…{b}" for a, b in packed]}),
                 hide_index=True, width="stretch")
    st.markdown(t(f"chapter_stride_case_{case.name}", stride=case.kernel_row_stride, N=STRIDE_N,
                  err=f"{case.assumed_contiguous_error:.2f}"))
with right:
    code.kernel_panel("row_ptr", "out_ptr", caption=t("kernel_caption"), context=2)

# -- 3. tl.range, tl.arange, num_stages ------------------------------------------------------------------------
st.header(t("chapter_range_title"), anchor="range")
left, right = st.columns([3, 2])
with left:
    trace = data.trace(TRACE_ROWS, 16, num_programs=TRACE_PROGRAMS, num_stages=None, dtype=dtype, variant="correct",
                       seed=0, poisoned_row=0, gpu_key=gpu_key, keep_stages=False)
    walks = "; ".join(f"program {p}: " + ", ".join(map(str, trace.rows_of_program(p))) for p in range(TRACE_PROGRAMS))
    block = plan.block_size if plan else None
    st.markdown(t("chapter_range_intro", block=block or "—", last=(block - 1) if block else "—", rows=TRACE_ROWS,
                  programs=TRACE_PROGRAMS, walks=walks))
with right:
    code.kernel_panel("range", "offsets", caption=t("kernel_caption"), context=1)
st.subheader(t("chapter_stages_title"))
try:
    costs = data.stages_cost(N, dtype, gpu_key)
except Exception as err:
    costs = ()
    st.error(t("error_generic", error=err))
if costs:
    quiz.ask(quiz.shared_for_stages("chapter_stages", costs, N, gpu.name))
    left, right = st.columns([2, 3])
    with left:
        st.dataframe(pd.DataFrame([{"num_stages": c.num_stages, "n_regs": c.n_regs,
                                    t("chapter_col_shared"): f"{c.shared_bytes:,}",
                                    t("chapter_col_extra"): f"{c.shared_bytes - costs[0].shared_bytes:,}"}
                                   for c in costs]), hide_index=True, width="stretch")
    with right:
        growth = sc_chapter.stage_growth(costs, dtypes.element_size(dtype))
        chosen = tutorial_num_stages(gpu)
        st.markdown(sentences(
            t(f"chapter_stages_{growth.kind}", step=f"{growth.steps[0]:,}" if growth.steps else "0",
              steps=t("occupancy_list_separator").join(f"{s:,}" for s in growth.steps), row=f"{growth.row_bytes:,}",
              block=block or "—", elem=growth.element_bytes, shared=f"{costs[0].shared_bytes:,}", gpu=gpu.name),
            t("chapter_stages_choice", gpu=gpu.name, smem=f"{gpu.max_shared_mem:,}",
              threshold=f"{TUTORIAL_STAGES_SHARED_THRESHOLD:,}", stages=chosen)))
        st.caption(t("occupancy_toolchain", toolchain=toolchain_said(data.toolchain_label(gpu_key))))

# -- 4. the num_warps rule ------------------------------------------------------------------------------------
st.header(t("chapter_warps_title"), anchor="num-warps")
rule = "  \n".join(t("chapter_warps_rule_line", block=f"{b:,}", warps=w) if b else t("chapter_warps_rule_else", warps=w)
                   for b, w in sc_chapter.num_warps_thresholds())
st.markdown(t("chapter_warps_intro", rule=rule))
table = data.warps_table(defaults.BLOCK_SWEEP, dtype, gpu_key)
st.dataframe(pd.DataFrame([{"BLOCK_SIZE": r["block_size"], "num_warps": r["num_warps"], t("chapter_col_threads"): r["threads"],
                            t("chapter_col_per_thread"): r["values_per_thread"],
                            "n_regs": r["n_regs"] if r["n_regs"] is not None else "—",
                            "n_spills": r["n_spills"] if r["n_spills"] is not None else "—"} for r in table]),
             hide_index=True, width="stretch")
st.markdown(t("chapter_warps_reason", gpu=gpu.name))

# -- 5. the chapter's unit test ---------------------------------------------------------------------------------
st.header(t("chapter_test_title"), anchor="unit-test")
TEST_M, TEST_N = sc_chapter.CHAPTER_TEST_SIZE
left, right = st.columns([3, 2])
with right:
    code.source_panel(sc_chapter.chapter_unit_test, ("x = torch.randn(", "torch.testing.assert_close("))
with left:
    st.markdown(t("chapter_test_intro", M=TEST_M, N=TEST_N))
    if st.button(t("chapter_test_run", M=TEST_M, N=TEST_N), key="chapter_run_test", icon="🧪"):
        st.session_state["chapter_test_asked"] = True
    if st.session_state.get("chapter_test_asked"):
        with st.spinner(t("chapter_test_running")):
            result = data.chapter_unit_test(TEST_M, TEST_N)
        values = dict(M=TEST_M, N=TEST_N, err=f"{result.max_abs_error:.1e}", atol=result.atol, rtol=result.rtol,
                      s=f"{result.seconds:.2f}", block=result.block_size, programs=f"{result.num_programs:,}")
        if result.passed:
            st.success(t("chapter_test_passed", **values), icon="✅")
        else:
            st.error(t("chapter_test_failed", **values), icon="❌")
            st.code(result.message, wrap_lines=True)
        live_gpu = data.live_gpu()
        st.caption(t("sidebar_gpu", name=live_gpu.name) if live_gpu else t("sidebar_no_gpu"))

# -- 6. the 3-D grid and tl.exp ---------------------------------------------------------------------------------
st.header(t("chapter_grid_title"), anchor="grid")
quirk = data.grid_quirk()
left, right = st.columns([2, 3])
with left:
    st.markdown(t("chapter_grid_text", grid=str(plan.grid) if plan else "—", version=quirk.triton_version))
with right:
    lines = tuple(quirk.source.splitlines())
    code.render_code(lines, [i + 1 for i, ln in enumerate(lines) if "grid[2]" in ln],
                     caption=t("chapter_grid_caption", version=quirk.triton_version))
st.subheader(t("chapter_exp_title"))
err = data.exp_error()
a, b, c = st.columns(3)
a.metric(t("chapter_exp_rel"), f"{err.tl_max_rel:.1e}")
b.metric(t("chapter_exp_ulp"), f"{err.tl_max_ulp:.2f}")
c.metric(t("chapter_exp_torch_ulp"), f"{err.torch_max_ulp:.2f}")
st.markdown(t("chapter_exp_text", n=f"{err.n:,}", lo=err.lo, hi=err.hi, worst=f"{err.worst_x:.3f}",
              where=t("chapter_exp_where_cpu") if runtime.INTERPRETED else t("chapter_exp_where_gpu")))
if plan is not None and gpu.vendor == "nvidia":
    try:
        with layout.working("asm", t("acc_wait_asm", gpu=gpu.name)):
            ex2 = data.exp_ptx(plan.block_size, plan.num_warps, plan.num_stages, dtype, gpu_key)
    except Exception as err_ptx:
        ex2 = None
        st.caption(t("error_generic", error=err_ptx))
    if ex2 is not None and ex2.exponentials:
        st.markdown(t("chapter_exp_ptx", count=len(ex2.exponentials), gpu=gpu.name, arch=gpu.arch, log2e=ex2.log2e))
        st.code("\n".join(ex2.multiplies[:1] + ex2.exponentials[:1]), language="text", wrap_lines=True)

# -- 7. the chapter's benchmark, measured ---------------------------------------------------------------------------
st.header(t("chapter_bench_title"), anchor="benchmark")
st.markdown(t("chapter_bench_intro"))
claims = chapter_benchmark.claims_table()
if claims is None:
    st.info(t("chapter_bench_no_record"))
else:
    st.caption(t("chapter_bench_chart"))
    charts.show(charts.sweep_lines(data.chapter_sweep_frame(), x_title=t("cols_N"), y_title=t("bench_gbps"),
                                   color_title=t("bench_provider"), title=t("chapter_bench_chart_title")),
                key="chapter_sweep", height=360)
    layout.show_table(claims)
    st.markdown(chapter_benchmark.bounds_text())
    st.caption(chapter_benchmark.record_caption())

layout.page_end()
state.sync()
