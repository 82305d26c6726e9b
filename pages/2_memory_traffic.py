"""Memory traffic: the naive five kernels against one fused kernel, counted by softmax_core.traffic."""
import explorer_ui.startup  # noqa: F401  first: one session imports the project while the others wait
import pandas as pd
import streamlit as st

import softmax_core as sc
from explorer_ui import cache_model, charts, code, data, defaults, fmt, layout, quiz, slides
from explorer_ui.i18n import sentences, t
from explorer_ui.player import player
from explorer_ui.urlstate import PageState
from softmax_bench import trust
from softmax_core.hardware import dtypes
from softmax_core import traffic as memory

layout.setup_page("memory")
state = PageState("memory")
layout.intro("memory")
state.show_notes()

kM = state.int_key("M", defaults.CHAPTER_M, 1, 1_048_576)
kN = state.int_key("N", defaults.CHAPTER_N, 1, 1_048_576)
kdtype = state.choice_key("dtype", defaults.DTYPE, data.DTYPE_NAMES)
c1, c2, c3, c4 = st.columns([1, 1, 1, 2])
M = c1.number_input(t("rows_M"), 1, 1_048_576, step=1, key=kM)
N = c2.number_input(t("cols_N"), 1, 1_048_576, step=1, key=kN)
dtype = c3.selectbox(t("dtype"), data.DTYPE_NAMES, key=kdtype)
gpu_key, gpu = layout.gpu_choice(state, c4, t("acc_l2_gpu"), cache_model=True)

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
                 written=s.elements_written, bytes=fmt.fmt_bytes(s.bytes), total=fmt.fmt_bytes(so_far))
    return t("memory_frame_fused", read=traffic.fused.elements_read, written=traffic.fused.elements_written,
             bytes=fmt.fmt_bytes(traffic.fused_bytes), naive=fmt.fmt_bytes(traffic.naive_bytes))


# one unit for the whole axis, the one the naive total reads best in (fmt.axis_bytes)
unit, per_unit = fmt.axis_bytes([traffic.naive_bytes])


def figure(step: int) -> charts.Figure:
    rows = [{"impl": naive_label, "step": step_names[i], "order": i, "code": s.code, "read": s.elements_read,
             "written": s.elements_written, "amount": s.bytes / per_unit, "active": i <= step}
            for i, s in enumerate(steps)]
    rows.append({"impl": fused_label, "step": step_names[-1], "order": 0, "code": t("memory_fused_code"),
                 "read": traffic.fused.elements_read, "written": traffic.fused.elements_written,
                 "amount": traffic.fused_bytes / per_unit, "active": step == len(steps)})
    return charts.stacked_traffic(pd.DataFrame(rows), x_title=t("memory_x", unit=unit), y_title=t("memory_y"),
                                  color_title=t("memory_color"), title=t("memory_chart_title"), steps=step_names)


def render(step: int) -> None:
    left, right = st.columns([3, 2])
    with left:
        charts.show(figure(step), key="memory_chart", height=260)
    with right:
        if step < len(steps):
            code.naive_panel(steps[step].code, caption=t("memory_naive_caption"))
        else:
            code.kernel_panel("load", "store", caption=t("kernel_caption"), context=1)


player("memory", n_frames, render, format_step=frame_text,
       slides=slides.SlideSource("memory_traffic", t("nav_memory"), {"M": int(M), "N": int(N), "dtype": dtype},
                                 figure, height=260,
                                 shown={t("rows_M"): int(M), t("cols_N"): int(N), t("dtype"): dtype}))
quiz.ask(quiz.fused_speedup("memory_speedup", traffic, int(M), int(N), dtype))

st.subheader(t("memory_totals_title"))
table = pd.DataFrame([{t("memory_col_step"): step_names[i], t("memory_col_code"): s.code if s.name != "fused" else t("memory_fused_code"),
                       t("memory_col_read"): s.elements_read, t("memory_col_written"): s.elements_written,
                       t("memory_col_bytes_read"): s.bytes_read, t("memory_col_bytes_written"): s.bytes_written}
                      for i, s in enumerate(steps + [traffic.fused])])
layout.show_table(fmt.table(table))
left, right = st.columns([3, 2])
with left:
    st.markdown(t("memory_formula", M=int(M), N=int(N), naive=traffic.naive_elements, fused=traffic.fused_elements,
                  elt=traffic.element_size, **memory.traffic_formulas()))
with right:
    a, b = st.columns(2)
    a.metric(t("memory_predicted"), f"{traffic.predicted_speedup:.3f}×", help=t("memory_predicted_help"))
    measured_here = data.measured_speedup(dtype, int(N), int(M))
    if measured_here and measured_here["exact"]:
        b.metric(t("memory_measured"), f"{measured_here['speedup']:.2f}×",
                 help=t("memory_measured_help", **measured_here))
        if "fused_eff" in measured_here:
            fused, naive, exact = fmt.product_shown(measured_here["byte_ratio"], measured_here["fused_eff"],
                                                    measured_here["naive_eff"], measured_here["speedup"])
            measured_here = {**measured_here, "fused": fused, "naive": naive, "equals": "=" if exact else "≈"}
        st.caption(sentences(t("memory_measured_parts", **measured_here) if "fused_eff" in measured_here else
                             t("memory_measured_caption", **measured_here), layout.spread_sentence(measured_here)))
    elif measured_here:     # never borrow another shape's figure: say what was measured, and where
        b.metric(t("memory_measured"), "—")
        st.caption(t("acc_not_at_shape", asked_M=int(M), asked_N=int(N), **measured_here) + " "
                   + layout.spread_sentence(measured_here))
    else:
        b.metric(t("memory_measured"), "—")
        st.caption(t("memory_no_measured"))

