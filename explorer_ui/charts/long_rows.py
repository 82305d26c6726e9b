"""The long-rows pages' charts (pages 7 and 8): the cliff where one program stops holding a row, a row walked
tile by tile, rows in flight against L2, the recorded paths, the split path's slots and chunks, and which path
each N takes. Each takes frames from explorer_ui.long_row_frames and already-translated labels."""
from __future__ import annotations

import altair as alt
import numpy as np
import pandas as pd

from .base import PALETTE, Figure, named

def cliff_chart(table: pd.DataFrame, *, x_title: str, y_title: str, limit_label: str, fits_title: str,
                yes: str, no: str, title: str) -> Figure:
    df = table.assign(fits_label=np.where(table["fits"], yes, no))
    x = alt.X("block:O", title=x_title)
    bars = alt.Chart(named("cliff")).mark_bar().encode(
        x=x, y=alt.Y("shared:Q", title=y_title, scale=alt.Scale(type="symlog")),   # 64 B beside 232 kB: both seen
        color=alt.Color("fits_label:N", title=fits_title, scale=alt.Scale(domain=[yes, no], range=[
            PALETTE["blue"], PALETTE["red"]]), legend=alt.Legend(orient="bottom")),
        tooltip=[alt.Tooltip("block:Q", title="BLOCK_SIZE", format=","), alt.Tooltip("n_from:Q", title="N ≥", format=","),
                 alt.Tooltip("n_to:Q", title="N ≤", format=","), alt.Tooltip("shared:Q", format=",", title=y_title),
                 alt.Tooltip("regs:Q", title="n_regs"), alt.Tooltip("spills:Q", title="n_spills"),
                 alt.Tooltip("per_sm:Q", title="programs / SM"), alt.Tooltip("fits_label:N", title=fits_title)])
    limit = alt.Chart(named("cliff")).mark_rule(color="black", strokeDash=[6, 4]).encode(
        y=alt.Y("shared_limit:Q", scale=alt.Scale(type="symlog")), tooltip=[alt.Tooltip("shared_limit:Q", format=",", title=limit_label)])
    return Figure((bars + limit).properties(title=title), {"cliff": df})


def row_chart(env: pd.DataFrame, tiles: pd.DataFrame, mline: pd.DataFrame, *, phases: list[str],
              phase_labels: list[str], x_title: str, y_title: str, phase_title: str, m_title: str,
              title: str, n_cols: int, y_domain: tuple[float, float]) -> Figure:
    """The row as bands of its values over tinted tile rectangles, with the running max as a black line.
    The spec depends on nothing but the labels and the row's extent, so frames only swap data."""
    colors = [PALETTE["light"], "#cfe0ff", PALETTE["yellow"], "#c8ecd5", PALETTE["green"]]
    x = alt.X("start:Q", title=x_title, scale=alt.Scale(domain=[0, n_cols], nice=False))
    y_scale = alt.Scale(domain=list(y_domain), nice=True)
    label = alt.Chart(named("tiles")).transform_calculate(
        label=" + ".join(f"(datum.phase == '{p}' ? '{lbl}' : '')" for p, lbl in zip(phases, phase_labels)))
    rects = label.mark_rect(opacity=0.55).encode(
        x=x, x2="end:Q",
        color=alt.Color("label:N", title=phase_title, scale=alt.Scale(domain=phase_labels, range=colors),
                        legend=alt.Legend(orient="bottom", columns=3)),
        tooltip=[alt.Tooltip("tile:Q"), alt.Tooltip("start:Q", format=","), alt.Tooltip("end:Q", format=","),
                 alt.Tooltip("label:N", title=phase_title)])
    bands = alt.Chart(named("env")).mark_rect(color=PALETTE["blue"], opacity=0.8).encode(
        x=x, x2="end:Q", y=alt.Y("lo:Q", title=y_title, scale=y_scale), y2="hi:Q",
        tooltip=[alt.Tooltip("start:Q", format=","), alt.Tooltip("end:Q", format=","),
                 alt.Tooltip("lo:Q", format=".3f"), alt.Tooltip("hi:Q", format=".3f"), alt.Tooltip("neg_inf:Q")])
    line = alt.Chart(named("m")).mark_line(color="black", strokeWidth=2).encode(
        x=alt.X("col:Q", scale=alt.Scale(domain=[0, n_cols], nice=False)), y=alt.Y("m:Q", scale=y_scale),
        tooltip=[alt.Tooltip("tile:Q"), alt.Tooltip("m:Q", format=".4f", title=m_title)])
    chart = alt.layer(rects.encode(y=alt.Y("y0:Q", scale=y_scale), y2="y1:Q"), bands, line).properties(title=title)
    return Figure(chart, {"tiles": tiles.assign(y0=y_domain[0], y1=y_domain[1]), "env": env, "m": mline})


