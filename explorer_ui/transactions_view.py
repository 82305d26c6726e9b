"""The "Layouts and memory transactions" page's logic: presets, the cached traces, one request's lanes as a
table, the recorded ratio to copy for a layout's class, and the ncu comparison. Pure functions beside the
cached calls; the page draws what they return."""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import pandas as pd
import streamlit as st

from softmax_core.hardware import dtypes
from softmax_teaching import transactions as tx
from softmax_teaching.layout_trace import KernelTrace, kernel_trace, kernel_traces  # noqa: F401
from softmax_teaching.layout_case import VIEWS, Case, case_strides, planner_view
from softmax_teaching.ncu_record import NcuRecord, read_record

DTYPES = ("float32", "bfloat16", "float16", "float64")
MAX_ELEMENTS = 2 ** 31          # the tensor is allocated (not filled): keep it within what a laptop can map
NCU_GPU = "h200"                # the catalog card of the GPU the ncu record was counted on
MAX_STEPS = 64                  # requests the animation steps through (the counts cover them all)
# The presets: the layouts Nsight Compute counted on the H200 (bench_tools.record.layout_sectors), by name.
PRESETS = {
    "rows_fp32": Case((4096, 1024), "float32", 1, "contiguous"),
    "transposed_fp32": Case((4096, 1024), "float32", 1, "transposed"),
    "nchw_dim1_fp32": Case((64, 1000, 49), "float32", 1, "contiguous"),
    "padded_fp32": Case((4096, 1000), "float32", 1, "padded"),
    "offset_fp32": Case((4096, 1000), "float32", 1, "offset"),
}
DEFAULT_PRESET = "transposed_fp32"
# The layouts with a name of their own (the presets, the ncu record's extra launch, "custom"), the kernels drawn,
# the planner's families, the classes of layout and the codes of bad input: the page says each in words.
NAMED_LAYOUTS = tuple(PRESETS) + ("transposed_fp32_row_walk", "custom")
KERNELS = ("planned", "row_walk")
FAMILIES = ("rows", "tiled", "split", "any_dim")
CLASSES = ("rows", "transposed", "strided")
INPUT_ERRORS = ("shape_no_sizes", "shape_not_whole_numbers", "shape_size_below_one", "shape_too_many_dims",
                "dim_out_of_range", "transposed_needs_two_dims", "too_big")
# Which models-sweep case stands for a layout class until a sweep by class is recorded.
CLASS_CASES = {"transposed": "transposed-last", "strided": "channel-dim1"}


def layout_class(case: Case, family: str, n_inner: int) -> str:
    """"rows" (the softmax dim is the contiguous one), "transposed" (a transposed view's last dim) or
    "strided" (a strided dim with a contiguous inner run: dim=1 of N, C, H, W)."""
    if family != "any_dim":
        return "rows"
    return "transposed" if case.view == "transposed" and case.dim == len(case.shape) - 1 else "strided"


@st.cache_data(show_spinner=False, max_entries=64)
def traces(cases: tuple[tuple[Case, str], ...], gpu_key: str) -> list[KernelTrace]:
    """One program's loads of each (case, kernel), planned for and compiled for the GPU `gpu_key`: on disk
    after the first question (softmax_teaching.load_record, compiled_loads), in memory after this one."""
    return kernel_traces(list(cases), data_gpu(gpu_key))


def default_requests(gpu_key: str) -> list[tuple[tuple[tuple[Case, str], ...], str]]:
    """What the page traces at its defaults with the GPU `gpu_key` chosen, as (its (case, kernel) pairs, the
    GPU they are for): the default preset's two kernels on that GPU, and the ncu record's launches on the
    H200 they were counted on. The pre-warm makes these (explorer_ui.prewarm)."""
    record = read_record()
    counted = () if record is None else tuple(
        (Case(launch.shape, launch.dtype, launch.dim, launch.view), launch.kernel) for launch in record.launches)
    return [(tuple((PRESETS[DEFAULT_PRESET], kernel) for kernel in KERNELS), gpu_key)] + \
        ([(counted, NCU_GPU)] if counted else [])


def page_traces(case: Case, gpu_key: str) -> dict[str, KernelTrace]:
    """The planner's kernel and the row walk for the case on the GPU, by KERNELS' names."""
    return dict(zip(KERNELS, traces(tuple((case, kernel) for kernel in KERNELS), gpu_key)))


@st.cache_data(show_spinner=False, max_entries=64)
def planned(case: Case, gpu_key: str, gpu) -> object:
    """The planner's view of the case on `gpu`, its compiles answered from the GPU's device record where it has
    them (so the reason's registers are those of the recorded runs' toolchain, as on the other pages)."""
    from explorer_ui import data

    with data.recorded_first(gpu_key):
        return planner_view(case.shape, case_strides(case).strides, case.dim, case.dtype, gpu, case.direction)


