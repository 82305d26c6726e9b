"""The models sweep: softmax on the shapes real models use, each case checked, then timed beside copy.

A case is a tensor shape, a dtype, a softmax dim and how the tensor is laid out (contiguous, or a transposed
view). Every provider computes softmax over that dim of that very tensor; providers that take only a 2-D
matrix with softmax over its contiguous last dim (Liger, QuACK) are skipped elsewhere, with the reason.
The copy roofline copies the same tensor into one of its layout (forward: read + write); backward: two reads
and a write of contiguous tensors of that size (`torch.add`). Each provider's backward gets dy in the layout
of its own output, as the elementwise ops after a softmax would hand it back. Bytes: forward 2 x numel x
element size, backward 3 x.

Two backward directions: "backward" is `torch.autograd.grad(y, x, dy)`, the engine's whole round trip (its
host time, some tens of microseconds a call, can be longer than a large tensor's kernel: then do_bench times
the host); "backward_node" is the provider's backward node alone, `y.grad_fn` applied to dy with no engine
around it: what the backward costs inside a training step, where the engine walks the graph ahead of the GPU.
"""
from __future__ import annotations

import functools
import math
import sys
from dataclasses import dataclass
from typing import Callable, Sequence

import pandas as pd
import torch

from softmax_bench.harness import compile_limits, exclusive_gpu, gbps, mismatch
from softmax_bench.timers import Timer, default_timer, timer_figures, timer_kind
from softmax_bench.providers import NotTimed, not_timed_by
from softmax_core.words import Coded
from softmax_bench.records import TIME_COLUMNS, BenchmarkRun, provenance
from softmax_core.hardware import dtypes, runtime


KINDS = ("logits", "attention", "router", "channel", "transposed", "decode", "odd")   # a case's family


@dataclass(frozen=True)
class ModelCase:
    name: str                  # a key: "gpt2-logits"
    kind: str                  # the family, one of KINDS
    shape: tuple[int, ...]
    dtype: str
    dim: int = -1
    transposed: bool = False   # the tensor is a (..., b, a) contiguous buffer seen as (..., a, b)

    @property
    def n_reduce(self) -> int:
        return self.shape[self.dim]

    @property
    def numel(self) -> int:
        return math.prod(self.shape)


MODEL_CASES: tuple[ModelCase, ...] = (
    ModelCase("gpt2-logits", "logits", (8192, 50257), "bfloat16"),
    ModelCase("llama2-logits", "logits", (8192, 32000), "bfloat16"),
    ModelCase("llama3-logits", "logits", (4096, 128256), "bfloat16"),
    ModelCase("qwen2-logits", "logits", (2048, 151936), "bfloat16"),
    ModelCase("attention-probs", "attention", (16, 32, 1024, 1024), "float16"),
    ModelCase("moe-router-8", "router", (65536, 8), "bfloat16"),
    ModelCase("moe-router-64", "router", (65536, 64), "float32"),
    ModelCase("channel-dim1", "channel", (64, 1000, 49), "float32", dim=1),
    ModelCase("transposed-last", "transposed", (32, 2048, 2048), "bfloat16", transposed=True),
    ModelCase("odd-width", "odd", (10000, 3000), "float16"),
    ModelCase("decode-row", "decode", (1, 128256), "float32"),
    ModelCase("decode-batch", "decode", (64, 151936), "bfloat16"),
)
MODEL_PROVIDERS = ("copy", "tuned", "torch", "torch_compile", "liger", "quack")


def make_input(case: ModelCase, seed: int = 0, requires_grad: bool = False) -> torch.Tensor:
    device = runtime.kernel_device()
    gen = torch.Generator(device=device).manual_seed(seed)
    shape = case.shape[:-2] + (case.shape[-1], case.shape[-2]) if case.transposed else case.shape
    x = (torch.randn(shape, device=device, generator=gen) * 2).to(dtypes.torch_dtype(case.dtype))
    return x.transpose(-1, -2) if case.transposed else x


def _torch(x, dim):
    return torch.softmax(x, dim)


@functools.cache
def _compiled():
    return torch.compile(_torch, dynamic=False)


def _softmax_call(provider: str) -> Callable[[torch.Tensor, int], torch.Tensor] | None:
    """provider -> softmax(x, dim), or None for a name this sweep does not know."""
    from softmax_bench import providers
    from softmax_core.launch.api import softmax

    if provider == "tuned":
        return softmax
    if provider == "torch":
        return _torch
    if provider == "torch_compile":
        return lambda x, dim: _compiled()(x, dim)
    if provider in ("liger", "quack"):
        peer = providers.get_provider(provider)
        return lambda x, dim: peer.forward(x)
    return None


