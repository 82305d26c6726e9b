"""Layouts and memory transactions: which elements one program's loads touch (recorded from the real kernel in
Triton's interpreter), which lane holds which (the kernel compiled for the chosen GPU), the 32-byte sectors
and 128-byte lines each warp-level request touches, what the over-fetch costs, and the H200's own counters."""
import explorer_ui.startup  # noqa: F401  first: one session imports the project while the others wait
import math

import pandas as pd
import streamlit as st

from explorer_ui import charts, fmt, layout
from explorer_ui import transactions_view as tv
from explorer_ui.charts.transactions import request_lanes
from explorer_ui.i18n import bound, cache_named, say, t, toolchain_said
from explorer_ui.player import player
from explorer_ui.urlstate import PageState
from softmax_core.hardware import dtypes
from softmax_teaching import transactions as tx

layout.setup_page("layouts")
state = PageState("layouts")
layout.intro("layouts")
state.show_notes()

# -- 1. the tensor as memory ----------------------------------------------------------------------------------
st.header(t("layouts_memory_title"))
presets = [name for name in tv.NAMED_LAYOUTS if name in tv.PRESETS or name == "custom"]
kpreset = state.choice_key("preset", tv.DEFAULT_PRESET, presets)
c1, c2 = st.columns([2, 1])
preset = c1.selectbox(t("layouts_preset"), presets, key=kpreset, format_func=lambda p, tr=bound(): tr(f"layouts_preset_{p}"))
gpu_key, gpu = layout.gpu_choice(state, c2, t("gpu_choice"))
base = tv.PRESETS.get(preset, tv.PRESETS[tv.DEFAULT_PRESET])
shape_default = "x".join(str(n) for n in base.shape)
if preset != "custom":
    shape_text, dtype, dim, view, direction = shape_default, base.dtype, base.dim, base.view, "forward"
    st.caption(t("layouts_preset_is", shape=shape_default.replace("x", " × "), dtype=base.dtype, dim=base.dim,
                 view=t(f"layouts_view_{base.view}")))
else:
    kdtype = state.choice_key("dtype", "float32", tv.DTYPES)
    kview = state.choice_key("view", "transposed", tv.VIEW_NAMES)
    kdim = state.int_key("dim", 1, 0, 7)
    kdir = state.choice_key("direction", "forward", ("forward", "backward"))
    a, b, c, d, e = st.columns([2, 1, 1, 1.4, 1.2])
    kshape = state.text_key("shape", shape_default)
    shape_text = a.text_input(t("layouts_shape"), key=kshape, help=t("layouts_shape_help"))
    dtype = b.selectbox(t("dtype"), tv.DTYPES, key=kdtype)
    dim = int(c.number_input(t("layouts_dim"), 0, 7, step=1, key=kdim))
    view = d.selectbox(t("layouts_view"), tv.VIEW_NAMES, key=kview, format_func=lambda v, tr=bound(): tr(f"layouts_view_{v}"))
    direction = e.selectbox(t("layouts_direction"), ("forward", "backward"), key=kdir,
                            format_func=lambda v, tr=bound(): tr(f"layouts_direction_{v}"))

try:
    case = tv.check_case(shape_text, dtype, dim, view, direction)
except ValueError as err:
    code, figures = err.args
    st.error(t(f"layouts_error_{code}", **figures))
    state.sync()
    layout.stop_page()

strides = tv.case_strides(case)
view_plan = tv.planned(case, gpu_key, gpu)
fold = view_plan.fold
elt = dtypes.element_size(case.dtype)
st.markdown(t("layouts_memory_text", strides=", ".join(f"{s:,}" for s in strides.strides), offset=strides.storage_offset,
              dim=case.dim, step=f"{strides.strides[case.dim]:,}", step_bytes=f"{strides.strides[case.dim] * elt:,}",
              row=", ".join(f"{o:,}" for o in tv.first_row(case, 8))))
layout.show_table(pd.DataFrame([{t("layouts_fold_outer"): f"{fold.n_outer:,}", t("layouts_fold_reduce"): f"{fold.n_reduce:,}",
                                 t("layouts_fold_stride"): f"{fold.reduce_stride:,}",
                                 t("layouts_fold_inner"): f"{fold.n_inner:,}",
                                 t("layouts_fold_family"): t(f"layouts_family_{view_plan.family}")}]))
st.markdown(t("layouts_reason", reason=say(view_plan.reason, cache=cache_named(gpu))))
if view_plan.toolchain:
    st.caption(t("gpu_tuned_toolchain", toolchain=toolchain_said(view_plan.toolchain)))

# -- 2. one warp's load, lane by lane -------------------------------------------------------------------------
st.header(t("layouts_lanes_title"))
try:
    with st.spinner(t("computing")):
        traces = tv.page_traces(case, gpu_key)
except Exception as err:
    st.error(t("error_generic", error=err))
    layout.stop_page()

steps = {k: tv.requests_of(kt) for k, kt in traces.items()}
n_steps = max(1, max(len(s) for s in steps.values()))
state.int_key("step", 0, 0, n_steps - 1)
st.markdown(t("layouts_lanes_text", gpu=gpu.name, warp=gpu.warp_size))


def describe_kernel(kernel: str) -> str:
    kt = traces[kernel]
    tot = kt.totals
    load = next((l for l in kt.loads if l.requests is not None), None)
    if load is None:
        missing = next((l.missing for l in kt.loads if l.missing), "no_compiled_load")
        return t(f"layouts_missing_{missing}")
    lay = load.layout
    return t("layouts_kernel_facts", name=kt.kernel_name, spt=list(lay.size_per_thread), tpw=list(lay.threads_per_warp),
             wpc=list(lay.warps_per_cta), order=list(lay.order), width=load.compiled.width_bytes,
             instruction=load.compiled.instruction,
             line=load.recorded.line, requests=f"{tot.requests:,}",
             spr=fmt.number(tot.sectors_per_request or 0, 3), used=f"{(tot.used_fraction or 0):.1%}",
             toolchain=kt.compiled.toolchain)


