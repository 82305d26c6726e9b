"""The long-rows chapter (pages 7 and 8): inputs, frames, tables and charts built from what the real kernels
recorded (softmax_core.teaching.long_row_trace) and from recorded H200 runs. The builders are pure functions of those
records, so tests can check them without Streamlit; the few cached calls at the end are the pages' door to
softmax_core.
"""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import altair as alt
import numpy as np
import pandas as pd
import streamlit as st
import torch

import softmax_core as sc
from softmax_core.hardware import dtypes
from softmax_core.plans import tuned as tuned_plan
from softmax_core.teaching import long_row_trace as lrt
from softmax_core.kernels.tuned import TRACE_TILE_FIELDS, online_update, softmax_tiled_kernel

from . import charts, code, defaults
from .i18n import say

ROOT = Path(__file__).resolve().parent.parent
PATTERNS = ("random", "rising", "neg_inf_tiles", "all_neg_inf")
PLAN_TILE = tuned_plan.TILE_VALUES                  # the tile the tuned plan uses
TILES = tuple(2 ** k for k in range(6, PLAN_TILE.bit_length()))   # 64 ... PLAN_TILE values per tile
# The cliff: the tutorial kernel compiled for each power-of-two BLOCK_SIZE (BLOCK = next_power_of_2(N), so
# every N in (BLOCK/2, BLOCK] compiles to the same program). Each is a real compile, cached on disk.
CLIFF_BLOCKS = tuple(2 ** k for k in range(8, 18))   # 256 ... 131072
MAP_NS = defaults.LONG_ROWS_NS                      # the path map's sizes (pre-warmed, explorer_ui/prewarm.py)
MAP_ROWS = defaults.CHAPTER_M                        # the recorded benchmark's M
# Per dtype, the H200 sweep that timed the tiled and split paths side by side in the kernels' current form:
# float32 from v5 (packed 64-bit slots, 16K to 256K values per row); bfloat16 from v8, the first whose split
# grids were sized from the launched kernel's registers (docs/performance.md, v5 and v8).
PATHS_CSVS = {
    "float32": ROOT / "assets" / "benchmarks" / "tuning" / "h200-split-tune-20261129-4-packed-native-dtype.csv",
    "bfloat16": ROOT / "assets" / "benchmarks" / "tuning" / "h200-split-tune-20261130-6-bfloat16-specialised.csv",
}
PATHS_GPU = defaults.LONG_ROWS_RECORDED_GPU             # the catalog GPU that sweep ran on
L2_NS = defaults.LONG_ROWS_L2_NS                     # the L2 chart's sizes (pre-warmed too)
# Names the pages build text keys from (tests/ui/test_locales.py generates the key families from these).
TILE_PHASES = ("later", "now1", "done1", "now2", "done2")          # longrows_phase_*
ONLINE_FRAMES = ("first", "keep", "grow", "guard", "pass2", "pass2_nan", "check")   # longrows_frame_*
CLIFF_LIMITERS = ("shared", "registers")                           # longrows_cliff_fail_*
PATH_NAMES = ("copy", "rows", "tiled", "split")                    # longrows_path_*
BINS = 256                                           # points a row is drawn with, whatever its length
NEG_INF = float("-inf")


def fmt(v: float, digits: int = 4) -> str:
    v = float(v)
    if np.isnan(v):
        return "NaN"
    if np.isinf(v):
        return "−inf" if v < 0 else "+inf"
    return f"{v:.{digits}g}"


# -- inputs --------------------------------------------------------------------------------------------------


