"""Charts of rows, lanes and addresses: which program handled which row, where programs sit on SMs, a
row's lanes and the output buffer, and the num_stages schematic."""
from __future__ import annotations

import altair as alt
import pandas as pd

from explorer_ui import present

from .base import (LABEL_FONT_SIZE, PHASE_ALPHA, PHASE_TEXT_ALPHA, Figure, iteration_color, named, program_color,
                   with_program_colors)


def lanes(df: pd.DataFrame, strip: pd.DataFrame, states: list[str], colors: list[str], *, x_title: str,
          y_title: str, state_title: str, title: str, block_size: int, first_lane: int = 0) -> Figure:
    """One row's lanes: finite values as points on top, and below them a strip of every lane's state, so
    that -inf and NaN lanes, which have no height, are still seen. `df`: lane, value, shown, state (one row
    per lane). `strip`: lane, lane_end, state, lanes (one row per run of lanes in the same state)."""
    domain = [first_lane, block_size]
    color = alt.Color("state:N", title=state_title, scale=alt.Scale(domain=states, range=colors),
                      legend=alt.Legend(orient=present.pick("bottom", "right"), columns=present.pick(3, 1)))
    values = alt.Chart(named("lanes"), title=title).mark_circle(size=14, opacity=0.85).encode(
        x=alt.X("lane:Q", title=x_title, scale=alt.Scale(domain=domain, nice=False)),
        y=alt.Y("value:Q", title=y_title), color=color,
        tooltip=[alt.Tooltip("lane:Q"), alt.Tooltip("shown:N", title=y_title),
                 alt.Tooltip("state:N", title=state_title)],
    ).transform_filter("isFinite(datum.value)").properties(height=present.pick(230, 170))
    band = alt.Chart(named("strip")).mark_rect().encode(
        x=alt.X("lane:Q", title=None, scale=alt.Scale(domain=domain, nice=False)), x2="lane_end:Q", color=color,
        tooltip=[alt.Tooltip("lanes:N", title=x_title), alt.Tooltip("state:N", title=state_title)],
    ).properties(height=28)
    chart = alt.vconcat(values, band, spacing=4).resolve_scale(color="shared")
    return Figure(chart, {"lanes": df, "strip": strip})


def memory_strip(df: pd.DataFrame, states: list[str], colors: list[str], *, x_title: str, state_title: str,
                 title: str) -> Figure:
    """The output buffer, address by address, coloured by what happened there. Columns: address, end,
    state, row, value."""
    chart = alt.Chart(named("memory"), title=title).mark_rect().encode(
        x=alt.X("address:Q", title=x_title), x2="end:Q",
        y=alt.Y("band:N", title=None, axis=None),
        color=alt.Color("state:N", title=state_title, scale=alt.Scale(domain=states, range=colors),
                        legend=alt.Legend(orient="right")),
        tooltip=[alt.Tooltip("address:Q", format=","), alt.Tooltip("end:Q", format=","), "row:N",
                 alt.Tooltip("state:N", title=state_title)],
    )
    return Figure(chart, {"memory": df})


def row_grid(df: pd.DataFrame, *, n_iterations: int, iteration_title: str, title: str) -> Figure:
    """Rows of the matrix as cells in reading order, each labelled with the program that handled it and
    coloured by the loop iteration it was handled in, so program p's rows p, p + P, p + 2P … are the cells
    marked p, one in each colour. The current iteration's rows are solid, earlier ones faded, later ones
    pale. Columns: row, gx, gy, program, iteration, phase ('done' | 'now' | 'later')."""
    df = df.assign(alpha=df["phase"].map(PHASE_ALPHA), text_alpha=df["phase"].map(PHASE_TEXT_ALPHA))
    cells = alt.Chart(named("rows"), title=title).mark_rect(stroke="white", strokeWidth=1).encode(
        x=alt.X("gx:O", axis=None), y=alt.Y("gy:O", axis=None),
        color=iteration_color(n_iterations, iteration_title),
        opacity=alt.Opacity("alpha:Q", scale=None),
        tooltip=["row:Q", "program:Q", "iteration:Q"],
    )
    text = alt.Chart(named("rows")).mark_text(fontSize=LABEL_FONT_SIZE, color="black").encode(
        x=alt.X("gx:O", axis=None), y=alt.Y("gy:O", axis=None), text="program:Q",
        opacity=alt.Opacity("text_alpha:Q", scale=None))
    # as wide as the column: the cells (a band scale) grow with it, so their labels can be read
    return Figure((cells + text).properties(width="container"), {"rows": df})


