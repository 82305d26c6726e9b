"""Cached reads of the recorded benchmark runs (assets/benchmarks/, or this session's live sweep): the runs,
measured speedups with their spread, the Benchmark page's chart frames, and the long-rows pages' H200 sweeps."""
from __future__ import annotations

import os
from pathlib import Path

import pandas as pd
import streamlit as st

import softmax_core as sc
import softmax_bench as bench
from softmax_core.hardware import dtypes

from explorer_ui import cache_model, long_row_frames as frames, recorded_text
from softmax_bench import trust

# The benchmark page reads recorded runs from here; tests point it at a temporary folder.
RECORDED_DIR_ENV = "SOFTMAX_EXPLORER_RECORDED_DIR"


def recorded_dir() -> Path:
    return Path(os.environ.get(RECORDED_DIR_ENV) or bench.RECORDED_DIR)


def _folder_stamp(directory: Path) -> tuple:
    """Names and modification times of the folder's files: the cache key changes when a run lands."""
    if not directory.is_dir():
        return ()
    return tuple(sorted((p.name, p.stat().st_mtime_ns) for p in directory.iterdir() if p.is_file()))


@st.cache_data(show_spinner=False, max_entries=8)
def _recorded_runs(directory: str, stamp: tuple) -> list:
    if not stamp:
        return []
    return list(bench.load_recorded_runs(directory))


def recorded_runs(view: str = bench.EAGER) -> list:
    """The recorded benchmark runs (BenchmarkRun: .frame and .provenance) in the recorded folder of one timing
    view: EAGER (each call launched from Python, the record every page reads) unless CUDAGRAPH is asked for."""
    directory = recorded_dir()
    return bench.current_runs(_recorded_runs(str(directory), _folder_stamp(directory)), view)


def graph_run_for(run):
    """The newest recorded CUDA-graph run of the same GPU, dtype and M as `run`, or None."""
    p = run.provenance
    same = [r for r in recorded_runs(bench.CUDAGRAPH)
            if all(r.provenance.get(k) == p.get(k) for k in ("gpu", "dtype", "M"))]
    return same[-1] if same else None


LIVE_RUN_KEY = "bench_live_run"     # where the Benchmark page keeps this session's live GPU sweep


def benchmark_runs() -> list:
    """This session's live GPU sweep (if it ran one), then the recorded runs."""
    live = st.session_state.get(LIVE_RUN_KEY)
    return ([live] if live is not None else []) + recorded_runs()


def run_day(run) -> str:
    """The day a run was recorded (its provenance keeps the full ISO time)."""
    return str(run.provenance.get("date", "?"))[:10]


FUSED_PROVIDERS = ("tutorial", "tuned")   # the tutorial's kernel first: it is the one the pages explain


def _forward_pairs(run, dtype: str):
    """(fused provider, frame of rows timed by both naive and that provider) for a run's forward pass, the
    tutorial's kernel first; None when the run timed no such pair."""
    frame = run.frame
    ok = frame[(frame["status"] == "ok") & (frame["direction"] == "forward") & (frame["dtype"] == dtype)]
    naive = ok[ok["provider"] == "naive"]
    for fused_name in FUSED_PROVIDERS:
        both = naive.merge(ok[ok["provider"] == fused_name], on=["M", "N"], suffixes=("_naive", "_fused"))
        if not both.empty:
            return fused_name, both
    return None


def _side(row, suffix: str) -> dict:
    return {k: row.get(f"{k}{suffix}") for k in ("ms_p20", "ms_median", "ms_p80", "ms_min", "ms_max")}


def _speedup_figures(row) -> dict:
    s = trust.speedup(trust.timing_spread(_side(row, "_naive")), trust.timing_spread(_side(row, "_fused")))
    return {"speedup": s.value, "lo": s.lo, "hi": s.hi, "spread_kind": s.kind, "verdict": s.verdict}


def _efficiencies(run, row, dtype: str) -> dict:
    """The measured speedup split into byte ratio × (fused efficiency ÷ naive efficiency), from the same run's
    copy at the same shape (softmax_core.traffic.speedup_parts); empty when the run timed no copy there."""
    from softmax_core.traffic import speedup_parts

    frame = run.frame
    copy = frame[(frame["provider"] == "copy") & (frame["direction"] == "forward") & (frame["dtype"] == dtype)
                 & (frame["status"] == "ok") & (frame["M"] == row["M"]) & (frame["N"] == row["N"])]
    if copy.empty or "gbps_naive" not in row:
        return {}
    traffic = sc.memory_traffic(int(row["M"]), int(row["N"]), dtypes.torch_dtype(dtype))
    parts = speedup_parts(traffic.predicted_speedup, float(row["gbps_naive"]), float(row["gbps_fused"]),
                          float(copy["gbps"].iloc[0]))
    return {"byte_ratio": parts.byte_ratio, "naive_eff": parts.naive_efficiency,
            "fused_eff": parts.fused_efficiency, "parts_speedup": parts.speedup,
            "copy_steady": trust.timing_spread(copy.iloc[0].to_dict()).steady is not False}


def _recorded_only() -> tuple | None:
    """A cache key for "the recorded runs as they are on disk", or None when this session has a live run
    (then the answers are computed afresh: a live run does not hash)."""
    if st.session_state.get(LIVE_RUN_KEY) is not None:
        return None
    directory = recorded_dir()
    return str(directory), _folder_stamp(directory)