def _why_not(provider: str, case: ModelCase, x: torch.Tensor) -> Coded | None:
    from softmax_bench import providers

    if provider == "copy":
        return None
    ok, why = providers.get_provider(provider).available()
    if not ok:
        return why
    if provider in ("liger", "quack") and not (x.ndim == 2 and case.dim in (-1, 1) and x.is_contiguous()):
        # not raised: the sweep does not call a peer on a layout it does not take
        return Coded.of(NotTimed.RAISED, error="LayoutNotTaken",
                        message="takes a contiguous 2-D matrix, softmax over its last dim")
    return None


def _timed_call(provider: str, direction: str, case: ModelCase, x: torch.Tensor, dy: torch.Tensor | None):
    """(the call to time, what it should return: None for copy)."""
    if provider == "copy":
        if direction == "forward":
            return (lambda: torch.empty_like(x).copy_(x)), None
        # two reads and a write of contiguous tensors: the bytes a backward must move, at the best layout
        a, b = x.contiguous(), dy.contiguous()
        out = torch.empty_like(a)
        return (lambda: torch.add(a, b, out=out)), None
    call = _softmax_call(provider)
    if direction == "forward":
        return (lambda: call(x, case.dim)), None
    leaf = x.detach().requires_grad_()
    y = call(leaf, case.dim)
    if y.grad_fn is None:
        raise RuntimeError("its output has no grad_fn: no backward pass")
    # dy in y's own layout, as the elementwise ops after a softmax hand it back (they keep their input's strides)
    dy_like_y = torch.empty_like(y).copy_(dy)
    if direction == "backward_node":
        return backward_node_call(y, dy_like_y), None
    return (lambda: torch.autograd.grad(y, leaf, dy_like_y, retain_graph=True)[0]), None


# The softmax backward nodes that "backward_node" applies by themselves: torch's (C++, callable) and
# softmax_core's (Python Functions, whose `apply` is their backward; launch/autograd.py, launch/any_dim.py).
TORCH_NODES = ("SoftmaxBackward0",)
FUNCTION_NODES = ("SoftmaxFunctionBackward", "AnyDimSoftmaxBackward")


def backward_node_call(y: torch.Tensor, dy: torch.Tensor) -> Callable[[], torch.Tensor]:
    """dx from the backward node of the softmax whose output is y, given dy, as the engine would run it (grad
    mode off), without the engine. A provider whose output's node is something else (a view after the softmax,
    a compiled graph) is not timed this way. The call keeps y: a Python Function's node is owned by its output
    (the `y.grad_fn` object only points at it), and it unpacks the saved y through the node."""
    node = y.grad_fn
    name = type(node).__name__
    if name in TORCH_NODES:
        def call():
            with torch.no_grad():
                return node(dy)
    elif name in FUNCTION_NODES:
        def call():
            with torch.no_grad():
                return node.apply(dy)[0]
    else:
        raise NotASoftmaxNode(f"its output's backward node is {name}, not a softmax's own")
    call.output = y          # the node's owner, kept as long as the call (no lookup of y.grad_fn per timed call)
    return call


class NotASoftmaxNode(RuntimeError):
    """The provider's output does not come straight from a softmax backward node."""


def measure_case(case: ModelCase, providers: Sequence[str], directions: Sequence[str], timer: Timer,
                 seed: int = 0) -> list[dict]:
    x = make_input(case, seed)
    backward = any(d.startswith("backward") for d in directions)
    dy = make_input(case, seed + 1).float().to(x.dtype).contiguous() if backward else None
    leaf = x.detach().float().requires_grad_()
    y_ref = torch.softmax(leaf, case.dim)
    dx_ref = torch.autograd.grad(y_ref, leaf, dy.float())[0] if dy is not None else None
    rows = []
    for direction in directions:
        nbytes = (2 if direction == "forward" else 3) * case.numel * x.element_size()
        for provider in providers:
            row = dict(case=case.name, kind=case.kind, shape="x".join(map(str, case.shape)), dim=case.dim,
                       layout="transposed" if case.transposed else "contiguous", provider=provider,
                       direction=direction, dtype=case.dtype, M=case.numel // case.n_reduce, N=case.n_reduce,
                       **{c: float("nan") for c in TIME_COLUMNS}, gbps=float("nan"), copy_ratio=float("nan"),
                       status="ok", reason=None)
            if why := _why_not(provider, case, x):
                rows.append({**row, "status": "skipped", "reason": why})
                continue
            try:
                call, _ = _timed_call(provider, direction, case, x, dy)
                if provider != "copy":
                    problem = mismatch(call(), y_ref.detach() if direction == "forward" else dx_ref, x.dtype)
                    if problem:
                        rows.append({**row, "status": "failed", "reason": problem})
                        continue
                t = timer(call)
            except NotASoftmaxNode as err:   # not a failure: this provider's backward is not one node to apply
                rows.append({**row, "status": "skipped", "reason": not_timed_by(err)})
                continue
            except Exception as err:  # a failure is data
                rows.append({**row, "status": "failed", "reason": not_timed_by(err)})
                continue
            rows.append({**row, "ms_p20": t.p20, "ms_median": t.median, "ms_p80": t.p80, "ms_min": t.min,
                         "ms_max": t.max, "gbps": gbps(nbytes, t.median)})
    copy = {r["direction"]: r["gbps"] for r in rows if r["provider"] == "copy" and r["status"] == "ok"}
    return [{**r, "copy_ratio": r["gbps"] / copy[r["direction"]] if r["direction"] in copy else float("nan")}
            for r in rows]


