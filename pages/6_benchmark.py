"""Benchmark: GB/s against a plain copy. Live on a GPU (softmax_bench.run_sweep); recorded runs with
their provenance; and with no GPU a small live CPU comparison of the naive softmax against torch.softmax."""
import explorer_ui.startup  # noqa: F401  first: one session imports the project while the others wait
import time

import pandas as pd
import streamlit as st

import softmax_core as sc
from explorer_ui import (charts, code, data, defaults, fmt, cache_model, heavy_work, layout, quiz, recorded_text,
                         your_shape)
from explorer_ui.i18n import bound, sentences, t
from explorer_ui.urlstate import PageState
import softmax_bench as bench
from softmax_bench import trust
from softmax_core.hardware import dtypes
from softmax_teaching import bench_reading
from softmax_core.traffic import PASS_TENSORS

CPU_PROVIDERS = ("copy", "naive", "torch")     # what a CPU can time honestly; kernels would run interpreted
CPU_N_CHOICES = (128, 256, 512, 1024, 2048, 4096)
FORMULA_N = 1024        # the byte-count example: the chapter's M rows of this many columns

layout.setup_page("bench")
state = PageState("bench")
layout.intro("bench")
state.show_notes()
layout.device_banner()
recorded_speedup = data.measured_speedup(defaults.DTYPE, defaults.CHAPTER_N)
if recorded_speedup:
    predicted = sc.memory_traffic(recorded_speedup["M"], recorded_speedup["N"], dtypes.torch_dtype(defaults.DTYPE)).predicted_speedup
    quiz.ask(quiz.measured_speedup("bench_speedup", recorded_speedup, predicted))

left, right = st.columns([3, 2])
with left:
    example = sc.bytes_moved(defaults.CHAPTER_M, FORMULA_N, dtypes.element_size(defaults.DTYPE), "forward")
    st.markdown(t("bench_formula", M=defaults.CHAPTER_M, N=FORMULA_N, dtype=defaults.DTYPE,
                  example=fmt.fmt_bytes(example)))
with right:
    code.kernel_panel("load", "store", caption=t("kernel_caption"), context=1)


def bench_tables(run, direction: str, eager_copy: dict | None = None):
    """The run's GB/s (median) and fraction-of-copy tables for one direction, as shown: separators, "⚠" on an
    unsteady timing (trust.SPREAD_LIMIT), and a ratio only where the library's trust rule shows one
    (softmax_bench.trust.ratio_to_copy; `eager_copy`: N -> the eager copy's GB/s, for a CUDA-graph run).
    Also returns how many timings were unsteady."""
    part = run.frame[(run.frame["direction"] == direction) & (run.frame["status"] == "ok")]
    records = {(r["provider"], int(r["N"])): r for r in part.to_dict("records")}
    spreads = {key: trust.timing_spread(r) for key, r in records.items()}
    gbps = {key: r["gbps"] for key, r in records.items()}
    providers = list(dict.fromkeys(part["provider"]))
    Ns = sorted({n for _, n in spreads})
    dipped = {(p, d.n) for p in providers for d in bench_reading.dips(
        [(n, gbps[q, n], spreads[q, n].hi / spreads[q, n].lo if spreads[q, n].steady is not None else None)
         for q, n in spreads if q == p])}
    gb_rows, ratio_rows = [], []
    for n in Ns:
        gb_row, ratio_row = {"N": f"{n:,}"}, {"N": f"{n:,}"}
        copy = records.get(("copy", n))
        for p in providers:
            sp = spreads.get((p, n))
            gb_row[p] = "—" if sp is None else (f"{gbps[p, n]:,.0f}" + (" ⚠" if sp.steady is False else "")
                                                 + (" ↓" if (p, n) in dipped else ""))
            if p != "copy":
                r = None if sp is None else trust.ratio_to_copy(records[p, n], copy, (eager_copy or {}).get(n))[0]
                ratio_row[p] = "—" if r is None else f"{r:.2f}"
        gb_rows.append(gb_row)
        ratio_rows.append(ratio_row)
    unsteady = sum(sp.steady is False for sp in spreads.values())
    return pd.DataFrame(gb_rows), pd.DataFrame(ratio_rows), unsteady, sorted(dipped, key=lambda d: (d[1], d[0]))


