"""The benchmark harness: who is fast at which row length, measured honestly and saved with its provenance.

A *provider* is one way of computing softmax (the tuned `softmax`, the tutorial's kernel, torch, ...) or the copy roofline.
`run_sweep` walks N for one M and dtype; for every (N, direction, provider) it first checks the answer
against torch in float32, then times it. A provider that raises or is wrong is recorded as "failed" with
its reason: the tutorial kernel's OutOfResources at long rows is a result worth showing, not a crash.
Statuses: "ok" (checked, then timed), "failed" (raised or wrong; `reason` says which), "skipped" (the
provider has no such pass, or cannot run on this machine; `reason` says why).

Bytes are always `memory.bytes_moved` (forward reads x, writes y; backward reads y and dy, writes dx), so
GB/s here is the same number the memory page predicts with. On a GPU the clock is
`triton.testing.do_bench` (L2 flushed before every call); on a CPU a wall clock, good for comparing
naive and torch on this machine, never for comparing with a GPU.
"""
from __future__ import annotations

import contextlib
import datetime
import functools
import json
import platform
import shutil
import statistics
import subprocess
import sys
import threading
import time
import warnings
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Iterator, Sequence

import pandas as pd
import torch

from . import dtypes, launchers, runtime
from .gpu import ASSETS
from .memory import PASS_TENSORS, bytes_moved

RECORDED_DIR = ASSETS / "benchmarks"
COLUMNS = ["provider", "direction", "dtype", "M", "N", "ms_median", "ms_min", "ms_max", "gbps", "copy_ratio",
           "status", "reason"]
# Providers recorded under an earlier name: loading a recorded run gives them their current one.
RENAMED_PROVIDERS = {"as_taught": "tutorial"}

# The tutorial's sweep: one M, N = 256 ... 12672 in steps of 128, float32, forward.
TUTORIAL_SWEEP_M = 4096
TUTORIAL_SWEEP_N = [128 * i for i in range(2, 100)]

# The project's record sweep (issue 4's targets). Powers of two so BLOCK_SIZE = N and nothing is padded,
# plus 781, the tutorial's odd width where masking matters. 256-1024 is launch-bound territory; 2048-16384 is
# where a whole row fits one program; from 32768 (fp32) the tutorial kernel runs out of shared memory and long
# rows need tiles; 262144 is the longest row the targets name (4096 x 262144 fp32 = 4 GiB per tensor).
FULL_SWEEP_M = 4096
FULL_SWEEP_N = [256, 512, 781, 1024, 2048, 4096, 8192, 16384, 32768, 65536, 131072, 262144]
FULL_SWEEP_DTYPES = ["float32", "bfloat16"]



class NotDifferentiable(RuntimeError):
    """A provider's output carries no autograd graph, so there is no backward pass to time."""


# ----------------------------------------------------------------------------------------------- providers

Forward = Callable[[torch.Tensor], torch.Tensor]
# Given (x, dy), do the forward once and return a call that runs only the backward: that call is what we time.
PrepareBackward = Callable[[torch.Tensor, torch.Tensor], Callable[[], torch.Tensor]]


def _runs_anywhere() -> str | None:
    return None


@dataclass(frozen=True)
class Provider:
    name: str
    label: str
    forward: Forward
    backward: PrepareBackward | None = None
    why_unavailable: Callable[[], str | None] = _runs_anywhere
    roofline: bool = False          # copies bytes instead of computing softmax: nothing to check
    no_backward_reason: str = "no backward pass"

    def available(self) -> tuple[bool, str]:
        """(True, "") when this machine can run it, else (False, why not)."""
        reason = self.why_unavailable()
        return reason is None, reason or ""


def autograd_backward(forward: Forward) -> PrepareBackward:
    """Backward through autograd: build the graph once, then time only `autograd.grad` over it."""
    def prepare(x: torch.Tensor, dy: torch.Tensor) -> Callable[[], torch.Tensor]:
        leaf = x.detach().requires_grad_()
        y = forward(leaf)
        if y.grad_fn is None:
            raise NotDifferentiable("its output has no grad_fn, so autograd has no backward pass to run")
        return lambda: torch.autograd.grad(y, leaf, dy, retain_graph=True)[0]
    return prepare


def _copy_backward(x: torch.Tensor, dy: torch.Tensor) -> Callable[[], torch.Tensor]:
    # The backward roofline: read two tensors and write one, exactly the 3·M·N elements a softmax backward
    # must move (y and dy in, dx out). Elementwise add is as close to pure memory traffic as torch gets.
    out = torch.empty_like(x)
    return lambda: torch.add(x, dy, out=out)


