"""Tuning sweep for rows over a contiguous last dim at the widths real models use (issue 21 items 1, 3): for each
case, forward and backward, the library's plan beside launch shapes that are not its plan (other tiles, warps,
grids, chunks, programs per row, the rows kernel's vector hint), each checked against torch's float32 answer and
timed by the benchmark harness (softmax_bench.harness.measure) beside copy and torch in the same run.
Routers also time the whole eager backward (autograd.grad) beside the backward kernel alone, ours and torch's,
to tell kernel time from per-call cost.

    python -m bench_tools.rows_tune --warm K N     # compile every N-th variant from the K-th (Triton's disk cache)
    python -m bench_tools.rows_tune OUT_STEM [--rep-ms 25] [--cases gpt2,odd-3000]
    python -m bench_tools.rows_tune OUT_STEM --dense   # the library's plan only, at DENSE's widths
    python -m bench_tools.rows_tune OUT_STEM --second  # SECOND's cases: edge tiles and grids, mid widths
    python -m bench_tools.rows_tune OUT_STEM --split-edges   # SPLIT_EDGES' cases: the split path reading an
                                                             # aligned body between masked edges, beside the plan
    python -m bench_tools.rows_tune OUT_STEM --classes long_rows,mid_rows,short_rows --seed S [--shapes 6]
                          # the class sweep's draw of those row classes (bench_tools/class_sweep.py): each shape's
                          # plan beside the launch shapes of its kernel families (class_variants)

writes OUT_STEM.csv (the harness's columns, plus case and variant settings) and OUT_STEM.json (provenance).
Running a few --warm processes first compiles the variants in parallel; the timed run then finds them compiled.
"""
from __future__ import annotations

import argparse
import json
import shlex
import sys
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Callable

import pandas as pd
import torch
import triton

import softmax_bench as bench
from softmax_core.hardware import dtypes
from softmax_core.hardware.gpu import default_gpu
from softmax_core.launch.api import softmax, softmax_backward, softmax_forward
from softmax_core.plans.any_width import edge_plan, short_rows_plan, word_rows_plan
from softmax_core.plans.choose import plan_softmax
from softmax_core.plans.tuned import SoftmaxPlan, plan_split, plan_tiled

BF16, FP16, FP32 = torch.bfloat16, torch.float16, torch.float32
# (name, M, N, dtype): vocabulary logits, an odd width, decode rows, routers
CASES = (("gpt2", 8192, 50257, BF16), ("llama2", 8192, 32000, BF16), ("llama3", 4096, 128256, BF16),
         ("qwen2", 2048, 151936, BF16), ("decode-batch", 64, 151936, BF16), ("odd-3000", 10000, 3000, FP16),
         ("odd-5000", 8192, 5000, FP16), ("vocab-100277", 4096, 100277, BF16), ("fp32-50257", 4096, 50257, FP32),
         ("router-8", 65536, 8, BF16), ("router-64", 65536, 64, FP32))
ROUTERS = ("router-8", "router-64")
# --dense: the library's own plan only, over a dense range of widths (vocabularies and odd widths, three dtypes),
# so that a jump in ratio between neighbouring N shows where the plan's choice is not continuous.
VOCABULARIES = (32000, 50257, 65536, 100277, 128256, 151936, 256000)
ODD_WIDTHS = (1000, 3000, 5000, 11008)
POWERS = (4096, 8192, 16384)
DENSE = (tuple((f"dense-{n}-bf16", 2048, n, BF16) for n in VOCABULARIES)
         + tuple((f"dense-{n}-bf16", 8192, n, BF16) for n in POWERS)
         + tuple((f"dense-{n}-fp32", 1024, n, FP32) for n in VOCABULARIES[:5])
         + tuple((f"dense-{n}-{str(dt)[6:]}", 8192, n, dt) for n in ODD_WIDTHS for dt in (BF16, FP16, FP32)))


