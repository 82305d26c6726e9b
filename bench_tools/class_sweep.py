"""The class sweep: random shapes drawn per class of layout, each checked against torch, then timed beside a copy
of the same bytes, torch.softmax and torch.compile in one run, forward and backward (the backward both through
autograd's engine and as the softmax's backward node alone, softmax_bench/models.py).

A softmax reduces an axis of length R; the tensor's other axes fold into an outer count and a contiguous inner
run. The six classes below are regions of that space. A draw picks, per class, sizes log-uniformly over the
class's whole range, a dtype (float32, bfloat16, float16) at random, and enough outer slices that every
tensor moves at least `min_mb` MB in the forward (read x, write y); the seed fixes the draw, so a record can
be drawn again. The timing and the check are the models sweep's (softmax_bench/models.py): a copy of the
same tensor (forward) or an add of two tensors into a third (backward) is the roofline of the same run.

    python -m bench_tools.class_sweep --seed 1 --out assets/benchmarks/classes
    python -m bench_tools.class_sweep --seed 2 --classes short_rows,dim_inner_wide --shapes-per-class 4 --out DIR
    python -m bench_tools.class_sweep --table            # the per-class tables of the recorded runs (H200, H100)
    python -m bench_tools.class_sweep --table --write    # ... written into docs/performance.md

The record (`<gpu>-classes-seed<S>-<stamp>.csv/.json`) is rewritten after every shape, so a run cut short
keeps what it measured.
"""
from __future__ import annotations

import argparse
import math
import random
import statistics
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Sequence

import pandas as pd

ROOT = Path(__file__).resolve().parent.parent
DOC = ROOT / "docs" / "performance.md"
BEGIN, END = "<!-- classes:begin -->", "<!-- classes:end -->"


@dataclass(frozen=True)
class RecordedTable:
    """One per-class table of docs/performance.md: the class sweeps recorded in `folder` (under
    assets/benchmarks/) whose JSON names match `pattern`, less those named as a change's baseline ("-before-"),
    written between `begin` and `end`."""
    folder: str
    pattern: str
    begin: str
    end: str


# The H200's records (the issue's goals are the H200's), and the H100's: the device lent only H100s on some days,
# and those runs sit with the tuning records.
TABLES = (RecordedTable("classes", "*.json", BEGIN, END),
          RecordedTable("tuning", "h100-classes-seed*.json", "<!-- classes-h100:begin -->", "<!-- classes-h100:end -->"))
DTYPES = ("float32", "bfloat16", "float16")
PROVIDERS = ("copy", "tuned", "torch", "torch_compile")
# "backward": through torch.autograd.grad, the engine's round trip; "backward_node": the backward node alone
# (softmax_bench/models.py): where the two differ, the engine's host time, not the kernel, set the first.
DIRECTIONS = ("forward", "backward", "backward_node")
MIN_MB = 64          # forward bytes moved by every drawn tensor at least (read x + write y), in MB (1e6 B)
MAX_MB = 256         # ... and the top of the log-uniform range the target is drawn from


@dataclass(frozen=True)
class LayoutClass:
    """One class of layout: a softmax over an axis of length `reduce` (inclusive range); `inner` the range of the
    contiguous run beside it (the dims after the softmax dim; for a transposed view, the rows of the view, which
    are contiguous in memory); None for rows (the softmax dim is the contiguous one)."""
    key: str
    reduce: tuple[int, int]
    inner: tuple[int, int] | None
    transposed: bool = False


CLASSES: tuple[LayoutClass, ...] = (
    LayoutClass("dim_inner_wide", (2, 4096), (64, 65536)),        # dim=1 of (outer, R, inner), inner >= 64
    LayoutClass("dim_inner_narrow", (2, 4096), (2, 63)),          # ... inner < 64 (inner 1 is a row)
    LayoutClass("transposed", (300, 12000), (64, 16384), True),   # the last dim of a transposed view
    LayoutClass("short_rows", (2, 255), None),
    LayoutClass("mid_rows", (256, 16384), None),
    LayoutClass("long_rows", (16384, 262144), None),
)
CLASS_KEYS = tuple(c.key for c in CLASSES)


@dataclass(frozen=True)
class DrawnShape:
    """One drawn tensor: its class, shape, softmax dim, dtype, and whether it is a transposed view."""
    cls: str
    shape: tuple[int, ...]
    dim: int
    dtype: str
    transposed: bool = False

    @property
    def n_reduce(self) -> int:
        return self.shape[self.dim]

    @property
    def numel(self) -> int:
        return math.prod(self.shape)

    def forward_bytes(self) -> int:
        from softmax_core.hardware import dtypes
        return 2 * self.numel * dtypes.element_size(self.dtype)


