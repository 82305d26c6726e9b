"""The benchmark harness: check every provider's answer, then time it, one benchmark at a time.

`run_sweep` walks N for one M and dtype; for every (N, direction, provider) it first checks the answer
against torch in float32, then times it. A provider that raises or is wrong is recorded as "failed" with
its reason: the tutorial kernel's OutOfResources at long rows is a result worth showing, not a crash.
Statuses: "ok" (checked, then timed), "failed" (raised or wrong; `reason` says which), "skipped" (the
provider has no such pass, or cannot run on this machine; `reason` says why). A `reason` is a
providers.NotTimed code with its figures (a Coded; None for an ok row).

Bytes are always `memory.bytes_moved` (forward reads x, writes y; backward reads y and dy, writes dx), so
GB/s here is the same number the memory page predicts with. The clocks are softmax_bench.timers.
"""
from __future__ import annotations

import contextlib
import functools
import sys
import threading
from dataclasses import dataclass
from typing import Callable, Iterator, Sequence

import pandas as pd
import torch

from softmax_core.hardware import dtypes, runtime
from softmax_core.traffic import PASS_TENSORS, bytes_moved
from softmax_bench.providers import NotTimed, Provider, get_provider, not_timed_by
from softmax_bench.records import COLUMNS, BenchmarkRun, provenance
from softmax_bench.timers import NO_TIMING, Timer, Timing, default_timer, preparing_for, timer_figures, timer_kind
from softmax_core.words import Coded

# The tutorial's sweep: one M, N = 256 ... 12672 in steps of 128, float32, forward.
TUTORIAL_SWEEP_M = 4096
TUTORIAL_SWEEP_N = [128 * i for i in range(2, 100)]

# The project's record sweep. Powers of two so BLOCK_SIZE = N and nothing is padded,
# plus 781, the tutorial's odd width where masking matters. 256-1024 is launch-bound territory; 2048-16384 is
# where a whole row fits one program; from 32768 (fp32) the tutorial kernel runs out of shared memory and long
# rows need tiles; 262144 is the longest row swept (4096 x 262144 fp32 = 4 GiB per tensor).
FULL_SWEEP_M = 4096
FULL_SWEEP_N = [256, 512, 781, 1024, 2048, 4096, 8192, 16384, 32768, 65536, 131072, 262144]
FULL_SWEEP_DTYPES = ["float32", "bfloat16"]


# -------------------------------------------------------------------------------------- one GPU at a time

# Streamlit runs every browser session in one process. Two benchmarks at once would share the GPU and
# each would report half the truth, so sweeps take this lock; a re-entrant one, so a caller that already
# holds it (a page wrapping several sweeps) does not deadlock itself.
_BENCH_LOCK = threading.RLock()


@contextlib.contextmanager
def exclusive_gpu(on_wait: Callable[[], None] | None = None) -> Iterator[None]:
    """Hold the benchmark lock; if another sweep holds it, call `on_wait()` once, then wait for it."""
    if not _BENCH_LOCK.acquire(blocking=False):
        if on_wait is not None:
            on_wait()
        _BENCH_LOCK.acquire()
    try:
        yield
    finally:
        _BENCH_LOCK.release()


@contextlib.contextmanager
def compile_limits(limit: int = 256) -> Iterator[None]:
    """Let dynamo keep one specialised graph per size; past its default of 8 it would silently fall back
    to eager torch and we would be timing the wrong thing. Where torch can, hitting the limit is an error."""
    config = torch._dynamo.config
    wanted = {"recompile_limit": limit, "cache_size_limit": limit, "fail_on_recompile_limit_hit": True}
    with config.patch(**{key: value for key, value in wanted.items() if hasattr(config, key)}):
        yield


# -------------------------------------------------------------------------------------------- measuring

@dataclass(frozen=True)
class Inputs:
    x: torch.Tensor
    dy: torch.Tensor | None
    y_ref: torch.Tensor                       # float32 answers from torch, what every provider is checked against
    dx_ref: torch.Tensor | None


def make_inputs(M: int, N: int, dtype: torch.dtype, backward: bool, seed: int) -> Inputs:
    """Random x (and dy when `backward`) of one shape, with torch's float32 answers that `measure` checks
    every provider against; the same (N, seed) gives the same inputs."""
    device = runtime.kernel_device()
    gen = torch.Generator(device=device).manual_seed(seed * 1_000_003 + N)
    x = torch.randn(M, N, device=device, dtype=dtype, generator=gen)
    dy = torch.randn(M, N, device=device, dtype=dtype, generator=gen) if backward else None
    leaf = x.detach().float().requires_grad_()
    y_ref = torch.softmax(leaf, dim=-1)
    dx_ref = torch.autograd.grad(y_ref, leaf, dy.float())[0] if backward else None
    return Inputs(x, dy, y_ref.detach(), dx_ref)


def sweep_bytes(M: int, Ns: Sequence[int], dtype: torch.dtype | str, directions: Sequence[str]) -> int:
    """Device memory a sweep holds at its largest N, at the least: what `make_inputs` keeps (x, and for the
    backward dy, in the dtype; the float32 copy of x, its softmax and, for the backward, its gradient) and one
    call's result (y, and dx for the backward). Providers' own temporaries come on top of it."""
    size = dtypes.of(dtype, dtypes.TUTORIAL_DTYPES).size
    backward = "backward" in directions
    per_element = 2 * size + 2 * 4 + ((2 * size + 4) if backward else 0)
    return M * max(Ns) * per_element