def _softmax_last_dim(x: torch.Tensor) -> torch.Tensor:
    return torch.softmax(x, dim=-1)


@functools.cache
def _compiled_softmax() -> Forward:
    # One compiled function; dynamo specialises it per (dtype, shape, needs-grad) because dynamic=False, so
    # each size gets the kernel torch.compile would build for exactly that shape. `compile_limits` lets it.
    return torch.compile(_softmax_last_dim, dynamic=False)


def _needs_gpu() -> str | None:
    return "needs a GPU" if runtime.INTERPRETED else None


@functools.cache
def _torch_compile_unavailable() -> str | None:
    return None if torch._dynamo.is_dynamo_supported() else "torch.compile is not supported on this Python"


@functools.cache
def _liger_forward() -> Forward:
    from liger_kernel.launchers.softmax import LigerSoftmaxFunction
    return LigerSoftmaxFunction.apply


@functools.cache
def _quack_forward() -> Forward:
    from quack.softmax import softmax
    return softmax


def _optional_peer(loader: Callable[[], Forward], package: str) -> Callable[[], str | None]:
    @functools.cache  # a failed import is not retried for every row of a sweep
    def why_not() -> str | None:
        try:
            loader()
        except Exception as err:  # ImportError, or a CUDA/DSL error raised while the package imports
            return f"{package} is not importable ({_one_line(err)}); it is an optional peer"
        return _needs_gpu()
    return why_not


def _registry() -> dict[str, Provider]:
    providers = [
        Provider("copy", "copy (roofline)", lambda x: torch.empty_like(x).copy_(x), _copy_backward, roofline=True),
        # launchers.softmax is looked up at call time, so the harness measures whatever `softmax` is now.
        Provider("ours", "ours (softmax_core.softmax)", lambda x: launchers.softmax(x),
                 autograd_backward(lambda x: launchers.softmax(x))),
        Provider("tutorial", "tutorial kernel (softmax_core.tutorial_softmax)", lambda x: launchers.tutorial_softmax(x),
                 no_backward_reason="the tutorial's kernel has no backward pass"),
        Provider("torch", "torch.softmax", _softmax_last_dim, autograd_backward(_softmax_last_dim)),
        Provider("torch_compile", "torch.compile(torch.softmax)", lambda x: _compiled_softmax()(x),
                 autograd_backward(lambda x: _compiled_softmax()(x)), _torch_compile_unavailable),
        Provider("naive", "naive (five torch ops)", launchers.naive_softmax, autograd_backward(launchers.naive_softmax)),
        Provider("liger", "Liger-Kernel softmax", lambda x: _liger_forward()(x),
                 autograd_backward(lambda x: _liger_forward()(x)), _optional_peer(_liger_forward, "liger_kernel")),
        Provider("quack", "QuACK softmax", lambda x: _quack_forward()(x),
                 autograd_backward(lambda x: _quack_forward()(x)), _optional_peer(_quack_forward, "quack")),
    ]
    return {p.name: p for p in providers}


PROVIDERS: dict[str, Provider] = _registry()


def get_provider(name: str) -> Provider:
    if name not in PROVIDERS:
        raise ValueError(f"unknown provider {name!r}; known: {', '.join(PROVIDERS)}")
    return PROVIDERS[name]


def available_providers() -> list[str]:
    return [name for name, p in PROVIDERS.items() if p.available()[0]]


# ------------------------------------------------------------------------------------------------- timers

Timer = Callable[[Callable[[], object]], Sequence[float]]  # fn -> (median, min, max) milliseconds


@dataclass(frozen=True)
class DoBenchTimer:
    """Triton's GPU timer: CUDA events around each call, L2 flushed before each, quantiles of the samples."""
    warmup_ms: int = 10
    rep_ms: int = 40

    @property
    def description(self) -> str:
        return (f"triton.testing.do_bench(warmup={self.warmup_ms}, rep={self.rep_ms}), L2 flushed before "
                "every call; median, min, max of the samples")

    def __call__(self, fn: Callable[[], object]) -> Sequence[float]:
        import triton.testing
        return triton.testing.do_bench(fn, warmup=self.warmup_ms, rep=self.rep_ms, quantiles=[0.5, 0.0, 1.0])


