"""Tuning sweep for the backward of rows longer than 1024 values (issue 31: mid rows 1025-16K, long rows 16K-256K):
random shapes drawn by the class sweep's generator (bench_tools/class_sweep.py) on two seeds, a fit set and a
check set, and at every shape a grid of forced backward launches (whole rows on 2-32 warps, two passes over
tiles with and without a grid bounded by L2, rows shared by programs), each checked against a float64
reference and timed beside copy (torch.add of two tensors into a third), torch's backward and the library's
own plan, in one run. The constants are fitted on the fit set afterwards; the check set is read only for the
chosen rule.

    python -m bench_tools.record.rows_backward_tune --list --fit-seed 4141 --check-seed 8686
    python -m bench_tools.record.rows_backward_tune --warm K N --fit-seed 4141 --check-seed 8686   # compile
    python -m bench_tools.record.rows_backward_tune OUT_STEM --fit-seed 4141 --check-seed 8686
    python -m bench_tools.record.rows_backward_tune --figures RECORD.csv     # the fitted plan's figures per set

writes OUT_STEM.csv (one row per shape and provider: set, class, M, N, dtype, variant settings, ms, ratio to
copy) after every shape, and OUT_STEM.json (provenance). `--warm K N` plans and launches every N-th
(shape, variant) from the K-th once, so that a few processes compile the grid in parallel first.
"""
from __future__ import annotations

import argparse
import json
import shlex
import sys
import time
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Callable

import pandas as pd
import torch
import triton

from softmax_core.hardware import dtypes, runtime
from softmax_core.hardware.gpu import default_gpu
from softmax_core.plans.any_width import edge_plan
from softmax_core.plans.kernel_jobs import judged
from softmax_core.plans.tuned import SoftmaxPlan, plan_rows_tiled_split, plan_split, plan_tiled
from softmax_core.plans.whole_rows import row_vector

CLASSES = ("mid_rows", "long_rows")
MIN_COLS = 1025                   # by default rows of more than 1024 values (--cols takes another range)
SHORT_FROM_COLS = 256             # rows of at most 255 values are the short-rows kernels' (plans/any_width.py)
L2_FRACTION = 0.5                 # the L2-bounded grids: rows in flight x (y + dy) bytes within this much of L2


@dataclass(frozen=True)
class Shape:
    set: str          # "fit" or "check"
    cls: str
    M: int
    N: int
    dtype: str


def shapes(fit_seed: int, check_seed: int, fit_per_class: int, check_per_class: int,
           cols: tuple[int, int] = (MIN_COLS, 1 << 30)) -> list[Shape]:
    """The fit and check shapes, interleaved (a run cut short keeps some of both): the class sweep's draw of each
    seed, rows of `cols` values only (both ends included), the first `*_per_class` of each class that has any."""
    from bench_tools.class_sweep import draw

    def take(seed, per_class, name, cls):
        drawn = [s for s in draw(seed, (cls,), per_class=16 * per_class) if cols[0] <= s.shape[-1] <= cols[1]]
        return [Shape(name, cls, s.shape[0], s.shape[1], s.dtype) for s in drawn[:per_class]]
    lists = [take(seed, n, name, cls) for cls in CLASSES
             for seed, n, name in ((fit_seed, fit_per_class, "fit"), (check_seed, check_per_class, "check"))]
    return [s for i in range(max(map(len, lists))) for got in lists for s in got[i:i + 1]]


def _rows(M: int, N: int, dt: torch.dtype, warps: int, direction: str = "backward") -> SoftmaxPlan:
    """A whole row per program on `warps` warps: the edge kernel (ONE_TILE) where the width is not a multiple of
    16, else the rows kernel; the resources are those of that launch's compile."""
    gpu = default_gpu()
    base = plan_rows_tiled_split(M, N, dt, gpu, direction, path="rows")
    plan = replace(base, rows_per_program=1, num_warps=warps, num_programs=M, vec=1)
    if N % 16:
        return edge_plan(plan, dt)
    plan = replace(plan, edges=False)
    res, occ = judged(plan)
    return replace(plan, resources=res, occupancy=occ)


def _row_blocks(M: int, N: int, dt: torch.dtype, rows: int, warps: int, direction: str) -> SoftmaxPlan:
    """`rows` whole rows a program on `warps` warps (the rows kernel, with the plan's 16-byte vector hint); the
    resources are those of that launch's compile."""
    base = plan_rows_tiled_split(M, N, dt, default_gpu(), direction, path="rows")
    plan = replace(base, rows_per_program=rows, num_warps=warps, num_programs=triton.cdiv(M, rows),
                   vec=row_vector(N, dt), edges=False)
    res, occ = judged(plan)
    return replace(plan, resources=res, occupancy=occ)