@dataclass(frozen=True)
class Variant:
    name: str
    direction: str
    plan: SoftmaxPlan | None      # None: a whole-call variant (routers)
    call: Callable | None = None  # whole-call variants: (x, dy) -> the call to time


def describe(plan: SoftmaxPlan) -> str:
    return (f"{plan.path} block={plan.block_n} warps={plan.num_warps} rows={plan.rows_per_program} "
            f"grid={plan.num_programs} split={plan.split} edges={plan.edges} tiny={plan.tiny} vec={plan.vec} "
            f"regs={plan.resources.n_regs} spills={plan.resources.n_spills}")


def _tiled(M, N, dt, direction, tile, warps, split=None, edges=False, per_sm=None):
    p = plan_tiled(M, N, dt, default_gpu(), direction, tile=tile, num_warps=warps, split=split)
    if edges:
        p = edge_plan(p, dt)
    if per_sm:
        p = replace(p, num_programs=min(M, per_sm * default_gpu().multiprocessor_count))
    return p


def _split(M, N, dt, direction, chunk, warps, edges=False):
    return plan_split(M, N, dt, default_gpu(), direction, chunk=chunk, num_warps=warps, edges=edges)


def _autograd_call(fn):
    def prepare(x, dy):
        leaf = x.detach().requires_grad_()
        y = fn(leaf)
        return lambda: torch.autograd.grad(y, leaf, dy, retain_graph=True)[0]
    return prepare


def _torch_kernel_call(x, dy):
    y = torch.softmax(x, -1)
    return lambda: torch._softmax_backward_data(dy, y, -1, x.dtype)


def adder(name: str, out: list, spilled: bool = True) -> Callable:
    """add(tag, direction, make): appends Variant(tag, direction, make()) to `out`; a plan that cannot be made is
    printed and left out, as is one that spills registers where `spilled` is False."""
    def add(tag, direction, make):
        try:
            plan = make()
        except (ValueError, RuntimeError) as err:
            print(f"{name} {tag}: not planned ({str(err).splitlines()[0][:80]})", flush=True)
            return
        if plan is not None and (spilled or plan.resources.n_spills == 0):
            out.append(Variant(tag, direction, plan))
    return add


def _rows_shape(base: SoftmaxPlan, rows: int, warps: int, **more) -> SoftmaxPlan:
    """The rows plan `base` at `rows` rows a program on `warps` warps (its grid follows)."""
    return replace(base, rows_per_program=rows, num_warps=warps, num_programs=triton.cdiv(base.n_rows, rows), **more)


