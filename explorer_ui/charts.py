"""Altair charts for the pages. Each builder takes a DataFrame and already-translated labels.

During an animation the page calls the same builder with new data each frame: nothing in a spec depends
on the step (no step in a title, no step-dependent domain), and the data travel beside the spec under fixed
names (`alt.NamedData`), so the spec Streamlit sends is byte-for-byte the same each frame and the browser
only swaps the data — no rebuild, no flicker. Every chart has tooltips; pages put a table beside it.
"""
from __future__ import annotations

import json
from dataclasses import dataclass

import altair as alt
import pandas as pd
import streamlit as st

from . import present

# How a row looks in the schedule animation: handled in an earlier loop trip, in this one, or still to come.
PHASE_ALPHA = {"done": 0.45, "now": 1.0, "later": 0.12}
PHASE_TEXT_ALPHA = {"done": 0.7, "now": 1.0, "later": 0.3}
PALETTE = {"blue": "#3b6fd4", "orange": "#f08c2e", "grey": "#9aa3b5", "light": "#d9dde6", "red": "#d43b3b",
           "green": "#2e9e5b", "purple": "#8a4fd4", "yellow": "#e0b400"}
# Okabe & Ito's eight colours, told apart with every common kind of colour blindness (black swapped for a
# dark grey, so that black labels stay readable on every cell). Categorical series take them in this order.
SAFE = ("#0072B2", "#E69F00", "#009E73", "#CC79A7", "#56B4E9", "#D55E00", "#F0E442", "#666666")
# Programs are coloured by program % len(SAFE): neighbours always differ, and every colour repeats every
# eight programs (the legend and tooltips say which programs share one).
PROGRAM_COLORS = SAFE


def program_color_groups(n_programs: int) -> list[str]:
    """The legend's label for each program colour: the programs that wear it ("0", or "1, 9, 17 …")."""
    k = len(PROGRAM_COLORS)
    groups = []
    for c in range(min(k, max(n_programs, 1))):
        members = list(range(c, n_programs, k))
        groups.append(", ".join(map(str, members[:3])) + (" …" if len(members) > 3 else ""))
    return groups


def with_program_colors(df: pd.DataFrame, n_programs: int) -> pd.DataFrame:
    """`df` (with a `program` column) plus `colour`: the legend label of the program's colour group."""
    groups = program_color_groups(n_programs)
    return df.assign(colour=[groups[int(p) % len(PROGRAM_COLORS)] for p in df["program"]])


def _program_color(n_programs: int, title: str, legend: bool) -> alt.Color:
    groups = program_color_groups(n_programs)
    return alt.Color("colour:N", title=title, sort=groups,
                     scale=alt.Scale(domain=groups, range=list(PROGRAM_COLORS[:len(groups)])),
                     legend=alt.Legend(orient="right", symbolType="square") if legend else None)


@dataclass(frozen=True)
class Figure:
    chart: alt.TopLevelMixin          # refers to its data by name only
    datasets: dict                    # name -> DataFrame


# Specs already checked against the Vega-Lite schema in this process (their JSON text, data left out).
# Checking is most of the cost of turning a chart into a spec, and an animation asks for the same spec
# every frame: each distinct one is checked the first time it is drawn, then trusted.
_VALIDATED: dict[str, None] = {}
_VALIDATED_MAX = 1024


def _spec(chart: alt.TopLevelMixin) -> dict:
    spec = chart.to_dict(validate=False)
    text = json.dumps(spec, sort_keys=True, default=str)
    if text not in _VALIDATED:
        chart.to_dict()                         # raises on an invalid spec, as an unchecked one would in the browser
        if len(_VALIDATED) >= _VALIDATED_MAX:
            _VALIDATED.clear()
        _VALIDATED[text] = None
    return spec


# About the height of a chart's title and x axis (labels and title), in CSS pixels, and the height Streamlit
# gives a chart that asks for none.
PLOT_SURROUND = 70
DEFAULT_HEIGHT = 350