def run_models_sweep(cases: Sequence[ModelCase] = MODEL_CASES, providers: Sequence[str] = MODEL_PROVIDERS,
                     directions: Sequence[str] = ("forward", "backward"), timer: Timer | None = None,
                     progress: Callable[[int, int, str], None] | None = None, command: str | None = None,
                     seed: int = 0) -> BenchmarkRun:
    timer = timer or default_timer()
    rows: list[dict] = []
    with exclusive_gpu(), compile_limits():
        for i, case in enumerate(cases):
            rows += measure_case(case, providers, directions, timer, seed)
            if progress:
                progress(i + 1, len(cases), case.name)
            if not runtime.INTERPRETED:
                torch.cuda.empty_cache()
    frame = pd.DataFrame(rows)
    info = provenance(0, [c.n_reduce for c in cases], ",".join(dict.fromkeys(c.dtype for c in cases)),
                      list(providers), directions, timer_kind(timer), timer_figures(timer),
                      command if command is not None else " ".join(sys.argv), seed)
    info.update(sweep="models", cases=[{"name": c.name, "kind": c.kind, "shape": list(c.shape), "dtype": c.dtype,
                                        "dim": c.dim, "transposed": c.transposed} for c in cases],
                bytes="forward 2 x numel x element_size (read x, write y); backward 3 x (read y and dy, write dx)",
                copy="forward: torch.empty_like(x).copy_(x), x's layout; backward: torch.add(a, b, out=c), contiguous",
                dy="each provider's backward gets dy in its own output's layout (empty_like(y).copy_(dy))")
    return BenchmarkRun(frame, info)


def ratio_table(run: BenchmarkRun) -> pd.DataFrame:
    """One row per (case, direction): each provider's ratio to copy, and tuned over the best other provider."""
    f = run.frame[run.frame.status == "ok"]
    table = f.pivot_table(index=["case", "direction"], columns="provider", values="copy_ratio", sort=False)
    peers = [c for c in table.columns if c not in ("copy", "tuned")]
    if "tuned" in table and peers:
        table["tuned/best_peer"] = table["tuned"] / table[peers].max(axis=1)
    return table.drop(columns="copy", errors="ignore")


def load_models_runs(directory=None) -> list[BenchmarkRun]:
    """The recorded models runs (assets/benchmarks/models/*.json), oldest first."""
    from pathlib import Path

    from softmax_bench.records import RECORDED_DIR, load_run

    directory = Path(directory) if directory is not None else RECORDED_DIR / "models"
    runs = []
    for path in sorted(directory.glob("*.json")):
        run = load_run(path)
        frame = pd.read_csv(path.parent / run.provenance["csv"])      # load_run keeps the common columns only
        runs.append(BenchmarkRun(frame, run.provenance))
    return sorted(runs, key=lambda r: str(r.provenance.get("date", "")))


def summary(runs: Sequence[BenchmarkRun]) -> pd.DataFrame:
    """One row per (case, direction): MB moved, each provider's ratio to copy in its own run (a later run's
    figure for a provider replaces an earlier one's), tuned over the best other provider, and tuned's spread
    (20th to 80th percentile over the median)."""
    ratios: dict = {}
    info: dict = {}
    for run in runs:
        f = run.frame
        for r in f.itertuples():
            key = (r.case, r.direction)
            if r.provider == "copy" and r.status == "ok":
                info.setdefault(key, {}).update(case=r.case, kind=r.kind, shape=r.shape, dtype=r.dtype, dim=int(r.dim),
                                                layout=r.layout, direction=r.direction,
                                                MB=(2 if r.direction == "forward" else 3) * math.prod(
                                                    int(v) for v in str(r.shape).split("x"))
                                                * dtypes.element_size(r.dtype) / 1e6)
            elif r.status == "ok":
                ratios.setdefault(key, {})[r.provider] = r.copy_ratio
                if r.provider == "tuned":
                    info.setdefault(key, {})["spread"] = (r.ms_p80 - r.ms_p20) / r.ms_median
    rows = []
    for key, base in info.items():
        got = ratios.get(key, {})
        peers = {p: v for p, v in got.items() if p != "tuned"}
        best = max(peers.values()) if peers else float("nan")
        rows.append({**base, **{p: got.get(p, float("nan")) for p in MODEL_PROVIDERS if p != "copy"},
                     "tuned/best_peer": got.get("tuned", float("nan")) / best if peers else float("nan"),
                     "best_peer": max(peers, key=peers.get) if peers else ""})
    return pd.DataFrame(rows)