def ceiling_sentence(run, direction: str) -> str:
    """What this run's GB/s are compared with: the GPU's spec peak and its best copy far beyond L2
    (softmax_teaching.bench_reading), beside the same-size copy the table divides by, and which kernels
    pass that same-size copy."""
    part = run.frame[(run.frame["direction"] == direction) & (run.frame["status"] == "ok")]
    gpu = data.gpu_for_name(str(run.provenance.get("gpu", "")))
    copies = [(int(r["N"]), int(r["M"]) * int(r["N"]) * dtypes.element_size(r["dtype"]), float(r["gbps"]))
              for r in part[part["provider"] == "copy"].to_dict("records")]
    if gpu is None or not copies:
        return t("bench_ceiling_unknown")
    ceiling = bench_reading.copy_ceiling(copies, cache_model.cache_bytes(gpu), gpu.memory_bandwidth_gbps)
    copy_at = {n: g for n, _, g in copies}
    passed = [(data.provider_label(r["provider"]), int(r["N"]), float(r["gbps"]) / copy_at[int(r["N"])])
              for r in part[part["provider"] != "copy"].to_dict("records")
              if int(r["N"]) in copy_at and float(r["gbps"]) > copy_at[int(r["N"])]]
    beaten = (t("bench_ceiling_passed", which=t("occupancy_list_separator").join(t("bench_at_n", what=f"{name} {x:.2f}×", n=n) for name, n, x in passed[:4]))
              if passed else t("bench_ceiling_not_passed"))
    if ceiling.far_gbps is None:
        return sentences(t("bench_ceiling_no_far", gpu=gpu.name, spec=f"{ceiling.spec_gbps or 0:,.0f}",
                           factor=bench_reading.FAR_BEYOND_L2, **cache_model.cache_words(gpu)), beaten)
    return sentences(t("bench_ceiling", gpu=gpu.name, spec=f"{ceiling.spec_gbps or 0:,.0f}", far=f"{ceiling.far_gbps:,.0f}",
             n=f"{ceiling.far_n:,}", size=fmt.fmt_bytes(ceiling.far_bytes), l2=fmt.fmt_bytes(ceiling.l2_bytes),
             factor=bench_reading.FAR_BEYOND_L2, of_spec=ceiling.of_spec or 0.0, **cache_model.cache_words(gpu)), beaten)


def show_run(run, prefix: str, eager_run=None) -> None:
    """Chart with the copy roofline, the table beside it, failures, provenance, CSV download. `eager_run`: for
    a CUDA-graph run, the eager run of the same GPU, dtype and M, to check the graph's roofline against."""
    directions = [d for d in ("forward", "backward") if (run.frame["direction"] == d).any()] or ["forward"]
    kdir = state.choice_key(f"{prefix}dir", directions[0], directions)
    direction = st.radio(t("bench_direction"), directions, key=kdir, horizontal=True,
                         format_func=lambda d, tr=bound(): tr(f"bench_dir_{d}"))
    slow_roof, eager_copy = {}, None
    if eager_run is not None:
        def rows(r):
            return r.frame[r.frame["direction"] == direction].to_dict("records")
        slow_roof = bench.slower_graph_roofline(rows(run), rows(eager_run))
        eager_copy = trust.copy_gbps(rows(eager_run))
    lines, roof = data.chart_frame(run, direction)
    left, right = st.columns([3, 2])
    with left:
        if lines.empty and roof.empty:
            st.info(t("bench_nothing_ok"))
        else:
            charts.show(charts.gbps_chart(lines, roof, x_title=t("cols_N"), y_title=t("bench_gbps"),
                                          color_title=t("bench_provider"), title=t("bench_chart_title")),
                        key=f"bench_chart_{prefix}", height=380)
            st.caption(t("bench_chart_caption"))
            st.caption(ceiling_sentence(run, direction))
    with right:
        gb, ratio, unsteady, dipped = bench_tables(run, direction, eager_copy)
        st.caption(t("bench_table_gbps"))
        st.dataframe(gb, hide_index=True, width="stretch")
        if len(ratio.columns) > 1:
            st.caption(t("bench_table_ratio"))
            st.dataframe(ratio, hide_index=True, width="stretch")
        if unsteady:
            st.caption(t("acc_bench_unsteady", n=unsteady, limit=trust.SPREAD_LIMIT))
        if dipped:
            st.caption(t("bench_dips", n=len(dipped), dip=bench_reading.DIP,
                         which=t("occupancy_list_separator").join(t("bench_at_n", what=data.provider_label(p), n=n) for p, n in dipped)))
        if slow_roof:
            worst = min(slow_roof, key=lambda n: slow_roof[n][0] / slow_roof[n][1])     # the largest shortfall
            st.caption(t("bench_graph_slow_roofline", sizes=", ".join(f"{n:,}" for n in slow_roof), n=f"{worst:,}",
                         graph=f"{slow_roof[worst][0]:,.0f}", eager=f"{slow_roof[worst][1]:,.0f}",
                         limit=bench.GRAPH_ROOFLINE_LIMIT))
    failed = run.frame[run.frame["status"] != "ok"]
    if not failed.empty:
        with st.expander(t("bench_failed", n=len(failed))):
            shown = pd.DataFrame({
                t("bench_provider"): [data.provider_label(p) for p in failed["provider"]],
                t("bench_direction"): [t(f"bench_dir_{d}") if d in PASS_TENSORS else d for d in failed["direction"]],
                "N": failed["N"].astype(int),
                t("bench_col_status"): [t(f"bench_status_{s}") if s in recorded_text.STATUSES else s for s in failed["status"]],
                t("bench_col_reason"): [recorded_text.reason_text(r) for r in failed["reason"]]})
            layout.show_table(fmt.table(shown))
    with st.expander(t("bench_provenance")):
        prov = recorded_text.provenance_rows(run.provenance)
        table = pd.DataFrame({t("bench_col_key"): list(prov), t("bench_col_value"): [str(v) for v in prov.values()]})
        layout.show_table(table)
    st.download_button(t("bench_csv"), run.frame.to_csv(index=False), file_name=f"softmax-benchmark-{prefix}.csv",
                       mime="text/csv", key=f"bench_csv_{prefix}")


