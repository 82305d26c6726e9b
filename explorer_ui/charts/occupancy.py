"""Charts of programs per SM: one resource varied, and every GPU side by side."""
from __future__ import annotations

import altair as alt
import pandas as pd

from .base import SAFE, Figure, named


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
    lines = alt.Chart(named("curve"), title=title).mark_line(interpolate="step-after", point=False,
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
    dot = alt.Chart(named("marker")).mark_point(size=140, filled=True, color="black", shape="diamond").encode(
        x="x:Q", y="programs:Q", tooltip=["label:N", alt.Tooltip("x:Q", format=","), "programs:Q"])
    return Figure(lines + dot, {"curve": df, "marker": marker})



def compare_bars(df: pd.DataFrame, *, x_title: str, y_title: str, color_title: str, title: str,
                 figures: list[str]) -> Figure:
    """Programs per SM on every GPU, the hardware's rules beside the chapter's formula. Columns: gpu,
    figure (one of `figures`, coloured in that order in every language), programs."""
    chart = alt.Chart(named("compare"), title=title).mark_bar().encode(
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
