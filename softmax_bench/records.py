"""Benchmark records: a run's table and its provenance, saved as CSV + JSON and read back.

Each row of the table is one (provider, N, direction) measurement. Times are milliseconds: the 20th, 50th
and 80th percentiles of the samples and their minimum and maximum. Runs recorded before the 20th / 80th
percentiles were kept load with those columns empty (NaN), and runs recorded under a provider's earlier
name load under its current one (`RENAMED_PROVIDERS`).

A record keeps codes and figures, never sentences (softmax_core.words says them, in any language). Record
version 3 (`record_version`): `timer` is the clock (a `Clock`) and `timer_figures` its settings; `backend`,
each `unavailable` provider's reason and each row's `reason` (CSV: JSON) are a `Coded`; `bytes` and `copy`
name the method (a `Method`); `providers` lists the providers' names. Records first written in versions 1
and 2 (English in those places) were rewritten once in version 3's terms and say so (`recorded_as_version`);
a record of another version is refused by name. A run is in one of two timing
views (`timing_view`): EAGER, each call launched from Python (do_bench, or a wall clock on a CPU), the
project's record; or CUDAGRAPH, the calls replayed from a CUDA graph (do_bench_cudagraph).
"""
from __future__ import annotations

import datetime
import hashlib
import importlib.metadata
import json
import platform
import shutil
import subprocess
import warnings
from dataclasses import dataclass, field
from pathlib import Path
from typing import Sequence

import pandas as pd
import torch

from softmax_core.data import assets_dir
from softmax_core.hardware import dtypes, runtime
from softmax_bench.providers import PEER_PACKAGES, PROVIDERS
from softmax_core.words import Code, Coded

RECORDED_DIR = assets_dir() / "benchmarks"
# The library whose code a record timed (softmax_core/), and the harness that timed it (this package).
LIBRARY_DIR = Path(__file__).resolve().parents[1] / "softmax_core"
HARNESS_DIR = Path(__file__).resolve().parent
TIME_COLUMNS = ["ms_p20", "ms_median", "ms_p80", "ms_min", "ms_max"]
COLUMNS = ["provider", "direction", "dtype", "M", "N", *TIME_COLUMNS, "gbps", "copy_ratio", "status", "reason"]
# Providers recorded under an earlier name: loading a recorded run gives them their current one.
RENAMED_PROVIDERS = {"as_taught": "tutorial", "ours": "tuned"}
RECORD_VERSION = 3


class Clock(Code):
    """The clock that timed a run (provenance["timer"]); its settings are provenance["timer_figures"]."""
    DO_BENCH = "do_bench"                       # warmup_ms, rep_ms (median_only: a run before percentiles)
    DO_BENCH_CUDAGRAPH = "do_bench_cudagraph"   # rep_ms
    WALL_CLOCK = "wall clock"                   # warmup, max_repeats, budget_s


class Method(Code):
    """How a run counts bytes (provenance["bytes"]) and what its roofline copies (provenance["copy"])."""
    BYTES_MOVED = "bytes_moved"
    COPY_ROOFLINE = "copy_roofline"


DO_BENCH, DO_BENCH_CUDAGRAPH, WALL_CLOCK = Clock.DO_BENCH, Clock.DO_BENCH_CUDAGRAPH, Clock.WALL_CLOCK
# the timing views: a run's calls launched one by one from Python, or replayed from a CUDA graph
EAGER, CUDAGRAPH = "eager", "cudagraph"
TIMING_VIEWS = (EAGER, CUDAGRAPH)


@dataclass(frozen=True)
class BenchmarkRun:
    frame: pd.DataFrame                       # one row per (provider, N, direction), columns = COLUMNS
    provenance: dict = field(default_factory=dict)

    @property
    def timer(self) -> str | None:
        """The clock that timed the run (DO_BENCH, DO_BENCH_CUDAGRAPH, WALL_CLOCK), None when unknown."""
        return self.provenance.get("timer")

    @property
    def timing_view(self) -> str:
        return timing_view(self.timer)

    @property
    def label(self) -> str:
        p = self.provenance
        where = p.get("gpu") or f"CPU {p.get('cpu', '?')}"
        return f"{where} · {p.get('dtype', '?')} · M={p.get('M', '?')} · {p.get('date', '?')}"


def _driver_version() -> str | None:
    if runtime.INTERPRETED or not shutil.which("nvidia-smi"):
        return None
    try:
        out = subprocess.run(["nvidia-smi", "--query-gpu=driver_version", "--format=csv,noheader", "-i",
                              str(torch.cuda.current_device())], capture_output=True, text=True, timeout=10)
        return out.stdout.strip() or None
    except (OSError, subprocess.SubprocessError):
        return None


def _git_commit() -> str | None:
    try:
        out = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=LIBRARY_DIR,
                             capture_output=True, text=True, timeout=5)
        return (out.stdout.strip() or None) if out.returncode == 0 else None
    except (OSError, subprocess.SubprocessError):
        return None