def show(fig: Figure, key: str, height: int | None = None) -> None:
    height = present.chart_height(height)       # presentation mode caps charts to fit a projector
    spec = _spec(fig.chart)
    view = spec.get("config", {}).get("view", {})
    for default in ("continuousWidth", "continuousHeight"):   # altair's theme defaults; Streamlit sizes charts
        view.pop(default, None)
    if present.is_on():
        _legends_beside(spec)
    elif not any(k in spec for k in ("vconcat", "hconcat", "concat", "facet")):
        # Sized by its plot: Streamlit's default ("fit") squeezes the title, the axes and a legend under the
        # plot into the chart's height, so a long legend leaves the plot a strip (the benchmark's seven lines
        # in 110 px) and an axis title longer than the plot pushes the chart's title out of the top. Here the
        # plot keeps the height less room for a title and an axis, and what is around it adds to the chart.
        spec["autosize"] = {"type": "fit-x", "contains": "padding"}
        total = height if height is not None else DEFAULT_HEIGHT
        spec.setdefault("height", max(total - PLOT_SURROUND, round(total * 0.6)))
        height = None                            # the chart is as tall as it draws
    spec["datasets"] = dict(fig.datasets)       # Streamlit ships these beside the spec, keyed by these names
    if height is None:
        st.vega_lite_chart(spec=spec, key=key, width="stretch")
    else:
        st.vega_lite_chart(spec=spec, key=key, width="stretch", height=height)


def _legends_beside(node) -> None:
    """Presentation mode caps a chart's height; a legend under the plot would take that height from the plot
    (seen: a plot squeezed to nothing), so every legend moves beside it, one column."""
    if isinstance(node, dict):
        legend = node.get("legend")
        if isinstance(legend, dict) and legend.get("orient") == "bottom":
            legend.update(orient="right", columns=1)
        for value in node.values():
            _legends_beside(value)
    elif isinstance(node, list):
        for value in node:
            _legends_beside(value)


def _data(name: str) -> alt.NamedData:
    return alt.NamedData(name)


def stacked_traffic(df: pd.DataFrame, *, x_title: str, y_title: str, color_title: str, title: str,
                    steps: list[str]) -> Figure:
    """Bytes per kernel, stacked per implementation. Columns: impl, step, amount (bytes in the axis's unit,
    fmt.axis_bytes), active (bool), tooltip cols."""
    chart = alt.Chart(_data("traffic"), title=title).mark_bar(stroke="white", strokeWidth=0.5).encode(
        x=alt.X("amount:Q", stack="zero", title=x_title),
        y=alt.Y("impl:N", title=y_title, sort=None),
        color=alt.Color("step:N", title=color_title, sort=steps,
                        scale=alt.Scale(domain=steps, range=list(SAFE[:len(steps)])),
                        legend=alt.Legend(orient="right")),
        order=alt.Order("order:Q"),
        opacity=alt.condition("datum.active", alt.value(1.0), alt.value(0.22)),
        tooltip=[alt.Tooltip("impl:N", title=y_title), alt.Tooltip("step:N", title=color_title),
                 alt.Tooltip("code:N"), alt.Tooltip("read:Q", format=","), alt.Tooltip("written:Q", format=","),
                 alt.Tooltip("amount:Q", format=",.3~f", title=x_title)],
    )
    return Figure(chart, {"traffic": df})


