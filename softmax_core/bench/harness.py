"""The benchmark harness: check every provider's answer, then time it, one benchmark at a time.

`run_sweep` walks N for one M and dtype; for every (N, direction, provider) it first checks the answer
against torch in float32, then times it. A provider that raises or is wrong is recorded as "failed" with
its reason: the tutorial kernel's OutOfResources at long rows is a result worth showing, not a crash.
Statuses: "ok" (checked, then timed), "failed" (raised or wrong; `reason` says which), "skipped" (the
provider has no such pass, or cannot run on this machine; `reason` says why). A `reason` is a
providers.NotTimed code with its figures (a Coded; None for an ok row).

Bytes are always `memory.bytes_moved` (forward reads x, writes y; backward reads y and dy, writes dx), so
GB/s here is the same number the memory page predicts with. On a GPU the clock is
`triton.testing.do_bench` (each call launched from Python, L2 flushed before every call), or, asked for,
`triton.testing.do_bench_cudagraph`'s method (the calls replayed from a CUDA graph: no CPU launch cost, L2
not flushed; see CudaGraphTimer); on a CPU a wall clock, good for comparing naive and torch on this machine, never for comparing
with a GPU.
"""
from __future__ import annotations

import contextlib
import functools
import gc
import statistics
import sys
import threading
import time
from dataclasses import dataclass
from typing import Callable, ClassVar, Iterator, Sequence

import pandas as pd
import torch

from softmax_core.hardware import dtypes, runtime
from softmax_core.teaching.memory import PASS_TENSORS, bytes_moved
from softmax_core.bench.providers import CodedError, NotTimed, Provider, get_provider, not_timed_by, one_line
from softmax_core.bench.records import (COLUMNS, CUDAGRAPH, DO_BENCH, DO_BENCH_CUDAGRAPH, EAGER, WALL_CLOCK, BenchmarkRun,
                      provenance)
from softmax_core.words import Coded, describe

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


# ------------------------------------------------------------------------------------------------- timers

@dataclass(frozen=True)
class Timing:
    """Milliseconds per call over a measurement's samples."""
    p20: float
    median: float
    p80: float
    min: float
    max: float


Timer = Callable[[Callable[[], object]], Timing]
NO_TIMING = Timing(*(float("nan"),) * 5)


QUANTILES = [0.2, 0.5, 0.8, 0.0, 1.0]     # Timing's fields, in order, as quantiles of the samples


@dataclass(frozen=True)
class DoBenchTimer:
    """Triton's GPU timer: CUDA events around each call, L2 flushed before each, quantiles of the samples."""
    warmup_ms: int = 10
    rep_ms: int = 40
    kind: ClassVar[str] = DO_BENCH

    @property
    def figures(self) -> dict:
        return {"warmup_ms": self.warmup_ms, "rep_ms": self.rep_ms}

    def __call__(self, fn: Callable[[], object]) -> Timing:
        import triton.testing
        return Timing(*triton.testing.do_bench(fn, warmup=self.warmup_ms, rep=self.rep_ms, quantiles=QUANTILES))


class GraphCaptureError(CodedError):
    """A provider's call could not be captured in (or replayed from) a CUDA graph (NotTimed.GRAPH_CAPTURE or
    GRAPH_BROKEN, with the errors' first lines)."""