def variants(name: str, M: int, N: int, dt: torch.dtype, dense: bool = False) -> list[Variant]:
    """Every variant of one case, in a fixed order; `dense`: the library's plans only."""
    gpu, out = default_gpu(), []
    add = adder(name, out)
    for d in ("forward", "backward"):
        add(f"default-{d}", d, lambda d=d: plan_softmax(M, N, dt, gpu, d))
    if dense:   # beside the plan: whole rows as the rows path held them before (where they fit)
        for d in ("forward", "backward"):
            if dt.itemsize == 2 and 1024 < N <= 16384:
                add(f"rows-whole-{d}", d, lambda d=d: plan_softmax(M, N, dt, gpu, d, path="rows", edges=False))
        return out
    if name in ROUTERS:
        out.append(Variant("autograd-tuned", "backward", None, _autograd_call(lambda t: softmax(t, -1))))
        out.append(Variant("autograd-torch", "backward", None, _autograd_call(lambda t: torch.softmax(t, -1))))
        out.append(Variant("kernel-torch", "backward", None, _torch_kernel_call))
        return out
    elt = dtypes.element_size(dt)
    if N * elt <= 16 * 1024:     # whole rows: the vector hint and rows per program
        for d in ("forward", "backward"):
            base = plan_softmax(M, N, dt, gpu, d, path="rows", edges=False)
            for rows in (1, 2, 4):
                for warps in (4, 8):
                    p = _rows_shape(base, rows, warps)
                    out.append(Variant(f"rows-r{rows}-w{warps}-vec{p.vec}", d, p))
            out.append(Variant("rows-r2-w8-vec1", d, _rows_shape(base, 2, 8, vec=1)))
        return out
    edges = N % 16 != 0
    for tile, warps in ((8192, 4), (8192, 8), (16384, 8), (16384, 16)):
        for per_sm in (None, 2, 1):
            add(f"tiled-t{tile}-w{warps}-g{per_sm or 'all'}{'-edges' if edges else ''}", "forward",
                lambda: _tiled(M, N, dt, "forward", tile, warps, 1, edges, per_sm))
    for chunk, warps in ((4096, 2), (8192, 2), (16384, 4), (8192, 4), (4096, 4)):
        add(f"split-c{chunk}-w{warps}", "forward", lambda: _split(M, N, dt, "forward", chunk, warps))
        add(f"split-c{chunk}-w{warps}", "backward", lambda: _split(M, N, dt, "backward", chunk, warps))
    for tile, warps, split in ((16384, 16, 1), (8192, 8, 1), (8192, 8, 4), (8192, 8, 8), (8192, 8, 16), (4096, 4, 8)):
        add(f"tiled-t{tile}-w{warps}-s{split}", "backward", lambda: _tiled(M, N, dt, "backward", tile, warps, split))
    if edges:
        add("tiled-t8192-w8-edges", "backward", lambda: _tiled(M, N, dt, "backward", 8192, 8, 1, True))
        add("tiled-t16384-w16-edges", "backward", lambda: _tiled(M, N, dt, "backward", 16384, 16, 1, True))
    return out


# --second: the edge kernel's tiles and grids on unaligned vocabularies, and 2-byte widths of 1000-11008 values on
# the rows kernel (its vector hint) against tiles. (Run h200-rows-tune-20261201-2 timed these tiles with the edge
# kernel prefetching its next tile, commit a79d444 of branch rows: no faster than without, so it was taken out.)
SECOND = (("gpt2", 8192, 50257, BF16), ("vocab-100277", 4096, 100277, BF16), ("odd-5000", 8192, 5000, FP16),
          ("odd-3000-bf16", 10000, 3000, BF16), ("mlp-11008", 8192, 11008, BF16), ("head-1000", 16384, 1000, BF16),
          ("vocab-65536", 4096, 65536, BF16))


def second_variants(name: str, M: int, N: int, dt: torch.dtype) -> list[Variant]:
    gpu, out = default_gpu(), []
    for d in ("forward", "backward"):
        out.append(Variant(f"default-{d}", d, plan_softmax(M, N, dt, gpu, d)))
    edges = N % 16 != 0
    if N >= 32768:
        for tile, warps in ((4096, 4), (8192, 4), (8192, 8), (16384, 8), (16384, 16)):
            for per_sm in (None, 2, 3):
                if edges:
                    out.append(Variant(f"edges-t{tile}-w{warps}-g{per_sm or 'all'}", "forward",
                                       _tiled(M, N, dt, "forward", tile, warps, 1, True, per_sm)))
                elif warps == 8:
                    out.append(Variant(f"tiled-t{tile}-w{warps}-g{per_sm or 'all'}", "forward",
                                       _tiled(M, N, dt, "forward", tile, warps, 1, False, per_sm)))
        return out
    block = triton.next_power_of_2(N)
    for tile, warps in ((4096, 4), (4096, 8), (8192, 4), (8192, 8), (16384, 8)):
        if tile <= block:
            out.append(Variant(f"tiled-t{tile}-w{warps}{'-edges' if edges else ''}", "forward",
                               _tiled(M, N, dt, "forward", tile, warps, 1, edges)))
    for d in ("forward", "backward"):
        base = plan_softmax(M, N, dt, gpu, d, path="rows", edges=False)
        for rows, warps in ((1, 1), (1, 2), (1, 4), (1, 8), (2, 2), (2, 4), (4, 4), (8, 4), (8, 8), (16, 4)):
            if rows * block * dt.itemsize <= 32 * 1024 and rows * block // (32 * warps) <= 128:
                p = _rows_shape(base, rows, warps)
                out.append(Variant(f"rows-r{rows}-w{warps}-vec{p.vec}", d, p))
        if edges:
            out.append(Variant("edges", d, plan_softmax(M, N, dt, gpu, d, edges=True)))
    return out


