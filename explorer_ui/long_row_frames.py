"""The long-rows pages' frames and tables (pages 7 and 8): example rows, the animation's steps and the tables
beside them, built from what the real kernels recorded (softmax_teaching.long_row_trace) and from recorded
H200 runs. Pure functions of those records, so tests can check them without Streamlit; their charts are in
explorer_ui.charts.long_rows, the cached calls that produce the records in explorer_ui.data.
"""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd
import torch

from softmax_core.data import assets_dir
from softmax_core.hardware import dtypes
from softmax_core.plans import tuned as tuned_plan
from softmax_teaching import long_row_trace as lrt
from softmax_core.kernels.tuned import TRACE_TILE_FIELDS, online_update, softmax_tiled_kernel

from . import code, defaults
from .fmt import number

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
    "float32": assets_dir() / "benchmarks" / "tuning" / "h200-split-tune-20261129-4-packed-native-dtype.csv",
    "bfloat16": assets_dir() / "benchmarks" / "tuning" / "h200-split-tune-20261130-6-bfloat16-specialised.csv",
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
    """One line per compiled BLOCK_SIZE (LaunchPlans in order): the N it serves, what one program needs, and how
    many programs the GPU runs per SM (its rules, softmax_core.hardware.occupancy)."""
    rows = []
    for p in plans:
        rows.append({"block": p.block_size, "n_from": p.block_size // 2 + 1, "n_to": p.block_size,
                     "warps": p.num_warps, "stages": p.num_stages, "regs": p.n_regs, "spills": p.n_spills,
                     "shared": p.shared_bytes, "shared_limit": p.gpu.max_shared_mem,
                     "reg_occupancy": p.reg_occupancy,
                     "sram_occupancy": -1 if p.sram_occupancy is None else p.sram_occupancy,
                     "per_sm": p.hardware_programs_per_sm, "fits": p.fits})
    return pd.DataFrame(rows)


@dataclass(frozen=True)
class Cliff:
    fail_block: int | None        # first BLOCK_SIZE where not one program fits
    fail_n: int | None            # first N that compiles to it
    limiter: str | None           # "shared" | "registers"
    spill_block: int | None       # first BLOCK_SIZE whose program spills registers
    last_fit_n: int | None        # the largest N that still fits (fail_n - 1)
    top_spills: int = 0           # registers spilled by the largest BLOCK_SIZE that still fits


def find_cliff(table: pd.DataFrame) -> Cliff:
    fail = table[~table["fits"]]
    spill = table[(table["spills"] > 0) & table["fits"]]
    spill_block = int(spill["block"].iloc[0]) if not spill.empty else None
    fitting = table[table["fits"]]
    top_spills = int(fitting["spills"].iloc[-1]) if not fitting.empty else 0
    if fail.empty:
        return Cliff(None, None, None, spill_block, None, top_spills)
    row = fail.iloc[0]
    limiter = "shared" if 0 <= row["sram_occupancy"] < 1 else "registers"
    return Cliff(int(row["block"]), int(row["n_from"]), limiter, spill_block, int(row["n_from"]) - 1, top_spills)


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
                          "m_before": number(r["m_before"]), "tile_max": number(r["tile_max"]), "m_after": number(r["m_after"]),
                          "rescale": number(r["rescale"]), "d_before": number(r["d_before"]), "tile_sum": number(r["tile_sum"]),
                          "d_after": number(r["d_after"])}
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
    return tuple(code.without_trace_block(lines))


def tiled_kernel_lines() -> tuple[str, ...]:
    """The tiled kernel as the long-rows page shows it, then the online-normaliser step its pass 1 calls."""
    return kernel_lines_of(softmax_tiled_kernel) + ("",) + kernel_lines_of(online_update)


# fragments of the tiled kernel's lines each frame is about
ONLINE_ANCHORS = {"pass1": ("new_max = tl.maximum", "rescale = fast_exp(", "tile_sum = tl.sum(",
                            "running_sum = running_sum * rescale"),
                  "guard": ("shift = tl.where(new_max",),
                  "pass2": ("cols = (n_tiles - 1 - t)", "tl.store(y_row"),
                  "check": ("inv_sum = 1.0 / running_sum",)}


# -- 3. traffic and L2 ----------------------------------------------------------------------------------------