def speedup_lines(df: pd.DataFrame, *, x_title: str, y_title: str, color_title: str, title: str,
                  kinds: list[str], spread: pd.DataFrame, verdicts: list[str], verdict_title: str,
                  crossing: pd.DataFrame | None = None, y_top: float | None = None) -> Figure:
    """Predicted (with and without L2) and measured speedup over N. `df`: N, speedup, kind (one of `kinds`,
    coloured in that order in every language). `spread`: N, lo, hi, speedup, verdict (one of `verdicts`):
    the measured figure's interval as a bar, its verdict as the point's shape. `crossing`: N, label — where
    one M x N tensor stops fitting in the L2 cache (a vertical rule). `y_top`: cut the y axis there (bars
    that reach above it are clipped; the page says so)."""
    x = alt.X("N:Q", scale=alt.Scale(type="log", base=2), title=x_title)
    y_scale = alt.Scale(domain=[0, y_top]) if y_top else alt.Scale(zero=True)
    color = alt.Color("kind:N", title=color_title, sort=kinds, scale=alt.Scale(domain=kinds, range=list(SAFE[:len(kinds)])),
                      legend=alt.Legend(orient="bottom", columns=1, labelLimit=360))
    lines = alt.Chart(_data("speedup"), title=title).mark_line(point=False, clip=True).encode(
        x=x, y=alt.Y("speedup:Q", title=y_title, scale=y_scale), color=color,
        strokeDash=alt.StrokeDash("kind:N", sort=kinds, legend=None,
                                  scale=alt.Scale(domain=kinds, range=[[1, 0], [5, 3], [1, 0]][:len(kinds)])),
        tooltip=[alt.Tooltip("kind:N", title=color_title), alt.Tooltip("N:Q", format=","),
                 alt.Tooltip("speedup:Q", format=".2f", title=y_title)],
    )
    measured_color = SAFE[kinds.index(kinds[-1])]
    bars = alt.Chart(_data("spread")).mark_rule(color=measured_color, opacity=0.6, strokeWidth=2, clip=True).encode(
        x=x, y="lo:Q", y2="hi:Q")
    points = alt.Chart(_data("spread")).mark_point(size=70, filled=True, color=measured_color, clip=True).encode(
        x=x, y="speedup:Q",
        shape=alt.Shape("verdict:N", title=verdict_title, sort=verdicts,
                        scale=alt.Scale(domain=verdicts, range=["circle", "cross", "diamond"][:len(verdicts)]),
                        legend=alt.Legend(orient="bottom", columns=1, labelLimit=360)),
        tooltip=[alt.Tooltip("N:Q", format=","), alt.Tooltip("speedup:Q", format=".2f", title=y_title),
                 alt.Tooltip("lo:Q", format=".2f"), alt.Tooltip("hi:Q", format=".2f"),
                 alt.Tooltip("verdict:N", title=verdict_title)])
    chart = lines + bars + points
    datasets = {"speedup": df, "spread": spread}
    if crossing is not None and not crossing.empty:
        datasets["crossing"] = crossing
        rule = alt.Chart(_data("crossing")).mark_rule(color="#444444", strokeDash=[2, 3]).encode(
            x=x, tooltip=["label:N"])
        text = alt.Chart(_data("crossing")).mark_text(align="right", dx=-4, dy=-6, fontSize=11, color="#444444").encode(
            x=x, y=alt.value(12), text="label:N")
        chart = chart + rule + text
    return Figure(chart, datasets)


def lanes(df: pd.DataFrame, strip: pd.DataFrame, states: list[str], colors: list[str], *, x_title: str,
          y_title: str, state_title: str, title: str, block_size: int, first_lane: int = 0) -> Figure:
    """One row's lanes: finite values as points on top, and below them a strip of every lane's state, so
    that -inf and NaN lanes, which have no height, are still seen. `df`: lane, value, shown, state (one row
    per lane). `strip`: lane, lane_end, state, lanes (one row per run of lanes in the same state)."""
    domain = [first_lane, block_size]
    color = alt.Color("state:N", title=state_title, scale=alt.Scale(domain=states, range=colors),
                      legend=alt.Legend(orient=present.pick("bottom", "right"), columns=present.pick(3, 1)))
    values = alt.Chart(_data("lanes"), title=title).mark_circle(size=14, opacity=0.85).encode(
        x=alt.X("lane:Q", title=x_title, scale=alt.Scale(domain=domain, nice=False)),
        y=alt.Y("value:Q", title=y_title), color=color,
        tooltip=[alt.Tooltip("lane:Q"), alt.Tooltip("shown:N", title=y_title),
                 alt.Tooltip("state:N", title=state_title)],
    ).transform_filter("isFinite(datum.value)").properties(height=present.pick(230, 170))
    band = alt.Chart(_data("strip")).mark_rect().encode(
        x=alt.X("lane:Q", title=None, scale=alt.Scale(domain=domain, nice=False)), x2="lane_end:Q", color=color,
        tooltip=[alt.Tooltip("lanes:N", title=x_title), alt.Tooltip("state:N", title=state_title)],
    ).properties(height=28)
    chart = alt.vconcat(values, band, spacing=4).resolve_scale(color="shared")
    return Figure(chart, {"lanes": df, "strip": strip})