def sweep_with_feedback(*args, **kwargs):
    """run_sweep with a progress bar, and a message while another session's benchmark holds the lock
    (the harness runs one benchmark at a time per server, so timings stay honest)."""
    waiting = st.empty()
    bar = st.progress(0.0, text=t("bench_starting"))
    waited = []

    def on_wait() -> None:
        waited.append(time.monotonic())
        waiting.info(t("bench_waiting"), icon="⏳")

    run = bench.run_sweep(*args, progress=lambda done, total, label: bar.progress(done / max(total, 1), text=label),
                          on_wait=on_wait, **kwargs)
    bar.empty()             # the run is done: no progress bar left behind at its last value
    if waited:
        waiting.caption(t("bench_waited", seconds=time.monotonic() - waited[0]))
    else:
        waiting.empty()
    return run


# -- live: on a GPU, the full harness; on a CPU, naive vs torch with a wall clock ------------------------
on_gpu = not sc.runtime.INTERPRETED
if on_gpu:
    st.subheader(t("bench_live_title"))
    candidates = sorted(set(bench.FULL_SWEEP_N))      # the harness's record sweep: N values offered here
    providers = bench.available_providers()
    kM = state.int_key("M", bench.FULL_SWEEP_M, 1, 65_536)
    kdtype = state.choice_key("dtype", defaults.DTYPE, data.DTYPE_NAMES)
    klo = state.choice_key("Nlo", candidates[0], candidates)
    khi = state.choice_key("Nhi", 16384 if 16384 in candidates else candidates[-1], candidates)
    kprov = state.multi_key("providers", [p for p in ("copy", "tuned", "tutorial", "torch", "naive") if p in providers],
                        providers)
    kdirs = state.multi_key("directions", ["forward"], ["forward", "backward"])
    c1, c2, c3 = st.columns([1, 1, 3])
    M = int(c1.number_input(t("rows_M"), 1, 65_536, step=1, key=kM))
    dtype = c2.selectbox(t("dtype"), data.DTYPE_NAMES, key=kdtype)
    with c3:
        lo = st.select_slider(t("bench_N_from"), candidates, key=klo)
        hi = st.select_slider(t("bench_N_to"), candidates, key=khi)
    chosen = st.multiselect(t("bench_providers"), providers, key=kprov, format_func=data.provider_label)
    dirs = st.multiselect(t("bench_directions"), ["forward", "backward"], key=kdirs,
                          format_func=lambda d, tr=bound(): tr(f"bench_dir_{d}"))
    Ns = [n for n in candidates if min(lo, hi) <= n <= max(lo, hi)]
    if st.button(t("bench_run"), key="bench_go", type="primary", disabled=not (chosen and dirs and Ns)) \
            and heavy_work.gpu_sweep_fits(M, Ns, dtype, dirs):
        with heavy_work.turn("bench_go"):
            st.session_state[data.LIVE_RUN_KEY] = sweep_with_feedback(M, Ns, dtype, chosen, dirs,
                                                                      command="explorer app: Benchmark page")
    heavy_work.say_if_cancelled("bench_go")
    if data.LIVE_RUN_KEY in st.session_state:
        show_run(st.session_state[data.LIVE_RUN_KEY], "live")