def mismatch(out: object, ref: torch.Tensor, dtype: torch.dtype) -> Coded | None:
    """None if `out` is the softmax (or its gradient) `ref` within the dtype's tolerance, else why not."""
    if not isinstance(out, torch.Tensor):
        return Coded.of(NotTimed.NOT_A_TENSOR, returned=type(out).__name__)
    if out.shape != ref.shape or out.dtype != dtype:
        return Coded.of(NotTimed.WRONG_OUTPUT, shape=str(tuple(out.shape)), dtype=dtypes.name_of_any(out.dtype),
                        expected_shape=str(tuple(ref.shape)), expected_dtype=dtypes.name_of_any(dtype))
    error = (out.float() - ref).abs().max().item()       # NaN anywhere makes this NaN, which fails below
    scale = ref.abs().max().item()
    tolerance = dtypes.of(dtype).tolerance
    if not error <= tolerance * scale:
        return Coded.of(NotTimed.WRONG_RESULT, error=error / scale, tolerance=tolerance)
    return None


def gbps(nbytes: int, ms: float) -> float:
    """Bytes per millisecond, as GB/s (1 GB = 1e9 bytes)."""
    return nbytes * 1e-9 / (ms * 1e-3)


def _row(p: Provider, direction: str, dtype: str, M: int, N: int, status: str, reason: Coded | None = None,
         timing: Timing | None = None, element_bytes: int = 0) -> dict:
    t = timing or NO_TIMING
    nbytes = bytes_moved(M, N, element_bytes, direction)
    return dict(provider=p.name, direction=direction, dtype=dtype, M=M, N=N, ms_p20=t.p20, ms_median=t.median,
                ms_p80=t.p80, ms_min=t.min, ms_max=t.max,
                gbps=gbps(nbytes, t.median) if timing is not None else float("nan"),
                copy_ratio=float("nan"), status=status, reason=reason)


def measure(p: Provider, direction: str, inputs: Inputs, timer: Timer) -> dict:
    """Check, then time, one provider at one size and direction. Never raises for the provider's faults."""
    x = inputs.x
    M, N = x.shape
    row = functools.partial(_row, p, direction, dtypes.name(x.dtype), M, N, element_bytes=x.element_size())
    can_run, why_not = p.available()
    if not can_run:
        return row("skipped", why_not)
    if direction == "backward" and p.backward is None:
        return row("skipped", Coded.of(NotTimed.NO_BACKWARD))
    try:
        with preparing_for(timer):
            if direction == "forward":
                call, expected = functools.partial(p.forward, x), inputs.y_ref
            else:
                call, expected = p.backward(x, inputs.dy), inputs.dx_ref
            problem = None if p.roofline else mismatch(call(), expected, x.dtype)  # first call: compiles, checks
            if problem:
                return row("failed", problem)
            timing = timer(call)
    except Exception as err:  # OutOfResources, KernelDoesNotFit, out of memory, ...: a failure is data
        return row("failed", not_timed_by(err))
    return row("ok", timing=timing)


def with_copy_ratio(rows: list[dict]) -> list[dict]:
    """Each ok row's GB/s over the copy roofline's at the same N and direction, from the same run."""
    copy = {(r["direction"], r["N"]): r["gbps"] for r in rows if r["provider"] == "copy" and r["status"] == "ok"}
    out = []
    for r in rows:
        roof = copy.get((r["direction"], r["N"]))
        ratio = r["gbps"] / roof if r["status"] == "ok" and roof else float("nan")
        out.append({**r, "copy_ratio": ratio})
    return out


def run_sweep(M: int, Ns: Sequence[int], dtype: torch.dtype | str, providers: Sequence[str],
              directions: Sequence[str] = ("forward", "backward"), timer: Timer | None = None,
              progress: Callable[[int, int, str], None] | None = None,
              on_wait: Callable[[], None] | None = None, command: str | None = None, seed: int = 0) -> BenchmarkRun:
    """Check and time every provider at every N and direction; one benchmark at a time per process."""
    dtype = dtypes.of(dtype, dtypes.TUTORIAL_DTYPES).torch
    if not isinstance(M, int) or M < 1 or not Ns or any(not isinstance(n, int) or n < 1 for n in Ns):
        raise ValueError(f"M and every N must be positive integers, got M={M!r}, Ns={list(Ns)!r}")
    if unknown := [d for d in directions if d not in PASS_TENSORS]:
        raise ValueError(f"unknown direction(s) {unknown}; known: {', '.join(PASS_TENSORS)}")
    chosen = [get_provider(name) for name in dict.fromkeys(providers)]  # each provider once, in the given order
    timer = timer or default_timer()
    total, done, rows = len(Ns) * len(directions) * len(chosen), 0, []
    compiling = compile_limits() if "torch_compile" in providers else contextlib.nullcontext()
    with exclusive_gpu(on_wait), compiling:
        if progress:
            progress(0, total, "starting")
        for N in Ns:
            inputs = make_inputs(M, N, dtype, "backward" in directions, seed)
            for direction in directions:
                for p in chosen:
                    rows.append(measure(p, direction, inputs, timer))
                    done += 1
                    if progress:
                        progress(done, total, f"{p.name} {direction} N={N}")
            del inputs
            if not runtime.INTERPRETED:
                torch.cuda.empty_cache()  # the next size may be 4x larger; give back this one's blocks
    frame = pd.DataFrame(with_copy_ratio(rows), columns=COLUMNS)
    info = provenance(M, Ns, dtypes.name(dtype), [p.name for p in chosen], directions, timer_kind(timer),
                      timer_figures(timer), command if command is not None else " ".join(sys.argv), seed)
    return BenchmarkRun(frame, info)
