"""English that the library and the recorded files write, shown in the reader's language.

softmax_core has no UI and no Chinese: it says where a figure came from ("triton.compile for sm_90; cuobjdump
--dump-resource-usage on the cubin"), which backend runs the kernels, why a benchmark provider failed, and
softmax_core/data/gpus.json cites each GPU figure's source in English. In English the pages show those texts as they
are; in 中文 they go through this module: the texts softmax_core builds from a known pattern are recognised
and re-said with locale keys (explorer_ui/locales/zh_complete.*.toml), the catalog's citations by their source
id (gpu_sources.zh.toml: the English lives once, in softmax_core/data/gpus.json). A text no pattern knows stays as it
is, and tests/app/test_chinese_complete.py fails on it in 中文.
"""
from __future__ import annotations

import re
import tomllib
from functools import lru_cache
from pathlib import Path

import softmax_core as sc
from softmax_core.hardware.gpu import catalog_sources

from .i18n import has, language, t

# statuses of a benchmark row that was not timed (softmax_core.bench.harness), each with a bench_status_ key
STATUSES = ("failed", "skipped")

SOURCES_ZH = Path(__file__).resolve().parent / "gpu_sources.zh.toml"


@lru_cache(maxsize=1)
def source_table() -> dict[str, str]:
    """Source id (softmax_core/data/gpus.json `sources`) -> its citation in Chinese."""
    return tomllib.loads(SOURCES_ZH.read_text(encoding="utf-8"))


@lru_cache(maxsize=1)
def _source_ids() -> dict[str, str]:
    return {citation: key for key, citation in catalog_sources().items()}


def source_text(citation: str) -> str:
    """A GPU figure's source as the reader reads it: in 中文 the catalog citation's Chinese (by its source id);
    a live GPU's source (the driver call that reported it) is code and stays as it is."""
    if language() != "zh":
        return citation
    key = _source_ids().get(citation)
    return source_table().get(key, citation) if key else citation


# -- where n_regs and shared memory came from (softmax_core.hardware.compile.compile_for_target's `how`) ---------------
_REFUSED = re.compile(r"; the driver refused to load it \((?P<error>.*)\)$", re.S)
_HOW = (
    (re.compile(r"^compiled and loaded on this GPU; registers reported by the driver$"),
     lambda **v: t("how_loaded", **v)),
    (re.compile(r"^triton\.compile for (?P<target>\S+); \.vgpr_count in the AMDGCN metadata$"),
     lambda **v: t("how_amd", **v)),
    (re.compile(r"^triton\.compile for (?P<target>\S+); cuobjdump --dump-resource-usage on the cubin$"),
     lambda **v: t("how_nvidia", **v)),
)


def how_text(how: str) -> str:
    """`how` (KernelResources.how) in the reader's language."""
    if language() != "zh":
        return how
    refused = _REFUSED.search(how)
    head = how[: refused.start()] if refused else how
    for pattern, say in _HOW:
        match = pattern.match(head)
        if match:
            text = say(**match.groupdict())
            return text + t("how_refused", error=refused["error"]) if refused else text
    return how


def backend_text() -> str:
    """Which backend runs the kernels (softmax_core.hardware.runtime.backend_description), in the reader's language."""
    return provenance_value("device", sc.runtime.backend_description())


# -- the benchmark: provider names, failure reasons, provenance -----------------------------------------------
def provider_text(key: str, recorded: str) -> str:
    """A provider's name: its locale key (bench_provider_<key>) where it has one, else `recorded`."""
    return t(f"bench_provider_{key}") if has(f"bench_provider_{key}") else recorded


_REASONS = (
    (re.compile(r"^(?:the (?:chapter|tutorial)'s kernel has no backward pass|no backward pass)$"),
     lambda **v: t("bench_reason_no_backward", **v)),
    (re.compile(r"^NotDifferentiable: its output has no grad_fn, so autograd has no backward pass to run$"),
     lambda **v: t("bench_reason_no_backward", **v)),
    (re.compile(r"^KernelDoesNotFit: One program needs (?P<shared>[\d,]+) B of shared memory for a row padded to "
                r"(?P<block>[\d,]+) values?, but (?P<gpu>.+?) offers (?P<limit>[\d,]+) B: not even one program fits"),
     lambda **v: t("bench_reason_shared", **v)),
    (re.compile(r"^KernelDoesNotFit: One program needs (?P<regs>[\d,]+) registers? x (?P<threads>[\d,]+) threads?, "
                r"more than the (?P<limit>[\d,]+) registers? of one SM"), lambda **v: t("bench_reason_registers", **v)),
    (re.compile(r"^RuntimeError: Cannot launch Triton kernel since n = (?P<n>\d+) exceeds the recommended Triton "
                r"blocksize = (?P<limit>\d+)\.?$"), lambda **v: t("bench_reason_blocksize", **v)),
    (re.compile(r"^OutOfResources: shared memory"), lambda **v: t("bench_reason_out_of_shared", **v)),
    (re.compile(r"^(?P<package>[\w-]+) is not installed; it is an optional peer \(pip install [\w-]+\)$"),
     lambda **v: t("bench_reason_not_installed", **v)),
    (re.compile(r"^QuACK needs an NVIDIA GPU \(its kernels are written in NVIDIA's CuTe DSL\)$"),
     lambda **v: t("bench_reason_quack_gpu", **v)),
    (re.compile(r"^GraphCaptureError: cannot be timed from a CUDA graph: (?P<error>[A-Z]\w*)"),
     lambda **v: t("bench_reason_graph_capture", **v)),
    (re.compile(r"^GraphCaptureError: CUDA is unusable after a failed graph capture"),
     lambda **v: t("bench_reason_graph_broken", **v)),
)
_ERROR_TYPE = re.compile(r"^(?P<error>[A-Z]\w*(?:Error|Exception|Resources|Fit))\b")