def l2_table(traffics) -> pd.DataFrame:
    return pd.DataFrame([{"N": t.n_cols, "row_bytes": t.row_bytes, "rows_in_flight": t.rows_in_flight,
                          "per_sm": t.programs_per_sm, "in_flight_mb": t.bytes_in_flight / 1e6,
                          "l2_mb": t.cache_bytes / 1e6 if t.cache_bytes else np.nan,
                          "fits": t.fits_cache, "nominal_mb": t.nominal_bytes / 1e6,
                          "dram_mb": t.dram_bytes_if_cache_hits / 1e6} for t in traffics])


def l2_crossing(table: pd.DataFrame) -> int | None:
    """The first N whose rows in flight no longer fit in the last cache before DRAM, or None."""
    over = table[table["fits"] == False]  # noqa: E712  (None: no L2 figure)
    return int(over["N"].iloc[0]) if not over.empty else None


FALLOFF = 0.9        # a path "falls off" at the first N where it runs below this fraction of its best so far


@dataclass(frozen=True)
class Falloff:
    where: str                    # "before" | "at" | "after" the L2 line, or "none" (it never falls off)
    n: int | None                 # the first recorded N below FALLOFF x the best ratio to copy before it
    ratio: float | None           # its ratio to copy there
    best_n: int                   # where the best ratio before it was recorded
    best: float


FALLOFF_PLACES = ("before", "at", "after", "none")       # longrows_l2_lesson_*


def falloff(ratios: pd.DataFrame, line: int | None) -> Falloff | None:
    """Where one path's recorded ratio to copy (columns N, copy_ratio) first falls below FALLOFF x its best at
    smaller N, and where that is against the L2 line (the first N whose rows in flight exceed L2): "at" when it
    is the first recorded N at or past the line. None without records."""
    frame = ratios.dropna(subset=["copy_ratio"]).sort_values("N")
    if frame.empty:
        return None
    best_n, best = int(frame["N"].iloc[0]), float(frame["copy_ratio"].iloc[0])
    for n, r in zip(frame["N"].iloc[1:], frame["copy_ratio"].iloc[1:]):
        n, r = int(n), float(r)
        if r < FALLOFF * best:
            if line is None:
                return Falloff("none", n, r, best_n, best)
            past = [int(m) for m in frame["N"] if m >= line]
            where = "before" if n < line else ("at" if past and n == past[0] else "after")
            return Falloff(where, n, r, best_n, best)
        if r > best:
            best_n, best = n, r
    return Falloff("none", None, None, best_n, best)


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
                     "published": done, "max": number(m) if done else "—", "sum": number(d) if done else "—",
                     "share": number(share) if kind in ("merge", "write") else "—"})
    return pd.DataFrame(rows)


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


def path_runs(table: pd.DataFrame) -> pd.DataFrame:
    """Consecutive N with the same path merged into one band (for the map's strip)."""
    runs = []
    for _, r in table.iterrows():
        if runs and runs[-1]["path"] == r["path"]:
            runs[-1]["to"] = int(r["N"])
        else:
            runs.append({"path": r["path"], "from": int(r["N"]), "to": int(r["N"])})
    return pd.DataFrame(runs)


# -- 6. to FlashAttention ------------------------------------------------------------------------------------------


def attention_values(n_cols: int, seed: int = 1) -> np.ndarray:
    """One value v_j per column: the V a row of attention weights would average (random, fixed by the seed)."""
    return np.random.default_rng(seed).uniform(-1.0, 1.0, n_cols)


def attention_table(steps) -> pd.DataFrame:
    return pd.DataFrame([{"tile": s.tile, "m_before": number(s.m_before), "m_after": number(s.m_after),
                          "rescale": number(s.rescale), "d_after": number(s.d_after), "o_before": number(s.o_before),
                          "o_rescaled": number(s.o_before * s.rescale), "tile_o": number(s.tile_o),
                          "o_after": number(s.o_after), "o_over_d": number(s.output)} for s in steps])


def attention_reference(scores: np.ndarray, values: np.ndarray) -> float:
    """softmax(s) · v with torch in float64: what the walk's last o / d must equal."""
    p = torch.softmax(torch.as_tensor(scores, dtype=torch.float64), dim=-1)
    return float((p * torch.as_tensor(values, dtype=torch.float64)).sum())
