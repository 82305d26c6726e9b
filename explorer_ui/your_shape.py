""""Your shape" on the Benchmark page: a shape, dtype and dim (or a model preset) in; the plan softmax_core
would take and why; the time floor on a catalog GPU and the nearest recorded measurement, each marked as
what it is; on a GPU, a live measurement against copy and torch with its spread."""
from __future__ import annotations

import math

import pandas as pd
import streamlit as st

from softmax_bench import DoBenchTimer, models, trust
from softmax_core.hardware import dtypes, runtime
from softmax_core.plans.shapes import MAX_DIMS, ShapeError, ShapePlan, parse_shape, plan_shape

from . import data, fmt
from .i18n import bound, plan_said, t, toolchain_said

CUSTOM = "custom"
# A live measurement allocates x, y, dy and float32 references: keep it well inside a laptop-class GPU.
LIVE_MAX_ELEMENTS = 1 << 30


@st.cache_data(show_spinner=False, ttl=600)
def recorded_models_runs(directory: str) -> list:
    return models.load_models_runs(directory)


@st.cache_data(show_spinner=False, max_entries=256)
def cached_plan(shape: tuple, dtype: str, dim: int, gpu_key: str, transposed: bool, direction: str) -> ShapePlan:
    with data.recorded_first(gpu_key):          # the recorded GPU's own compiles where it has them
        return plan_shape(shape, dtype, dim, data.gpu_by_key(gpu_key), transposed=transposed, direction=direction)


def kind_text(kind: str, tr=t) -> str:
    """A model case's family, in the page's language (a family the sweep does not name reads as "odd")."""
    return tr(f"shape_kind_{kind if kind in models.KINDS else 'odd'}")


def case_label(case: models.ModelCase, tr=t) -> str:
    return tr("shape_case_label", kind=kind_text(case.kind, tr), shape=" × ".join(map(str, case.shape)),
              dtype=case.dtype, dim=case.dim)


def error_text(err: ShapeError) -> str:
    f = err.figures
    if err.code == "no_sizes":
        return t("shape_err_no_sizes")
    if err.code == "not_whole_numbers":
        return t("shape_err_not_whole_numbers", typed=f["text"])
    if err.code == "size_below_one":
        return t("shape_err_size_below_one", shape=f["shape"])
    if err.code == "too_many_dims":
        return t("shape_err_too_many_dims", n=f["n"], limit=f["limit"])
    if err.code == "dim_out_of_range":
        return t("shape_err_dim_out_of_range", dim=f["dim"], n=f["n"])
    if err.code == "transposed_needs_two_dims":
        return t("shape_err_transposed_needs_two_dims")
    return str(err)


