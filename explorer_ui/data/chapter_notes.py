"""Cached calls for the chapter-notes page (softmax_teaching.chapter_notes: compiles, interpreter runs, one test).

Arguments are plain keys (a GPU's catalog key, a dtype's name) so that the caches hash cheaply; the
results are frozen dataclasses from softmax_core. Nothing here computes: it only remembers.
"""
from __future__ import annotations

import streamlit as st

from softmax_teaching import chapter_notes as sc_chapter
from softmax_core.hardware import dtypes, runtime

from .kernels import gpu_by_key, kernel_asm, resources_of


@st.cache_data(show_spinner=False, max_entries=64)
def offline_resources(n_cols: int, dtype: str, gpu_key: str) -> sc_chapter.ResourceReport:
    return sc_chapter.offline_resources(n_cols, dtypes.torch_dtype(dtype), gpu_by_key(gpu_key))


@st.cache_data(show_spinner=False, max_entries=64)
def warmup_resources(n_rows: int, n_cols: int, dtype: str) -> sc_chapter.ResourceReport | None:
    """The chapter's own warmup on this machine's GPU, or None without one."""
    if runtime.INTERPRETED:
        return None
    return sc_chapter.warmup_resources(n_rows, n_cols, dtypes.torch_dtype(dtype))


@st.cache_data(show_spinner=False, max_entries=8)
def stride_cases(n_rows: int, n_cols: int) -> tuple[sc_chapter.StrideCase, ...]:
    return sc_chapter.stride_cases(n_rows, n_cols)


@st.cache_data(show_spinner=False, max_entries=64)
def stages_cost(n_cols: int, dtype: str, gpu_key: str) -> tuple[sc_chapter.StageCost, ...]:
    return sc_chapter.stages_cost(n_cols, dtypes.torch_dtype(dtype), gpu_by_key(gpu_key),
                                  resources_of=resources_of(gpu_key))


@st.cache_data(show_spinner=False, max_entries=16)
def warps_table(block_sizes: tuple[int, ...], dtype: str, gpu_key: str) -> list[dict]:
    """The num_warps rule for each BLOCK_SIZE, with the registers the compiled kernel then needs."""
    return [{"block_size": c.rule.block_size, "num_warps": c.rule.num_warps, "threads": c.rule.threads,
             "values_per_thread": c.rule.values_per_thread, "n_regs": c.n_regs, "n_spills": c.n_spills}
            for c in sc_chapter.num_warps_cost(block_sizes, dtypes.torch_dtype(dtype), gpu_by_key(gpu_key),
                                               resources_of(gpu_key))]


@st.cache_data(show_spinner=False, max_entries=4)
def chapter_unit_test(n_rows: int, n_cols: int) -> sc_chapter.UnitTestResult:
    return sc_chapter.chapter_unit_test((n_rows, n_cols))


@st.cache_data(show_spinner=False, max_entries=4)
def exp_error() -> sc_chapter.ExpError:
    return sc_chapter.exp_error()


@st.cache_data(show_spinner=False, max_entries=2)
def grid_quirk() -> sc_chapter.GridQuirk:
    return sc_chapter.grid_quirk()


def exp_ptx(block_size: int, num_warps: int, num_stages: int, dtype: str, gpu_key: str) -> sc_chapter.ExpPtx:
    """The exponential's PTX instructions in the compiled tutorial kernel (NVIDIA targets only)."""
    asm = kernel_asm(block_size, num_warps, num_stages, dtype, gpu_key)
    return sc_chapter.exp_instructions(asm.get("ptx", ""))