def l2_chart(table: pd.DataFrame, *, x_title: str, y_title: str, l2_label: str, title: str) -> Figure:
    x = alt.X("N:Q", title=x_title, scale=alt.Scale(type="log", base=2))
    line = alt.Chart(named("flight")).mark_line(point=True, color=PALETTE["blue"]).encode(
        x=x, y=alt.Y("in_flight_mb:Q", title=y_title, scale=alt.Scale(type="log")),
        tooltip=[alt.Tooltip("N:Q", format=","), alt.Tooltip("row_bytes:Q", format=","),
                 alt.Tooltip("rows_in_flight:Q"), alt.Tooltip("in_flight_mb:Q", format=",.1f", title=y_title),
                 alt.Tooltip("l2_mb:Q", format=",.1f", title=l2_label)])
    rule = alt.Chart(named("flight")).mark_rule(color=PALETTE["red"], strokeDash=[6, 4]).encode(
        y="mean(l2_mb):Q", tooltip=[alt.Tooltip("mean(l2_mb):Q", format=",.1f", title=l2_label)])
    return Figure((line + rule).properties(title=title), {"flight": table})


PATH_COLORS = {"rows": PALETTE["blue"], "tiled": PALETTE["orange"], "split": PALETTE["green"],
               "copy": PALETTE["grey"]}


def paths_chart(df: pd.DataFrame, crossing: int | None, *, x_title: str, y_title: str, path_title: str,
                title: str) -> Figure:
    """Recorded speed relative to copy per path over N. Columns: N, path, path_label, gbps, copy_ratio, variant,
    source. Each path keeps its colour from the path map, whatever the language."""
    pairs = df[["path", "path_label"]].drop_duplicates()
    domain, colors = list(pairs["path_label"]), [PATH_COLORS[p] for p in pairs["path"]]
    x = alt.X("N:Q", title=x_title, scale=alt.Scale(type="log", base=2))
    lines = alt.Chart(named("paths")).mark_line(point=True).encode(
        x=x, y=alt.Y("copy_ratio:Q", title=y_title, scale=alt.Scale(zero=False)),
        color=alt.Color("path_label:N", title=path_title, scale=alt.Scale(domain=domain, range=colors),
                        legend=alt.Legend(orient="bottom", labelLimit=400)),
        tooltip=[alt.Tooltip("path_label:N", title=path_title), alt.Tooltip("N:Q", format=","),
                 alt.Tooltip("gbps:Q", format=",.0f", title="GB/s"), alt.Tooltip("copy_ratio:Q", format=".3f"),
                 alt.Tooltip("variant:N"), alt.Tooltip("source:N")])
    datasets = {"paths": df}
    chart = lines
    if crossing is not None:
        datasets["line"] = pd.DataFrame({"N": [crossing]})
        chart = chart + alt.Chart(named("line")).mark_rule(color=PALETTE["red"], strokeDash=[6, 4]).encode(
            x="N:Q", tooltip=[alt.Tooltip("N:Q", format=",")])
    return Figure(chart.properties(title=title), datasets)


