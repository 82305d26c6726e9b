"""What every chart shares: the Figure (a spec plus its named data), how a page shows one, and the colours.

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

from explorer_ui import present

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


# The row map colours rows by the loop iteration that handled them (program p takes row p + i·P in iteration
# i), so one colour is one stride of P rows and the program's number is written in each cell. Up to eight
# iterations each get their own colour; more get a light-to-mid blue ramp, on which black labels stay readable.
ITERATION_RAMP = ("#fbe3b4", "#5b9bd5")
LABEL_FONT_SIZE = 13          # cell labels: readable at 1280x720 beside the sidebar


def iteration_color(n_iterations: int, title: str, legend: bool = True) -> alt.Color:
    """Colour by `iteration` with a legend titled `title` that lists each iteration (or a 0…K−1 ramp)."""
    if n_iterations <= len(SAFE):
        domain = list(range(max(n_iterations, 1)))
        return alt.Color("iteration:O", title=title, scale=alt.Scale(domain=domain, range=list(SAFE[:len(domain)])),
                         legend=alt.Legend(orient="right", symbolType="square") if legend else None)
    return alt.Color("iteration:Q", title=title,
                     scale=alt.Scale(domain=[0, n_iterations - 1], range=list(ITERATION_RAMP)),
                     legend=alt.Legend(orient="right", tickCount=min(n_iterations, 5), format="d") if legend else None)


def program_color(n_programs: int, title: str, legend: bool) -> alt.Color:
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
        legends_beside(spec)
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


def legends_beside(node) -> None:
    """Presentation mode caps a chart's height; a legend under the plot would take that height from the plot
    (seen: a plot squeezed to nothing), so every legend moves beside it, one column."""
    if isinstance(node, dict):
        legend = node.get("legend")
        if isinstance(legend, dict) and legend.get("orient") == "bottom":
            legend.update(orient="right", columns=1)
        for value in node.values():
            legends_beside(value)
    elif isinstance(node, list):
        for value in node:
            legends_beside(value)


def named(name: str) -> alt.NamedData:
    """The data a layer draws, by name: Figure.datasets carries it beside the spec."""
    return alt.NamedData(name)