def memory_strip(df: pd.DataFrame, states: list[str], colors: list[str], *, x_title: str, state_title: str,
                 title: str) -> Figure:
    """The output buffer, address by address, coloured by what happened there. Columns: address, end,
    state, row, value."""
    chart = alt.Chart(_data("memory"), title=title).mark_rect().encode(
        x=alt.X("address:Q", title=x_title), x2="end:Q",
        y=alt.Y("band:N", title=None, axis=None),
        color=alt.Color("state:N", title=state_title, scale=alt.Scale(domain=states, range=colors),
                        legend=alt.Legend(orient="right")),
        tooltip=[alt.Tooltip("address:Q", format=","), alt.Tooltip("end:Q", format=","), "row:N",
                 alt.Tooltip("state:N", title=state_title)],
    )
    return Figure(chart, {"memory": df})


def row_grid(df: pd.DataFrame, *, n_programs: int, program_title: str, title: str, labels: bool) -> Figure:
    """Rows of the matrix as cells in reading order, coloured by the program that handled them; the
    current iteration's rows are solid, earlier ones faded, later ones pale. Columns: row, gx, gy,
    program, iteration, phase ('done' | 'now' | 'later')."""
    df = with_program_colors(df, n_programs).assign(alpha=df["phase"].map(PHASE_ALPHA),
                                                    text_alpha=df["phase"].map(PHASE_TEXT_ALPHA))
    cells = alt.Chart(_data("rows"), title=title).mark_rect(stroke="white", strokeWidth=1).encode(
        x=alt.X("gx:O", axis=None), y=alt.Y("gy:O", axis=None),
        color=_program_color(n_programs, program_title, legend=True),
        opacity=alt.Opacity("alpha:Q", scale=None),
        tooltip=["row:Q", "program:Q", "iteration:Q"],
    )
    if not labels:
        return Figure(cells, {"rows": df})
    text = alt.Chart(_data("rows")).mark_text(fontSize=9, color="black").encode(
        x=alt.X("gx:O", axis=None), y=alt.Y("gy:O", axis=None), text="row:Q",
        opacity=alt.Opacity("text_alpha:Q", scale=None))
    return Figure(cells + text, {"rows": df})


def program_grid(df: pd.DataFrame, *, x_title: str, y_title: str, program_title: str, title: str,
                 n_programs: int) -> Figure:
    """The same rows, arranged by who handled them: x = program, y = loop iteration. Columns as row_grid."""
    df = with_program_colors(df, n_programs).assign(alpha=df["phase"].map(PHASE_ALPHA))
    chart = alt.Chart(_data("programs"), title=title).mark_rect(stroke="white", strokeWidth=0.5).encode(
        x=alt.X("program:O", title=x_title, axis=alt.Axis(labelOverlap=True)),
        y=alt.Y("iteration:O", title=y_title),
        color=_program_color(n_programs, program_title, legend=False),
        opacity=alt.Opacity("alpha:Q", scale=None),
        tooltip=["row:Q", "program:Q", "iteration:Q"],
    )
    return Figure(chart, {"programs": df})


def sm_slots(df: pd.DataFrame, *, x_title: str, y_title: str, program_title: str, title: str,
             n_programs: int) -> Figure:
    """Programs placed on SMs: x = SM, y = slot on that SM. Columns: sm, slot, program, wave, rows."""
    df = with_program_colors(df, n_programs)
    chart = alt.Chart(_data("sms"), title=title).mark_rect(stroke="white", strokeWidth=0.5).encode(
        x=alt.X("sm:O", title=x_title, axis=alt.Axis(labelOverlap=True)),
        y=alt.Y("slot:O", title=y_title),
        color=_program_color(n_programs, program_title, legend=False),
        opacity=alt.condition("datum.wave == 0", alt.value(1.0), alt.value(0.35)),
        tooltip=["sm:Q", "slot:Q", "program:Q", "wave:Q", "rows:N"],
    )
    return Figure(chart, {"sms": df})


