"""Records written before codes (record versions 1 and 2), read in version 3's terms.

Those records kept English where version 3 keeps codes and figures: the backend (`device`), the clock's
description (`timer` in version 1, `timer_description` in 2), the byte count and roofline sentences, the
providers' labels, and every reason a row or provider was not timed. This module recognises each sentence
the library wrote then, exactly as it wrote it, and gives back its code and figures; a reason it does not
recognise becomes NotTimed.RECORDED with the text as recorded. Nothing else reads English.
"""
from __future__ import annotations

import json
import re

from softmax_bench.providers import NotTimed, raised
from softmax_core.hardware.runtime import Backend
from softmax_core.words import Coded

# version 2's sentences for provenance["bytes"] and ["copy"], and the codes (records.Method) they stand for
_METHODS = {
    "forward 2·M·N·element_size (read x, write y); backward 3·M·N·element_size (read y and dy, write dx)":
        "bytes_moved",
    "forward: torch.empty_like(x).copy_(x); backward: torch.add(a, b, out=c), 2 reads + 1 write": "copy_roofline",
}
_GPU_BACKEND = "GPU: kernels are compiled by Triton for "
_CLOCKS = (  # (clock, pattern of its description); numbers become its figures
    ("do_bench_cudagraph", re.compile(r"^(?:triton\.testing\.do_bench_cudagraph\(|do_bench_cudagraph's method \()"
                                      r"rep=(?P<rep_ms>\d+)")),
    ("do_bench", re.compile(r"^triton\.testing\.do_bench\(warmup=(?P<warmup_ms>\d+), rep=(?P<rep_ms>\d+)\)")),
    ("wall clock", re.compile(r"^wall clock(?: \(time\.perf_counter\), (?P<warmup>\d+) warm-up calls, up to "
                              r"(?P<max_repeats>\d+) timed calls or (?P<budget_s>[\d.]+) s)?")),
)
_NUMBER = r"[\d,]+"
_REASONS = (  # (pattern of a recorded reason, its code, the plan code for DOES_NOT_FIT)
    (re.compile(r"^(?:the (?:chapter|tutorial)'s kernel has no backward pass|no backward pass|NotDifferentiable: .*)$"),
     NotTimed.NO_BACKWARD, None),
    (re.compile(rf"^KernelDoesNotFit: One program needs (?P<shared_bytes>{_NUMBER}) B of shared memory for a row "
                rf"padded to (?P<block_size>{_NUMBER}) values?, but (?P<gpu>.+?) offers (?P<max_shared_mem>{_NUMBER}) "
                r"B: not even one program fits"), NotTimed.DOES_NOT_FIT, "tutorial_over_shared_memory"),
    (re.compile(rf"^KernelDoesNotFit: One program needs (?P<n_regs>{_NUMBER}) registers? x (?P<threads>{_NUMBER}) "
                rf"threads?, more than the (?P<max_num_regs>{_NUMBER}) registers? of one SM"),
     NotTimed.DOES_NOT_FIT, "tutorial_over_registers"),
    (re.compile(r"^(?P<package>[\w-]+) is not installed; it is an optional peer \(pip install (?P<pip>[\w-]+)\)$"),
     NotTimed.NOT_INSTALLED, None),
    (re.compile(r"^(?P<package>[\w-]+) is (?:installed but does not import \((?P<error>.*)\)|not importable "
                r"\((?P<error2>.*)\); it is an optional peer)$"), NotTimed.NOT_IMPORTABLE, None),
    (re.compile(r"^(?P<provider>QuACK) needs an NVIDIA GPU \(its kernels are written in NVIDIA's CuTe DSL\)$"),
     NotTimed.NEEDS_NVIDIA, None),
    (re.compile(r"^needs a GPU$"), NotTimed.NEEDS_GPU, None),
    (re.compile(r"^torch\.compile is not supported on this Python$"), NotTimed.NO_TORCH_COMPILE, None),
    (re.compile(r"^wrong result: max \|error\| is (?P<error>[\d.e+-]+|nan) of the largest value \(tolerance "
                r"(?P<tolerance>[\d.e+-]+)\)$"), NotTimed.WRONG_RESULT, None),
    (re.compile(r"^GraphCaptureError: CUDA is unusable after a failed graph capture (?P<message>.*)$"),
     NotTimed.GRAPH_BROKEN, None),
    (re.compile(r"^GraphCaptureError: cannot be timed from a CUDA graph: (?P<message>(?P<error>[A-Z]\w*).*)$"),
     NotTimed.GRAPH_CAPTURE, None),
)
_RAISED = re.compile(r"^(?P<error>[A-Z]\w*(?:Error|Exception|Resources|Fit)): (?P<message>.*)$", re.S)


def _figure(text: str):
    """A recorded number as a number ("1,024" -> 1024, "0.051" -> 0.051); other text as it is."""
    plain = text.replace(",", "")
    for kind in (int, float):
        try:
            return kind(plain)
        except ValueError:
            pass
    return text


def row_reason(text: str) -> Coded | None:
    """A CSV row's `reason`: version 3's JSON, or an older record's English, as a Coded (None: none)."""
    if not text:
        return None
    if text.startswith("{"):
        return Coded.from_json(json.loads(text))
    for pattern, code, plan_code in _REASONS:
        if found := pattern.match(text):
            figures = {name: _figure(value) if name != "gpu" else value
                       for name, value in found.groupdict().items() if value is not None}
            if "error2" in figures:
                figures["error"] = figures.pop("error2")
            if plan_code:
                figures["plan_code"] = plan_code
            return Coded.of(code, **figures)
    if found := _RAISED.match(text):
        return raised(found["error"], found["message"])
    return Coded.of(NotTimed.RECORDED, text=text)


def _clock(description: object) -> tuple[str | None, dict]:
    text = str(description or "")
    for clock, pattern in _CLOCKS:
        if found := pattern.match(text):
            figures = {k: _figure(v) for k, v in found.groupdict().items() if v is not None}
            if clock == "do_bench" and "median, min, max of the samples" in text:
                figures["median_only"] = True
            return clock, figures
    return None, {"name": text} if text else {}


def upgraded(info: dict) -> dict:
    """A provenance of any version in version 3's terms (records' module docstring); version 3 as it is."""
    version = info.get("record_version", 1)
    if version >= 3:
        return info
    info = dict(info)
    description = info.pop("timer", None) if version < 2 else info.pop("timer_description", None)
    clock, figures = _clock(description)
    info["timer"] = clock if version < 2 else info.get("timer") or clock
    info["timer_figures"] = figures
    device = info.pop("device", None)
    if device:
        info["backend"] = (Coded.of(Backend.GPU, name=device.removeprefix(_GPU_BACKEND))
                           if device.startswith(_GPU_BACKEND) else Coded.of(Backend.INTERPRETER)).to_json()
    for key in ("bytes", "copy"):
        if info.get(key) in _METHODS:
            info[key] = _METHODS[info[key]]
    if isinstance(info.get("providers"), dict):
        info["providers"] = list(info["providers"])
    info["unavailable"] = {name: row_reason(why).to_json() for name, why in (info.get("unavailable") or {}).items()
                           if isinstance(why, str) and why}
    info["recorded_as_version"] = version
    info["record_version"] = 3
    return info