def measured_speedup(dtype: str, N: int, M: int | None = None) -> dict | None:
    """Naive time / fused time from the recorded runs at the recorded shape closest to M x N (N first,
    then M), or None. Returns the figures, their spread (trust.speedup), whether that shape is exactly
    the one asked for (`exact`), and where they come from (GPU, date)."""
    key = _recorded_only()
    if key is not None:
        return _recorded_measured_speedup(key, dtype, N, M)
    return _measured_speedup(benchmark_runs(), dtype, N, M)


@st.cache_data(show_spinner=False, max_entries=256)
def _recorded_measured_speedup(key: tuple, dtype: str, N: int, M: int | None) -> dict | None:
    return _measured_speedup(recorded_runs(), dtype, N, M)


def _measured_speedup(runs, dtype: str, N: int, M: int | None) -> dict | None:
    best = None
    for run in runs:
        pair = _forward_pairs(run, dtype)
        if pair is None:
            continue
        fused_name, both = pair
        distance = (both["N"] - N).abs() * 10**7 + ((both["M"] - M).abs() if M is not None else 0)
        row = both.iloc[distance.argsort().iloc[0]].to_dict()
        candidate = {**_speedup_figures(row), "N": int(row["N"]), "M": int(row["M"]), "provider": fused_name,
                     "gpu": str(run.provenance.get("gpu", "?")), "date": run_day(run),
                     **_efficiencies(run, row, dtype)}
        candidate["exact"] = candidate["N"] == N and (M is None or candidate["M"] == M)
        key = (abs(candidate["N"] - N), abs(candidate["M"] - M) if M is not None else 0)
        if best is None or key < best[0]:
            best = (key, candidate)
    return None if best is None else best[1]


def speedup_table(dtype: str):
    """Predicted (bytes ratio, softmax_core.traffic; with and without L2) and measured (naive ms / fused ms,
    with its spread and verdict) speedup for every N of the first recorded run that timed both, or None.
    Columns: N, M, predicted, predicted_l2, measured, lo, hi, spread_kind, verdict, gpu, date."""
    key = _recorded_only()
    if key is not None:
        return _recorded_speedup_table(key, dtype)
    return _speedup_table(benchmark_runs(), dtype)


@st.cache_data(show_spinner=False, max_entries=16)
def _recorded_speedup_table(key: tuple, dtype: str):
    return _speedup_table(recorded_runs(), dtype)


def _speedup_table(runs, dtype: str):
    for run in runs:
        pair = _forward_pairs(run, dtype)
        if pair is None:
            continue
        _, both = pair
        rows = []
        for r in both.sort_values("N").to_dict("records"):
            traffic = sc.memory_traffic(int(r["M"]), int(r["N"]), dtypes.torch_dtype(dtype))
            rows.append({"N": int(r["N"]), "M": int(r["M"]), "predicted": traffic.predicted_speedup,
                         "predicted_l2": cache_model.predicted_speedup_with_cache(traffic), "measured": 0.0,
                         **_speedup_figures(r), "gpu": str(run.provenance.get("gpu", "?")), "date": run_day(run)})
            rows[-1]["measured"] = rows[-1].pop("speedup")
        return pd.DataFrame(rows)
    return None


def provider_label(key: str) -> str:
    """A provider's name for people in the reader's language (a provider no longer known: its key)."""
    return recorded_text.provider_text(key)


def chart_frame(run, direction: str):
    """One direction of a run, ready to draw: GB/s per provider and N with interval bars (p20–p80 where the
    run recorded them, else min–max: trust.timing_spread), copy separate. GB/s always comes from the
    harness's own `gbps` over softmax_core's `bytes_moved`."""
    frame = run.frame
    part = frame[(frame["direction"] == direction) & (frame["status"] == "ok")].copy()
    if part.empty:
        return part, part
    nbytes = [sc.bytes_moved(int(m), int(n), dtypes.element_size(d), direction) for m, n, d in zip(part["M"], part["N"], part["dtype"])]
    spreads = [trust.timing_spread(r) for r in part.to_dict("records")]
    part["gbps_lo"] = [bench.gbps(b, sp.hi) for b, sp in zip(nbytes, spreads)]
    part["gbps_hi"] = [bench.gbps(b, sp.lo) for b, sp in zip(nbytes, spreads)]
    part["steady"] = [sp.steady for sp in spreads]
    # no fraction of copy on an unsteady timing (its own or copy's at the same N): trust.shown_ratio
    copy_steady = {int(n): sp.steady for n, p, sp in zip(part["N"], part["provider"], spreads) if p == "copy"}
    part["copy_ratio"] = [None if sp.steady is False or copy_steady.get(int(n)) is False else r
                          for n, sp, r in zip(part["N"], spreads, part["copy_ratio"])]
    part["ms"] = part["ms_median"]
    part["provider_key"] = part["provider"]
    part["provider"] = [provider_label(p) for p in part["provider"]]
    roof = part[part["provider_key"] == "copy"][["N", "gbps"]]
    return part[part["provider_key"] != "copy"], roof


@st.cache_data(show_spinner=False, max_entries=4)
def recorded_paths_cached() -> pd.DataFrame:
    return frames.recorded_paths()


def recorded_tuned(dtype: str) -> tuple[pd.DataFrame, dict]:
    """softmax_core.softmax's forward ratio to copy per N from the newest recorded H200 run, and its provenance."""
    for run in recorded_runs():
        frame = run.frame
        tuned = frame[(frame["provider"] == "tuned") & (frame["direction"] == "forward") & (frame["dtype"] == dtype)
                      & (frame["status"] == "ok")]
        if not tuned.empty:
            return tuned[["N", "copy_ratio", "gbps"]], dict(run.provenance)
    return pd.DataFrame(columns=["N", "copy_ratio", "gbps"]), {}
