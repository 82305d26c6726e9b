"""The clocks a benchmark is timed with, and how each says what it measures.

On a GPU the clock is `triton.testing.do_bench` (DoBenchTimer: each call launched from Python, L2 flushed
before every call), or, asked for, `triton.testing.do_bench_cudagraph`'s method (CudaGraphTimer: the calls
replayed from a CUDA graph, so no CPU launch cost and L2 not flushed); on a CPU a wall clock (WallClockTimer),
good for comparing naive and torch on this machine, never for comparing with a GPU. A timer takes a call and
answers a Timing (p20, median, p80, min, max over its samples); records store its kind and figures
(timer_kind, timer_figures), and softmax_core.words says them.
"""
from __future__ import annotations

import contextlib
import gc
import statistics
import time
from dataclasses import dataclass
from typing import Callable, ClassVar, Iterator, Sequence

import torch

from softmax_core.hardware import runtime
from softmax_bench.providers import CodedError, NotTimed, one_line
from softmax_bench.records import CUDAGRAPH, DO_BENCH, DO_BENCH_CUDAGRAPH, EAGER, WALL_CLOCK
from softmax_core.words import Coded, describe


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
            return timing_of(graph_samples(fn, self.rep_ms))


_CAPTURE_STREAMS: dict = {}


def capture_stream() -> torch.cuda.Stream:
    """The side stream (one per device) on which graph-timed calls are prepared and captured: a capture
    cannot run on the default stream."""
    device = torch.cuda.current_device()
    if device not in _CAPTURE_STREAMS:
        _CAPTURE_STREAMS[device] = torch.cuda.Stream(device)
    return _CAPTURE_STREAMS[device]


def graph_samples(fn: Callable[[], object], rep_ms: float, n_samples: int = 10) -> list[float]:
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
def preparing_for(timer: Timer) -> Iterator[None]:
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