def markdown_summary(runs: Sequence[BenchmarkRun]) -> str:
    """The summary as a Markdown table (docs/performance.md, "Real shapes"), with the records it comes from."""
    s = summary(runs)
    shown = [p for p in MODEL_PROVIDERS if p != "copy" and p in s and s[p].notna().any()]

    def cell(v):
        return "–" if v != v else f"{v:.2f}"
    head = ["case", "shape, dtype", "dim", "MB moved", "pass", *[f"{p} ÷ copy" for p in shown],
            "tuned ÷ best peer", "tuned spread"]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for d in s.to_dict("records"):
        where = f"{d['dim']}" + (" (transposed view)" if d["layout"] == "transposed" else "")
        lines.append("| " + " | ".join([d["case"], f"{d['shape'].replace('x', ' × ')} {d['dtype']}", where,
                                        f"{d['MB']:,.0f}", d["direction"], *[cell(d[p]) for p in shown],
                                        cell(d["tuned/best_peer"]) + (f" ({d['best_peer']})" if d["best_peer"] else ""),
                                        f"±{d['spread'] / 2:.1%}" if d.get("spread") == d.get("spread") else "–"])
                     + " |")
    sources = ", ".join(f"`{r.provenance['csv']}`" for r in runs)
    return "\n".join(lines) + f"\n\nFrom {sources} (assets/benchmarks/models/).\n"


@dataclass(frozen=True)
class NearestRecord:
    """The recorded case closest to a shape: its summary row and the run's GPU and date."""
    row: dict
    gpu: str
    date: str
    same_dtype: bool
    same_layout: bool
    same_case: bool = False      # the very shape, dtype, dim and layout asked about


def is_recorded_case(row: dict, shape: Sequence[int], dtype: str, dim: int, transposed: bool) -> bool:
    """Whether a summary row is this case: the same shape, dtype, softmax dim (counted either way) and layout."""
    rank = len(shape)
    return (str(row["shape"]) == "x".join(map(str, shape)) and row["dtype"] == dtype
            and int(row["dim"]) % rank == dim % rank and (row["layout"] == "transposed") == bool(transposed))


def nearest_recorded(runs: Sequence[BenchmarkRun], dtype: str, strided_dim: bool, megabytes: float,
                     direction: str, case: tuple | None = None, reduce_len: int | None = None) -> NearestRecord | None:
    """The recorded case most like a shape: the same direction; then the same dtype, the same kind of layout
    (softmax over a strided dim or the contiguous one), the same length of the softmax dim (`reduce_len`: the
    plan's kernel and tile follow it), and the nearest bytes moved (by ratio), in that order.
    `case` (shape, dim, transposed) tells whether the nearest one is the very case asked about."""
    s = summary(runs)
    if s.empty:
        return None
    rows = [r for r in s.to_dict("records") if r["direction"] == direction and r["tuned"] == r["tuned"]]
    if not rows:
        return None

    def strided(r):
        return r["layout"] == "transposed" or r["dim"] not in (-1, len(str(r["shape"]).split("x")) - 1)

    def length(r):
        dims = [int(d) for d in str(r["shape"]).split("x")]
        return dims[int(r["dim"])] if -len(dims) <= int(r["dim"]) < len(dims) else None

    best = min(rows, key=lambda r: (r["dtype"] != dtype, strided(r) != strided_dim,
                                    reduce_len is not None and length(r) != reduce_len,
                                    abs(math.log(max(r["MB"], 1e-9) / max(megabytes, 1e-9)))))
    run = runs[-1]
    same = case is not None and is_recorded_case(best, case[0], dtype, case[1], case[2])
    return NearestRecord(best, run.provenance.get("gpu") or "?", str(run.provenance.get("date", ""))[:10],
                         best["dtype"] == dtype, strided(best) == strided_dim, same)