def example_row(n_cols: int, pattern: str, seed: int = 0, tile: int = 1024) -> np.ndarray:
    """One float32 row (shape (1, n_cols)) of a kind that shows something:
    random         normal values
    rising         values that drift upward, so the running max grows in most tiles and d is rescaled often
    neg_inf_tiles  the first tiles entirely -inf (a masked prefix, as in causal attention): the guard's case
    all_neg_inf    nothing but -inf: m stays -inf and d stays 0"""
    if pattern not in PATTERNS:
        raise ValueError(f"pattern must be one of {', '.join(PATTERNS)}, got {pattern!r}")
    if n_cols < 1:
        raise ValueError(f"n_cols must be positive, got {n_cols}")
    rng = np.random.default_rng(seed)
    x = rng.standard_normal(n_cols).astype(np.float32) * 2
    if pattern == "rising":
        x += np.linspace(0.0, 8.0, n_cols, dtype=np.float32)
    elif pattern == "neg_inf_tiles":
        masked = min(2 * tile, n_cols // 2) if n_cols > tile else n_cols // 2
        x[:masked] = NEG_INF
    elif pattern == "all_neg_inf":
        x[:] = NEG_INF
    return x[None, :]


def envelope(values: np.ndarray, bins: int = BINS) -> pd.DataFrame:
    """A long row drawn as `bins` bands: the smallest and largest finite value in each stretch of columns.
    Stretches of only -inf get no band but are counted (the chart marks them separately)."""
    n = len(values)
    edges = np.linspace(0, n, min(bins, n) + 1).astype(int)
    rows = []
    for a, b in zip(edges[:-1], edges[1:]):
        part = values[a:b]
        finite = part[np.isfinite(part)]
        rows.append({"start": int(a), "end": int(b), "lo": float(finite.min()) if finite.size else np.nan,
                     "hi": float(finite.max()) if finite.size else np.nan,
                     "neg_inf": int(np.isneginf(part).sum())})
    return pd.DataFrame(rows)


# -- 1. the cliff ---------------------------------------------------------------------------------------------


def cliff_table(plans) -> pd.DataFrame:
    """One line per compiled BLOCK_SIZE (LaunchPlans in order): the N it serves and what one program needs."""
    rows = []
    for p in plans:
        rows.append({"block": p.block_size, "n_from": p.block_size // 2 + 1, "n_to": p.block_size,
                     "warps": p.num_warps, "stages": p.num_stages, "regs": p.n_regs, "spills": p.n_spills,
                     "shared": p.shared_bytes, "shared_limit": p.gpu.max_shared_mem,
                     "reg_occupancy": p.reg_occupancy,
                     "sram_occupancy": -1 if p.sram_occupancy is None else p.sram_occupancy,
                     "per_sm": p.programs_per_sm, "fits": p.fits})
    return pd.DataFrame(rows)


@dataclass(frozen=True)
class Cliff:
    fail_block: int | None        # first BLOCK_SIZE where not one program fits
    fail_n: int | None            # first N that compiles to it
    limiter: str | None           # "shared" | "registers"
    spill_block: int | None       # first BLOCK_SIZE whose program spills registers
    last_fit_n: int | None        # the largest N that still fits (fail_n - 1)


def find_cliff(table: pd.DataFrame) -> Cliff:
    fail = table[~table["fits"]]
    spill = table[table["spills"] > 0]
    if fail.empty:
        return Cliff(None, None, None, int(spill["block"].iloc[0]) if not spill.empty else None, None)
    row = fail.iloc[0]
    limiter = "shared" if 0 <= row["sram_occupancy"] < 1 else "registers"
    return Cliff(int(row["block"]), int(row["n_from"]), limiter,
                 int(spill["block"].iloc[0]) if not spill.empty else None, int(row["n_from"]) - 1)


def cliff_chart(table: pd.DataFrame, *, x_title: str, y_title: str, limit_label: str, fits_title: str,
                yes: str, no: str, title: str) -> charts.Figure:
    df = table.assign(fits_label=np.where(table["fits"], yes, no))
    x = alt.X("block:O", title=x_title)
    bars = alt.Chart(alt.NamedData("cliff")).mark_bar().encode(
        x=x, y=alt.Y("shared:Q", title=y_title),
        color=alt.Color("fits_label:N", title=fits_title, scale=alt.Scale(domain=[yes, no], range=[
            charts.PALETTE["blue"], charts.PALETTE["red"]]), legend=alt.Legend(orient="bottom")),
        tooltip=[alt.Tooltip("block:Q", title="BLOCK_SIZE", format=","), alt.Tooltip("n_from:Q", title="N ≥", format=","),
                 alt.Tooltip("n_to:Q", title="N ≤", format=","), alt.Tooltip("shared:Q", format=",", title=y_title),
                 alt.Tooltip("regs:Q", title="n_regs"), alt.Tooltip("spills:Q", title="n_spills"),
                 alt.Tooltip("per_sm:Q", title="programs / SM"), alt.Tooltip("fits_label:N", title=fits_title)])
    limit = alt.Chart(alt.NamedData("cliff")).mark_rule(color="black", strokeDash=[6, 4]).encode(
        y="shared_limit:Q", tooltip=[alt.Tooltip("shared_limit:Q", format=",", title=limit_label)])
    return charts.Figure((bars + limit).properties(title=title), {"cliff": df})


# -- 2. online softmax, tile by tile ---------------------------------------------------------------------------


def tile_record(trace: lrt.OnlineTrace, row: int, t: int) -> dict:
    rec = {name: float(trace.tiles[row, t, i]) for i, name in enumerate(TRACE_TILE_FIELDS)}
    a, b = trace.tile_columns(t)
    rec.update(tile=t, start=a, stop=b, grew=bool(trace.grew[row, t]), guarded=bool(trace.guarded[row, t]))
    return rec


def online_steps(trace: lrt.OnlineTrace) -> list[tuple[str, int]]:
    """The animation's frames: every tile of pass 1, every tile of pass 2 in the order the kernel visits them
    (last first), then the check against torch."""
    return ([("pass1", t) for t in range(trace.n_tiles)] + [("pass2", t) for t in trace.pass2_order]
            + [("check", -1)])


def tile_phases(trace: lrt.OnlineTrace, step: int) -> pd.DataFrame:
    """Each tile's rectangle, with where the animation is: done / now / later, in pass 1 or pass 2."""
    steps = online_steps(trace)
    kind, current = steps[step]
    rows = []
    for t in range(trace.n_tiles):
        a, b = trace.tile_columns(t)
        if kind == "pass1":
            phase = "now1" if t == current else ("done1" if t < current else "later")
        elif kind == "pass2":
            phase = "now2" if t == current else ("done2" if t > current else "done1")
        else:
            phase = "done2"
        rows.append({"tile": t, "start": a, "end": b, "phase": phase})
    return pd.DataFrame(rows)


def running_max(trace: lrt.OnlineTrace, row: int, step: int) -> pd.DataFrame:
    """m after each tile pass 1 has seen so far (a step line over the columns); -inf tiles are left out."""
    steps = online_steps(trace)
    kind, current = steps[step]
    last = current if kind == "pass1" else trace.n_tiles - 1
    rows = []
    for t in range(last + 1):
        a, b = trace.tile_columns(t)
        m = float(trace.field("m_after")[row, t])
        if np.isfinite(m):
            rows += [{"col": a, "m": m, "tile": t}, {"col": b, "m": m, "tile": t}]
    return pd.DataFrame(rows, columns=["col", "m", "tile"])


def online_table(trace: lrt.OnlineTrace, row: int) -> pd.DataFrame:
    return pd.DataFrame([{"tile": r["tile"], "columns": f"{r['start']:,}–{r['stop'] - 1:,}",
                          "m_before": fmt(r["m_before"]), "tile_max": fmt(r["tile_max"]), "m_after": fmt(r["m_after"]),
                          "rescale": fmt(r["rescale"]), "d_before": fmt(r["d_before"]), "tile_sum": fmt(r["tile_sum"]),
                          "d_after": fmt(r["d_after"])}
                         for r in (tile_record(trace, row, t) for t in range(trace.n_tiles))])


@dataclass(frozen=True)
class OnlineCheck:
    m_kernel: float
    d_kernel: float
    m_torch: float
    d_torch: float
    y_sum: float                  # sum of what pass 2 stored
    y_err: float                  # largest |y - torch.softmax| (NaN where both are NaN: 0)

    @property
    def d_rel_err(self) -> float:
        if self.d_torch == 0:
            return 0.0 if self.d_kernel == 0 else float("inf")
        return abs(self.d_kernel - self.d_torch) / abs(self.d_torch)


def online_check(trace: lrt.OnlineTrace, row: int) -> OnlineCheck:
    m_ref, d_ref = lrt.reference_pairs(trace.x[row: row + 1])
    ref = torch.softmax(torch.as_tensor(trace.x[row], dtype=torch.float64), dim=-1).numpy()
    y = trace.y[row].astype(np.float64)
    both_nan = np.isnan(y) & np.isnan(ref)
    diff = np.where(both_nan, 0.0, np.abs(y - ref))
    return OnlineCheck(float(trace.m_final[row]), float(trace.d_final[row]), float(m_ref[0]), float(d_ref[0]),
                       float(np.nansum(y)), float(np.max(diff)) if diff.size else 0.0)


def row_chart(env: pd.DataFrame, tiles: pd.DataFrame, mline: pd.DataFrame, *, phases: list[str],
              phase_labels: list[str], x_title: str, y_title: str, phase_title: str, m_title: str,
              title: str, n_cols: int, y_domain: tuple[float, float]) -> charts.Figure:
    """The row as bands of its values over tinted tile rectangles, with the running max as a black line.
    The spec depends on nothing but the labels and the row's extent, so frames only swap data."""
    colors = [charts.PALETTE["light"], "#cfe0ff", charts.PALETTE["yellow"], "#c8ecd5", charts.PALETTE["green"]]
    x = alt.X("start:Q", title=x_title, scale=alt.Scale(domain=[0, n_cols], nice=False))
    y_scale = alt.Scale(domain=list(y_domain), nice=True)
    label = alt.Chart(alt.NamedData("tiles")).transform_calculate(
        label=" + ".join(f"(datum.phase == '{p}' ? '{lbl}' : '')" for p, lbl in zip(phases, phase_labels)))
    rects = label.mark_rect(opacity=0.55).encode(
        x=x, x2="end:Q",
        color=alt.Color("label:N", title=phase_title, scale=alt.Scale(domain=phase_labels, range=colors),
                        legend=alt.Legend(orient="bottom", columns=3)),
        tooltip=[alt.Tooltip("tile:Q"), alt.Tooltip("start:Q", format=","), alt.Tooltip("end:Q", format=","),
                 alt.Tooltip("label:N", title=phase_title)])
    bands = alt.Chart(alt.NamedData("env")).mark_rect(color=charts.PALETTE["blue"], opacity=0.8).encode(
        x=x, x2="end:Q", y=alt.Y("lo:Q", title=y_title, scale=y_scale), y2="hi:Q",
        tooltip=[alt.Tooltip("start:Q", format=","), alt.Tooltip("end:Q", format=","),
                 alt.Tooltip("lo:Q", format=".3f"), alt.Tooltip("hi:Q", format=".3f"), alt.Tooltip("neg_inf:Q")])
    line = alt.Chart(alt.NamedData("m")).mark_line(color="black", strokeWidth=2).encode(
        x=alt.X("col:Q", scale=alt.Scale(domain=[0, n_cols], nice=False)), y=alt.Y("m:Q", scale=y_scale),
        tooltip=[alt.Tooltip("tile:Q"), alt.Tooltip("m:Q", format=".4f", title=m_title)])
    chart = alt.layer(rects.encode(y=alt.Y("y0:Q", scale=y_scale), y2="y1:Q"), bands, line).properties(title=title)
    return charts.Figure(chart, {"tiles": tiles.assign(y0=y_domain[0], y1=y_domain[1]), "env": env, "m": mline})


def y_extent(values: np.ndarray) -> tuple[float, float]:
    finite = values[np.isfinite(values)]
    if not finite.size:
        return (-1.0, 1.0)
    return (float(finite.min()), float(finite.max()))


def kernel_lines_of(kernel) -> tuple[str, ...]:
    """A kernel's source as the pages show it: without its TRACE block (it compiles away)."""
    import inspect
    import textwrap

    fn = getattr(kernel, "fn", kernel)
    lines = textwrap.dedent(inspect.getsource(fn)).splitlines()
    return tuple(code._without_trace_block(lines))


def tiled_kernel_lines() -> tuple[str, ...]:
    """The tiled kernel as the long-rows page shows it, then the online-normaliser step its pass 1 calls."""
    return kernel_lines_of(softmax_tiled_kernel) + ("",) + kernel_lines_of(online_update)


# fragments of the tiled kernel's lines each frame is about
ONLINE_ANCHORS = {"pass1": ("new_max = tl.maximum", "rescale = _exp(", "tile_sum = tl.sum(",
                            "running_sum = running_sum * rescale"),
                  "guard": ("shift = tl.where(new_max",),
                  "pass2": ("cols = (n_tiles - 1 - t)", "tl.store(y_row"),
                  "check": ("inv_sum = 1.0 / running_sum",)}


# -- 3. traffic and L2 ----------------------------------------------------------------------------------------


def l2_table(traffics) -> pd.DataFrame:
    return pd.DataFrame([{"N": t.n_cols, "row_bytes": t.row_bytes, "rows_in_flight": t.rows_in_flight,
                          "per_sm": t.programs_per_sm, "in_flight_mb": t.bytes_in_flight / 1e6,
                          "l2_mb": t.l2_bytes / 1e6 if t.l2_bytes else np.nan,
                          "fits": t.fits_l2, "nominal_mb": t.nominal_bytes / 1e6,
                          "dram_mb": t.dram_bytes_if_l2_hits / 1e6} for t in traffics])


def l2_crossing(table: pd.DataFrame) -> int | None:
    """The first N whose rows in flight no longer fit in L2, or None."""
    over = table[table["fits"] == False]  # noqa: E712  (None: no L2 figure)
    return int(over["N"].iloc[0]) if not over.empty else None


def recorded_paths(sweeps: dict[str, Path] | None = None) -> pd.DataFrame:
    """From the H200 tuning sweeps (dtype -> CSV, PATHS_CSVS by default): per dtype, N and path (tiled / split /
    copy), the fastest forward variant's GB/s and ratio to copy measured in the same run. The plan's own
    choice ("default") counts for the path its variant names. Columns: dtype, N, path, gbps, copy_ratio,
    variant, source."""
    columns = ["dtype", "N", "path", "gbps", "copy_ratio", "variant", "source"]
    found = []
    for dtype, path in (PATHS_CSVS if sweeps is None else sweeps).items():
        if not path.exists():
            continue
        frame = pd.read_csv(path)
        frame = frame[(frame["dtype"] == dtype) & frame["kind"].isin(["default", "tiled", "split", "copy"])
                      & frame["ok"]]
        frame = frame.assign(path=frame["kind"].where(frame["kind"] != "default",
                                                      frame["variant"].str.split().str[0]), source=path.name)
        found.append(frame[frame["path"].isin(["copy", "tiled", "split"])])
    if not found:
        return pd.DataFrame(columns=columns)
    frame = pd.concat(found)
    best = frame.sort_values("gbps", ascending=False).groupby(["dtype", "N", "path"], as_index=False).first()
    return best[columns].sort_values(["dtype", "N", "path"])


def l2_chart(table: pd.DataFrame, *, x_title: str, y_title: str, l2_label: str, title: str) -> charts.Figure:
    x = alt.X("N:Q", title=x_title, scale=alt.Scale(type="log", base=2))
    line = alt.Chart(alt.NamedData("flight")).mark_line(point=True, color=charts.PALETTE["blue"]).encode(
        x=x, y=alt.Y("in_flight_mb:Q", title=y_title, scale=alt.Scale(type="log")),
        tooltip=[alt.Tooltip("N:Q", format=","), alt.Tooltip("row_bytes:Q", format=","),
                 alt.Tooltip("rows_in_flight:Q"), alt.Tooltip("in_flight_mb:Q", format=",.1f", title=y_title),
                 alt.Tooltip("l2_mb:Q", format=",.1f", title=l2_label)])
    rule = alt.Chart(alt.NamedData("flight")).mark_rule(color=charts.PALETTE["red"], strokeDash=[6, 4]).encode(
        y="mean(l2_mb):Q", tooltip=[alt.Tooltip("mean(l2_mb):Q", format=",.1f", title=l2_label)])
    return charts.Figure((line + rule).properties(title=title), {"flight": table})


PATH_COLORS = {"rows": charts.PALETTE["blue"], "tiled": charts.PALETTE["orange"], "split": charts.PALETTE["green"],
               "copy": charts.PALETTE["grey"]}


def paths_chart(df: pd.DataFrame, crossing: int | None, *, x_title: str, y_title: str, path_title: str,
                title: str) -> charts.Figure:
    """Recorded speed relative to copy per path over N. Columns: N, path, path_label, gbps, copy_ratio, variant,
    source. Each path keeps its colour from the path map, whatever the language."""
    pairs = df[["path", "path_label"]].drop_duplicates()
    domain, colors = list(pairs["path_label"]), [PATH_COLORS[p] for p in pairs["path"]]
    x = alt.X("N:Q", title=x_title, scale=alt.Scale(type="log", base=2))
    lines = alt.Chart(alt.NamedData("paths")).mark_line(point=True).encode(
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
        chart = chart + alt.Chart(alt.NamedData("line")).mark_rule(color=charts.PALETTE["red"], strokeDash=[6, 4]).encode(
            x="N:Q", tooltip=[alt.Tooltip("N:Q", format=",")])
    return charts.Figure(chart.properties(title=title), datasets)


# -- 4. the split path -------------------------------------------------------------------------------------------


def split_steps(trace: lrt.SplitTrace) -> list[tuple[str, int]]:
    """Frames: the chunks loaded; each program publishing in turn (the interpreter's order: by program id);
    every program merging the row's words; every program writing its chunk."""
    return [("load", -1)] + [("publish", p) for p in range(trace.split)] + [("merge", -1), ("write", -1)]


def slot_table(trace: lrt.SplitTrace, row: int, step: int) -> pd.DataFrame:
    """The row's slots as the frame sees them: NOT_PUBLISHED until its program has published."""
    kind, current = split_steps(trace)[step]
    published = {"load": 0, "publish": current + 1}.get(kind, trace.split)
    top, _ = trace.merged(row)
    rows = []
    for p in range(trace.split):
        a, b = trace.chunk_columns(p)
        done = p < published
        m, d = float(trace.maxes[row, p]), float(trace.sums[row, p])
        share = 0.0 if (d == 0.0 or not np.isfinite(top)) else d * float(np.exp(np.float64(m) - top))
        rows.append({"program": p, "columns": f"{a:,}–{b - 1:,}", "start": a, "end": b,
                     "word": lrt.word_hex(trace.words[row, p] if done else trace.before[row, p]),
                     "published": done, "max": fmt(m) if done else "—", "sum": fmt(d) if done else "—",
                     "share": fmt(share) if kind in ("merge", "write") else "—"})
    return pd.DataFrame(rows)


def slots_chart(df: pd.DataFrame, *, x_title: str, state_title: str, yes: str, no: str, title: str,
                words: bool = True) -> charts.Figure:
    """One cell per slot of the row: grey until its program published, then green; the word as text when
    the cells are wide enough to hold 16 hex digits."""
    data = df.assign(state=np.where(df["published"], yes, no), band="")
    y = alt.Y("band:N", title=None, axis=None)
    chart = alt.Chart(alt.NamedData("slots")).mark_rect(stroke="white", strokeWidth=2).encode(
        x=alt.X("program:O", title=x_title), y=y,
        color=alt.Color("state:N", title=state_title, scale=alt.Scale(domain=[no, yes], range=[
            charts.PALETTE["light"], charts.PALETTE["green"]]), legend=alt.Legend(orient="right")),
        tooltip=[alt.Tooltip("program:Q"), alt.Tooltip("columns:N"), alt.Tooltip("word:N"),
                 alt.Tooltip("max:N"), alt.Tooltip("sum:N"), alt.Tooltip("state:N", title=state_title)])
    if words:
        chart = chart + alt.Chart(alt.NamedData("slots")).mark_text(fontSize=10, font="monospace").encode(
            x=alt.X("program:O"), y=y, text="word:N")
    return charts.Figure(chart.properties(title=title), {"slots": data})


def chunk_chart(env: pd.DataFrame, chunks: pd.DataFrame, *, x_title: str, y_title: str, program_title: str,
                title: str, n_cols: int, y_domain: tuple[float, float], n_programs: int) -> charts.Figure:
    x = alt.X("start:Q", title=x_title, scale=alt.Scale(domain=[0, n_cols], nice=False))
    y_scale = alt.Scale(domain=list(y_domain), nice=True)
    rects = alt.Chart(alt.NamedData("chunks")).mark_rect(opacity=0.35).encode(
        x=x, x2="end:Q", y=alt.Y("y0:Q", scale=y_scale), y2="y1:Q",
        color=alt.Color("program:O", title=program_title, scale=alt.Scale(scheme="tableau10"),
                        legend=alt.Legend(orient="bottom", columns=8)),
        tooltip=[alt.Tooltip("program:Q"), alt.Tooltip("columns:N"), alt.Tooltip("max:N"), alt.Tooltip("sum:N")])
    bands = alt.Chart(alt.NamedData("env")).mark_rect(color=charts.PALETTE["blue"], opacity=0.85).encode(
        x=x, x2="end:Q", y=alt.Y("lo:Q", title=y_title, scale=y_scale), y2="hi:Q",
        tooltip=[alt.Tooltip("start:Q", format=","), alt.Tooltip("end:Q", format=","),
                 alt.Tooltip("lo:Q", format=".3f"), alt.Tooltip("hi:Q", format=".3f")])
    return charts.Figure(alt.layer(rects, bands).properties(title=title), {"chunks": chunks.assign(y0=y_domain[0], y1=y_domain[1]), "env": env})


# -- 5. which path, where -----------------------------------------------------------------------------------------


def path_table(plans, record: pd.DataFrame | None) -> pd.DataFrame:
    """One line per N: the path plan_softmax takes and its figures; with the recorded H200 ratio to copy of
    softmax_core.softmax (provider "tuned") at that N when the record has it."""
    rows = []
    for p in plans:
        ratio = np.nan
        if record is not None and not record.empty:
            hit = record[record["N"] == p.n_cols]
            if not hit.empty:
                ratio = float(hit["copy_ratio"].iloc[0])
        rows.append({"N": p.n_cols, "row_bytes": p.n_cols * dtypes.element_size(p.dtype),
                     "path": p.path, "block_n": p.block_n, "split": p.split, "warps": p.num_warps,
                     "regs": p.resources.n_regs, "per_sm": p.occupancy.programs_per_sm, "grid": p.num_programs,
                     "recorded_ratio": ratio})
    return pd.DataFrame(rows)


def _torch_dtype(name: str) -> torch.dtype:
    return dtypes.torch_dtype(name)


def path_runs(table: pd.DataFrame) -> pd.DataFrame:
    """Consecutive N with the same path merged into one band (for the map's strip)."""
    runs = []
    for _, r in table.iterrows():
        if runs and runs[-1]["path"] == r["path"]:
            runs[-1]["to"] = int(r["N"])
        else:
            runs.append({"path": r["path"], "from": int(r["N"]), "to": int(r["N"])})
    return pd.DataFrame(runs)


def path_map_chart(table: pd.DataFrame, *, x_title: str, y_title: str, path_title: str, paths: list[str],
                   labels: list[str], ratio_title: str, title: str) -> charts.Figure:
    """Which path each N takes: one point per N on the path's line, the figures in the tooltip."""
    df = table.assign(path_label=table["path"].map(dict(zip(paths, labels))))
    x = alt.X("N:Q", title=x_title, scale=alt.Scale(type="log", base=2))
    color = alt.Color("path_label:N", title=path_title, scale=alt.Scale(domain=labels, range=[
        PATH_COLORS[p] for p in paths]), legend=None)
    tip = [alt.Tooltip("N:Q", format=","), alt.Tooltip("row_bytes:Q", format=","),
           alt.Tooltip("path_label:N", title=path_title), alt.Tooltip("block_n:Q", format=","),
           alt.Tooltip("split:Q"), alt.Tooltip("regs:Q"), alt.Tooltip("grid:Q", format=","),
           alt.Tooltip("recorded_ratio:Q", format=".2f", title=ratio_title)]
    points = alt.Chart(alt.NamedData("map")).mark_point(size=120, filled=True).encode(
        x=x, y=alt.Y("path_label:N", title=y_title, sort=labels, axis=alt.Axis(labelLimit=260)), color=color,
        tooltip=tip)
    return charts.Figure(points.properties(title=title), {"map": df})


def reason_text(plan) -> str:
    """Why the plan took its path, in the page's language (the plan's reason, said by softmax_core.words)."""
    return say(plan.reason)


# -- 6. to FlashAttention ------------------------------------------------------------------------------------------


def attention_values(n_cols: int, seed: int = 1) -> np.ndarray:
    """One value v_j per column: the V a row of attention weights would average (random, fixed by the seed)."""
    return np.random.default_rng(seed).uniform(-1.0, 1.0, n_cols)


def attention_table(steps) -> pd.DataFrame:
    return pd.DataFrame([{"tile": s.tile, "m_before": fmt(s.m_before), "m_after": fmt(s.m_after),
                          "rescale": fmt(s.rescale), "d_after": fmt(s.d_after), "o_before": fmt(s.o_before),
                          "o_rescaled": fmt(s.o_before * s.rescale), "tile_o": fmt(s.tile_o),
                          "o_after": fmt(s.o_after), "o_over_d": fmt(s.output)} for s in steps])


def attention_reference(scores: np.ndarray, values: np.ndarray) -> float:
    """softmax(s) · v with torch in float64: what the walk's last o / d must equal."""
    p = torch.softmax(torch.as_tensor(scores, dtype=torch.float64), dim=-1)
    return float((p * torch.as_tensor(values, dtype=torch.float64)).sum())


# -- cached calls into softmax_core ----------------------------------------------------------------------------------


@st.cache_data(show_spinner=False, max_entries=64)
def online_trace(n_cols: int, tile: int, pattern: str, seed: int = 0) -> lrt.OnlineTrace:
    return lrt.trace_online(example_row(n_cols, pattern, seed, tile), tile=tile)


@st.cache_data(show_spinner=False, max_entries=64)
def split_trace(n_cols: int, split: int, pattern: str, seed: int = 0) -> lrt.SplitTrace:
    used, chunk = lrt.split_shape(n_cols, split)
    return lrt.trace_split(example_row(n_cols, pattern, seed, chunk), split=split)


@st.cache_data(show_spinner=False, max_entries=32)
def cliff_plans(gpu_key: str, dtype: str) -> tuple:
    """The tutorial kernel's plan for one row per BLOCK_SIZE, up to the first that does not fit."""
    from . import data

    plans = []
    for block in CLIFF_BLOCKS:
        plan = data.launch_plan(1, block, dtype, gpu_key)
        plans.append(plan)
        if not plan.fits:
            break
    return tuple(plans)


@st.cache_data(show_spinner=False, max_entries=32)
def exact_edge(gpu_key: str, dtype: str, n: int) -> tuple[bool, bool]:
    """(N - 1 fits, N fits) from the plans at exactly those N: the cliff's two sides."""
    from . import data

    return data.launch_plan(1, n - 1, dtype, gpu_key).fits, data.launch_plan(1, n, dtype, gpu_key).fits


@st.cache_data(show_spinner=False, max_entries=32)
def traffic_table(gpu_key: str, dtype: str) -> pd.DataFrame:
    from . import data

    gpu = data.gpu_by_key(gpu_key)
    return l2_table([lrt.tiled_traffic(MAP_ROWS, n, _torch_dtype(dtype), gpu) for n in L2_NS])


@st.cache_data(show_spinner=False, max_entries=32)
def path_plans(gpu_key: str, dtype: str) -> tuple:
    from . import data

    gpu = data.gpu_by_key(gpu_key)
    return tuple(sc.plan_softmax(MAP_ROWS, n, _torch_dtype(dtype), gpu) for n in MAP_NS)


@st.cache_data(show_spinner=False, max_entries=32)
def split_plan(gpu_key: str, n_cols: int):
    from . import data

    return sc.plan_softmax(MAP_ROWS, n_cols, torch.float32, data.gpu_by_key(gpu_key))


@st.cache_data(show_spinner=False, max_entries=4)
def recorded_paths_cached() -> pd.DataFrame:
    return recorded_paths()


def recorded_tuned(dtype: str) -> tuple[pd.DataFrame, dict]:
    """softmax_core.softmax's forward ratio to copy per N from the newest recorded H200 run, and its provenance."""
    from . import data

    for run in data.recorded_runs():
        frame = run.frame
        tuned = frame[(frame["provider"] == "tuned") & (frame["direction"] == "forward") & (frame["dtype"] == dtype)
                      & (frame["status"] == "ok")]
        if not tuned.empty:
            return tuned[["N", "copy_ratio", "gbps"]], dict(run.provenance)
    return pd.DataFrame(columns=["N", "copy_ratio", "gbps"]), {}
