"""Rows that don't fit: where the tutorial kernel stops (its real compiles), the tiled kernel's online max
and sum tile by tile (recorded by the kernel), and what reading a row twice costs (L2, recorded H200 runs)."""
import explorer_ui.startup  # noqa: F401  first: one session imports the project while the others wait
import numpy as np
import pandas as pd
import streamlit as st

from explorer_ui import cache_model, charts, code, data, defaults, fmt, layout, quiz, slides
from explorer_ui import long_row_frames as lr
from explorer_ui.i18n import bound, say, sentences, t, toolchain_said
from explorer_ui.player import player
from explorer_ui.urlstate import PageState
from softmax_teaching.long_row_trace import MAX_TRACE_TILES, MAX_TRACE_VALUES

MAX_N = MAX_TRACE_VALUES

layout.setup_page("longrows")
state = PageState("longrows")
layout.intro("longrows")
state.show_notes()

kdtype = state.choice_key("dtype", defaults.DTYPE, data.DTYPE_NAMES)
c1, c2 = st.columns([2, 1])
gpu_key, gpu = layout.gpu_choice(state, c1, t("gpu_choice"), cache_model=True)
dtype = c2.selectbox(t("dtype"), data.DTYPE_NAMES, key=kdtype)

# -- 1. the cliff ---------------------------------------------------------------------------------------------
st.header(t("longrows_cliff_title"))
st.markdown(t("longrows_cliff_intro"))
try:
    with st.spinner(t("computing")):
        table = lr.cliff_table(data.cliff_plans(gpu_key, dtype))
        cliff = lr.find_cliff(table)
        edge = data.exact_edge(gpu_key, dtype, cliff.fail_n) if cliff.fail_n else None
except Exception as err:  # a compile that failed: say so, keep the rest of the page
    st.error(t("error_generic", error=err))
    table, cliff, edge = None, None, None
if table is not None:
    left, right = st.columns([3, 2])
    with left:
        charts.show(charts.cliff_chart(table, x_title="BLOCK_SIZE", y_title=t("longrows_shared_axis"),
                                   limit_label=t("longrows_shared_limit"), fits_title=t("longrows_fits"),
                                   yes=t("longrows_fits_yes"), no=t("longrows_fits_no"),
                                   title=t("longrows_cliff_chart", gpu=gpu.name, dtype=dtype)), key="longrows_cliff")
    with right:
        if cliff.fail_n:
            last = table[table["fits"]].iloc[-1] if table["fits"].any() else None
            fail = table[~table["fits"]].iloc[0]
            st.warning(t(f"longrows_cliff_fail_{cliff.limiter}", gpu=gpu.name, dtype=dtype, n=f"{cliff.fail_n:,}",
                       block=f"{cliff.fail_block:,}", shared=f"{int(fail['shared']):,}",
                       limit=f"{gpu.max_shared_mem:,}", regs=int(fail["regs"]), warps=int(fail["warps"]),
                       threads=int(fail["warps"]) * gpu.warp_size, file=f"{gpu.max_num_regs:,}"))
            if edge is not None and last is not None:
                st.success(t("longrows_cliff_edge", last=f"{cliff.last_fit_n:,}", n=f"{cliff.fail_n:,}",
                             per_sm=int(last["per_sm"]), ok_last="✓" if edge[0] else "✗",
                             ok_n="✓" if edge[1] else "✗"))
        elif cliff.spill_block:     # every row launches: the limit that shows is registers spilling
            spill = table[table["block"] == cliff.spill_block].iloc[0]
            st.warning(t("longrows_cliff_spill_limit", gpu=gpu.name, dtype=dtype, top=f"{lr.CLIFF_BLOCKS[-1]:,}",
                         n=f"{int(spill['n_from']):,}", spills=int(spill["spills"]), top_spills=cliff.top_spills))
        else:
            st.info(t("longrows_cliff_none", gpu=gpu.name, dtype=dtype, top=f"{lr.CLIFF_BLOCKS[-1]:,}"))
        if cliff.spill_block and cliff.fail_n:
            spill = table[table["block"] == cliff.spill_block].iloc[0]
            st.warning(t("longrows_cliff_spill", block=f"{cliff.spill_block:,}", n=f"{int(spill['n_from']):,}",
                         spills=int(spill["spills"])))
        stages = int(table["stages"].iloc[0])
        st.markdown(t("longrows_cliff_why", stages=stages) if cliff.fail_n or cliff.spill_block else
                    t("longrows_cliff_why_later", stages=stages))
    shown = table.rename(columns={"block": "BLOCK_SIZE", "n_from": "N ≥", "n_to": "N ≤", "warps": "num_warps",
                                  "stages": "num_stages", "regs": "n_regs", "spills": "n_spills",
                                  "shared": t("longrows_shared_axis"), "per_sm": t("longrows_per_sm"),
                                  "fits": t("longrows_fits")})
    st.dataframe(shown.drop(columns=["shared_limit", "reg_occupancy", "sram_occupancy"]), hide_index=True,
                 width="stretch")
    st.caption(t("longrows_cliff_source", how=say(data.cliff_plans(gpu_key, dtype)[-1].resources_how)))