def frame_text(step: int) -> str:
    parts = []
    for kernel in ("planned", "row_walk"):
        s = steps[kernel]
        if step >= len(s):
            parts.append(t("layouts_frame_done", kernel=t(f"layouts_kernel_{kernel}")))
            continue
        i, k = s[step]
        req = traces[kernel].loads[i].requests
        parts.append(t("layouts_frame", kernel=t(f"layouts_kernel_{kernel}"), request=k + 1, of=req.n_requests,
                       active=int(req.lane_count[k]), sectors=int(req.sectors[k]), lines=int(req.lines[k]),
                       used=f"{int(req.useful_bytes[k]) / (int(req.sectors[k]) * tx.SECTOR_BYTES):.1%}"))
    return "  \n".join(parts)


top_sectors = tv.most_sectors(*traces.values())


def render(step: int) -> None:
    cols = st.columns(2)
    for col, kernel in zip(cols, ("planned", "row_walk")):
        with col:
            s = steps[kernel]
            frame = tv.lane_frame(traces[kernel], *s[min(step, len(s) - 1)]) if s else tv.lane_frame(None)
            fig = request_lanes(frame, f"lanes_{kernel}", warp_size=gpu.warp_size, top_sectors=top_sectors,
                                title=t(f"layouts_kernel_{kernel}"), lane_title=t("layouts_lane"),
                                sector_title=t("layouts_sector"), address_title=t("layouts_byte"))
            charts.show(fig, key=f"layouts_chart_{kernel}", height=300)


c1, c2 = st.columns(2)
c1.markdown(describe_kernel("planned"))
c2.markdown(describe_kernel("row_walk"))
player("layouts", n_steps, render, format_step=frame_text, label=t("layouts_step_label"))

# -- 3. what it costs -----------------------------------------------------------------------------------------
st.header(t("layouts_cost_title"))
n = math.prod(case.shape)
reads = 1 if case.direction == "forward" else 2
rows = []
for kernel in ("planned", "row_walk"):
    tot = traces[kernel].totals
    c = tx.cost(n, elt, reads, 1, tot.used_fraction, gpu.memory_bandwidth_gbps)
    rows.append({t("layouts_cost_kernel"): t(f"layouts_kernel_{kernel}"),
                 t("layouts_cost_spr"): fmt.number(tot.sectors_per_request or 0, 3),
                 t("layouts_cost_used"): f"{(tot.used_fraction or 0):.1%}",
                 t("layouts_cost_fetched"): fmt.fmt_bytes(c.fetched_read_bytes + c.write_bytes),
                 t("layouts_cost_floor"): fmt.duration(c.floor_us * 1e-6 if c.floor_us else None)})
layout.show_table(pd.DataFrame(rows))
st.caption(t("layouts_cost_note", gpu=gpu.name, bw=f"{gpu.memory_bandwidth_gbps:,.0f}" if gpu.memory_bandwidth_gbps else "—"))
klass = tv.layout_class(case, view_plan.family, fold.n_inner)
swept = tv.class_ratio(tv.sweep_class(klass, fold.n_reduce, fold.n_inner), case.direction)
ratio = None if swept is not None else tv.recorded_ratio(klass, fold.n_reduce, case.direction)
if swept is not None:
    st.markdown(t("layouts_ratio_class", klass=t(f"layouts_class_{klass}"), sweep=swept.sweep_class,
                  median=f"{swept.median:.2f}", low=f"{swept.low:.2f}", high=f"{swept.high:.2f}", shapes=swept.shapes,
                  runs=swept.runs, run_low=f"{swept.run_low:.2f}", run_high=f"{swept.run_high:.2f}",
                  record=swept.record))
elif ratio is None:
    st.info(t("layouts_no_ratio"))
else:
    st.markdown(t("layouts_ratio", klass=t(f"layouts_class_{klass}"), case=ratio.case, shape=ratio.shape.replace("x", " × "),
                  dtype=ratio.dtype, median=f"{ratio.median:.2f}", low=f"{ratio.low:.2f}", high=f"{ratio.high:.2f}",
                  runs=ratio.runs, run_low=f"{ratio.run_low:.2f}", run_high=f"{ratio.run_high:.2f}"))

# -- 4. the hardware's own counters ---------------------------------------------------------------------------
st.header(t("layouts_ncu_title"))
record = tv.ncu()
if record is None:
    st.info(t("layouts_ncu_none"))
else:
    st.markdown(t("layouts_ncu_text", gpu=record.machine.get("gpu", ""), triton=record.machine.get("triton", ""),
                  folder=record.folder))
    with st.spinner(t("computing")):
        table = tv.ncu_rows(record)
    layout.show_table(pd.DataFrame([{t("layouts_ncu_case"): t(f"layouts_preset_{r['name']}"),
                                     t("layouts_ncu_kernel"): r["kernel"],
                                     t("layouts_ncu_page"): fmt.number(r["page"] or 0, 3),
                                     t("layouts_ncu_counted"): fmt.number(r["ncu"] or 0, 3),
                                     t("layouts_ncu_launch"): " / ".join(f"{p:,}\u00a0×\u00a0{n}" for p, n in
                                                                        (r["page_launch"], r["ncu_launch"])),
                                     t("layouts_ncu_verdict"): t(f"layouts_ncu_{tv.agreement(r)}")} for r in table]))
    st.caption(t("layouts_ncu_note"))
layout.page_end()
state.sync()