# The by-program grid writes each cell's row number when its columns are wide enough for three digits.
PROGRAM_GRID_LABELLED_UP_TO = 24


def program_grid(df: pd.DataFrame, *, x_title: str, y_title: str, title: str, n_programs: int,
                 n_iterations: int) -> Figure:
    """The same rows, arranged by who handled them: x = program, y = loop iteration, each cell labelled
    with its row (column p reads p, p + P, p + 2P …), coloured by iteration as row_grid. Columns as row_grid."""
    df = df.assign(alpha=df["phase"].map(PHASE_ALPHA), text_alpha=df["phase"].map(PHASE_TEXT_ALPHA))
    x = alt.X("program:O", title=x_title, axis=alt.Axis(labelOverlap=True))
    y = alt.Y("iteration:O", title=y_title)
    chart = alt.Chart(named("programs"), title=title).mark_rect(stroke="white", strokeWidth=0.5).encode(
        x=x, y=y, color=iteration_color(n_iterations, y_title, legend=False),
        opacity=alt.Opacity("alpha:Q", scale=None),
        tooltip=["row:Q", "program:Q", "iteration:Q"],
    )
    if n_programs > PROGRAM_GRID_LABELLED_UP_TO:
        return Figure(chart.properties(width="container"), {"programs": df})
    text = alt.Chart(named("programs")).mark_text(fontSize=LABEL_FONT_SIZE - 2, color="black").encode(
        x=x, y=y, text="row:Q", opacity=alt.Opacity("text_alpha:Q", scale=None))
    return Figure((chart + text).properties(width="container"), {"programs": df})


def sm_slots(df: pd.DataFrame, *, x_title: str, y_title: str, program_title: str, title: str,
             n_programs: int) -> Figure:
    """Programs placed on SMs: x = SM, y = slot on that SM. Columns: sm, slot, program, wave, rows."""
    df = with_program_colors(df, n_programs)
    chart = alt.Chart(named("sms"), title=title).mark_rect(stroke="white", strokeWidth=0.5).encode(
        x=alt.X("sm:O", title=x_title, axis=alt.Axis(labelOverlap=True)),
        y=alt.Y("slot:O", title=y_title),
        color=program_color(n_programs, program_title, legend=False),
        opacity=alt.condition("datum.wave == 0", alt.value(1.0), alt.value(0.35)),
        tooltip=["sm:Q", "slot:Q", "program:Q", "wave:Q", "rows:N"],
    )
    return Figure(chart, {"sms": df})


def gantt(df: pd.DataFrame, *, x_title: str, y_title: str, phase_title: str, title: str,
          phases: list[str], colors: list[str]) -> Figure:
    """Schematic timelines. Columns: lane (facet label), iteration, phase, start, end."""
    chart = alt.Chart(named("spans"), title=title).mark_bar(height=10, cornerRadius=2).encode(
        x=alt.X("start:Q", title=x_title), x2="end:Q",
        y=alt.Y("label:N", title=y_title, sort=None, axis=alt.Axis(labelLimit=260)),
        color=alt.Color("phase:N", title=phase_title, scale=alt.Scale(domain=phases, range=colors)),
        tooltip=["lane:N", "iteration:Q", "phase:N", alt.Tooltip("start:Q", format=".1f"),
                 alt.Tooltip("end:Q", format=".1f")],
    )
    return Figure(chart, {"spans": df})