def _log_uniform(rng: random.Random, lo: int, hi: int) -> int:
    """An integer in [lo, hi], its logarithm uniform over [log lo, log(hi + 1))."""
    return min(hi, int(math.exp(rng.uniform(math.log(lo), math.log(hi + 1)))))


def draw_class(layout: LayoutClass, rng: random.Random, min_mb: float = MIN_MB, max_mb: float = MAX_MB) -> DrawnShape:
    from softmax_core.hardware import dtypes

    dtype = rng.choice(DTYPES)
    size = dtypes.element_size(dtype)
    reduce = _log_uniform(rng, *layout.reduce)
    inner = _log_uniform(rng, *layout.inner) if layout.inner else 1
    target = math.exp(rng.uniform(math.log(min_mb), math.log(max_mb))) * 1e6     # forward bytes
    outer = max(1, math.ceil(target / (2 * size * reduce * inner)))
    while 2 * size * outer * reduce * inner < min_mb * 1e6:                       # rounding never goes below
        outer += 1
    if layout.transposed:                        # (outer, rows, reduce) seen through a (outer, reduce, rows) buffer
        return DrawnShape(layout.key, (outer, inner, reduce), 2, dtype, True)
    if layout.inner:
        return DrawnShape(layout.key, (outer, reduce, inner), 1, dtype)
    return DrawnShape(layout.key, (outer, reduce), 1, dtype)


def class_of(key: str) -> LayoutClass:
    for c in CLASSES:
        if c.key == key:
            return c
    raise ValueError(f"unknown class {key!r}; known: {', '.join(CLASS_KEYS)}")


def draw(seed: int, classes: Sequence[str] = CLASS_KEYS, per_class: int = 6, min_mb: float = MIN_MB,
         max_mb: float = MAX_MB) -> list[DrawnShape]:
    """`per_class` shapes of each class, fixed by `seed` (one random stream per class, so narrowing --classes
    draws the same shapes for the classes kept)."""
    shapes = []
    for key in classes:
        rng = random.Random(f"{seed}:{key}")
        shapes += [draw_class(class_of(key), rng, min_mb, max_mb) for _ in range(per_class)]
    return shapes


def as_case(shape: DrawnShape, index: int):
    from softmax_bench.models import ModelCase

    return ModelCase(f"{shape.cls}-{index}", shape.cls, shape.shape, shape.dtype, shape.dim, shape.transposed)


def record_stem(seed: int, gpu: str | None) -> str:
    name = (gpu or "cpu").lower().replace("nvidia ", "nvidia-").replace(" ", "-")
    return f"{name}-classes-seed{seed}-{time.strftime('%Y%m%dT%H%M', time.gmtime())}"


def run_class_sweep(shapes: Sequence[DrawnShape], seed: int, providers: Sequence[str] = PROVIDERS,
                    directions: Sequence[str] = DIRECTIONS, timer=None, out: str | Path | None = None,
                    command: str | None = None, progress: Callable[[int, int, str], None] | None = None):
    """Check and time every shape (softmax_bench.models.measure_case); the run so far is saved after each shape
    when `out` is given. Returns (the BenchmarkRun, the paths written or None)."""
    import torch

    from softmax_bench.harness import compile_limits, exclusive_gpu
    from softmax_bench.models import measure_case
    from softmax_bench.records import BenchmarkRun, free_stem, provenance, save_run
    from softmax_bench.timers import default_timer, timer_figures, timer_kind
    from softmax_core.hardware import runtime

    timer = timer or default_timer()
    info = provenance(0, [s.n_reduce for s in shapes], ",".join(dict.fromkeys(s.dtype for s in shapes)),
                      list(providers), directions, timer_kind(timer), timer_figures(timer),
                      command if command is not None else " ".join(sys.argv), seed)
    info.update(sweep="classes", classes={c.key: {"reduce": list(c.reduce), "inner": list(c.inner) if c.inner else None,
                                                  "transposed": c.transposed} for c in CLASSES
                                          if c.key in {s.cls for s in shapes}},
                cases=[{"name": f"{s.cls}-{i}", "class": s.cls, "shape": list(s.shape), "dtype": s.dtype,
                        "dim": s.dim, "transposed": s.transposed} for i, s in enumerate(shapes)],
                bytes="forward 2 x numel x element_size (read x, write y); backward 3 x (read y and dy, write dx)",
                copy="forward: torch.empty_like(x).copy_(x), x's layout; backward: torch.add(a, b, out=c), contiguous",
                dy="each provider's backward gets dy in its own output's layout (empty_like(y).copy_(dy))",
                backward="torch.autograd.grad(y, x, dy), the autograd engine's whole call",
                backward_node="y.grad_fn applied to dy under no_grad: the softmax's backward node alone, no engine")
    stem = None
    if out is not None:
        stem = free_stem(out, record_stem(seed, info.get("gpu")))
    rows: list[dict] = []
    paths = None
    with exclusive_gpu(), compile_limits(4096):
        for i, shape in enumerate(shapes):
            got = measure_case(as_case(shape, i), providers, directions, timer, seed + i)
            rows += [{**r, "class": shape.cls} for r in got]
            if out is not None:
                paths = save_run(BenchmarkRun(pd.DataFrame(rows), info), out, stem)
            if progress:
                progress(i + 1, len(shapes), f"{shape.cls} {'x'.join(map(str, shape.shape))} {shape.dtype}")
            if not runtime.INTERPRETED:
                torch.cuda.empty_cache()
    return BenchmarkRun(pd.DataFrame(rows), info), paths


