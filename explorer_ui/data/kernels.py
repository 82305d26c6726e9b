"""Cached calls for the GPU and the kernels: the GPUs the pages offer, launch plans (compiles), the
compiled kernel's assembly, and the row traces (the interpreter replaying the kernel)."""
from __future__ import annotations

from contextlib import contextmanager

import streamlit as st

import softmax_core as sc
from softmax_core.hardware import dtypes
from softmax_teaching import tutorial_trace as sc_trace

DTYPE_NAMES = dtypes.TUTORIAL_DTYPES     # the dtypes the pages offer: those the tutorial kernel takes


@st.cache_resource(show_spinner=False)
def live_gpu() -> sc.GpuSpec | None:
    """This machine's GPU as the tutorial reads it (triton's driver), or None. Probed once per server."""
    try:
        return sc.current_gpu(0)
    except Exception:  # a broken driver is reported as "no GPU", not as a crashed page
        return None


def gpu_keys() -> list[str]:
    live = live_gpu()
    return ([live.key] if live else []) + [g.key for g in sc.gpu_catalog()]


def default_gpu_key() -> str:
    return sc.default_gpu().key if live_gpu() is None else live_gpu().key


def gpu_by_key(key: str) -> sc.GpuSpec:
    live = live_gpu()
    if live is not None and key == live.key:
        return live
    return sc.catalog_gpu(key)


def gpu_for_name(name: str) -> sc.GpuSpec | None:
    """The catalog GPU (or this machine's) a recorded run names ("NVIDIA H200"), or None: the same name, else
    the one whose catalog name starts with it ("NVIDIA H200 (SXM)")."""
    gpus = [gpu_by_key(key) for key in gpu_keys()]
    exact = [g for g in gpus if g.name == name]
    starts = [g for g in gpus if g.name.startswith(name + " ")]
    return (exact or starts or [None])[0]


def gpu_labeler():
    """format_func for a GPU selectbox: the GPU's name and whether it is this machine's or the catalog's."""
    from explorer_ui.i18n import bound

    tr = bound()
    return lambda key: f"{gpu_by_key(key).name} ({tr('gpu_live') if gpu_by_key(key).live else tr('gpu_catalog')})"


def recorded_resources(job, gpu_key: str):
    """`job`'s resources as the GPU `gpu_key` gave them with the toolchain of its recorded runs
    (explorer_ui.device_compiles), or None: no record for that GPU or that kernel, or the GPU is this
    machine's own (its driver answers)."""
    from explorer_ui.device_compiles import recorded_resources as from_record

    return None if gpu_by_key(gpu_key).live else from_record(job, gpu_key)


@contextmanager
def recorded_first(gpu_key: str):
    """Within the block every compile a plan asks for is answered from `gpu_key`'s device record where it has
    the kernel (softmax_core.hardware.compile.answered_first), so a tuned plan on the H200 chooses its path from
    the H200's own figures and states them with their toolchain; the local compile answers the rest."""
    from softmax_core.hardware.compile import answered_first

    with answered_first(lambda job: recorded_resources(job, gpu_key)):
        yield


def toolchain_label(gpu_key: str) -> str:
    """Which compiler the pages' figures for `gpu_key` come from: the device record's toolchain, GPU and day
    where there is one, else this machine's offline toolchain for that GPU's architecture."""
    from explorer_ui.device_compiles import record
    from softmax_core.hardware.compile import toolchain

    gpu = gpu_by_key(gpu_key)
    rec = None if gpu.live else record(gpu_key)
    return rec.label if rec else toolchain(tuple(gpu.compile_target))


def resources_of(gpu_key: str):
    """kernel_resources for the pages on `gpu_key`: the recorded compile where there is one, else the local one."""
    from softmax_core.hardware.compile import kernel_resources

    return lambda job, want_asm=False: (None if want_asm else recorded_resources(job, gpu_key)) or \
        kernel_resources(job, want_asm)


@st.cache_data(show_spinner=False, max_entries=512)
def launch_plan(n_rows: int, n_cols: int, dtype: str, gpu_key: str) -> sc.LaunchPlan:
    """The tutorial kernel's plan, with n_regs / shared bytes from the real compiled kernel: on a GPU with a
    device record (the H200), the record's compile (its toolchain is the plan's `toolchain`)."""
    import triton
    from softmax_core.plans.tutorial import tutorial_compile_job, tutorial_num_stages, tutorial_num_warps

    gpu, torch_dtype = gpu_by_key(gpu_key), dtypes.torch_dtype(dtype)
    block = triton.next_power_of_2(n_cols)
    job = tutorial_compile_job(block, tutorial_num_warps(block), tutorial_num_stages(gpu), torch_dtype, gpu)
    return sc.plan_launch(n_rows, n_cols, torch_dtype, gpu, resources=recorded_resources(job, gpu_key))