@dataclass(frozen=True)
class WallClockTimer:
    """A CPU timer: time.perf_counter around each call, after warm-up calls, within a time budget."""
    warmup: int = 2
    max_repeats: int = 30
    budget_s: float = 1.0

    @property
    def description(self) -> str:
        return (f"wall clock (time.perf_counter), {self.warmup} warm-up calls, up to {self.max_repeats} timed "
                f"calls or {self.budget_s:g} s; median, min, max")

    def __call__(self, fn: Callable[[], object]) -> Sequence[float]:
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
        return statistics.median(samples), min(samples), max(samples)


def default_timer() -> Timer:
    return WallClockTimer() if runtime.INTERPRETED else DoBenchTimer()


def _describe_timer(timer: Timer) -> str:
    return getattr(timer, "description", None) or getattr(timer, "__name__", type(timer).__name__)


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


# -------------------------------------------------------------------------------------------------- a sweep

@dataclass(frozen=True)
class BenchmarkRun:
    frame: pd.DataFrame                       # one row per (provider, N, direction), columns = COLUMNS
    provenance: dict = field(default_factory=dict)

    @property
    def label(self) -> str:
        p = self.provenance
        where = p.get("gpu") or p.get("device", "?")
        return f"{where} · {p.get('dtype', '?')} · M={p.get('M', '?')} · {p.get('date', '?')}"


@dataclass(frozen=True)
class _Inputs:
    x: torch.Tensor
    dy: torch.Tensor | None
    y_ref: torch.Tensor                       # float32 answers from torch, what every provider is checked against
    dx_ref: torch.Tensor | None


def _make_inputs(M: int, N: int, dtype: torch.dtype, backward: bool, seed: int) -> _Inputs:
    device = runtime.kernel_device()
    gen = torch.Generator(device=device).manual_seed(seed * 1_000_003 + N)
    x = torch.randn(M, N, device=device, dtype=dtype, generator=gen)
    dy = torch.randn(M, N, device=device, dtype=dtype, generator=gen) if backward else None
    leaf = x.detach().float().requires_grad_()
    y_ref = torch.softmax(leaf, dim=-1)
    dx_ref = torch.autograd.grad(y_ref, leaf, dy.float())[0] if backward else None
    return _Inputs(x, dy, y_ref.detach(), dx_ref)


def _one_line(err: BaseException, limit: int = 200) -> str:
    lines = [line.strip() for line in str(err).splitlines() if line.strip()]
    text = f"{type(err).__name__}: {lines[0] if lines else ''}".rstrip(": ")
    return text if len(text) <= limit else text[: limit - 1] + "…"


def mismatch(out: object, ref: torch.Tensor, dtype: torch.dtype) -> str | None:
    """None if `out` is the softmax (or its gradient) `ref` within the dtype's tolerance, else why not."""
    if not isinstance(out, torch.Tensor):
        return f"returned {type(out).__name__}, not a tensor"
    if out.shape != ref.shape or out.dtype != dtype:
        return f"returned {tuple(out.shape)} {out.dtype}, expected {tuple(ref.shape)} {dtype}"
    error = (out.float() - ref).abs().max().item()       # NaN anywhere makes this NaN, which fails below
    scale = ref.abs().max().item()
    tolerance = dtypes.of(dtype).tolerance
    if not error <= tolerance * scale:
        return f"wrong result: max |error| is {error / scale:.2g} of the largest value (tolerance {tolerance:g})"
    return None


def _row(p: Provider, direction: str, dtype: str, M: int, N: int, status: str, reason: str = "",
         times: Sequence[float] | None = None, element_bytes: int = 0) -> dict:
    median, low, high = times if times is not None else (float("nan"),) * 3
    nbytes = bytes_moved(M, N, element_bytes, direction)
    return dict(provider=p.name, direction=direction, dtype=dtype, M=M, N=N, ms_median=median, ms_min=low,
                ms_max=high, gbps=gbps(nbytes, median) if times is not None else float("nan"),
                copy_ratio=float("nan"), status=status, reason=reason)


def measure(p: Provider, direction: str, inputs: _Inputs, timer: Timer) -> dict:
    """Check, then time, one provider at one size and direction. Never raises for the provider's faults."""
    x = inputs.x
    M, N = x.shape
    dtype = dtypes.name(x.dtype)
    row = functools.partial(_row, p, direction, dtype, M, N, element_bytes=x.element_size())
    can_run, why_not = p.available()
    if not can_run:
        return row("skipped", why_not)
    if direction == "backward" and p.backward is None:
        return row("skipped", p.no_backward_reason)
    try:
        if direction == "forward":
            call, expected = functools.partial(p.forward, x), inputs.y_ref
        else:
            call, expected = p.backward(x, inputs.dy), inputs.dx_ref
        problem = None if p.roofline else mismatch(call(), expected, x.dtype)  # first call: compiles, then checks
        if problem:
            return row("failed", problem)
        times = tuple(float(t) for t in timer(call))
    except Exception as err:  # OutOfResources, KernelDoesNotFit, out of memory, ...: a failure is data
        return row("failed", _one_line(err))
    return row("ok", times=times)