# --- reading the records -------------------------------------------------------------------------------------------

def case_ratios(run) -> pd.DataFrame:
    """One row per (case, direction) of a run: tuned ÷ copy, and tuned ÷ each peer (time ratio inverted: > 1 is
    tuned faster), from the medians of one run."""
    f = run.frame[run.frame.status == "ok"]
    t = f.pivot_table(index=["class", "case", "direction"], columns="provider", values="ms_median", sort=False)
    out = pd.DataFrame(index=t.index)
    if "tuned" not in t or "copy" not in t:
        return out.reset_index()
    out["tuned/copy"] = t["copy"] / t["tuned"]
    for peer in ("torch", "torch_compile"):
        if peer in t:
            out[f"tuned/{peer}"] = t[peer] / t["tuned"]
    return out.reset_index()


def class_summary(run) -> pd.DataFrame:
    """Per (class, direction): min and median of tuned ÷ copy over the drawn shapes, and the lowest tuned ÷ peer."""
    r = case_ratios(run)
    rows = []
    for (cls, direction), g in r.groupby(["class", "direction"], sort=False):
        g = g.dropna(subset=["tuned/copy"])
        if g.empty:
            continue
        row = dict({"class": cls}, direction=direction, shapes=len(g), min=g["tuned/copy"].min(),
                   median=statistics.median(g["tuned/copy"]))
        for peer in ("torch", "torch_compile"):
            col = f"tuned/{peer}"
            row[f"worst_vs_{peer}"] = g[col].min() if col in g and g[col].notna().any() else float("nan")
        rows.append(row)
    return pd.DataFrame(rows)


def newest_by_class(runs: Sequence) -> dict:
    """seed -> class -> the newest run (runs oldest first) of that seed that measured the class: a later run over
    some classes (the code changed there) replaces the earlier one's figures for those classes only."""
    newest: dict = {}
    for run in runs:
        classes = set(run.frame["class"]) if "class" in run.frame else set()
        for cls in classes:
            newest.setdefault(run.provenance.get("seed"), {})[cls] = run
    return newest


def table_runs(table: RecordedTable):
    from softmax_bench.records import RECORDED_DIR, load_class_runs

    return load_class_runs(RECORDED_DIR / table.folder, table.pattern)


def markdown_table(runs: Sequence, folder: str = "classes") -> str:
    """docs/performance.md's per-class table: for each class and direction, tuned ÷ copy min / median in each
    recorded seed (its newest run of that class), and the lowest tuned ÷ torch and tuned ÷ torch.compile over the
    class's shapes (above 1: tuned is faster at every shape)."""
    newest = newest_by_class(runs)
    seeds = sorted(newest)

    def cell(v):
        return "–" if v != v else f"{v:.2f}"
    head = ["class", "pass"] + [f"seed {s}: min / median (shapes)" for s in seeds] + \
        [f"seed {s}: lowest ÷ torch, ÷ torch.compile" for s in seeds]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    summaries: dict = {}
    for s in seeds:
        for run in {id(r): r for r in newest[s].values()}.values():
            summaries[(s, id(run))] = class_summary(run)
    used = []
    for cls in CLASS_KEYS:
        for direction in DIRECTIONS:
            got = []
            for s in seeds:
                run = newest[s].get(cls)
                if run is None:
                    got.append(None)
                    continue
                if all(u is not run for u in used):
                    used.append(run)
                m = summaries[(s, id(run))]
                m = m[(m["class"] == cls) & (m.direction == direction)]
                got.append(m.iloc[0] if len(m) else None)
            if all(g is None for g in got):
                continue
            ratio = [f"{cell(g['min'])} / {cell(g['median'])} ({g['shapes']})" if g is not None else "–" for g in got]
            peers = [f"{cell(g['worst_vs_torch'])}, {cell(g['worst_vs_torch_compile'])}" if g is not None else "–"
                     for g in got]
            lines.append("| " + " | ".join([cls.replace("_", " "), direction, *ratio, *peers]) + " |")
    sources = ", ".join(f"`{r.provenance['csv']}`" for r in used)
    return "\n".join(lines) + f"\n\nFrom {sources} (assets/benchmarks/{folder}/).\n"