@st.cache_data(show_spinner=False, max_entries=512)
def local_launch_plan(n_rows: int, n_cols: int, dtype: str, gpu_key: str) -> sc.LaunchPlan:
    """The same plan from this machine's own offline compile (its toolchain), to show beside a recorded one."""
    return sc.plan_launch(n_rows, n_cols, dtypes.torch_dtype(dtype), gpu_by_key(gpu_key))


@st.cache_data(show_spinner=False, max_entries=512)
def what_if_plan(n_rows: int, n_cols: int, dtype: str, gpu_key: str, n_regs: int, shared_bytes: int) -> sc.LaunchPlan:
    """The plan if the kernel needed `n_regs` registers per thread and `shared_bytes` per program."""
    from softmax_core.hardware.compile import KernelResources, RegisterSource

    return sc.plan_launch(n_rows, n_cols, dtypes.torch_dtype(dtype), gpu_by_key(gpu_key),
                          resources=KernelResources(n_regs, 0, shared_bytes, RegisterSource.GIVEN))


@st.cache_data(show_spinner=False, max_entries=128)
def softmax_plan(n_rows: int, n_cols: int, dtype: str, gpu_key: str):
    """The tuned softmax's plan (rows in registers, or tiles for long rows), from the GPU's device record where
    it has one (its figures' toolchain is `plan.resources.toolchain`)."""
    with recorded_first(gpu_key):
        return sc.plan_softmax(n_rows, n_cols, dtypes.torch_dtype(dtype), gpu_by_key(gpu_key))


@st.cache_data(show_spinner=False, max_entries=128)
def local_softmax_plan(n_rows: int, n_cols: int, dtype: str, gpu_key: str):
    """The same plan from this machine's own offline compile (its toolchain), to show beside a recorded one."""
    return sc.plan_softmax(n_rows, n_cols, dtypes.torch_dtype(dtype), gpu_by_key(gpu_key))


@st.cache_data(show_spinner=False, max_entries=1024)
def gpu_comparison(kernel: str, n_rows: int, n_cols: int, dtype: str, gpu_key: str):
    """One catalog GPU's row of softmax_teaching.gpu_compare.compare_gpus (a compile for that GPU, cached)."""
    from softmax_teaching.gpu_compare import compare_gpus

    with recorded_first(gpu_key):
        return compare_gpus(kernel, n_rows, n_cols, dtypes.torch_dtype(dtype), gpus=(gpu_by_key(gpu_key),),
                            recorded=lambda job, gpu: recorded_resources(job, gpu_key))[0]


@st.cache_data(show_spinner=False, max_entries=16)
def kernel_asm(block_size: int, num_warps: int, num_stages: int, dtype: str, gpu_key: str) -> dict:
    """The compiled tutorial kernel's PTX and SASS (NVIDIA) or AMDGCN (AMD) for a plan's specialisation."""
    from softmax_core.hardware.compile import kernel_resources
    from softmax_core.plans.tutorial import tutorial_compile_job

    job = tutorial_compile_job(block_size, num_warps, num_stages, dtypes.torch_dtype(dtype), gpu_by_key(gpu_key))
    return dict(kernel_resources(job, want_asm=True).asm)


@st.cache_data(show_spinner=False, max_entries=64)
def trace(n_rows: int, n_cols: int, *, num_programs: int | None, num_stages: int | None, dtype: str,
          variant: str, seed: int, poisoned_row: int, gpu_key: str, keep_stages: bool) -> sc_trace.Trace:
    """The real kernel, replayed with TRACE on (see softmax_teaching.tutorial_trace)."""
    return sc_trace.trace_rows(n_rows, n_cols, num_programs=num_programs, num_stages=num_stages, dtype=dtype,
                               variant=variant, seed=seed, poisoned_row=poisoned_row,
                               gpu=gpu_by_key(gpu_key), keep_stages=keep_stages)


@st.cache_data(show_spinner=False, max_entries=64)
def store_footprint(n_rows: int, n_cols: int, row: int, store_masked: bool, dtype: str,
                    gpu_key: str) -> sc_trace.StoreFootprint:
    return sc_trace.store_footprint(n_rows, n_cols, row, store_masked=store_masked, dtype=dtype,
                                    gpu=gpu_by_key(gpu_key))


def launch_facts(n_rows: int, n_cols: int, dtype: str, gpu_key: str, num_programs: int | None = None):
    """The facts of the chapter's kernel launched for M x N (softmax_teaching.launch_facts): the GPU's
    programs per SM, limiter, slots, waves, whether any program waits, and the chapter formula's figures apart.
    Every page that states one of them asks here (from the cached plan, so nothing compiles twice)."""
    from softmax_teaching.launch_facts import facts_of_plan

    return facts_of_plan(launch_plan(n_rows, n_cols, dtype, gpu_key), num_programs)