def plan_text(plan: ShapePlan) -> list[str]:
    """The plan's sentences: the layout, the kernel and why."""
    lay = plan.layout
    out = [t("shape_layout_rows", rows=lay.n_outer, n=lay.n_reduce) if lay.n_inner == 1
           else t("shape_layout", outer=lay.n_outer, reduce=lay.n_reduce, inner=lay.n_inner)]
    if plan.any_dim_plan is not None:
        p = plan.any_dim_plan
        # a tile padded past the inner run reads only the run's columns
        out.append(t("shape_any_dim", block_i=min(p.block_i, lay.n_inner), programs=p.num_programs,
                     warps=p.num_warps))
        if p.pack > 1:
            size = dtypes.element_size(plan.dtype)
            out.append(t("shape_any_dim_words", bytes=size, words=p.pack, word_bits=8 * size * p.pack))
        if p.cut:
            why = p.reason.values
            out.append(t("shape_any_dim_parts", parts=p.parts, part_r=p.part_r, block_r=p.block_r,
                         inner_bytes=why["inner_bytes"], cut_bytes=why["cut_bytes"]))
        else:
            out.append(t("shape_any_dim_one", block_r=p.block_r) if p.one_pass
                       else t("shape_any_dim_two", block_r=p.block_r, chunks=p.n_chunks))
        return out
    p = plan.rows_plan
    out.append(plan_said(p))
    if p.edges:
        out.append(t("shape_edges", vec=16 // dtypes.element_size(plan.dtype), n=p.n_cols))
    if p.tiny:
        out.append(t("shape_tiny", rows=p.rows_per_program, n=p.n_cols))
    if p.row_words > 1:
        size = dtypes.element_size(plan.dtype)
        out.append(t("shape_word_rows", n=p.n_cols, bytes=size, pack=p.row_words, word_bits=8 * size * p.row_words,
                     rows=p.rows_per_program))
    elif p.short_rows:
        out.append(t("shape_short_forward", rows=p.rows_per_program, n=p.n_cols) if p.direction == "forward"
                   else t("shape_short_backward", rows=p.rows_per_program, n=p.n_cols))
    return out


def show_live(case: models.ModelCase, direction: str) -> None:
    if math.prod(case.shape) > LIVE_MAX_ELEMENTS:
        st.info(t("shape_live_too_big", limit=LIVE_MAX_ELEMENTS))
        return
    if not st.button(t("shape_measure"), key="shape_measure"):
        return
    with st.spinner(t("shape_measuring")):
        run = models.run_models_sweep([case], ["copy", "tuned", "torch"], [direction], timer=DoBenchTimer(),
                                      command="explorer app: Benchmark page, your shape")
    rows = []
    frame = run.frame[run.frame.status == "ok"].to_dict("records")
    copy = next((r for r in frame if r["provider"] == "copy"), None)
    for r in frame:
        spread = trust.timing_spread(r)
        ratio = None if copy is None else trust.shown_ratio(trust.timing_spread(copy), spread)
        rows.append({t("bench_provider"): data.provider_label(r["provider"]),
                     t("shape_col_us"): f"{r['ms_median'] * 1e3:,.1f}",
                     t("shape_col_spread"): f"{r['ms_p20'] * 1e3:,.1f}–{r['ms_p80'] * 1e3:,.1f}",
                     t("shape_col_ratio"): "—" if ratio is None else f"{ratio:.2f}"})
    st.dataframe(pd.DataFrame(rows), hide_index=True, width="stretch")
    failed = run.frame[run.frame.status != "ok"]
    for r in failed.to_dict("records"):
        st.caption(t("shape_live_failed", provider=r["provider"], reason=r["reason"]))


CASES = {c.name: c for c in models.MODEL_CASES}
CUSTOM_START = models.MODEL_CASES[0]     # what "my own shape" starts from (explorer_ui/prewarm.py compiles its plan)


def fill_from_preset(name: str) -> None:
    """Put a preset's shape, dtype, dim and layout into the inputs (a custom shape keeps what was typed)."""
    case = CASES.get(name)
    if case is None and "shape_text" in st.session_state:
        return
    case = case or CUSTOM_START
    st.session_state["shape_text"] = " x ".join(map(str, case.shape))
    st.session_state["shape_dtype"] = case.dtype
    st.session_state["shape_dim"] = case.dim
    st.session_state["shape_transposed"] = case.transposed


def show() -> None:
    st.subheader(t("shape_title"))
    st.markdown(t("shape_intro"))
    names = [CUSTOM] + [c.name for c in models.MODEL_CASES]
    cases = CASES
    tr = bound()
    if "shape_text" not in st.session_state:
        fill_from_preset(CUSTOM)
    st.selectbox(t("shape_preset"), names, key="shape_preset", on_change=lambda: fill_from_preset(
                 st.session_state["shape_preset"]),
                 format_func=lambda n: tr("shape_preset_custom") if n == CUSTOM else case_label(cases[n], tr))
    c1, c2, c3, c4 = st.columns([3, 1, 1, 1])
    shape_text = c1.text_input(t("shape_shape"), key="shape_text")
    dtype = c2.selectbox(t("dtype"), list(dtypes.TUNED_DTYPES), key="shape_dtype")
    dim = int(c3.number_input(t("shape_dim"), -MAX_DIMS, MAX_DIMS - 1, key="shape_dim"))
    transposed = c4.checkbox(t("shape_transposed"), key="shape_transposed")
    direction = st.radio(t("bench_direction"), ["forward", "backward"], horizontal=True, key="shape_direction",
                         format_func=lambda d: tr(f"bench_dir_{d}"))
    live = data.live_gpu()
    if live is None:
        keys = data.gpu_keys()
        from .layout import LESSON_GPU, lesson_gpu_key

        st.session_state["shape_gpu"] = lesson_gpu_key()      # the lesson's GPU (a change here is carried on)
        gpu_key = st.selectbox(t("shape_gpu"), keys, key="shape_gpu", format_func=data.gpu_labeler(),
                               on_change=lambda: st.session_state.__setitem__(LESSON_GPU, st.session_state["shape_gpu"]))
    else:
        gpu_key = live.key
    try:
        shape = parse_shape(shape_text)
        plan = cached_plan(shape, dtype, dim, gpu_key, transposed, direction)
    except ShapeError as err:
        st.error(error_text(err))
        return
    for sentence in plan_text(plan):
        st.markdown(sentence)
    if plan.rows_plan is not None and plan.any_dim_plan is None:
        st.caption(t("shape_toolchain", toolchain=toolchain_said(plan.rows_plan.resources.toolchain)))
    gpu = plan.gpu
    from .layout import vendor_notes

    vendor_notes(gpu, cache_model=True)     # AMD: the XCDs' L2s and the Infinity Cache every CU shares
    if plan.floor_us is not None:
        st.markdown(t("shape_floor", gpu=gpu.name, bytes=fmt.fmt_bytes(plan.bytes_moved),
                      bandwidth=gpu.memory_bandwidth_gbps, time=fmt.duration(plan.floor_us * 1e-6)))
    near = models.nearest_recorded(recorded_models_runs(str(data.recorded_dir() / "models")), dtype, plan.route == "any_dim",
                                   plan.bytes_moved / 1e6, direction, (shape, plan.dim, transposed),
                                   reduce_len=plan.layout.n_reduce)
    if near is not None:
        r = near.row
        figures = dict(kind=kind_text(r["kind"]), shape=r["shape"].replace("x", " × "), dtype=r["dtype"],
                       gpu=near.gpu, date=near.date, tuned=r["tuned"], torch=r["torch"])
        st.markdown(t("shape_recorded_same", **figures) if near.same_case else t("shape_nearest", **figures))
        if not (near.same_dtype and near.same_layout):
            st.caption(t("shape_nearest_differs"))
    if not runtime.INTERPRETED and live is not None:
        show_live(models.ModelCase(CUSTOM, CUSTOM, shape, dtype, plan.dim, transposed), direction)
    else:
        st.caption(t("shape_no_gpu"))