def write_table(runs: Sequence, doc: Path = DOC, table: RecordedTable = TABLES[0]) -> None:
    text = doc.read_text()
    start, end = text.index(table.begin) + len(table.begin), text.index(table.end)
    doc.write_text(text[:start] + "\n\n" + markdown_table(runs, table.folder) + "\n" + text[end:])


# --- the command line ----------------------------------------------------------------------------------------------

def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="python -m bench_tools.class_sweep", description=__doc__.split("\n\n")[0],
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--seed", type=int, help="the draw's seed (required for a sweep)")
    p.add_argument("--classes", default=",".join(CLASS_KEYS), help=f"comma-separated, of: {', '.join(CLASS_KEYS)}")
    p.add_argument("--shapes-per-class", type=int, default=6)
    p.add_argument("--providers", default=",".join(PROVIDERS), help="comma-separated (copy is always timed)")
    p.add_argument("--directions", default=",".join(DIRECTIONS))
    p.add_argument("--min-mb", type=float, default=MIN_MB, help="forward bytes moved per tensor at least (MB)")
    p.add_argument("--max-mb", type=float, default=MAX_MB, help="top of the drawn forward bytes (MB)")
    p.add_argument("--rep-ms", type=int, default=40, help="do_bench's repetition time per call")
    p.add_argument("--out", help="directory for the record (CSV + JSON), rewritten after every shape")
    p.add_argument("--list", action="store_true", help="print the drawn shapes and stop")
    p.add_argument("--table", action="store_true", help="print the per-class tables of the recorded runs (H200, H100)")
    p.add_argument("--write", action="store_true", help="with --table: write it into docs/performance.md")
    return p


def main(argv: Sequence[str] | None = None) -> int:
    p = _parser()
    args = p.parse_args(argv)
    if args.table:
        for table in TABLES:
            runs = table_runs(table)
            if args.write:
                write_table(runs, DOC, table)
            else:
                print(markdown_table(runs, table.folder))
        return 0
    if args.seed is None:
        p.error("--seed is required for a sweep")
    classes = [c for c in args.classes.split(",") if c]
    for c in classes:
        if c not in CLASS_KEYS:
            p.error(f"unknown class {c!r}; known: {', '.join(CLASS_KEYS)}")
    if args.shapes_per_class < 1:
        p.error("--shapes-per-class must be at least 1")
    if not 0 < args.min_mb <= args.max_mb:
        p.error("need 0 < --min-mb <= --max-mb")
    shapes = draw(args.seed, classes, args.shapes_per_class, args.min_mb, args.max_mb)
    if args.list:
        for s in shapes:
            print(f"{s.cls:18} {'x'.join(map(str, s.shape)):>22} dim={s.dim} {s.dtype:9} "
                  f"{'transposed ' if s.transposed else ''}{s.forward_bytes() / 1e6:,.0f} MB")
        return 0
    from softmax_core.hardware import runtime
    runtime.use_interpreter_without_gpu()            # before any kernel is defined
    providers = list(dict.fromkeys(["copy", *[q for q in args.providers.split(",") if q]]))
    from softmax_bench.providers import PROVIDERS as KNOWN
    for q in providers:
        if q not in KNOWN:
            p.error(f"unknown provider {q!r}")
    directions = [d for d in args.directions.split(",") if d]
    if not set(directions) <= set(DIRECTIONS) or not directions:
        p.error(f"--directions: of {', '.join(DIRECTIONS)}")
    from softmax_bench.timers import DoBenchTimer, default_timer
    timer = default_timer() if runtime.INTERPRETED else DoBenchTimer(warmup_ms=10, rep_ms=args.rep_ms)

    def progress(i, n, what):
        print(f"[{i}/{n}] {what}", flush=True)
    run, paths = run_class_sweep(shapes, args.seed, providers, directions, timer, args.out,
                                 "python -m bench_tools.class_sweep " + " ".join(argv if argv is not None else sys.argv[1:]),
                                 progress)
    print(class_summary(run).to_string(index=False))
    if paths:
        print("wrote", *paths)
    return 0


if __name__ == "__main__":
    sys.exit(main())