def source_digest(roots: tuple[Path, ...] = (LIBRARY_DIR, HARNESS_DIR)) -> str:
    """A fingerprint of the code that ran (every .py file under softmax_core/ and softmax_bench/): it names the
    code even where the checkout's git metadata is missing or stale (a copied working tree on a GPU machine)."""
    digest = hashlib.sha256()
    for root in roots:
        for path in sorted(root.rglob("*.py")):
            digest.update(f"{root.name}/{path.relative_to(root).as_posix()}".encode() + b"\0" + path.read_bytes())
    return digest.hexdigest()[:12]


def timing_view(timer: str | None) -> str:
    """CUDAGRAPH for a run timed by do_bench_cudagraph, else EAGER (every call launched from Python)."""
    return CUDAGRAPH if timer == DO_BENCH_CUDAGRAPH else EAGER


def package_version(distribution: str) -> str | None:
    """An installed distribution's version (importlib.metadata, nothing imported), or None."""
    try:
        return importlib.metadata.version(distribution)
    except importlib.metadata.PackageNotFoundError:
        return None


def provenance(M: int, Ns: Sequence[int], dtype: str, providers: Sequence[str], directions: Sequence[str],
               timer: Clock | None, timer_figures: dict, command: str, seed: int) -> dict:
    """Where and how a run was measured, in codes and figures. No host name: runs are committed to a public
    repository. The optional peers' packages in the run get their versions beside torch's and triton's
    (None: not installed). `timer`: None for a clock of no Clock (a stand-in; `timer_figures` names it)."""
    import triton

    on_gpu = not runtime.INTERPRETED
    props = torch.cuda.get_device_properties(torch.cuda.current_device()) if on_gpu else None
    return {
        "gpu": props.name if props else None,
        "sm_count": props.multi_processor_count if props else None,
        "driver": _driver_version(),
        "cuda": torch.version.cuda,
        "backend": runtime.backend().to_json(),
        "cpu": platform.machine(),
        "torch": torch.__version__,
        "triton": triton.__version__,
        **{package: package_version(package) for name in providers for package in PEER_PACKAGES.get(name, ())},
        "python": platform.python_version(),
        "date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
        "command": command,
        "git_commit": _git_commit(),
        "source_digest": source_digest(),
        "M": M,
        "dtype": dtype,
        "Ns": list(Ns),
        "directions": list(directions),
        "providers": list(providers),
        "unavailable": {name: why.to_json() for name in providers if (why := PROVIDERS[name].available()[1])},
        "record_version": RECORD_VERSION,
        "timer": None if timer is None else Clock(timer).value,
        "timer_figures": dict(timer_figures),
        "bytes": Method.BYTES_MOVED.value,
        "copy": Method.COPY_ROOFLINE.value,
        "check": {name: dtypes.DTYPES[name].tolerance for name in dtypes.TUTORIAL_DTYPES},
        "seed": seed,
    }


def csv_frame(frame: pd.DataFrame) -> pd.DataFrame:
    """A run's table as its CSV keeps it: each row's reason (a Coded) as JSON text, "" for none."""
    frame = frame.copy()
    frame["reason"] = [json.dumps(r.to_json()) if isinstance(r, Coded) else "" for r in frame["reason"]]
    return frame


def free_stem(directory: str | Path, stem: str) -> str:
    """`stem`, or `stem-2`, `stem-3`, ... : the first whose CSV and JSON are not in `directory` yet. Record names
    carry the minute they were made, so two runs started in the same minute would otherwise share one name and
    the second would write over the first."""
    directory = Path(directory)
    taken = lambda name: (directory / f"{name}.csv").exists() or (directory / f"{name}.json").exists()
    candidate, n = stem, 1
    while taken(candidate):
        n += 1
        candidate = f"{stem}-{n}"
    return candidate


def save_run(run: BenchmarkRun, directory: str | Path, stem: str) -> tuple[Path, Path]:
    """Write `<stem>.csv` (the table) and `<stem>.json` (provenance, naming the CSV). Returns both paths."""
    directory = Path(directory)
    directory.mkdir(parents=True, exist_ok=True)
    csv_path, json_path = directory / f"{stem}.csv", directory / f"{stem}.json"
    csv_frame(run.frame).to_csv(csv_path, index=False)
    json_path.write_text(json.dumps({**run.provenance, "csv": csv_path.name}, indent=2) + "\n")
    return csv_path, json_path


def row_reason(text: str) -> Coded | None:
    """A CSV row's `reason`: the JSON of a Coded, or None where the row was timed."""
    return Coded.from_json(json.loads(text)) if text else None