# -- 2. online softmax, tile by tile --------------------------------------------------------------------------
st.header(t("longrows_online_title"))
st.markdown(t("longrows_online_intro"))
kN = state.int_key("N", 8192, 1, MAX_N)
ktile = state.choice_key("tile", 1024, lr.TILES)
kpattern = state.choice_key("pattern", "rising", lr.PATTERNS)
c1, c2, c3 = st.columns([1, 1, 2])
N = int(c1.number_input(t("cols_N"), 1, MAX_N, step=1, key=kN, help=t("longrows_N_help", max=f"{MAX_N:,}")))
tile = c2.select_slider(t("longrows_tile"), lr.TILES, key=ktile, help=t("longrows_tile_help", tile=lr.PLAN_TILE))
pattern = c3.radio(t("longrows_pattern"), lr.PATTERNS, key=kpattern, horizontal=True,
                   format_func=lambda p, tr=bound(): tr(f"longrows_pattern_{p}"))
n_tiles = -(-N // tile)
trace = None
if n_tiles > MAX_TRACE_TILES:
    st.error(t("longrows_too_many_tiles", N=f"{N:,}", tile=tile, tiles=n_tiles, max=MAX_TRACE_TILES))
else:
    try:
        with st.spinner(t("computing")):
            trace = data.online_trace(N, tile, pattern)
    except Exception as err:
        st.error(t("error_generic", error=err))

if trace is not None:
    steps = lr.online_steps(trace)
    state.int_key("step", 0, 0, len(steps) - 1)
    env = lr.envelope(trace.x[0])
    y_dom = lr.y_extent(trace.x[0])
    check = lr.online_check(trace, 0)
    lines = lr.tiled_kernel_lines()
    phases = list(lr.TILE_PHASES)
    phase_labels = [t(f"longrows_phase_{p}") for p in phases]

    def facts(step: int) -> dict:
        kind, ti = steps[step]
        if kind == "check":
            return {}
        r = lr.tile_record(trace, 0, ti)
        a, b = r["start"], r["stop"]
        return dict(tile=ti, a=f"{a:,}", b=f"{b - 1:,}", m_before=fmt.number(r["m_before"]), m_after=fmt.number(r["m_after"]),
                    tile_max=fmt.number(r["tile_max"]), d_before=fmt.number(r["d_before"]), d_after=fmt.number(r["d_after"]),
                    rescale=fmt.number(r["rescale"]), tile_sum=fmt.number(r["tile_sum"]), n=trace.n_tiles,
                    k=trace.n_tiles - ti, m=fmt.number(trace.m_final[0]), d=fmt.number(trace.d_final[0]),
                    ysum=fmt.number(float(np.nansum(trace.y[0, a:b]))), pad=max(0, (ti + 1) * tile - N))

    def frame_kind(step: int) -> str:
        kind, ti = steps[step]
        if kind != "pass1":
            return "pass2_nan" if kind == "pass2" and np.isneginf(trace.m_final[0]) else kind
        r = lr.tile_record(trace, 0, ti)
        if r["guarded"]:
            return "guard"
        if np.isneginf(r["m_before"]):
            return "first"
        return "grow" if r["grew"] else "keep"

    def frame_text(step: int) -> str:
        kind = frame_kind(step)
        if kind == "check":
            return t("longrows_frame_check", m_k=fmt.number(check.m_kernel, 8), m_t=fmt.number(check.m_torch, 8),
                     d_k=fmt.number(check.d_kernel, 8), d_t=fmt.number(check.d_torch, 8), rel=f"{check.d_rel_err:.1e}",
                     ysum=fmt.number(check.y_sum, 8), err=f"{check.y_err:.1e}")
        text = t(f"longrows_frame_{kind}", **facts(step), **cache_model.cache_words(gpu))
        f = facts(step)
        if steps[step][0] == "pass1" and f["pad"]:
            text = sentences(text, t("longrows_frame_padding", pad=f["pad"]))
        return text

    def figure(step: int) -> charts.Figure:
        return charts.row_chart(env, lr.tile_phases(trace, step), lr.running_max(trace, 0, step), phases=phases,
                            phase_labels=phase_labels, x_title=t("longrows_column"), y_title="x",
                            phase_title=t("longrows_tile_state"), m_title="m",
                            title=t("longrows_row_chart", N=f"{N:,}", tile=tile, tiles=trace.n_tiles),
                            n_cols=N, y_domain=y_dom)

    def render(step: int) -> None:
        kind, ti = steps[step]
        left, right = st.columns([3, 2])
        with left:
            charts.show(figure(step), key="longrows_row", height=340)
            m = st.columns(4)
            if kind == "pass1":
                r = lr.tile_record(trace, 0, ti)
                m[0].metric("m", fmt.number(r["m_after"]), help=t("longrows_metric_m_help"))
                m[1].metric("d", fmt.number(r["d_after"]), help=t("longrows_metric_d_help"))
                m[2].metric(t("longrows_metric_rescale"), fmt.number(r["rescale"]), help=t("longrows_metric_rescale_help"))
                m[3].metric(t("longrows_metric_tile_sum"), fmt.number(r["tile_sum"]))
            else:
                m[0].metric("m", fmt.number(trace.m_final[0]), help=t("longrows_metric_m_help"))
                m[1].metric("d", fmt.number(trace.d_final[0]), help=t("longrows_metric_d_help"))
                m[2].metric("Σy", fmt.number(float(np.nansum(trace.y[0]))) if kind == "check" else "—")
                m[3].metric(t("longrows_metric_err"), f"{check.y_err:.1e}" if kind == "check" else "—")
        with right:
            anchor = {"guard": "guard", "pass2_nan": "pass2"}.get(frame_kind(step), kind)
            anchors = lr.ONLINE_ANCHORS[anchor if anchor in lr.ONLINE_ANCHORS else "pass1"]
            numbers = [n for n in (code.find_line(lines, a) for a in anchors) if n is not None]
            code.render_code(lines, numbers, caption=t("longrows_code_caption"), max_height=360, context=7)

    player("longrows", len(steps), render, format_step=frame_text, label=t("longrows_step_label"),
           slides=slides.SlideSource("long_rows", t("nav_longrows"), {"N": N, "tile": tile, "pattern": pattern},
                                     figure, height=340,
                                     shown={t("cols_N"): N, t("longrows_tile"): tile,
                                            t("longrows_pattern"): t(f"longrows_pattern_{pattern}")}))
    quiz.ask(quiz.tiles_in_row("longrows_tiles", N, tile, trace.n_tiles))
    with st.expander(t("longrows_table_title", tiles=trace.n_tiles)):
        tab = lr.online_table(trace, 0)
        st.dataframe(tab.rename(columns={"tile": t("longrows_col_tile"), "columns": t("longrows_column"),
                                         "rescale": t("longrows_metric_rescale"),
                                         "tile_sum": t("longrows_metric_tile_sum")}),
                     hide_index=True, width="stretch")
        st.caption(t("longrows_table_caption"))

# -- 3. traffic and L2 ----------------------------------------------------------------------------------------
cache = cache_model.cache_words(gpu)
st.header(t("longrows_l2_title", **cache))
st.markdown(t("longrows_l2_intro", **cache))
try:
    with st.spinner(t("computing")):
        flight = data.traffic_table(gpu_key, dtype)
except Exception as err:
    st.error(t("error_generic", error=err))
    flight = None
if flight is not None:
    crossing = lr.l2_crossing(flight)
    left, right = st.columns(2)
    with left:
        charts.show(charts.l2_chart(flight, x_title="N", y_title=t("longrows_in_flight_axis"), l2_label=f"{cache['cache']} (MB)",
                                title=t("longrows_l2_chart", gpu=gpu.name, dtype=dtype, **cache)), key="longrows_l2")
        first = flight.iloc[0]
        if cache_model.cache(gpu) is None:
            st.info(t("longrows_l2_unknown", gpu=gpu.name, **cache))
        elif crossing is None:
            st.info(t("longrows_l2_never", gpu=gpu.name, top=f"{int(flight['N'].iloc[-1]):,}", **cache))
        else:
            hit = flight[flight["N"] == crossing].iloc[0]
            st.markdown(t("longrows_l2_cross", gpu=gpu.name, N=f"{crossing:,}", rows=int(hit["rows_in_flight"]),
                          per_sm=int(hit["per_sm"]), row=fmt.fmt_bytes(hit["row_bytes"]),
                          flight=fmt.fmt_bytes(hit["in_flight_mb"] * 1e6), l2=fmt.fmt_bytes(hit["l2_mb"] * 1e6),
                          l2_mib=f"{cache_model.cache(gpu).mib:,g}", **cache))
        shown_n = flight[flight["N"] == crossing].iloc[0] if crossing else first
        st.markdown(t("longrows_l2_bytes", M=f"{lr.MAP_ROWS:,}", N=f"{int(shown_n['N']):,}",
                      nominal=fmt.fmt_bytes(shown_n["nominal_mb"] * 1e6),
                      dram=fmt.fmt_bytes(shown_n["dram_mb"] * 1e6), **cache))
        st.caption(t("longrows_l2_toolchain", toolchain=toolchain_said(data.toolchain_label(gpu_key))))
    with right:
        rec = data.recorded_paths_cached()
        rec = rec[rec["dtype"] == dtype]
        if rec.empty:
            st.info(t("longrows_paths_none", dtype=dtype))
        else:
            labels = {p: t(f"longrows_path_{p}") for p in lr.PATH_NAMES}
            rec = rec.assign(path_label=rec["path"].map(labels))
            h200_cross = lr.l2_crossing(data.traffic_table(lr.PATHS_GPU, dtype)) if lr.PATHS_GPU in data.gpu_keys() else None
            charts.show(charts.paths_chart(rec[rec["path"] != "copy"], h200_cross, x_title="N",
                                       y_title=t("longrows_ratio_axis"), path_title=t("longrows_path"),
                                       title=t("longrows_paths_chart", dtype=dtype)), key="longrows_paths")
            wide = rec.pivot_table(index="N", columns="path", values="gbps").reset_index()
            ratio = rec.pivot_table(index="N", columns="path", values="copy_ratio").reset_index()
            rows = []
            for (_, g), (_, r) in zip(wide.iterrows(), ratio.iterrows()):
                rows.append({"N": f"{int(g['N']):,}",
                             **{f"{labels[p]} GB/s": f"{g[p]:,.0f} ({r[p]:.2f}×)" for p in ("tiled", "split") if p in g}})
            st.dataframe(pd.DataFrame(rows), hide_index=True, width="stretch")
            st.caption(t("longrows_paths_source", file=rec["source"].iloc[0],
                         line=f"{h200_cross:,}" if h200_cross else "—"))
            fall = lr.falloff(rec[rec["path"] == "tiled"], h200_cross)
            if fall is not None:        # where the tiled path falls off, against the line: the records say
                st.markdown(t(f"longrows_l2_lesson_{fall.where}", n=f"{fall.n or 0:,}", ratio=fall.ratio or 0.0,
                              best=fall.best, best_n=f"{fall.best_n:,}", line=f"{h200_cross or 0:,}",
                              drop=lr.FALLOFF))

layout.page_end()
state.sync()