@dataclass(frozen=True)
class CudaGraphTimer:
    """Triton's CUDA-graph method (triton.testing.do_bench_cudagraph): the calls are captured once in a CUDA
    graph and replayed, so what is timed is the GPU's work alone, without the CPU's cost of launching each
    call from Python. 10 samples, each the mean over one replay of as many calls as fill `rep_ms`.

    Unlike do_bench, nothing flushes L2 between the calls: a matrix small enough to fit in L2 is read from
    L2, not from DRAM, after the first call. The copy roofline of the same run is timed the same way, so a
    provider's ratio to copy still compares like with like; its GB/s beside an eager run's does not.

    The steps are do_bench_cudagraph's, but the capture runs on the stream that is current when the timer is
    called (measure() prepares each call on `capture_stream()`), where do_bench_cudagraph captures on a stream
    of its own. The difference matters for a backward: autograd runs each backward kernel on the stream its
    forward ran on, so a backward whose forward ran anywhere else would make that stream wait on the capture,
    which CUDA refuses ("operation would make the legacy stream depend on a capturing blocking stream";
    tuning/h200-graph-backward-capture-failures-20261130.csv records every backward failing so when timed by
    do_bench_cudagraph itself)."""
    rep_ms: int = 40
    kind: ClassVar[str] = DO_BENCH_CUDAGRAPH

    @property
    def figures(self) -> dict:
        return {"rep_ms": self.rep_ms}

    def __call__(self, fn: Callable[[], object]) -> Timing:
        with _capture_guard():
            return timing_of(_graph_samples(fn, self.rep_ms))


_CAPTURE_STREAMS: dict = {}


def capture_stream() -> torch.cuda.Stream:
    """The side stream (one per device) on which graph-timed calls are prepared and captured: a capture
    cannot run on the default stream."""
    device = torch.cuda.current_device()
    if device not in _CAPTURE_STREAMS:
        _CAPTURE_STREAMS[device] = torch.cuda.Stream(device)
    return _CAPTURE_STREAMS[device]


def _graph_samples(fn: Callable[[], object], rep_ms: float, n_samples: int = 10) -> list[float]:
    """do_bench_cudagraph's steps on the current stream: a warm-up call, an estimate from 5 calls, a graph of
    as many calls as fill rep_ms, then n_samples replays, each giving milliseconds per call."""
    fn()
    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    start.record()
    for _ in range(5):
        fn()
    end.record()
    torch.cuda.synchronize()
    estimate_ms = start.elapsed_time(end) / 5
    n_repeat = max(1, int(rep_ms / estimate_ms)) if estimate_ms > 0 else 1000
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph, stream=torch.cuda.current_stream()):
        for _ in range(n_repeat):
            fn()
    torch.cuda.synchronize()
    samples = []
    for _ in range(n_samples):
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        graph.replay()
        end.record()
        torch.cuda.synchronize()
        samples.append(start.elapsed_time(end) / n_repeat)
    del graph
    return samples


@contextlib.contextmanager
def _preparing_for(timer: Timer) -> Iterator[None]:
    """Where measure() prepares, checks and times a call: on the capture stream for the graph timer (after
    the inputs, made on the default stream, are ready), as it is otherwise."""
    if not isinstance(timer, CudaGraphTimer) or not torch.cuda.is_available():
        yield
        return
    stream = capture_stream()
    stream.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(stream):
        yield
    torch.cuda.current_stream().wait_stream(stream)


@contextlib.contextmanager
def _capture_guard() -> Iterator[None]:
    """Run a CUDA-graph capture so that, if it fails, the next provider finds CUDA as it was.

    What a failed capture can leave behind, and what is done about each:
    - the wrong current stream: torch.cuda.graph's __exit__ ends the capture first and restores the stream
      after; when ending the capture raises (it does, once the capture was invalidated), the capture
      stream stays current. The stream current before is put back.
    - a stale CUDA error: a call that is illegal during capture (a synchronisation, a copy to the host to
      read a value) records an error that the next error check, in whatever code runs next, could report
      as its own. One small kernel and a synchronize run here, inside this guard, so such an error surfaces
      (and is cleared) now; if they fail twice the context itself is broken, which the reason then says.
    - Python's garbage collector: it may finalize a Triton kernel object during the capture, and unloading
      its module is illegal while capturing (torch.cuda.graph never switches the collector off; some
      versions collect once before capturing). It is switched off here, and back on after.
    The failed graph itself (and its memory pool) goes with the exception's frames when measure() drops it."""
    cuda = torch.cuda.is_available()
    stream = torch.cuda.current_stream() if cuda else None
    collecting = gc.isenabled()
    gc.disable()
    try:
        yield
    except Exception as err:
        if cuda and torch.cuda.current_stream() != stream:
            torch.cuda.set_stream(stream)
        raise GraphCaptureError(_capture_failure(err, check_cuda=cuda)) from err
    finally:
        if collecting:
            gc.enable()


