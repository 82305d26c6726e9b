"""Cached calls for the long-rows pages (7 and 8): the tiled and split kernels' traces, the tutorial kernel's
plans up to its cliff, rows in flight against L2, and the tuned softmax's plans over N."""
from __future__ import annotations

import pandas as pd
import streamlit as st

import softmax_core as sc
from softmax_core.hardware import dtypes
from softmax_teaching import long_row_trace as lrt

from explorer_ui import long_row_frames as frames

from .kernels import gpu_by_key, launch_plan, recorded_first


@st.cache_data(show_spinner=False, max_entries=64)
def online_trace(n_cols: int, tile: int, pattern: str, seed: int = 0) -> lrt.OnlineTrace:
    return lrt.trace_online(frames.example_row(n_cols, pattern, seed, tile), tile=tile)


@st.cache_data(show_spinner=False, max_entries=64)
def split_trace(n_cols: int, split: int, pattern: str, seed: int = 0) -> lrt.SplitTrace:
    used, chunk = lrt.split_shape(n_cols, split)
    return lrt.trace_split(frames.example_row(n_cols, pattern, seed, chunk), split=split)


@st.cache_data(show_spinner=False, max_entries=32)
def cliff_plans(gpu_key: str, dtype: str) -> tuple:
    """The tutorial kernel's plan for one row per BLOCK_SIZE, up to the first that does not fit."""
    plans = []
    for block in frames.CLIFF_BLOCKS:
        plan = launch_plan(1, block, dtype, gpu_key)
        plans.append(plan)
        if not plan.fits:
            break
    return tuple(plans)


@st.cache_data(show_spinner=False, max_entries=32)
def exact_edge(gpu_key: str, dtype: str, n: int) -> tuple[bool, bool]:
    """(N - 1 fits, N fits) from the plans at exactly those N: the cliff's two sides."""
    return launch_plan(1, n - 1, dtype, gpu_key).fits, launch_plan(1, n, dtype, gpu_key).fits


@st.cache_data(show_spinner=False, max_entries=32)
def traffic_table(gpu_key: str, dtype: str) -> pd.DataFrame:
    gpu = gpu_by_key(gpu_key)
    with recorded_first(gpu_key):
        return frames.l2_table([lrt.tiled_traffic(frames.MAP_ROWS, n, dtypes.torch_dtype(dtype), gpu)
                                for n in frames.L2_NS])


@st.cache_data(show_spinner=False, max_entries=32)
def path_plans(gpu_key: str, dtype: str) -> tuple:
    """The tuned plan at each N of the path map, from the GPU's device record where it has one."""
    gpu = gpu_by_key(gpu_key)
    with recorded_first(gpu_key):
        return tuple(sc.plan_softmax(frames.MAP_ROWS, n, dtypes.torch_dtype(dtype), gpu) for n in frames.MAP_NS)