# --split-edges: rows of widths Triton cannot prove aligned (odd widths from 20001 to 151935, GPT-2's 50257) on the
# split path with EDGES (kernels/shared_rows.py), the plan's chunk and warps and neighbouring shapes, beside the
# library's plan and the split path reading value by value (where that fits without spilling).
SPLIT_EDGES = (("odd-20001", 8192, 20001, BF16), ("odd-32001", 8192, 32001, BF16), ("gpt2", 8192, 50257, BF16),
               ("odd-65537", 4096, 65537, BF16), ("vocab-100277", 4096, 100277, BF16),
               ("odd-151935", 2048, 151935, BF16), ("odd-50257-fp32", 4096, 50257, FP32))
SPLIT_EDGE_SHAPES = ((None, None), (4096, 4), (8192, 2), (8192, 4))    # (chunk, warps); None: the plan's


def split_edge_variants(name: str, M: int, N: int, dt: torch.dtype) -> list[Variant]:
    gpu, out = default_gpu(), []
    for d in ("forward", "backward"):
        out.append(Variant(f"default-{d}", d, plan_softmax(M, N, dt, gpu, d)))
        for chunk, warps in SPLIT_EDGE_SHAPES:
            for edges in (True, False):
                plan = _split(M, N, dt, d, chunk, warps, edges)
                if plan is not None:
                    out.append(Variant(f"split-c{plan.block_n}-w{plan.num_warps}{'-edges' if edges else ''}", d, plan))
    return out


# --classes: random shapes of the rows classes, drawn as the class sweep draws them (its seed, its per-class
# streams), each timed on its plan and on the other launch shapes of the kernel families that could run it.
LONG_TILES = ((4096, 4), (8192, 4), (8192, 8), (16384, 8), (16384, 16), (32768, 16))
LONG_SPLITS = ((None, None), (4096, 2), (8192, 2), (8192, 4))
SHORT_ROWS_SHAPES = tuple((values, warps) for values in (512, 1024, 2048, 4096) for warps in (1, 2, 4, 8))


def class_cases(keys: str, seed: int, per_class: int):
    from bench_tools.class_sweep import draw
    return [(f"{s.cls}-{i}", s.shape[0], s.shape[1], getattr(torch, s.dtype))
            for i, s in enumerate(draw(seed, keys.split(","), per_class)) if len(s.shape) == 2 and s.dim == 1]