def _capture_failure(err: Exception, check_cuda: bool = True) -> Coded:
    """Why a capture failed, after checking that CUDA still works for the next provider."""
    # When ending an invalidated capture raises, the error that invalidated it is the one being handled then.
    first = err.__context__ if isinstance(err.__context__, Exception) else None
    why = one_line(first) + "; then " + one_line(err) if first is not None else one_line(err)
    for attempt in range(2 if check_cuda else 0):
        try:
            torch.ones(1, device=torch.cuda.current_device()).add_(1)
            torch.cuda.synchronize()
            break
        except Exception as stale:
            if attempt:
                return Coded.of(NotTimed.GRAPH_BROKEN, message=f"{one_line(stale)}; capture failed: {why}")
    return Coded.of(NotTimed.GRAPH_CAPTURE, error=type(first or err).__name__, message=why)


@dataclass(frozen=True)
class WallClockTimer:
    """A CPU timer: time.perf_counter around each call, after warm-up calls, within a time budget."""
    warmup: int = 2
    max_repeats: int = 30
    budget_s: float = 1.0
    kind: ClassVar[str] = WALL_CLOCK

    @property
    def figures(self) -> dict:
        return {"warmup": self.warmup, "max_repeats": self.max_repeats, "budget_s": self.budget_s}

    def __call__(self, fn: Callable[[], object]) -> Timing:
        # GPU work is asynchronous: without a sync the clock would stop when the launch returns, not the kernel.
        sync = (lambda: None) if runtime.INTERPRETED else torch.cuda.synchronize
        for _ in range(self.warmup):
            fn()
        samples: list[float] = []
        deadline = time.perf_counter() + self.budget_s
        while len(samples) < 3 or (len(samples) < self.max_repeats and time.perf_counter() < deadline):
            sync()
            start = time.perf_counter()
            fn()
            sync()
            samples.append((time.perf_counter() - start) * 1e3)
        return timing_of(samples)


def timing_of(samples: Sequence[float]) -> Timing:
    """Percentiles interpolated between samples, as torch.quantile (do_bench's) does."""
    p20, _, _, p80 = statistics.quantiles(samples, n=5, method="inclusive")
    return Timing(p20, statistics.median(samples), p80, min(samples), max(samples))


def default_timer() -> Timer:
    return WallClockTimer() if runtime.INTERPRETED else DoBenchTimer()


def timer_kind(timer: Timer) -> str | None:
    """Which clock a timer is, for machines: DO_BENCH, DO_BENCH_CUDAGRAPH, WALL_CLOCK, or None (a stand-in)."""
    return getattr(timer, "kind", None)


def timer_figures(timer: Timer) -> dict:
    """A timer's settings (a stand-in of no Clock: its name)."""
    if timer_kind(timer) is None:
        return {"name": getattr(timer, "__name__", type(timer).__name__)}
    return dict(timer.figures)


def describe_timer(timer: Timer) -> str:
    """The timer in English, for the command line."""
    kind = timer_kind(timer)
    return timer_figures(timer)["name"] if kind is None else describe(kind, timer_figures(timer))


# The command line's --timer choices: eager is today's record (each call launched from Python).
TIMERS: dict[str, Callable[[int], Timer]] = {
    EAGER: lambda rep_ms: DoBenchTimer(warmup_ms=10, rep_ms=rep_ms),
    CUDAGRAPH: lambda rep_ms: CudaGraphTimer(rep_ms=rep_ms),
}


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
        with _preparing_for(timer):
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
