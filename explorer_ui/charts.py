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


def show(fig: Figure, key: str, height: int | None = None) -> None:
    height = present.chart_height(height)       # presentation mode caps charts to fit a projector
    spec = _spec(fig.chart)
    view = spec.get("config", {}).get("view", {})
    for default in ("continuousWidth", "continuousHeight"):   # altair's theme defaults; Streamlit sizes charts
        view.pop(default, None)
    spec["datasets"] = dict(fig.datasets)       # Streamlit ships these beside the spec, keyed by these names
    if height is None:
        st.vega_lite_chart(spec=spec, key=key, width="stretch")
    else:
        st.vega_lite_chart(spec=spec, key=key, width="stretch", height=height)


def _data(name: str) -> alt.NamedData:
    return alt.NamedData(name)


def stacked_traffic(df: pd.DataFrame, *, x_title: str, y_title: str, color_title: str, title: str,
                    steps: list[str]) -> Figure:
    """Bytes per kernel, stacked per implementation. Columns: impl, step, mb, active (bool), tooltip cols."""
    chart = alt.Chart(_data("traffic"), title=title).mark_bar(stroke="white", strokeWidth=0.5).encode(
        x=alt.X("mb:Q", stack="zero", title=x_title),
        y=alt.Y("impl:N", title=y_title, sort=None),
        color=alt.Color("step:N", title=color_title, sort=steps, scale=alt.Scale(domain=steps, scheme="tableau10"),
                        legend=alt.Legend(orient="right")),
        order=alt.Order("order:Q"),
        opacity=alt.condition("datum.active", alt.value(1.0), alt.value(0.22)),
        tooltip=[alt.Tooltip("impl:N", title=y_title), alt.Tooltip("step:N", title=color_title),
                 alt.Tooltip("code:N"), alt.Tooltip("read:Q", format=","), alt.Tooltip("written:Q", format=","),
                 alt.Tooltip("mb:Q", format=",.3f", title=x_title)],
    )
    return Figure(chart, {"traffic": df})