def class_variants(name: str, M: int, N: int, dt: torch.dtype) -> list[Variant]:
    gpu, out = default_gpu(), []
    add = adder(name, out, spilled=False)
    for d in ("forward", "backward"):
        add(f"default-{d}", d, lambda d=d: plan_softmax(M, N, dt, gpu, d))
    edges = N % 16 != 0
    block = triton.next_power_of_2(N)
    if N >= 16384:
        for tile, warps in LONG_TILES:
            if tile <= block:
                add(f"tiled-t{tile}-w{warps}{'-edges' if edges else ''}", "forward",
                    lambda: _tiled(M, N, dt, "forward", tile, warps, 1, edges))
        for d in ("forward", "backward"):
            for chunk, warps in LONG_SPLITS:
                add(f"split-c{chunk}-w{warps}", d, lambda d=d: _split(M, N, dt, d, chunk, warps, edges or None))
        for tile, warps, split in ((16384, 16, 1), (8192, 8, 1), (8192, 8, 4), (8192, 8, 8)):
            add(f"tiled-t{tile}-w{warps}-s{split}", "backward",
                lambda: _tiled(M, N, dt, "backward", tile, warps, split))
        return out
    if N > 255:                               # mid rows: whole rows on 2-16 warps, tiles, the edge kernel
        for d in ("forward", "backward"):
            base = plan_softmax(M, N, dt, gpu, d, path="rows", edges=False)
            for rows in (1, 2, 4):
                for warps in (2, 4, 8, 16):
                    if 4 <= rows * block // (32 * warps) <= 64:
                        add(f"rows-r{rows}-w{warps}-vec{base.vec}", d, lambda: _rows_shape(base, rows, warps))
            if edges:
                add("edges", d, lambda d=d: plan_softmax(M, N, dt, gpu, d, edges=True))
        for d, tiles in (("forward", ((2048, 4), (4096, 4), (8192, 4), (8192, 8))),
                         ("backward", ((2048, 4), (4096, 4), (4096, 8), (8192, 8)))):     # each read twice
            for tile, warps in tiles:
                if tile < block:
                    add(f"tiled-t{tile}-w{warps}{'-edges' if edges else ''}", d,
                        lambda d=d: _tiled(M, N, dt, d, tile, warps, 1, edges))
        if N >= 4096:                         # a row shared by 2-4 programs
            for chunk, warps in ((2048, 2), (2048, 4), (4096, 2), (4096, 4)):
                add(f"split-c{chunk}-w{warps}", "backward",
                    lambda: _split(M, N, dt, "backward", chunk, warps, edges or None))
        return out
    for d in ("forward", "backward"):
        base = plan_softmax(M, N, dt, gpu, d, path="rows", edges=False)
        for values, warps in SHORT_ROWS_SHAPES:
            rows = max(1, values // block)
            if values // (32 * warps) <= 64 and values // (32 * warps) >= 1:
                add(f"rows-r{rows}-w{warps}-vec{base.vec}", d, lambda: _rows_shape(base, rows, warps))
                if d == "forward" and N <= 64:
                    add(f"lane-r{rows}-w{warps}", d, lambda: short_rows_plan(base, dt, rows, warps))
        if d == "backward" and N <= 255:      # the span, and 2-byte rows in words (what the plan chooses between)
            add("span", d, lambda: short_rows_plan(base, dt))
            for warps in ((2, 4, 8) if dt.itemsize == 2 else ()):
                add(f"words-p2-v1024-w{warps}", d, lambda: word_rows_plan(base, dt, 2, 1024, warps))
    return out


def provider_of(v: Variant) -> bench.Provider:
    if v.plan is None:
        return bench.Provider(v.name, lambda x: None, v.call)
    fwd_plan = v.plan if v.direction == "forward" else None

    def backward(x, dy):
        y = torch.softmax(x.float(), -1).to(x.dtype)
        return lambda: softmax_backward(y, dy, v.plan)
    return bench.Provider(v.name, (lambda x: softmax_forward(x, fwd_plan)) if fwd_plan else (lambda x: None),
                          backward if v.direction == "backward" else None)


# The case groups the command line chooses between (CASES without a flag): their cases, and each case's variants.
GROUPS = {"cases": (CASES, variants), "dense": (DENSE, lambda *case: variants(*case, dense=True)),
          "second": (SECOND, second_variants), "split_edges": (SPLIT_EDGES, split_edge_variants),
          "classes": ((), class_variants)}


def selected(names: str | None, group: str = "cases"):
    wanted = set(names.split(",")) if names else None
    return [c for c in GROUPS[group][0] if wanted is None or c[0] in wanted]


def case_variants(case, group: str = "cases") -> list[Variant]:
    return GROUPS[group][1](*case)


def warm(k: int, n: int, cases, group: str) -> None:
    """Plan and compile every n-th case from the k-th: one launch of each variant on the case's whole matrix
    (a plan's launch carries its own row count, so it must be given the M rows it was made for)."""
    for name, M, N, dt in cases[k::n]:
        x = torch.randn(M, N, device="cuda").to(dt)
        for v in case_variants((name, M, N, dt), group):
            if v.plan is None:
                continue
            try:
                if v.direction == "forward":
                    softmax_forward(x, v.plan)
                else:
                    softmax_backward(torch.softmax(x.float(), -1).to(dt), torch.randn_like(x), v.plan)
            except Exception as err:  # noqa: BLE001  (the timed run records it)
                print(f"warm {name} {v.name}: {type(err).__name__}", flush=True)
    torch.cuda.synchronize()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench_tools.rows_tune", description=__doc__.splitlines()[0])
    parser.add_argument("stem", nargs="?")
    parser.add_argument("--warm", nargs=2, type=int, metavar=("K", "N"))
    parser.add_argument("--cases", default=None)
    parser.add_argument("--rep-ms", type=int, default=25)
    parser.add_argument("--dense", action="store_true")
    parser.add_argument("--second", action="store_true")
    parser.add_argument("--split-edges", action="store_true")
    parser.add_argument("--classes", default=None, help="comma-separated row classes of bench_tools.class_sweep")
    parser.add_argument("--seed", type=int, default=1, help="with --classes: the class sweep's draw")
    parser.add_argument("--shapes", type=int, default=6, help="with --classes: shapes a class")
    args = parser.parse_args(argv)
    group = ("classes" if args.classes else "dense" if args.dense else "second" if args.second
             else "split_edges" if args.split_edges else "cases")
    cases = class_cases(args.classes, args.seed, args.shapes) if args.classes else selected(args.cases, group)
    if args.warm:
        warm(*args.warm, cases, group)
        return 0
    if not args.stem:
        parser.error("name the output (STEM), or --warm K N")
    timer = bench.TIMERS[bench.EAGER](args.rep_ms)
    rows = []
    command = shlex.join(["python", "-m", "bench_tools.rows_tune", *(argv if argv is not None else sys.argv[1:])])
    with bench.exclusive_gpu():
        for name, M, N, dt in cases:
            inputs = bench.make_inputs(M, N, dt, True, 0)
            for d in ("forward", "backward"):
                for b in ("copy", "torch"):
                    rows.append({**bench.measure(bench.get_provider(b), d, inputs, timer), "case": name})
            for v in case_variants((name, M, N, dt), group):
                r = bench.measure(provider_of(v), v.direction, inputs, timer)
                rows.append({**r, "case": name, "settings": describe(v.plan) if v.plan else "whole call"})
                print(name, v.direction, v.name, r["status"], f"{r['ms_median']:.4f}", flush=True)
            del inputs
            torch.cuda.empty_cache()
            frame = write_record(rows, Path(args.stem), command, timer, cases)    # after every case: a cut run keeps it
    ok = frame[frame.status == "ok"]
    print(ok[["case", "direction", "provider", "ms_median", "copy_ratio"]].to_string(index=False))
    return 0


def write_record(rows: list[dict], stem: Path, command: str, timer, cases) -> pd.DataFrame:
    """STEM.csv (every row so far, with its ratio to the same case's copy) and STEM.json (provenance)."""
    frame = pd.DataFrame(rows)
    copy = {(r.case, r.direction): r.gbps for r in frame.itertuples() if r.provider == "copy" and r.status == "ok"}
    frame["copy_ratio"] = [r.gbps / copy[(r.case, r.direction)] if (r.case, r.direction) in copy else float("nan")
                           for r in frame.itertuples()]
    stem.parent.mkdir(parents=True, exist_ok=True)
    bench.csv_frame(frame).to_csv(stem.with_suffix(".csv"), index=False)
    info = bench.provenance(0, sorted({int(n) for n in frame.N}), ",".join(sorted(set(frame.dtype))),
                            ["copy", "torch"], ["forward", "backward"], bench.timer_kind(timer),
                            bench.timer_figures(timer), command, 0)
    info.update(csv=stem.with_suffix(".csv").name, cases=[[c[0], c[1], c[2], dtypes.name(c[3])] for c in cases])
    stem.with_suffix(".json").write_text(json.dumps(info, indent=2) + "\n")
    return frame


if __name__ == "__main__":
    sys.exit(main())