def gantt(df: pd.DataFrame, *, x_title: str, y_title: str, phase_title: str, title: str,
          phases: list[str], colors: list[str]) -> Figure:
    """Schematic timelines. Columns: lane (facet label), iteration, phase, start, end."""
    chart = alt.Chart(_data("spans"), title=title).mark_bar(height=10, cornerRadius=2).encode(
        x=alt.X("start:Q", title=x_title), x2="end:Q",
        y=alt.Y("label:N", title=y_title, sort=None, axis=alt.Axis(labelLimit=260)),
        color=alt.Color("phase:N", title=phase_title, scale=alt.Scale(domain=phases, range=colors)),
        tooltip=["lane:N", "iteration:Q", "phase:N", alt.Tooltip("start:Q", format=".1f"),
                 alt.Tooltip("end:Q", format=".1f")],
    )
    return Figure(chart, {"spans": df})


def speedup_y_top(values, floor: float = 1.0) -> float:
    """Where to cut a speedup chart's y axis: 1.5 x the largest median or prediction (at least `floor`), so
    that a wide min–max bar of an old run does not squash the lines it is about."""
    return max(floor, 1.5 * max((float(v) for v in values if pd.notna(v)), default=floor))


def occupancy_y_top(df: pd.DataFrame, programs_limit: str) -> float | None:
    """Where to cut the y axis of an occupancy chart, or None to show it whole: a limit line far above the
    programs that actually fit (on an MI300X shared memory alone would allow thousands) flattens the subject
    onto the axis, so the axis stops at twice the largest programs-per-SM figure (at least 8)."""
    if df.empty:
        return None
    subject = float(df.loc[df["limit"] == programs_limit, "programs"].max())
    top = max(2.0 * subject, 8.0)
    return top if float(df["programs"].max()) > top else None


def occupancy_curve(df: pd.DataFrame, marker: pd.DataFrame, *, x_title: str, y_title: str, limit_title: str,
                    title: str, limits: list[str], x_scale_type: str = "linear", y_top: float | None = None) -> Figure:
    """Programs per SM as one resource varies, one line per limit. Columns: x, programs, limit (one of
    `limits`, coloured in that order in every language). `marker`: the current plan (x, programs, label).
    `y_top`: cut the y axis there (occupancy_y_top); lines above it are clipped, the page says so."""
    scale = alt.Scale(type=x_scale_type, base=2) if x_scale_type == "log" else alt.Scale(zero=False)
    y_scale = alt.Scale(domain=[0, y_top], clamp=False) if y_top else alt.Scale()
    lines = alt.Chart(_data("curve"), title=title).mark_line(interpolate="step-after", point=False,
                                                             clip=True).encode(
        x=alt.X("x:Q", title=x_title, scale=scale),
        y=alt.Y("programs:Q", title=y_title, scale=y_scale),
        color=alt.Color("limit:N", title=limit_title, sort=limits,
                        scale=alt.Scale(domain=limits, range=list(SAFE[:len(limits)])),
                        legend=alt.Legend(orient="bottom", columns=2, labelLimit=300)),
        strokeDash=alt.StrokeDash("limit:N", legend=None, sort=limits),
        tooltip=[alt.Tooltip("x:Q", title=x_title, format=","), alt.Tooltip("programs:Q", title=y_title),
                 alt.Tooltip("limit:N", title=limit_title)],
    )
    dot = alt.Chart(_data("marker")).mark_point(size=140, filled=True, color="black", shape="diamond").encode(
        x="x:Q", y="programs:Q", tooltip=["label:N", alt.Tooltip("x:Q", format=","), "programs:Q"])
    return Figure(lines + dot, {"curve": df, "marker": marker})


