"""Benchmark records: a run's table and its provenance, saved as CSV + JSON and read back.

Each row of the table is one (provider, N, direction) measurement. Times are milliseconds: the 20th, 50th
and 80th percentiles of the samples and their minimum and maximum. Runs recorded before the 20th / 80th
percentiles were kept load with those columns empty (NaN), and runs recorded under a provider's earlier
name load under its current one (`RENAMED_PROVIDERS`).

Record version 2 (`record_version`) names the clock twice: `timer` for machines (DO_BENCH, DO_BENCH_CUDAGRAPH
or WALL_CLOCK) and `timer_description` for people. Version 1 kept only the description, under `timer`;
loading one moves it to `timer_description` and derives `timer` from it. A run is in one of two timing
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

from softmax_core.hardware import dtypes, runtime
from softmax_core.bench.providers import PEER_PACKAGES, PROVIDERS

RECORDED_DIR = Path(__file__).resolve().parents[2] / "assets" / "benchmarks"
LIBRARY_DIR = Path(__file__).resolve().parent.parent
TIME_COLUMNS = ["ms_p20", "ms_median", "ms_p80", "ms_min", "ms_max"]
COLUMNS = ["provider", "direction", "dtype", "M", "N", *TIME_COLUMNS, "gbps", "copy_ratio", "status", "reason"]
# Providers recorded under an earlier name: loading a recorded run gives them their current one.
RENAMED_PROVIDERS = {"as_taught": "tutorial", "ours": "tuned"}
RECORD_VERSION = 2
# the clocks (provenance["timer"])
DO_BENCH, DO_BENCH_CUDAGRAPH, WALL_CLOCK = "do_bench", "do_bench_cudagraph", "wall clock"
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
        where = p.get("gpu") or p.get("device", "?")
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


def source_digest(root: Path = LIBRARY_DIR) -> str:
    """A fingerprint of the library's code (every .py file under softmax_core/): it names the code that ran
    even where the checkout's git metadata is missing or stale (a copied working tree on a GPU machine)."""
    digest = hashlib.sha256()
    for path in sorted(root.rglob("*.py")):
        digest.update(path.relative_to(root).as_posix().encode() + b"\0" + path.read_bytes())
    return digest.hexdigest()[:12]


def timing_view(timer: str | None) -> str:
    """CUDAGRAPH for a run timed by do_bench_cudagraph, else EAGER (every call launched from Python)."""
    return CUDAGRAPH if timer == DO_BENCH_CUDAGRAPH else EAGER


def timer_from_description(description: object) -> str | None:
    """The clock a version-1 record's timer description names, or None."""
    text = str(description or "")
    for prefix, kind in (("triton.testing.do_bench_cudagraph(", DO_BENCH_CUDAGRAPH),
                         ("do_bench_cudagraph's method (", DO_BENCH_CUDAGRAPH),
                         ("triton.testing.do_bench(", DO_BENCH), ("wall clock", WALL_CLOCK)):
        if text.startswith(prefix):
            return kind
    return None


def package_version(distribution: str) -> str | None:
    """An installed distribution's version (importlib.metadata, nothing imported), or None."""
    try:
        return importlib.metadata.version(distribution)
    except importlib.metadata.PackageNotFoundError:
        return None


def provenance(M: int, Ns: Sequence[int], dtype: str, providers: Sequence[str], directions: Sequence[str],
               timer_description: str, command: str, seed: int, timer_kind: str | None = None) -> dict:
    """Where and how a run was measured. No host name: runs are committed to a public repository.
    The optional peers' packages in the run get their versions beside torch's and triton's (None: not
    installed)."""
    import triton

    on_gpu = not runtime.INTERPRETED
    props = torch.cuda.get_device_properties(torch.cuda.current_device()) if on_gpu else None
    return {
        "gpu": props.name if props else None,
        "sm_count": props.multi_processor_count if props else None,
        "driver": _driver_version(),
        "cuda": torch.version.cuda,
        "device": runtime.backend_description(),
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
        "providers": {name: PROVIDERS[name].label for name in providers},
        "unavailable": {name: why for name in providers if (why := PROVIDERS[name].available()[1])},
        "record_version": RECORD_VERSION,
        "timer": timer_kind,
        "timer_description": timer_description,
        "bytes": "forward 2·M·N·element_size (read x, write y); "
                 "backward 3·M·N·element_size (read y and dy, write dx)",
        "copy": "forward: torch.empty_like(x).copy_(x); backward: torch.add(a, b, out=c), 2 reads + 1 write",
        "check": {name: dtypes.DTYPES[name].tolerance for name in dtypes.TUTORIAL_DTYPES},
        "seed": seed,
    }


def save_run(run: BenchmarkRun, directory: str | Path, stem: str) -> tuple[Path, Path]:
    """Write `<stem>.csv` (the table) and `<stem>.json` (provenance, naming the CSV). Returns both paths."""
    directory = Path(directory)
    directory.mkdir(parents=True, exist_ok=True)
    csv_path, json_path = directory / f"{stem}.csv", directory / f"{stem}.json"
    run.frame.to_csv(csv_path, index=False)
    json_path.write_text(json.dumps({**run.provenance, "csv": csv_path.name}, indent=2) + "\n")
    return csv_path, json_path


def _renamed(names: dict) -> dict:
    return {RENAMED_PROVIDERS.get(name, name): value for name, value in names.items()}


def load_run(json_path: str | Path) -> BenchmarkRun:
    json_path = Path(json_path)
    info = json.loads(json_path.read_text())
    frame = pd.read_csv(json_path.parent / info["csv"])
    frame["reason"] = frame["reason"].astype(object).fillna("").astype(str)
    frame["provider"] = frame["provider"].replace(RENAMED_PROVIDERS)
    for column in TIME_COLUMNS:
        if column not in frame:
            frame[column] = float("nan")
    for key in ("providers", "unavailable"):
        if key in info:
            info[key] = _renamed(info[key])
    return BenchmarkRun(frame[COLUMNS], _upgraded(info))


def _upgraded(info: dict) -> dict:
    """A version-1 provenance in version 2's terms (see the module's docstring); later ones as they are."""
    if info.get("record_version", 1) >= 2:
        return info
    description = info.pop("timer", None)
    return {**info, "record_version": 1, "timer": timer_from_description(description),
            "timer_description": description}


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