def speedup_lines(df: pd.DataFrame, *, x_title: str, y_title: str, color_title: str, title: str) -> Figure:
    """Predicted vs measured speedup over N. Columns: N, speedup, kind."""
    base = alt.Chart(_data("speedup"), title=title).encode(
        x=alt.X("N:Q", scale=alt.Scale(type="log", base=2), title=x_title),
        y=alt.Y("speedup:Q", title=y_title),
        color=alt.Color("kind:N", title=color_title),
        tooltip=[alt.Tooltip("kind:N", title=color_title), alt.Tooltip("N:Q", format=","),
                 alt.Tooltip("speedup:Q", format=".2f", title=y_title)],
    )
    return Figure(base.mark_line(point=True), {"speedup": df})


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
    df = df.assign(alpha=df["phase"].map(PHASE_ALPHA), text_alpha=df["phase"].map(PHASE_TEXT_ALPHA))
    cells = alt.Chart(_data("rows"), title=title).mark_rect(stroke="white", strokeWidth=1).encode(
        x=alt.X("gx:O", axis=None), y=alt.Y("gy:O", axis=None),
        color=alt.Color("program:Q", title=program_title,
                        scale=alt.Scale(scheme="sinebow", domain=[0, max(n_programs - 1, 1)])),
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
    df = df.assign(alpha=df["phase"].map(PHASE_ALPHA))
    chart = alt.Chart(_data("programs"), title=title).mark_rect(stroke="white", strokeWidth=0.5).encode(
        x=alt.X("program:O", title=x_title, axis=alt.Axis(labelOverlap=True)),
        y=alt.Y("iteration:O", title=y_title),
        color=alt.Color("program:Q", title=program_title, legend=None,
                        scale=alt.Scale(scheme="sinebow", domain=[0, max(n_programs - 1, 1)])),
        opacity=alt.Opacity("alpha:Q", scale=None),
        tooltip=["row:Q", "program:Q", "iteration:Q"],
    )
    return Figure(chart, {"programs": df})


def sm_slots(df: pd.DataFrame, *, x_title: str, y_title: str, program_title: str, title: str,
             n_programs: int) -> Figure:
    """Programs placed on SMs: x = SM, y = slot on that SM. Columns: sm, slot, program, wave, rows."""
    chart = alt.Chart(_data("sms"), title=title).mark_rect(stroke="white", strokeWidth=0.5).encode(
        x=alt.X("sm:O", title=x_title, axis=alt.Axis(labelOverlap=True)),
        y=alt.Y("slot:O", title=y_title),
        color=alt.Color("program:Q", title=program_title, legend=None,
                        scale=alt.Scale(scheme="sinebow", domain=[0, max(n_programs - 1, 1)])),
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


def occupancy_curve(df: pd.DataFrame, marker: pd.DataFrame, *, x_title: str, y_title: str, limit_title: str,
                    title: str, x_scale_type: str = "linear") -> Figure:
    """Programs per SM as one resource varies, one line per limit. Columns: x, programs, limit.
    `marker`: the current plan (x, programs, label)."""
    scale = alt.Scale(type=x_scale_type, base=2) if x_scale_type == "log" else alt.Scale(zero=False)
    lines = alt.Chart(_data("curve"), title=title).mark_line(interpolate="step-after", point=False).encode(
        x=alt.X("x:Q", title=x_title, scale=scale),
        y=alt.Y("programs:Q", title=y_title),
        color=alt.Color("limit:N", title=limit_title, legend=alt.Legend(orient="bottom")),
        strokeDash=alt.StrokeDash("limit:N", legend=None),
        tooltip=[alt.Tooltip("x:Q", title=x_title, format=","), alt.Tooltip("programs:Q", title=y_title),
                 alt.Tooltip("limit:N", title=limit_title)],
    )
    dot = alt.Chart(_data("marker")).mark_point(size=140, filled=True, color="black", shape="diamond").encode(
        x="x:Q", y="programs:Q", tooltip=["label:N", alt.Tooltip("x:Q", format=","), "programs:Q"])
    return Figure(lines + dot, {"curve": df, "marker": marker})


def gbps_chart(df: pd.DataFrame, roofline: pd.DataFrame | None, *, x_title: str, y_title: str, color_title: str,
               title: str) -> Figure:
    """GB/s over N per provider with min-max error bars; the copy line dashed as the roofline.
    Columns: N, gbps, gbps_lo, gbps_hi, provider."""
    x = alt.X("N:Q", title=x_title, scale=alt.Scale(type="log", base=2))
    lines = alt.Chart(_data("gbps"), title=title).mark_line(point=True).encode(
        x=x, y=alt.Y("gbps:Q", title=y_title),
        color=alt.Color("provider:N", title=color_title,
                        legend=alt.Legend(orient="bottom", columns=2, labelLimit=320)),
        tooltip=[alt.Tooltip("provider:N", title=color_title), alt.Tooltip("N:Q", format=","),
                 alt.Tooltip("gbps:Q", format=",.0f", title=y_title), alt.Tooltip("ms:Q", format=".4f"),
                 alt.Tooltip("copy_ratio:Q", format=".2f")],
    )
    bars = alt.Chart(_data("gbps")).mark_rule(opacity=0.5).encode(
        x=x, y="gbps_lo:Q", y2="gbps_hi:Q", color=alt.Color("provider:N", title=color_title))
    chart = bars + lines
    datasets = {"gbps": df}
    if roofline is not None and not roofline.empty:
        datasets["roofline"] = roofline
        chart = chart + alt.Chart(_data("roofline")).mark_line(strokeDash=[6, 4], color="black").encode(
            x=x, y="gbps:Q", tooltip=[alt.Tooltip("N:Q", format=","), alt.Tooltip("gbps:Q", format=",.0f")])
    return Figure(chart, datasets)