def gbps(nbytes: int, ms: float) -> float:
    """Bytes per millisecond, as GB/s (1 GB = 1e9 bytes)."""
    return nbytes * 1e-9 / (ms * 1e-3)


def with_copy_ratio(rows: list[dict]) -> list[dict]:
    """Each ok row's GB/s over the copy roofline's at the same N and direction, from the same run."""
    copy = {(r["direction"], r["N"]): r["gbps"] for r in rows if r["provider"] == "copy" and r["status"] == "ok"}
    out = []
    for r in rows:
        roof = copy.get((r["direction"], r["N"]))
        ratio = r["gbps"] / roof if r["status"] == "ok" and roof else float("nan")
        out.append({**r, "copy_ratio": ratio})
    return out


def _driver_version() -> str | None:
    if runtime.INTERPRETED or not shutil.which("nvidia-smi"):
        return None
    try:
        out = subprocess.run(["nvidia-smi", "--query-gpu=driver_version", "--format=csv,noheader", "-i",
                              str(torch.cuda.current_device())], capture_output=True, text=True, timeout=10)
        return out.stdout.strip() or None
    except (OSError, subprocess.SubprocessError):
        return None


def _git_commit() -> str | None:
    try:
        out = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=Path(__file__).parent,
                             capture_output=True, text=True, timeout=5)
        return (out.stdout.strip() or None) if out.returncode == 0 else None
    except (OSError, subprocess.SubprocessError):
        return None


def source_digest() -> str:
    """A fingerprint of the library's code (softmax_core/*.py): it names the code that ran even where the
    checkout's git metadata is missing or stale (a copied working tree on a GPU machine)."""
    import hashlib

    digest = hashlib.sha256()
    for path in sorted(Path(__file__).parent.glob("*.py")):
        digest.update(path.name.encode() + b"\0" + path.read_bytes())
    return digest.hexdigest()[:12]


def provenance(M: int, Ns: Sequence[int], dtype: str, providers: Sequence[str], directions: Sequence[str],
               timer: Timer, command: str, seed: int) -> dict:
    """Where and how a run was measured. No host name: runs are committed to a public repository."""
    import triton

    on_gpu = not runtime.INTERPRETED
    props = torch.cuda.get_device_properties(torch.cuda.current_device()) if on_gpu else None
    return {
        "gpu": props.name if props else None,
        "sm_count": props.multi_processor_count if props else None,
        "driver": _driver_version(),
        "cuda": torch.version.cuda,
        "device": runtime.backend_description(),
        "cpu": platform.machine(),
        "torch": torch.__version__,
        "triton": triton.__version__,
        "python": platform.python_version(),
        "date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
        "command": command,
        "git_commit": _git_commit(),
        "source_digest": source_digest(),
        "M": M,
        "dtype": dtype,
        "Ns": list(Ns),
        "directions": list(directions),
        "providers": {name: PROVIDERS[name].label for name in providers},
        "unavailable": {name: why for name in providers if (why := PROVIDERS[name].available()[1])},
        "timer": _describe_timer(timer),
        "bytes": "forward 2·M·N·element_size (read x, write y); "
                 "backward 3·M·N·element_size (read y and dy, write dx)",
        "copy": "forward: torch.empty_like(x).copy_(x); backward: torch.add(a, b, out=c), 2 reads + 1 write",
        "check": {name: dtypes.DTYPES[name].tolerance for name in dtypes.TUTORIAL_DTYPES},
        "seed": seed,
    }


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
    dtype_name = dtypes.name(dtype)
    total, done, rows = len(Ns) * len(directions) * len(chosen), 0, []
    compiling = compile_limits() if "torch_compile" in providers else contextlib.nullcontext()
    with exclusive_gpu(on_wait), compiling:
        if progress:
            progress(0, total, "starting")
        for N in Ns:
            inputs = _make_inputs(M, N, dtype, "backward" in directions, seed)
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
    info = provenance(M, Ns, dtype_name, [p.name for p in chosen], directions, timer,
                      command if command is not None else " ".join(sys.argv), seed)
    return BenchmarkRun(frame, info)