else:
    st.subheader(t("bench_cpu_title"))
    st.markdown(t("bench_cpu_intro"))
    kcM = state.int_key("cpuM", 1024, 16, 2048)
    kcN = state.choice_key("cpuN", 1024, CPU_N_CHOICES)
    c1, c2 = st.columns(2)
    cpu_M = c1.slider(t("rows_M"), 16, 2048, key=kcM)
    cpu_N = c2.select_slider(t("bench_cpu_Nmax"), CPU_N_CHOICES, key=kcN)
    Ns = [n for n in CPU_N_CHOICES if n <= cpu_N]
    if st.button(t("bench_cpu_run"), key="bench_cpu_run", type="primary"):
        with heavy_work.turn("bench_cpu_run"):   # a few seconds of every core: one at a time per server
            # Warm up first: the first calls of a fresh process pay for allocating and touching new memory, which
            # once made copy's median 8x its min. One untimed pass over the smallest size, then enough samples
            # per case for percentiles (the spread is shown and judged: trust.SPREAD_LIMIT).
            bench.run_sweep(int(cpu_M), Ns[:1], defaults.DTYPE, list(CPU_PROVIDERS), ["forward"],
                            timer=bench.WallClockTimer(warmup=3, max_repeats=3, budget_s=0.05), command="warm-up")
            timer = bench.WallClockTimer(warmup=5, max_repeats=25, budget_s=0.25)
            st.session_state["bench_cpu_result"] = sweep_with_feedback(
                int(cpu_M), Ns, defaults.DTYPE, list(CPU_PROVIDERS), ["forward"], timer=timer,
                command="explorer app: CPU comparison")
    heavy_work.say_if_cancelled("bench_cpu_run")
    cpu_run = st.session_state.get("bench_cpu_result")
    if cpu_run is not None:
        frame = cpu_run.frame[cpu_run.frame["status"] == "ok"]
        rows = {(r["provider"], int(r["N"])): r for r in frame.to_dict("records")}
        cpu_M_run = int(cpu_run.provenance["M"])
        story_rows = []
        impossible = {}
        for n in sorted({n for p, n in rows if p == "naive" and ("torch", n) in rows}):
            naive, fused = trust.timing_spread(rows["naive", n]), trust.timing_spread(rows["torch", n])
            s = trust.speedup(naive, fused)
            shown = trust.shown_ratio(naive, fused)      # None: a timing is unsteady, so no ratio
            why = (bench_reading.impossible_cpu_timing(float(rows["copy", n]["gbps"]), naive.median, fused.median,
                                                       float(rows["torch", n]["gbps"])) if ("copy", n) in rows else None)
            if why:                                          # a figure this machine cannot have produced
                impossible[n], shown = why, None
            story_rows.append({
                "N": f"{n:,}", t("bench_cpu_measured"): "—" if shown is None else f"{shown:.2f}",
                t("acc_col_spread"): f"{s.lo:.2f}–{s.hi:.2f}",
                t("acc_verdict_title"): t(f"bench_cpu_impossible_{why}") if why else t(f"acc_verdict_short_{s.verdict}"),
                t("bench_cpu_predicted"): f"{sc.memory_traffic(cpu_M_run, n).predicted_speedup:.2f}"})
        story = pd.DataFrame(story_rows)
        if impossible:
            st.warning(t("bench_cpu_not_results", sizes=", ".join(f"{n:,}" for n in impossible)))
        show_run(cpu_run, "cpu")
        st.markdown(t("bench_cpu_story"))
        st.dataframe(story, hide_index=True, width="stretch")
        st.caption(t("acc_rule", limit=trust.SPREAD_LIMIT))

# -- your shape: the plan, the floor, the nearest record (live on a GPU) -----------------------------------
your_shape.show()

# -- recorded runs ----------------------------------------------------------------------------------------
st.subheader(t("bench_recorded_title"))
runs = data.recorded_runs()
if not runs:
    st.info(t("bench_no_recording", path=str(data.recorded_dir())), icon="🗄️")
else:
    labels = [r.label for r in runs]
    # start on the newest run in the chapter's dtype
    chapter_dtype = [i for i, r in enumerate(runs) if r.provenance.get("dtype") == defaults.DTYPE]
    krun = state.int_key("run", chapter_dtype[-1] if chapter_dtype else len(runs) - 1, 0, len(runs) - 1)
    index = st.selectbox(t("bench_pick_run"), list(range(len(runs))), key=krun, format_func=lambda i: labels[i])
    run = runs[index]
    # The same GPU, dtype and M timed from a CUDA graph, if such a record exists: then a switch between the
    # two clocks (absent otherwise, and its URL value is then left alone).
    graph_run, eager_run = data.graph_run_for(run), None
    if graph_run is not None:
        ktiming = state.choice_key("timing", bench.EAGER, bench.TIMING_VIEWS)
        timing = st.radio(t("bench_timing"), bench.TIMING_VIEWS, key=ktiming, horizontal=True,
                          format_func=lambda v, tr=bound(): tr(f"bench_timing_{v}"))
        st.caption(t("bench_timing_explain"))
        if timing == bench.CUDAGRAPH:
            eager_run, run = run, graph_run
    p = run.provenance
    st.markdown(t("bench_recorded_on", gpu=p.get("gpu") or p.get("device", "?"), date=data.run_day(run),
                  torch=p.get("torch", "?"), triton=p.get("triton", "?"), M=p.get("M", "?"), dtype=p.get("dtype", "?")))
    show_run(run, "rec", eager_run)

layout.page_end()
state.sync()