def load_run(json_path: str | Path) -> BenchmarkRun:
    """A saved run, in the current record version's terms (older records are upgraded as they load)."""
    json_path = Path(json_path)
    info = json.loads(json_path.read_text())
    if info.get("record_version", 1) != RECORD_VERSION:
        raise ValueError(f"{json_path.name} is of record version {info.get('record_version', 1)}; this library "
                         f"reads version {RECORD_VERSION} (every committed record is of it)")
    frame = pd.read_csv(json_path.parent / info["csv"])
    frame["reason"] = [row_reason(text) for text in frame["reason"].astype(object).fillna("").astype(str)]
    frame["provider"] = frame["provider"].replace(RENAMED_PROVIDERS)
    for column in TIME_COLUMNS:
        if column not in frame:
            frame[column] = float("nan")
    info["providers"] = [RENAMED_PROVIDERS.get(name, name) for name in info.get("providers", [])]
    info["unavailable"] = {RENAMED_PROVIDERS.get(name, name): why for name, why in (info.get("unavailable") or {}).items()}
    return BenchmarkRun(frame[COLUMNS], info)


def backend(info: dict) -> Coded | None:
    """A loaded run's backend (provenance["backend"]), or None when it does not say."""
    return Coded.from_json(info["backend"]) if info.get("backend") else None


def timer(info: dict) -> Coded | None:
    """A loaded run's clock with its settings, or None for a clock of no Clock."""
    return Coded.of(Clock(info["timer"]), **info.get("timer_figures", {})) if info.get("timer") else None


def unavailable(info: dict) -> dict[str, Coded]:
    """A loaded run's providers that could not run, each with why."""
    return {name: Coded.from_json(why) for name, why in (info.get("unavailable") or {}).items()}


def load_recorded_runs(directory: str | Path = RECORDED_DIR, view: str | None = None) -> list[BenchmarkRun]:
    """Every saved run in `directory` (only those of timing view `view`, EAGER or CUDAGRAPH, when given),
    oldest first; none if the directory is missing or empty."""
    if view is not None and view not in TIMING_VIEWS:
        raise ValueError(f"unknown timing view {view!r}; known: {', '.join(TIMING_VIEWS)}")
    directory = Path(directory)
    runs = []
    for json_path in sorted(directory.glob("*.json")) if directory.is_dir() else []:
        try:
            runs.append(load_run(json_path))
        except (OSError, ValueError, KeyError, TypeError) as err:  # a stray or broken file must not hide the others
            warnings.warn(f"skipped recorded run {json_path.name}: {err}")
    runs = [r for r in runs if view is None or r.timing_view == view]
    return sorted(runs, key=lambda r: str(r.provenance.get("date", "")))


def load_class_runs(directory: str | Path | None = None, pattern: str = "*.json") -> list[BenchmarkRun]:
    """The recorded class sweeps (default: assets/benchmarks/classes/*.json; or `directory`'s JSON records named
    by `pattern`, less a change's baselines, "-before-"), oldest first by the date each run records, each with its
    whole CSV (the class column included): the class sweep's tables and the layouts page read the same runs in the
    same order, so both call the latest run the same one."""
    directory = Path(directory) if directory is not None else RECORDED_DIR / "classes"
    runs = []
    for path in sorted(directory.glob(pattern)):
        if "-before-" in path.name:
            continue
        run = load_run(path)
        frame = pd.read_csv(path.parent / run.provenance["csv"], keep_default_na=True)
        runs.append(BenchmarkRun(frame, run.provenance))
    return sorted(runs, key=lambda r: str(r.provenance.get("date", "")))


def current_runs(runs: Sequence[BenchmarkRun], view: str = EAGER) -> list[BenchmarkRun]:
    """The runs of one timing view, in their order: the app's record is the EAGER one unless asked."""
    return [r for r in runs if r.timing_view == view]


# A roofline replayed from a CUDA graph should run at least as fast as launched from Python: no launch gaps,
# and L2 is not flushed. Where it ran below this fraction of the eager copy's GB/s at the same N, ratios to it
# would flatter every provider. (On the H200, from 512 MB per tensor, torch's contiguous copy_, which is a
# cudaMemcpyAsync, replayed from a graph at 0.65-0.67x its eager GB/s; the backward's add kernel did not.)
# The page (pages/6_benchmark.py) and docs/performance.md's tables (bench_tools.doc_tables) both
# leave those ratios out.
GRAPH_ROOFLINE_LIMIT = 0.9


def slower_graph_roofline(graph_rows, eager_rows, limit: float = GRAPH_ROOFLINE_LIMIT) -> dict[int, tuple[float, float]]:
    """N -> (graph copy GB/s, eager copy GB/s) for each N where the copy timed from a CUDA graph ran below
    `limit` x the same copy launched from Python. Rows: mappings with provider, N, gbps and status (one
    direction of each run)."""
    def copies(rows):
        return {int(r["N"]): float(r["gbps"]) for r in rows if r["provider"] == "copy" and r["status"] == "ok"}
    graph, eager = copies(graph_rows), copies(eager_rows)
    return {n: (graph[n], eager[n]) for n in sorted(graph) if n in eager and graph[n] < limit * eager[n]}