# -- the last cache before DRAM: why the measured gain can fall short of the DRAM count ----------------------
l2 = cache_model.cache_bytes(gpu)
cache = cache_model.cache_words(gpu)
st.subheader(t("acc_l2_title", **cache))
if l2 is None:
    st.markdown(t("acc_l2_unknown", gpu=gpu.name, **cache))
else:
    tensor = int(M) * int(N) * traffic.element_size
    st.markdown(t("acc_l2_text", gpu=gpu.name, l2=f"{cache_model.cache_size(gpu)} ({fmt.fmt_bytes(l2)})", M=int(M),
                  N=int(N), dtype=dtype, tensor=fmt.fmt_bytes(tensor),
                  fits=t("acc_l2_fits", **cache) if tensor <= l2 else t("acc_l2_does_not_fit", **cache),
                  naive=fmt.fmt_bytes(traffic.naive_bytes),
                  naive_l2=fmt.fmt_bytes(cache_model.naive_bytes_with_cache(traffic)),
                  pred=traffic.predicted_speedup, pred_l2=cache_model.predicted_speedup_with_cache(traffic),
                  cross=cache_model.cache_crossing_n(int(M), traffic.element_size, gpu), **cache))
    run_gpu = data.gpu_for_name(measured_here["gpu"]) if measured_here else None
    if measured_here and measured_here["exact"] and run_gpu is not None and run_gpu.key == gpu.key:
        # which prediction the measurement is nearer: the data says, not the sentence
        pred, pred_l2, got = traffic.predicted_speedup, cache_model.predicted_speedup_with_cache(traffic), measured_here["speedup"]
        dram_nearer = abs(got - pred) <= abs(got - pred_l2)
        which, other = (t("acc_l2_which_dram"), t("acc_l2_which_l2", **cache)) if dram_nearer else \
            (t("acc_l2_which_l2", **cache), t("acc_l2_which_dram"))
        st.markdown(t("acc_l2_nearer", gpu=gpu.name, measured=got, which=which, other=other,
                      near=pred if dram_nearer else pred_l2, far=pred_l2 if dram_nearer else pred))
        if dram_nearer and tensor <= l2 and measured_here.get("naive_eff", 2.0) <= 1.0:
            st.markdown(t("acc_l2_no_saving", **measured_here, **cache))

table = data.speedup_table(dtype)
if table is not None:
    run_M = int(table["M"].iloc[0])
    run_gpu = data.gpu_for_name(str(table["gpu"].iloc[0])) or gpu
    run_cache = cache_model.cache_words(run_gpu)
    kinds = [t("acc_kind_dram"), t("acc_kind_l2", **run_cache), t("memory_measured")]
    curve = table.melt(id_vars=["N"], value_vars=["predicted", "predicted_l2", "measured"], var_name="kind",
                       value_name="speedup")
    curve["kind"] = curve["kind"].map(dict(zip(["predicted", "predicted_l2", "measured"], kinds)))
    verdicts = [t(f"acc_verdict_short_{v}") for v in trust.VERDICTS]
    spread = table[["N", "lo", "hi"]].assign(speedup=table["measured"],
                                              verdict=[t(f"acc_verdict_short_{v}") for v in table["verdict"]])
    cross_n = cache_model.cache_crossing_n(run_M, traffic.element_size, run_gpu)
    crossing = None
    if cross_n is not None:
        crossing = pd.DataFrame([{"N": cross_n, "label": t("acc_crossing_label", l2=cache_model.cache_size(run_gpu),
                                                         **run_cache)}])
    st.subheader(t("memory_curve_title"))
    y_top = charts.speedup_y_top(curve["speedup"])
    left, right = st.columns([3, 2])
    with left:
        charts.show(charts.speedup_lines(curve, x_title=t("cols_N"), y_title=t("memory_speedup_axis"),
                                         color_title=t("memory_kind"), title=t("memory_curve_chart"), kinds=kinds,
                                         spread=spread, verdicts=verdicts, verdict_title=t("acc_verdict_title"),
                                         crossing=crossing, y_top=y_top),
                    key="memory_curve", height=380)
        if (spread["hi"] > y_top).any():
            st.caption(t("acc_speedup_axis_cut", top=y_top))
    with right:
        if cross_n is not None:
            st.markdown(t("acc_crossing_text", M=run_M, gpu=run_gpu.name, l2=cache_model.cache_size(run_gpu),
                          cross=cross_n, **run_cache))
            for side in cache_model.side_readings(table, cross_n):     # each judged by its own rows' figures
                ranges = dict(measured=fmt.ratio_range(side["lo"], side["hi"]),
                              cache_pred=fmt.ratio_range(side["cache_lo"], side["cache_hi"]),
                              dram_pred=fmt.ratio_range(side["dram_lo"], side["dram_hi"]))
                st.markdown("- " + t(f"acc_reading_{side['reading']}", where=t(f"acc_side_{side['side']}", **side,
                                                                              **ranges), **ranges, **run_cache))
    shown = table[["N", "M", "predicted", "predicted_l2", "measured", "lo", "hi"]].copy()
    shown["verdict"] = spread["verdict"]
    st.dataframe(fmt.table(shown).rename(columns={
        "predicted": kinds[0], "predicted_l2": kinds[1], "measured": kinds[2], "lo": t("acc_col_lo"),
        "hi": t("acc_col_hi"), "verdict": t("acc_verdict_title")}), hide_index=True, width="stretch")
    st.caption(t("memory_curve_caption", gpu=table["gpu"].iloc[0], date=table["date"].iloc[0], M=run_M))
    st.caption(t("acc_rule", limit=trust.SPREAD_LIMIT))

layout.page_end()
state.sync()