# --------------------------------------------------------------------------------------------- save / load

def save_run(run: BenchmarkRun, directory: str | Path, stem: str) -> tuple[Path, Path]:
    """Write `<stem>.csv` (the table) and `<stem>.json` (provenance, naming the CSV). Returns both paths."""
    directory = Path(directory)
    directory.mkdir(parents=True, exist_ok=True)
    csv_path, json_path = directory / f"{stem}.csv", directory / f"{stem}.json"
    run.frame.to_csv(csv_path, index=False)
    json_path.write_text(json.dumps({**run.provenance, "csv": csv_path.name}, indent=2) + "\n")
    return csv_path, json_path


def load_run(json_path: str | Path) -> BenchmarkRun:
    json_path = Path(json_path)
    info = json.loads(json_path.read_text())
    frame = pd.read_csv(json_path.parent / info["csv"])
    frame["reason"] = frame["reason"].fillna("").astype(str)
    frame["provider"] = frame["provider"].replace(RENAMED_PROVIDERS)
    if "providers" in info:
        info["providers"] = {RENAMED_PROVIDERS.get(name, name): label for name, label in info["providers"].items()}
    if "unavailable" in info:
        info["unavailable"] = {RENAMED_PROVIDERS.get(name, name): why for name, why in info["unavailable"].items()}
    return BenchmarkRun(frame[COLUMNS], info)


def load_recorded_runs(directory: str | Path = RECORDED_DIR) -> list[BenchmarkRun]:
    """Every saved run in `directory`, oldest first; none if the directory is missing or empty."""
    directory = Path(directory)
    runs = []
    for json_path in sorted(directory.glob("*.json")) if directory.is_dir() else []:
        try:
            runs.append(load_run(json_path))
        except (OSError, ValueError, KeyError) as err:  # a stray or broken file must not hide the others
            warnings.warn(f"skipped recorded run {json_path.name}: {err}")
    return sorted(runs, key=lambda r: str(r.provenance.get("date", "")))


# ----------------------------------------------------------------------------------------- for the terminal

def text_progress(stream=None, width: int = 30) -> Callable[[int, int, str], None]:
    """A progress bar for the command line. On a terminal it redraws one line; in a log (not a tty) it
    prints a line every 10% so the log stays short."""
    stream = stream or sys.stdout
    interactive = stream.isatty()
    shown = {"tenth": -1}

    def report(done: int, total: int, label: str) -> None:
        fraction = done / total if total else 1.0
        bar = "#" * round(fraction * width) + "-" * (width - round(fraction * width))
        line = f"[{bar}] {done}/{total} {label}"
        if interactive:
            stream.write("\r" + line.ljust(width + 50) + ("\n" if done == total else ""))
        elif int(fraction * 10) > shown["tenth"] or done == total:
            shown["tenth"] = int(fraction * 10)
            stream.write(line + "\n")
        stream.flush()
    return report


def format_table(run: BenchmarkRun) -> str:
    """GB/s per N (rows) and provider (columns), then each provider's ratio to copy, then why things failed."""
    f = run.frame
    parts = []
    for direction, part in f.groupby("direction", sort=False):
        cells = part.assign(cell=[(f"{g:,.0f}" if g >= 100 else f"{g:.3g}") if s == "ok" else
                                  ("fails" if s == "failed" else "–")
                                  for g, s in zip(part.gbps, part.status)])
        table = cells.pivot(index="N", columns="provider", values="cell")[list(dict.fromkeys(part.provider))]
        parts.append(f"{direction}, {run.provenance.get('dtype')}, M={run.provenance.get('M')}: GB/s\n"
                     + table.to_string())
        if part.copy_ratio.notna().any():
            ratio = part.pivot(index="N", columns="provider", values="copy_ratio")[list(dict.fromkeys(part.provider))]
            parts.append(f"{direction}: ratio to copy (same run)\n" + ratio.drop(columns="copy", errors="ignore")
                         .to_string(float_format=lambda v: f"{v:.2f}", na_rep="–"))
    problems = f[f.status != "ok"].groupby(["provider", "direction", "status", "reason"], sort=False).N.agg(list)
    if len(problems):
        parts.append("not measured:\n" + "\n".join(f"  {prov} {d} {s} at N={ns}: {why}"
                                                   for (prov, d, s, why), ns in problems.items()))
    return "\n\n".join(parts)