def slots_chart(df: pd.DataFrame, *, x_title: str, state_title: str, yes: str, no: str, title: str,
                words: bool = True) -> Figure:
    """One cell per slot of the row: grey until its program published, then green; the word as text when
    the cells are wide enough to hold 16 hex digits."""
    data = df.assign(state=np.where(df["published"], yes, no), band="")
    y = alt.Y("band:N", title=None, axis=None)
    chart = alt.Chart(named("slots")).mark_rect(stroke="white", strokeWidth=2).encode(
        x=alt.X("program:O", title=x_title), y=y,
        color=alt.Color("state:N", title=state_title, scale=alt.Scale(domain=[no, yes], range=[
            PALETTE["light"], PALETTE["green"]]), legend=alt.Legend(orient="right")),
        tooltip=[alt.Tooltip("program:Q"), alt.Tooltip("columns:N"), alt.Tooltip("word:N"),
                 alt.Tooltip("max:N"), alt.Tooltip("sum:N"), alt.Tooltip("state:N", title=state_title)])
    if words:
        chart = chart + alt.Chart(named("slots")).mark_text(fontSize=10, font="monospace").encode(
            x=alt.X("program:O"), y=y, text="word:N")
    return Figure(chart.properties(title=title), {"slots": data})


def chunk_chart(env: pd.DataFrame, chunks: pd.DataFrame, *, x_title: str, y_title: str, program_title: str,
                title: str, n_cols: int, y_domain: tuple[float, float], n_programs: int) -> Figure:
    x = alt.X("start:Q", title=x_title, scale=alt.Scale(domain=[0, n_cols], nice=False))
    y_scale = alt.Scale(domain=list(y_domain), nice=True)
    rects = alt.Chart(named("chunks")).mark_rect(opacity=0.35).encode(
        x=x, x2="end:Q", y=alt.Y("y0:Q", scale=y_scale), y2="y1:Q",
        color=alt.Color("program:O", title=program_title, scale=alt.Scale(scheme="tableau10"),
                        legend=alt.Legend(orient="bottom", columns=8)),
        tooltip=[alt.Tooltip("program:Q"), alt.Tooltip("columns:N"), alt.Tooltip("max:N"), alt.Tooltip("sum:N")])
    bands = alt.Chart(named("env")).mark_rect(color=PALETTE["blue"], opacity=0.85).encode(
        x=x, x2="end:Q", y=alt.Y("lo:Q", title=y_title, scale=y_scale), y2="hi:Q",
        tooltip=[alt.Tooltip("start:Q", format=","), alt.Tooltip("end:Q", format=","),
                 alt.Tooltip("lo:Q", format=".3f"), alt.Tooltip("hi:Q", format=".3f")])
    return Figure(alt.layer(rects, bands).properties(title=title), {"chunks": chunks.assign(y0=y_domain[0], y1=y_domain[1]), "env": env})


def path_map_chart(table: pd.DataFrame, *, x_title: str, y_title: str, path_title: str, paths: list[str],
                   labels: list[str], ratio_title: str, title: str) -> Figure:
    """Which path each N takes: one point per N on the path's line, the figures in the tooltip."""
    df = table.assign(path_label=table["path"].map(dict(zip(paths, labels))))
    x = alt.X("N:Q", title=x_title, scale=alt.Scale(type="log", base=2))
    color = alt.Color("path_label:N", title=path_title, scale=alt.Scale(domain=labels, range=[
        PATH_COLORS[p] for p in paths]), legend=None)
    tip = [alt.Tooltip("N:Q", format=","), alt.Tooltip("row_bytes:Q", format=","),
           alt.Tooltip("path_label:N", title=path_title), alt.Tooltip("block_n:Q", format=","),
           alt.Tooltip("split:Q"), alt.Tooltip("regs:Q"), alt.Tooltip("grid:Q", format=","),
           alt.Tooltip("recorded_ratio:Q", format=".2f", title=ratio_title)]
    points = alt.Chart(named("map")).mark_point(size=120, filled=True).encode(
        x=x, y=alt.Y("path_label:N", title=y_title, sort=labels, axis=alt.Axis(labelLimit=260)), color=color,
        tooltip=tip)
    return Figure(points.properties(title=title), {"map": df})
