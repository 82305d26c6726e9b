"""Charts of bytes and speed: traffic per kernel, predicted and measured speedup, GB/s per provider."""
from __future__ import annotations

import altair as alt
import pandas as pd

from .base import SAFE, Figure, named


def stacked_traffic(df: pd.DataFrame, *, x_title: str, y_title: str, color_title: str, title: str,
                    steps: list[str]) -> Figure:
    """Bytes per kernel, stacked per implementation. Columns: impl, step, amount (bytes in the axis's unit,
    fmt.axis_bytes), active (bool), tooltip cols."""
    chart = alt.Chart(named("traffic"), title=title).mark_bar(stroke="white", strokeWidth=0.5).encode(
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
    lines = alt.Chart(named("speedup"), title=title).mark_line(point=False, clip=True).encode(
        x=x, y=alt.Y("speedup:Q", title=y_title, scale=y_scale), color=color,
        strokeDash=alt.StrokeDash("kind:N", sort=kinds, legend=None,
                                  scale=alt.Scale(domain=kinds, range=[[1, 0], [5, 3], [1, 0]][:len(kinds)])),
        tooltip=[alt.Tooltip("kind:N", title=color_title), alt.Tooltip("N:Q", format=","),
                 alt.Tooltip("speedup:Q", format=".2f", title=y_title)],
    )
    measured_color = SAFE[kinds.index(kinds[-1])]
    bars = alt.Chart(named("spread")).mark_rule(color=measured_color, opacity=0.6, strokeWidth=2, clip=True).encode(
        x=x, y="lo:Q", y2="hi:Q")
    points = alt.Chart(named("spread")).mark_point(size=70, filled=True, color=measured_color, clip=True).encode(
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
        rule = alt.Chart(named("crossing")).mark_rule(color="#444444", strokeDash=[2, 3]).encode(
            x=x, tooltip=["label:N"])
        text = alt.Chart(named("crossing")).mark_text(align="right", dx=-4, dy=-6, fontSize=11, color="#444444").encode(
            x=x, y=alt.value(12), text="label:N")
        chart = chart + rule + text
    return Figure(chart, datasets)



def speedup_y_top(values, floor: float = 1.0) -> float:
    """Where to cut a speedup chart's y axis: 1.5 x the largest median or prediction (at least `floor`), so
    that a wide min–max bar of an old run does not squash the lines it is about."""
    return max(floor, 1.5 * max((float(v) for v in values if pd.notna(v)), default=floor))



# Benchmark providers' colours, by provider key: the tutorial's kernel (the chapter's subject) and the tuned one in
# the strongest colours; naive and Liger far apart (vermillion and sky blue); QuACK dark grey (the palette's
# yellow is too pale for a line on white); the copy — the roofline every other line is read against — is black,
# and dashed wherever it is drawn as a line.
PROVIDER_COLORS = {"tutorial": SAFE[0], "tuned": SAFE[1], "naive": SAFE[5], "liger": SAFE[4], "torch": SAFE[2],
                   "torch_compile": SAFE[3], "quack": SAFE[7], "copy": "#000000"}
COPY_DASH = [6, 4]


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
    lines = alt.Chart(named("gbps"), title=title).mark_line(point=True, strokeWidth=2.5).encode(
        x=x, y=alt.Y("gbps:Q", title=y_title),
        color=alt.Color("provider:N", title=color_title, scale=scale,
                        legend=alt.Legend(orient="bottom", columns=1, labelLimit=480)),
        tooltip=[alt.Tooltip("provider:N", title=color_title), alt.Tooltip("N:Q", format=","),
                 alt.Tooltip("gbps:Q", format=",.0f", title=y_title), alt.Tooltip("ms:Q", format=".4f"),
                 alt.Tooltip("copy_ratio:Q", format=".2f")],
    )
    bars = alt.Chart(named("gbps")).mark_rule(opacity=0.5).encode(
        x=x, y="gbps_lo:Q", y2="gbps_hi:Q", color=alt.Color("provider:N", title=color_title, scale=scale))
    chart = bars + lines
    datasets = {"gbps": df}
    if roofline is not None and not roofline.empty:
        datasets["roofline"] = roofline
        chart = chart + alt.Chart(named("roofline")).mark_line(strokeDash=COPY_DASH, color=PROVIDER_COLORS["copy"]).encode(
            x=x, y="gbps:Q", tooltip=[alt.Tooltip("N:Q", format=","), alt.Tooltip("gbps:Q", format=",.0f")])
    return Figure(chart, datasets)


def sweep_lines(df: pd.DataFrame, *, x_title: str, y_title: str, color_title: str, title: str) -> Figure:
    """GB/s over N per provider on a linear N axis, as the chapter draws its Step 5 figure. Columns: N, gbps,
    ms, copy_ratio, provider (its label), provider_key."""
    pairs = list(dict.fromkeys(zip(df["provider_key"], df["provider"])))
    scale = provider_scale([k for k, _ in pairs], [label for _, label in pairs])
    dashes = alt.Scale(domain=[label for _, label in pairs],
                       range=[COPY_DASH if key == "copy" else [1, 0] for key, _ in pairs])
    chart = alt.Chart(named("sweep"), title=title).mark_line(strokeWidth=2).encode(
        x=alt.X("N:Q", title=x_title), y=alt.Y("gbps:Q", title=y_title),
        color=alt.Color("provider:N", title=color_title, scale=scale,
                        legend=alt.Legend(orient="bottom", columns=2, labelLimit=360)),
        strokeDash=alt.StrokeDash("provider:N", scale=dashes, legend=None),
        tooltip=[alt.Tooltip("provider:N", title=color_title), alt.Tooltip("N:Q", format=","),
                 alt.Tooltip("gbps:Q", format=",.0f", title=y_title), alt.Tooltip("ms:Q", format=".4f"),
                 alt.Tooltip("copy_ratio:Q", format=".2f")],
    )
    return Figure(chart, {"sweep": df})