def reason_text(reason: str) -> str:
    """Why a benchmark provider failed (recorded in English), in the reader's language. A reason no pattern
    knows is shown in 中文 as its exception's name, with a pointer to the English page for the message."""
    if language() != "zh" or not isinstance(reason, str) or not reason:
        return reason
    for pattern, say in _REASONS:
        match = pattern.match(reason)
        if match:
            return say(**match.groupdict())
    error = _ERROR_TYPE.match(reason)
    return t("bench_reason_other", error=error["error"] if error else "?")


_TIMER = re.compile(r"^triton\.testing\.do_bench\(warmup=(?P<warmup>\d+), rep=(?P<rep>\d+)\), L2 flushed before "
                    r"every call; median, min, max of the samples$")
_TIMER_QUANTILES = re.compile(r"^triton\.testing\.do_bench\(warmup=(?P<warmup>\d+), rep=(?P<rep>\d+)\), L2 flushed "
                              r"before every call; 20th, 50th and 80th percentiles, min and max of the samples$")
_CUDAGRAPH = re.compile(r"^do_bench_cudagraph's method \(rep=(?P<rep>\d+)\), captured on the stream the call was "
                        r"prepared on: the calls replayed from a CUDA graph, so no CPU launch cost; L2 not flushed "
                        r"between calls \(the copy roofline is timed the same way\); 20th, 50th and 80th percentiles, "
                        r"min and max of 10 samples, each the mean of one replay$")
_WALL_CLOCK = re.compile(r"^wall clock \(time\.perf_counter\), (?P<warmup>\d+) warm-up calls, up to (?P<repeats>\d+) timed "
                         r"calls or (?P<budget>[\d.]+) s; 20th, 50th and 80th percentiles, min and max$")
_BACKEND_GPU = re.compile(r"^GPU: kernels are compiled by Triton for (?P<name>.+)$")
_BACKEND_CPU = re.compile(r"^no GPU: kernels run in Triton's interpreter on the CPU$")
_BYTES = re.compile(r"^forward 2·M·N·element_size \(read x, write y\); backward 3·M·N·element_size "
                    r"\(read y and dy, write dx\)$")


def provenance_value(key: str, value) -> str:
    """One entry of a recorded run's provenance, as the benchmark page's table shows it."""
    if isinstance(value, dict):
        if key == "providers":      # in 中文 the names alone: the ids are the English page's
            if language() == "zh":
                return "、".join(provider_text(k, str(v)) for k, v in value.items())
            return ", ".join(f"{k}: {v}" for k, v in value.items())
        return ", ".join(f"{a}: {b}" for a, b in value.items())
    if isinstance(value, list):
        if language() == "zh" and key == "directions":
            return "、".join(t(f"bench_dir_{v}") if has(f"bench_dir_{v}") else str(v) for v in value)
        return ", ".join(map(str, value))
    text = str(value)
    if language() != "zh":
        return text
    if key == "timer" and text == "wall clock":         # the clock's machine name (softmax_core.bench.WALL_CLOCK)
        return t("bench_prov_kind_wall_clock")
    sayings = ((_TIMER, lambda **v: t("bench_prov_timer", **v)), (_BACKEND_GPU, lambda **v: t("backend_gpu", **v)),
               (_BYTES, lambda **v: t("bench_prov_bytes", **v)),
               (_TIMER_QUANTILES, lambda **v: t("bench_prov_timer_quantiles", **v)),
               (_WALL_CLOCK, lambda **v: t("bench_prov_wall_clock", **v)),
               (_CUDAGRAPH, lambda **v: t("bench_prov_cudagraph", **v)),
               (_BACKEND_CPU, lambda **v: t("backend_interpreter", **v)))
    for pattern, say in sayings:
        match = pattern.match(text)
        if match:
            return say(**match.groupdict())
    return text