# Benchmark providers' colours, by provider key: the tutorial's kernel (the chapter's subject) and the tuned one in
# the strongest colours; naive and Liger far apart (vermillion and sky blue); QuACK dark grey (the palette's
# yellow is too pale for a line on white); the copy roofline is black and dashed.
PROVIDER_COLORS = {"tutorial": SAFE[0], "tuned": SAFE[1], "naive": SAFE[5], "liger": SAFE[4], "torch": SAFE[2],
                   "torch_compile": SAFE[3], "quack": SAFE[7]}


def provider_scale(keys: list[str], labels: list[str]) -> alt.Scale:
    """A colour scale over providers' labels that gives each provider its own colour (PROVIDER_COLORS)."""
    spare = iter(c for c in SAFE if c not in PROVIDER_COLORS.values())
    return alt.Scale(domain=labels, range=[PROVIDER_COLORS.get(k) or next(spare, SAFE[-1]) for k in keys])


def gbps_chart(df: pd.DataFrame, roofline: pd.DataFrame | None, *, x_title: str, y_title: str, color_title: str,
               title: str) -> Figure:
    """GB/s over N per provider with interval bars (p20–p80, or min–max for old runs); the copy line dashed as
    the roofline. Columns: N, gbps, gbps_lo, gbps_hi, provider (its label), provider_key."""
    x = alt.X("N:Q", title=x_title, scale=alt.Scale(type="log", base=2))
    pairs = list(dict.fromkeys(zip(df["provider_key"], df["provider"])))
    scale = provider_scale([k for k, _ in pairs], [label for _, label in pairs])
    lines = alt.Chart(_data("gbps"), title=title).mark_line(point=True, strokeWidth=2.5).encode(
        x=x, y=alt.Y("gbps:Q", title=y_title),
        color=alt.Color("provider:N", title=color_title, scale=scale,
                        legend=alt.Legend(orient="bottom", columns=1, labelLimit=480)),
        tooltip=[alt.Tooltip("provider:N", title=color_title), alt.Tooltip("N:Q", format=","),
                 alt.Tooltip("gbps:Q", format=",.0f", title=y_title), alt.Tooltip("ms:Q", format=".4f"),
                 alt.Tooltip("copy_ratio:Q", format=".2f")],
    )
    bars = alt.Chart(_data("gbps")).mark_rule(opacity=0.5).encode(
        x=x, y="gbps_lo:Q", y2="gbps_hi:Q", color=alt.Color("provider:N", title=color_title, scale=scale))
    chart = bars + lines
    datasets = {"gbps": df}
    if roofline is not None and not roofline.empty:
        datasets["roofline"] = roofline
        chart = chart + alt.Chart(_data("roofline")).mark_line(strokeDash=[6, 4], color="black").encode(
            x=x, y="gbps:Q", tooltip=[alt.Tooltip("N:Q", format=","), alt.Tooltip("gbps:Q", format=",.0f")])
    return Figure(chart, datasets)



def compare_bars(df: pd.DataFrame, *, x_title: str, y_title: str, color_title: str, title: str,
                 figures: list[str]) -> Figure:
    """Programs per SM on every GPU, the hardware's rules beside the chapter's formula. Columns: gpu,
    figure (one of `figures`, coloured in that order in every language), programs."""
    chart = alt.Chart(_data("compare"), title=title).mark_bar().encode(
        y=alt.Y("gpu:N", title=x_title, sort=None, axis=alt.Axis(labelLimit=220)),
        yOffset=alt.YOffset("figure:N", sort=figures),
        x=alt.X("programs:Q", title=y_title),
        color=alt.Color("figure:N", title=color_title, sort=figures,
                        scale=alt.Scale(domain=figures, range=list(SAFE[:len(figures)])),
                        legend=alt.Legend(orient="top", labelLimit=400)),
        tooltip=[alt.Tooltip("gpu:N", title=x_title), alt.Tooltip("figure:N", title=color_title),
                 alt.Tooltip("programs:Q", title=y_title)],
    )
    return Figure(chart, {"compare": df})