def _tiled(M: int, N: int, dt: torch.dtype, tile: int, warps: int, bounded: bool) -> SoftmaxPlan | None:
    """Two passes over `tile`-wide tiles, one program per row (edge kernel where the width is not a multiple of
    16); `bounded`: a persistent grid of at most as many programs as keep the rows in flight within L2_FRACTION of
    L2 (None where that is no fewer than the grid of all rows would have resident)."""
    gpu = default_gpu()
    plan = plan_tiled(M, N, dt, gpu, "backward", tile=tile, num_warps=warps, split=1)
    if N % 16:
        plan = edge_plan(plan, dt)
    if not bounded:
        return plan
    pair_bytes = 2 * N * dtypes.element_size(dt)
    cap = max(gpu.multiprocessor_count, int(L2_FRACTION * gpu.l2_mib * 2**20) // pair_bytes)
    resident = plan.occupancy.programs_per_sm * gpu.multiprocessor_count
    if cap >= min(M, resident):
        return None
    return replace(plan, num_programs=cap)


def _split(M: int, N: int, dt: torch.dtype, chunk: int, warps: int) -> SoftmaxPlan | None:
    return plan_split(M, N, dt, default_gpu(), "backward", chunk=chunk, num_warps=warps, edges=N % 16 != 0)


def candidates(shape: Shape, direction: str = "backward") -> list[tuple[str, Callable[[], SoftmaxPlan | None]]]:
    """(name, plan maker) for every forced launch of one shape, in a fixed order, the library's plan first; the
    names follow from the shape alone, a maker compiles (and answers None where its launch cannot run). The
    forward is timed at rows of at most 1024 values only."""
    M, N, dt = shape.M, shape.N, dtypes.torch_dtype(shape.dtype)
    block = triton.next_power_of_2(N)
    threads = default_gpu().warp_size
    out = [("default", lambda: _library_plan(M, N, dt, direction))]
    if N < MIN_COLS:      # rows of at most 1024 values: whole rows, 1-16 rows a program on 1-8 warps
        for rows in (1, 2, 4, 8, 16):
            for warps in (1, 2, 4, 8):
                if 4 <= rows * block // (threads * warps) <= 64:
                    out.append((f"rows{rows}-w{warps}",
                                lambda r=rows, w=warps: _row_blocks(M, N, dt, r, w, direction)))
        if N % 16:        # and the edge kernel's aligned body, one row a program
            for warps in (1, 2, 4, 8):
                if 4 <= block // (threads * warps) <= 64:
                    out.append((f"edge-w{warps}", lambda w=warps: _rows(M, N, dt, w, direction)))
        return out
    if direction != "backward":
        raise ValueError("the forward is timed at rows of at most 1024 values (--cols)")
    for warps in (2, 4, 8, 16, 32):                      # whole rows: 8-64 values of each tensor a thread
        if 8 <= block // (threads * warps) <= 64:
            out.append((f"rows-w{warps}", lambda w=warps: _rows(M, N, dt, w)))
    for tile in (1024, 2048, 4096, 8192, 16384):       # two passes: at least two tiles a row
        if 2 * tile > block:
            continue
        for warps in (4, 8, 16):
            if not 8 <= tile // (threads * warps) <= 64 or (warps == 16 and tile < 8192):
                continue
            for bounded in (False, True):
                out.append((f"tiled-t{tile}-w{warps}{'-l2' if bounded else ''}",
                            lambda t=tile, w=warps, b=bounded: _tiled(M, N, dt, t, w, b)))
    for chunk in (2048, 4096, 8192):                    # shared rows: 2-64 programs a row
        if not 2 <= triton.cdiv(N, chunk) <= 64:
            continue
        for warps in (2, 4, 8):
            if 16 <= chunk // (threads * warps) <= (128 if dt.itemsize == 2 else 64):
                out.append((f"split-c{chunk}-w{warps}", lambda c=chunk, w=warps: _split(M, N, dt, c, w)))
    return out


def plan_of(shape: Shape, name: str, direction: str = "backward") -> SoftmaxPlan | None:
    """The plan of one candidate (None where it cannot run, with the reason printed)."""
    make = dict(candidates(shape, direction))[name]
    try:
        return make()
    except (ValueError, RuntimeError) as err:
        print(f"{shape} {name}: not planned ({str(err).splitlines()[0][:80]})", flush=True)
        return None


def _library_plan(M, N, dt, direction="backward"):
    from softmax_core.plans.choose import plan_softmax
    return plan_softmax(M, N, dt, default_gpu(), direction)


def describe(plan: SoftmaxPlan) -> dict:
    return dict(path=plan.path, block=plan.block_n, warps=plan.num_warps, rows=plan.rows_per_program,
                grid=plan.num_programs, split=plan.split, edges=plan.edges, vec=plan.vec,
                regs=plan.resources.n_regs, spills=plan.resources.n_spills,
                per_sm=plan.occupancy.programs_per_sm)


def make_inputs(shape: Shape, seed: int):
    """y = softmax(x) and dy in the shape's dtype, and dx in float64 from those very y and dy."""
    dt = dtypes.torch_dtype(shape.dtype)
    device = runtime.kernel_device()
    gen = torch.Generator(device=device).manual_seed(seed)
    x = torch.randn(shape.M, shape.N, device=device, generator=gen) * 2
    y = torch.softmax(x, -1).to(dt)
    dy = torch.randn(shape.M, shape.N, device=device, generator=gen).to(dt)
    y64, dy64 = y.double(), dy.double()
    dx_ref = y64 * (dy64 - (y64 * dy64).sum(-1, keepdim=True))
    return x.to(dt), y, dy, dx_ref


def _autograd(fn, x, dy):
    leaf = x.detach().requires_grad_()
    out = fn(leaf)
    dy_like = torch.empty_like(out).copy_(dy)
    return lambda: torch.autograd.grad(out, leaf, dy_like, retain_graph=True)[0]


def warm(k: int, n: int, todo: list[Shape], seed: int, direction: str = "backward") -> None:
    """Plan and launch this process's share of the (shape, variant) pairs once. Launches that compile the same
    kernel (the same dtype and variant, not a shared row, whose SPLIT follows the width) go to one process."""
    from softmax_core.launch.api import softmax_backward, softmax_forward
    groups: dict = {}
    for s in todo:
        for name, _ in candidates(s, direction):
            key = (s, name) if name.startswith("split") or name == "default" else (s.dtype, name, s.M % 16 == 0)
            groups.setdefault(key, []).append((s, name))
    for i, key in enumerate(sorted(groups, key=str)):
        if i % n != k:
            continue
        for s, name in groups[key]:
            plan = plan_of(s, name, direction)
            if plan is None:
                continue
            dt = dtypes.torch_dtype(s.dtype)
            y = torch.full((s.M, s.N), 1.0 / s.N, dtype=dt, device=runtime.kernel_device())
            try:
                softmax_backward(y, y, plan) if direction == "backward" else softmax_forward(y, plan)
            except Exception as err:  # noqa: BLE001  (the timed run records it)
                print(f"warm {s} {name}: {type(err).__name__}", flush=True)
            del y
    if not runtime.INTERPRETED:
        torch.cuda.synchronize()


_INPUTS: dict = {}


def inputs_cached(s: Shape, seed: int):
    if s not in _INPUTS:
        _INPUTS.clear()
        _INPUTS[s] = make_inputs(s, seed)
    return _INPUTS[s]


def run(todo: list[Shape], stem: Path, seed: int, timer, command: str, deadline: float | None,
        fit_seed: int | None = None, check_seed: int | None = None, direction: str = "backward") -> pd.DataFrame:
    from softmax_bench.harness import mismatch
    from softmax_bench.records import provenance
    from softmax_bench.timers import timer_figures, timer_kind
    from softmax_core.launch.api import softmax, softmax_backward, softmax_forward

    rows: list[dict] = []
    info = provenance(0, sorted({s.N for s in todo}), ",".join(sorted({s.dtype for s in todo})),
                      ["copy", "torch", "tuned"], [direction], timer_kind(timer), timer_figures(timer),
                      command, seed)
    info.update(sweep="rows-backward-tune", shapes=[s.__dict__ for s in todo], fit_seed=fit_seed,
                check_seed=check_seed, direction=direction)
    if direction == "backward":
        info.update(bytes="3 x numel x element_size (read y and dy, write dx)", copy="torch.add(y, dy, out=c)",
                    torch_provider="autograd.grad through torch.softmax (the class sweep's way), as for "
                                   "autograd-default",
                    variants="softmax_backward(y, dy, plan) with each forced plan: the kernel launch alone")
    else:
        info.update(bytes="2 x numel x element_size (read x, write y)", copy="c.copy_(x)",
                    torch_provider="torch.softmax(x, -1); autograd-default: softmax_core's softmax(x, -1)",
                    variants="softmax_forward(x, plan) with each forced plan: the kernel launch alone")
    stem.parent.mkdir(parents=True, exist_ok=True)
    for s in todo:
        if deadline is not None and time.time() > deadline:
            print("deadline: stopping before", s, flush=True)
            break
        dt = dtypes.torch_dtype(s.dtype)
        x, y, dy, dx_ref = inputs_cached(s, seed)
        out = torch.empty_like(y)
        planned = [(name, plan_of(s, name, direction)) for name, _ in candidates(s, direction)]
        if direction == "backward":
            ref = dx_ref
            calls = [("copy", None, lambda: torch.add(y, dy, out=out), False),
                     ("torch", None, _autograd(lambda t: torch.softmax(t, -1), x, dy), True),
                     ("autograd-default", None, _autograd(lambda t: softmax(t, -1), x, dy), True)]
            calls += [(name, plan, (lambda p=plan: softmax_backward(y, dy, p)), True) for name, plan in planned
                      if plan is not None]
        else:
            ref = torch.softmax(x.double(), -1)
            calls = [("copy", None, lambda: out.copy_(x), False),
                     ("torch", None, lambda: torch.softmax(x, -1), True),
                     ("autograd-default", None, lambda: softmax(x, -1), True)]
            calls += [(name, plan, (lambda p=plan: softmax_forward(x, p)), True) for name, plan in planned
                      if plan is not None]
        nbytes = (3 if direction == "backward" else 2) * s.M * s.N * dt.itemsize
        for name, plan, call, check in calls:
            row = dict(set=s.set, cls=s.cls, M=s.M, N=s.N, dtype=s.dtype, provider=name,
                       **(describe(plan) if plan is not None else {}), status="ok", reason="")
            try:
                if check:
                    # torch's own answer is checked against the float32-rounded y's float64 dx like ours
                    problem = mismatch(call(), ref, dt)
                    if problem:
                        rows.append({**row, "status": "failed", "reason": str(problem.to_json())})
                        continue
                t = timer(call)
                row.update(ms_p20=t.p20, ms_median=t.median, ms_p80=t.p80, gbps=nbytes / t.median / 1e6)
            except Exception as err:  # noqa: BLE001  (a failure is data)
                row.update(status="failed", reason=f"{type(err).__name__}: {str(err).splitlines()[0][:120]}")
            rows.append(row)
        frame = pd.DataFrame(rows)
        copy = {(r.M, r.N, r.dtype): r.gbps for r in frame.itertuples() if r.provider == "copy" and r.status == "ok"}
        frame["copy_ratio"] = [r.gbps / copy.get((r.M, r.N, r.dtype), float("nan")) if r.status == "ok"
                               else float("nan") for r in frame.itertuples()]
        frame.to_csv(stem.with_suffix(".csv"), index=False)
        stem.with_suffix(".json").write_text(json.dumps({**info, "csv": stem.with_suffix(".csv").name}, indent=2)
                                             + "\n")
        best = frame[(frame.M == s.M) & (frame.N == s.N) & frame.provider.ne("copy")].sort_values("copy_ratio")
        print(s, " ".join(f"{r.provider}:{r.copy_ratio:.2f}" for r in best.tail(4).itertuples()), flush=True)
        if not runtime.INTERPRETED:
            torch.cuda.empty_cache()
    return pd.DataFrame(rows)


def rule_choice(grp: pd.DataFrame, M: int, N: int, dtype: str) -> str:
    """The candidate the fitted plan (plans/tuned.py) takes at one recorded shape, decided by the H200's own
    compiles as the record holds them (registers, spills, programs per SM of each launch): whole rows on the
    warps of BACKWARD_BYTES_PER_THREAD or twice as many where the edge kernel reads them, unless too few bytes
    are in flight for a row long enough to share; "default" (the plan the run measured) everywhere else, which
    the fit leaves as it was (long rows, and rows the any-width plans' vector rows take)."""
    from softmax_core.plans import tuned

    gpu, dt = default_gpu(), dtypes.torch_dtype(dtype)
    elt = dt.itemsize
    edge = tuned.backward_rows_take_edges(N, dt, gpu, True, tuned.row_vector(N, dt), None, None)
    rows, block, w0 = tuned.rows_config(N, elt, gpu, 1 if edge else M, "backward")
    if not edge or tuned.values_per_thread(rows, block, w0) > tuned.max_values_per_thread(N, elt, "backward"):
        return "default"
    usable = [w for w in (w0, 2 * w0) if w <= tuned.MAX_WARPS and f"rows-w{w}" in grp.index
              and grp.loc[f"rows-w{w}", "spills"] == 0 and grp.loc[f"rows-w{w}", "per_sm"] > 0]
    if not usable:
        return "default"
    w = max(usable, key=lambda w: (grp.loc[f"rows-w{w}", "per_sm"], w))
    in_flight = grp.loc[f"rows-w{w}", "per_sm"] * 2 * N * elt
    shareable = tuned.split_config(N, gpu, "backward", element_bytes=elt)[0] > 1
    return "default" if shareable and in_flight < tuned.BACKWARD_ROWS_MIN_IN_FLIGHT else f"rows-w{w}"


def rule_figures(csv: str | Path) -> pd.DataFrame:
    """Per recorded shape: the fitted plan's candidate and its ratio to copy, beside the run's default, the best
    of the grid and torch's backward (`python -m bench_tools.record.rows_backward_tune --figures CSV`)."""
    frame = pd.read_csv(csv)
    out = []
    for (name, cls, M, N, dtype), grp in frame[frame.status == "ok"].groupby(["set", "cls", "M", "N", "dtype"],
                                                                             sort=False):
        grp = grp.set_index("provider")
        choice = rule_choice(grp, M, N, dtype)
        grid = grp.drop(["copy", "torch", "autograd-default"], errors="ignore").copy_ratio
        out.append(dict(set=name, cls=cls, M=M, N=N, dtype=dtype, choice=choice, rule=grp.copy_ratio[choice],
                        default=grp.copy_ratio["default"], best=grid.max(), best_variant=grid.idxmax(),
                        torch=grp.copy_ratio["torch"], rule_vs_torch=grp.copy_ratio[choice] / grp.copy_ratio["torch"]))
    return pd.DataFrame(out)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench_tools.record.rows_backward_tune",
                                     description=__doc__.splitlines()[0])
    parser.add_argument("stem", nargs="?")
    parser.add_argument("--figures", metavar="CSV", help="the fitted plan's figures on a recorded run, per set")
    parser.add_argument("--fit-seed", type=int)
    parser.add_argument("--check-seed", type=int)
    parser.add_argument("--fit-per-class", type=int, default=8)
    parser.add_argument("--check-per-class", type=int, default=6)
    parser.add_argument("--warm", nargs=2, type=int, metavar=("K", "N"))
    parser.add_argument("--direction", choices=("backward", "forward"), default="backward",
                        help="forward: rows of at most 1024 values only")
    parser.add_argument("--cols", nargs=2, type=int, metavar=("LOW", "HIGH"), default=(MIN_COLS, 1 << 30),
                        help=f"row widths drawn (both included; default {MIN_COLS} up; {SHORT_FROM_COLS}-{MIN_COLS - 1}: "
                             "rows of 1-8 a program on 1-8 warps)")
    parser.add_argument("--list", action="store_true")
    parser.add_argument("--warmup-ms", type=int, default=5)
    parser.add_argument("--rep-ms", type=int, default=20)
    parser.add_argument("--seconds", type=float, default=None, help="stop starting new shapes after this long")
    args = parser.parse_args(argv)
    if args.figures:
        import statistics
        figures = rule_figures(args.figures)
        print(figures.round(3).to_string(index=False))
        for (name, cls), g in figures.groupby(["set", "cls"], sort=False):
            print(f"{name} {cls}: fitted plan min {g.rule.min():.2f} / median {statistics.median(g.rule):.2f}, "
                  f"the run's default {g.default.min():.2f} / {statistics.median(g.default):.2f}, best of the grid "
                  f"median {statistics.median(g.best):.2f}; lowest ÷ torch {g.rule_vs_torch.min():.2f}")
        return 0
    if args.fit_seed is None or args.check_seed is None:
        parser.error("--fit-seed and --check-seed are needed (or --figures CSV)")
    todo = shapes(args.fit_seed, args.check_seed, args.fit_per_class, args.check_per_class, tuple(args.cols))
    seed = args.fit_seed * 1000 + args.check_seed
    if args.list:
        for s in todo:
            names = [n for n, _ in candidates(s, args.direction)]
            print(s, len(names), " ".join(names))
        return 0
    if args.warm:
        warm(*args.warm, todo, seed, args.direction)
        return 0
    if not args.stem:
        parser.error("name the output (STEM), or --warm K N, or --list")
    from softmax_bench.timers import DoBenchTimer, default_timer
    timer = default_timer() if runtime.INTERPRETED else DoBenchTimer(args.warmup_ms, args.rep_ms)
    command = shlex.join(["python", "-m", "bench_tools.record.rows_backward_tune",
                          *(argv if argv is not None else sys.argv[1:])])
    deadline = time.time() + args.seconds if args.seconds else None
    run(todo, Path(args.stem), seed, timer, command, deadline, args.fit_seed, args.check_seed, args.direction)
    return 0


if __name__ == "__main__":
    sys.exit(main())