def first_row(case: Case, limit: int = 16) -> list[int]:
    """Storage offsets (elements) of the first reduced row's first `limit` elements."""
    layout = case_strides(case)
    start = layout.storage_offset
    step = layout.strides[case.dim]
    return [start + r * step for r in range(min(limit, case.shape[case.dim]))]


def requests_of(kt: KernelTrace) -> list[tuple[int, int]]:
    """(load index, request index) of every request of the trace, in issue order, at most MAX_STEPS."""
    out = []
    for i, load in enumerate(kt.loads):
        if load.requests is None:
            continue
        out += [(i, k) for k in range(load.requests.n_requests)]
    return out[:MAX_STEPS]


LANE_COLUMNS = ["lane", "vector", "address", "sector", "line", "sector_rank", "byte_in_sector"]


def lane_frame(kt: KernelTrace | None, load: int = 0, request: int = 0) -> pd.DataFrame:
    """One request lane by lane: lane, its element's byte address (from the storage's start), the sector and
    line it falls in, the sector's rank in the request (0 = the lowest address) and the byte within it.
    No trace: an empty frame of those columns."""
    if kt is None:
        return pd.DataFrame({c: pd.Series(dtype="int64") for c in LANE_COLUMNS})
    addr = kt.loads[load].requests.addresses[request]
    lanes, vectors = np.nonzero(addr >= 0)
    a = addr[lanes, vectors].astype(np.int64)
    frame = pd.DataFrame({"lane": lanes, "vector": vectors, "address": a, "sector": a // tx.SECTOR_BYTES,
                          "line": a // tx.LINE_BYTES})
    frame["sector_rank"] = frame.sector.rank(method="dense").astype("int64") - 1
    frame["byte_in_sector"] = frame.address % tx.SECTOR_BYTES
    return frame[LANE_COLUMNS]


def most_sectors(*traces: KernelTrace) -> int:
    """The most sectors one request of these traces touches (the picture's fixed height)."""
    return max([int(l.requests.sectors.max()) for kt in traces for l in kt.loads
                if l.requests is not None and l.requests.n_requests] or [1])


@dataclass(frozen=True)
class Ratio:
    case: str                    # the models-sweep case it was read from
    shape: str
    dtype: str
    direction: str
    median: float
    low: float                   # copy's p20 over the softmax's p80 (the slowest honest reading)
    high: float
    runs: int                    # recorded runs of that case
    run_low: float               # the medians' range over those runs
    run_high: float


def nearest_rows_case(frame: pd.DataFrame, n_reduce: int) -> str | None:
    rows = frame[(frame.layout == "contiguous") & (frame.dim.astype(int) == -1)]
    if rows.empty:
        return None
    distance = (np.log(rows.N.astype(float)) - math.log(max(n_reduce, 1))).abs()
    return str(rows.loc[distance.idxmin(), "case"])


@st.cache_data(show_spinner=False)
def _models_frames() -> list[pd.DataFrame]:
    from softmax_bench.models import load_models_runs

    return [run.frame for run in load_models_runs()]


def recorded_ratio(klass: str, n_reduce: int, direction: str, frames: list[pd.DataFrame] | None = None) -> Ratio | None:
    """The tuned softmax's ratio to copy, recorded on the H200 by the models sweep, for the case standing for
    this layout class (the nearest row length for rows), with its spread: within the latest run (p20-p80) and
    over every run of that case."""
    frames = _models_frames() if frames is None else frames
    if not frames:
        return None
    latest = frames[-1]
    name = CLASS_CASES.get(klass) or nearest_rows_case(latest, n_reduce)
    medians = []
    chosen = None
    for frame in frames:
        mine = frame[(frame.case == name) & (frame.direction == direction) & (frame.status == "ok")]
        tuned, copy = mine[mine.provider == "tuned"], mine[mine.provider == "copy"]
        if tuned.empty or copy.empty:
            continue
        t, c = tuned.iloc[0], copy.iloc[0]
        medians.append(c.ms_median / t.ms_median)
        chosen = (t, c)
    if chosen is None:
        return None
    t, c = chosen
    return Ratio(name, str(t["shape"]), str(t["dtype"]), direction, c.ms_median / t.ms_median,
                 c.ms_p20 / t.ms_p80, c.ms_p80 / t.ms_p20, len(medians), min(medians), max(medians))


# The class sweep's names for the classes (bench_tools/class_sweep.py draws shapes of each): rows split by length.
SHORT_ROWS, MID_ROWS = 255, 16384       # the sweep's upper bounds of short and mid rows
WIDE_INNER = 64                          # a strided dim's inner run from which the sweep calls it wide


def sweep_class(klass: str, n_reduce: int, n_inner: int) -> str:
    if klass == "rows":
        return "short_rows" if n_reduce <= SHORT_ROWS else "mid_rows" if n_reduce <= MID_ROWS else "long_rows"
    if klass == "strided":
        return "dim_inner_wide" if n_inner >= WIDE_INNER else "dim_inner_narrow"
    return "transposed"


@dataclass(frozen=True)
class ClassRatio:
    sweep_class: str
    direction: str
    median: float                # of the latest run's shapes in the class, tuned over copy
    low: float                   # the lowest and highest of those shapes
    high: float
    shapes: int
    runs: int                    # recorded runs with shapes of this class
    run_low: float               # the runs' medians, lowest and highest
    run_high: float
    record: str                  # the latest run's file


@st.cache_data(show_spinner=False)
def class_frames() -> list[tuple[str, pd.DataFrame]]:
    """(CSV name, frame) of each recorded class sweep, oldest first (load_class_runs), so the last is the latest."""
    from softmax_bench.records import load_class_runs

    return [(run.provenance["csv"], run.frame) for run in load_class_runs()]


def class_ratio(key: str, direction: str, frames: list[tuple[str, pd.DataFrame]] | None = None) -> ClassRatio | None:
    """The tuned softmax over copy for every recorded shape of the class sweep's class `key` (H200 records in
    assets/benchmarks/classes/): the latest run's median and range over its shapes, and the spread of the runs."""
    frames = class_frames() if frames is None else frames
    found = []
    for name, frame in frames:
        mine = frame[(frame["class"] == key) & (frame.direction == direction) & (frame.status == "ok")]
        times = mine.pivot_table(index="case", columns="provider", values="ms_median")
        if "tuned" not in times or "copy" not in times:
            continue
        ratios = (times["copy"] / times["tuned"]).dropna()
        if len(ratios):
            found.append((name, ratios))
    if not found:
        return None
    name, latest = found[-1]
    medians = [float(r.median()) for _, r in found]
    return ClassRatio(key, direction, float(latest.median()), float(latest.min()), float(latest.max()), len(latest),
                      len(found), min(medians), max(medians), name)


@st.cache_data(show_spinner=False)
def ncu() -> NcuRecord | None:
    return read_record()


def ncu_rows(record: NcuRecord) -> list[dict]:
    """Each counted launch beside the page's own figure for the same case (program 0, planned for and compiled
    for the H200 it was counted on), and both launches' (programs, threads per program)."""
    out = []
    cases = tuple((Case(launch.shape, launch.dtype, launch.dim, launch.view), launch.kernel) for launch in record.launches)
    for launch, kt in zip(record.launches, traces(cases, NCU_GPU)):
        mine = (math.prod(kt.launch.grid), kt.launch.num_warps * data_gpu(NCU_GPU).warp_size)
        out.append({"name": launch.name, "kernel": launch.kernel_name, "page": kt.totals.sectors_per_request,
                    "page_launch": mine, "ncu_launch": launch.launch_shape,
                    "ncu": launch.sectors_per_request, "page_used": kt.totals.used_fraction,
                    "ncu_sectors": launch.sectors, "ncu_requests": launch.requests})
    return out


AGREEMENTS = ("same", "differs", "other_launch")
SAME_WITHIN = 0.01          # sectors per request: the page's figure and ncu's are "the same" this close


def agreement(row: dict) -> str:
    """"other_launch" when the planner's launch now is not the one counted (other programs or threads per
    program: the planner changed since the record), else "same" when the page's sectors per request is ncu's
    (within SAME_WITHIN), else "differs"."""
    if row.get("page_launch") is not None and row.get("ncu_launch") is not None \
            and tuple(row["page_launch"]) != tuple(row["ncu_launch"]):
        return "other_launch"
    page, counted = row["page"], row["ncu"]
    return "same" if page is not None and counted is not None and abs(page - counted) <= SAME_WITHIN else "differs"


def data_gpu(key: str):
    from explorer_ui import data

    return data.gpu_by_key(key)


def check_case(shape_text: str, dtype: str, dim: int, view: str, direction: str) -> Case:
    """The page's inputs as a case; ValueError with a code (`args[0]`) and figures for bad input."""
    from softmax_core.plans.shapes import ShapeError, parse_shape

    try:
        shape = parse_shape(shape_text)
    except ShapeError as err:
        # `text` is i18n.t's own first parameter: the figure goes by `value`
        figures = {("value" if k == "text" else k): v for k, v in err.figures.items()}
        raise ValueError(f"shape_{err.code}", figures) from None
    if not -len(shape) <= dim < len(shape):
        raise ValueError("dim_out_of_range", {"dim": dim, "n": len(shape)})
    if view == "transposed" and len(shape) < 2:
        raise ValueError("transposed_needs_two_dims", {})
    case = Case(shape, dtype, dim % len(shape), view, direction)
    if case_strides(case).storage_elements * dtypes.element_size(dtype) > MAX_ELEMENTS * 4:
        raise ValueError("too_big", {"limit": f"{MAX_ELEMENTS * 4 / 1e9:.1f} GB"})
    return case


VIEW_NAMES = VIEWS
