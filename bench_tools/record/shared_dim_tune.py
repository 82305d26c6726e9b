"""Tuning sweep for the strided kernels whose programs share a tile (kernels/shared_dim.py) or cut its reduced axis
into parts (kernels/split_dim.py) against the two-pass and fitted plans, on shapes drawn by the class sweep
(bench_tools/class_sweep.py): per shape, copy of the same bytes, the fitted plan, plan_any_dim's two passes, and
each two-pass variant (column bytes, chunk values), one-pass slab variant (column bytes, the whole reduced axis
down them, on a slab larger than the fitted plan holds), shared variant (piece values, column bytes, warps) and parts
variant (column bytes, chunk values, programs an SM; `waits`: the parts waiting for each other in one launch,
sized so that the resident programs' parts fit L2), and the library's plan with its tile addressed by 64-bit
pointers and by 32-bit offsets within a slice (`offsets`), forward and backward, in one run (`--variants` picks the
kinds); every variant is launched as sc.softmax launches it (the kept launcher after the first call), so the time
is the kernel's and not the JIT's.

Each variant's output is checked against torch's in float32 before it is timed. Timer: triton.testing.do_bench
(L2 flushed before every call), median ms. The CSV is rewritten after every shape.

    python -m bench_tools.record.shared_dim_tune OUT.csv --seeds 1,11,12 [--per-class 6]
    python -m bench_tools.record.shared_dim_tune OUT.csv --seeds 2727 --variants fitted,parts --warm K N

`--warm K N` launches every N-th (shape, variant) from the K-th once and times nothing, so that N processes
compile the grid in parallel before the timed run (which then finds every kernel in Triton's cache).
"""
from __future__ import annotations

import argparse
import csv
import sys
from dataclasses import replace

import torch
import triton
import triton.testing

from bench_tools.class_sweep import draw
from softmax_core.hardware import dtypes
from softmax_core.hardware.gpu import default_gpu
from softmax_core.launch import any_dim
from softmax_core.plans.any_dim import plan_any_dim, plan_split_dim, plan_strided, word_values
from softmax_core.plans.kernel_jobs import launch_resources
from softmax_core.plans.shared_dim import plan_shared_dim
from softmax_core.plans.strided import dim_groups, forward_groups, layout_in, slices_span_32_bits, transposes

CLASSES = ("dim_inner_wide", "dim_inner_narrow", "transposed")
# Shared tiles: (piece values, column bytes, warps or None for the fitted count)
SHARED = ((8192, 128, None), (8192, 256, 16), (16384, 256, 16), (4096, 64, None))
# Two passes: (column bytes, values per chunk)
TWO_PASS = ((32, 4096), (64, 4096), (128, 4096), (256, 4096), (512, 4096), (32, 8192), (64, 8192), (128, 8192),
            (256, 8192), (128, 2048))
# One pass over a slab larger than the fitted plan holds: column bytes; the whole reduced axis down them, on up to
# 16 warps, where the slab is at most SLAB_MAX_VALUES values (the backward: half as many, y and dy each)
SLAB = (8, 16, 32, 64, 128)
SLAB_MAX_VALUES = 32768
# Parts: (column bytes, chunk values forward, programs an SM); the backward's chunk is half as many values
PARTS = ((64, 2048, 8), (64, 4096, 16), (128, 2048, 8), (128, 4096, 4), (128, 4096, 8), (128, 4096, 16),
         (256, 4096, 8), (256, 8192, 8), (512, 8192, 4))
FEW_PARTS = ((64, 4096, 16), (128, 4096, 8), (256, 8192, 8), (512, 8192, 4))
# Parts that wait for each other in one launch, each small enough that the resident programs' parts fit L2's share:
# (column bytes, chunk values forward, programs an SM the parts are sized for)
WAITS = ((32, 2048, 8), (64, 2048, 8), (128, 2048, 8), (128, 4096, 4), (256, 4096, 4))


def variants_of(direction: str, cols, kinds: set) -> list[tuple[str, dict]]:
    """(name, plan overrides) of every variant of these kinds, in a fixed order."""
    half = 2 if direction == "backward" else 1
    out = [("fitted", {}), ("two-fitted", dict(two_pass=True))] if "fitted" in kinds else []
    if "offsets" in kinds:             # the library's any-dim plan addressed with 64-bit pointers, and with 32-bit
        out += [("offsets-64", dict(offsets_32=False)), ("offsets-32", dict(offsets_32=True))]   # offsets
    if "packed" in kinds:
        out += [("unpacked", dict(packed=False)), ("packed", dict(packed=True)),
                ("packed-two", dict(packed=True, two_pass=True))]
    if "two" in kinds:
        out += [(f"two-b{b}-v{v // half}", dict(block_i=cols(b), block_r=max(1, v // half // cols(b))))
                for b, v in TWO_PASS]
    if "slab" in kinds:
        out += [(f"slab-b{b}", dict(block_i=cols(b), block_r=1 << 30, max_values=SLAB_MAX_VALUES // half))
                for b in SLAB]
    if "shared" in kinds:
        out += [(f"shared-v{v // half}-b{b}-w{w}", dict(shared=True, values=v // half, nbytes=b, num_warps=w))
                for v, b, w in SHARED]
    parts = FEW_PARTS if "few-parts" in kinds else PARTS if "parts" in kinds else ()
    out += [(f"parts-b{b}-v{v // half}-s{n}", dict(parts=True, column_bytes=b, values=v // half, per_sm=n))
            for b, v, n in parts]
    if "waits" in kinds:
        out += [(f"waits-b{b}-v{v // half}-s{n}", dict(parts=True, column_bytes=b, values=v // half, per_sm=n,
                                                      waits=True)) for b, v, n in WAITS]
    return out


def ms(fn) -> float:
    return triton.testing.do_bench(fn, warmup=10, rep=30, quantiles=[0.5])


def _plan(layout, elt, dtype, gpu, direction, written, transposing, kw):
    """The variant's plan: shared tiles (None where they cannot run), or plan_any_dim's with its overrides."""
    kw = dict(kw)
    if "offsets_32" in kw:             # the library's plan, its tile addressed the other way (None where it is not)
        want = kw.pop("offsets_32")
        library = plan_strided(layout, elt, dtype, gpu, direction, transposing=transposing, written=written)
        if (library.cut or library.shares or library.offsets_32 == want
                or (want and not slices_span_32_bits(layout, written))):
            return None
        plan = replace(library, offsets_32=want)
        found = launch_resources(plan, written)
        return replace(plan, n_regs=found.n_regs, n_spills=found.n_spills, n_shared=found.shared_bytes)
    if "packed" in kw:                 # the library's plan (or two passes) with every tensor loaded in the widest
        widest = kw.pop("packed")      # words its layout allows, or one value a lane
        library = plan_strided(layout, elt, dtype, gpu, direction, transposing=transposing, written=written)
        if kw.pop("two_pass", False):
            if not library.cut:
                return None
            plan = plan_any_dim(layout, elt, dtype, gpu, direction, transposing=transposing, written=written)
        else:
            plan = library
        if plan.cut or plan.shares:
            return None
        packs = (word_values(layout, elt), word_values(written, elt)) if widest else (1, 1)
        return replace(plan, pack=min(plan.block_i, packs[0]), pack_written=min(plan.block_i, packs[1]))
    if kw.pop("two_pass", False):      # plan_any_dim's own plan: its fitted tiles, walked twice
        return plan_any_dim(layout, elt, dtype, gpu, direction, transposing=transposing, written=written)
    if kw.pop("shared", False):
        return plan_shared_dim(layout, elt, dtype, gpu, direction, written=written, **kw)
    if kw.pop("parts", False):
        return plan_split_dim(layout, elt, dtype, gpu, direction, written=written, transposing=transposing, **kw)
    max_values = kw.pop("max_values", None)
    if max_values is not None:         # one pass over the whole reduced axis, where the slab is at most max_values
        plan = plan_any_dim(layout, elt, dtype, gpu, direction, transposing=transposing, written=written, **kw)
        return plan if plan.one_pass and plan.block_r * plan.block_i * plan.block_o <= max_values else None
    if not kw:                         # the library's plan (the one "fitted" launches)
        return plan_strided(layout, elt, dtype, gpu, direction, transposing=transposing, written=written)
    return plan_any_dim(layout, elt, dtype, gpu, direction, transposing=transposing, written=written, **kw)


def forward_call(x, dim, dt, plan):
    """y = f() by `plan`, through the kept launcher after the first call (as sc.softmax launches)."""
    ready = any_dim.ready_for(x, dim, False, dt)
    if plan is not None:
        ready.calls = any_dim.PlanCalls(plan)
    return lambda: ready(x)


def backward_call(y, dy, dim, dt, plan):
    made = any_dim.BackwardLaunch(y, dy, dim, plan)
    dx = torch.empty_like(y)
    kept = []

    def go():
        if kept:
            kept[0](y, dy, dx)
        else:
            compiled = made.run(y, dy, dx)
            kept.append(made.calls.keep(compiled, (y, dy, dx), made.args, made.run) if compiled is not None
                        else made.run)
        return dx
    return go


def main(argv: list[str]) -> int:
    p = argparse.ArgumentParser()
    p.add_argument("out")
    p.add_argument("--seeds", default="1,11,12")
    p.add_argument("--per-class", type=int, default=6)
    p.add_argument("--classes", default=",".join(CLASSES), help="comma-separated, of the strided classes")
    p.add_argument("--directions", default="forward,backward")
    p.add_argument("--variants", default="fitted,two,shared",
                   help="kinds: fitted, two, slab, shared, parts (few-parts: four of them), waits, packed, offsets")
    p.add_argument("--warm", nargs=2, type=int, metavar=("K", "N"))
    args = p.parse_args(argv)
    kinds = set(args.variants.split(","))
    turn = [0]

    def mine() -> bool:
        """Under --warm, whether this (shape, variant) is this process's to launch."""
        turn[0] += 1
        return args.warm is None or (turn[0] - 1) % args.warm[1] == args.warm[0]
    gpu = default_gpu()
    rows: list[dict] = []
    classes = tuple(args.classes.split(","))
    shapes = [s for seed in map(int, args.seeds.split(",")) for s in draw(seed, classes, args.per_class)]
    for n, shape in enumerate(shapes):
        dt = dtypes.torch_dtype(shape.dtype)
        elt = dtypes.element_size(shape.dtype)
        if shape.transposed:
            s = shape.shape
            x = torch.randn(s[:-2] + (s[-1], s[-2]), device="cuda").to(dt).transpose(-1, -2)
        else:
            x = torch.randn(shape.shape, device="cuda").to(dt)
        dim = shape.dim
        groups, x_layout, y_layout = forward_groups(tuple(x.shape), tuple(x.stride()), dim)
        x_layout = x_layout or y_layout
        ref = torch.softmax(x.float(), dim)
        base = dict(case=n, cls=shape.cls, shape="x".join(map(str, shape.shape)), dtype=shape.dtype,
                    n_reduce=x_layout.n_reduce, n_inner=x_layout.n_inner)
        nbytes = 2 * x.numel() * elt

        def cols(b):
            return max(1, min(b // elt, triton.next_power_of_2(x_layout.n_inner)))

        def record(direction, variant, fn, check, moved, plan=None):
            if args.warm is not None:
                if mine() and plan is not None:
                    try:
                        fn()
                        torch.cuda.synchronize()
                    except Exception as e:  # noqa: BLE001
                        print(f"warm {variant}: {repr(e)[:120]}", flush=True)
                return
            try:
                err = check(fn())
                fn()
                out = fn()
                err_kept = check(out)
                nans = int(torch.isnan(out).sum().item())
                t = ms(fn)
                extra = {} if plan is None else dict(bi=plan.block_i, br=plan.block_r, split=plan.split,
                                                     parts=plan.parts, part_r=plan.part_r,
                                                     one_pass=plan.one_pass, warps=plan.num_warps,
                                                     programs=plan.num_programs, n_regs=plan.n_regs,
                                                     pack=plan.pack, pack_written=plan.pack_written)
                rows.append({**base, "direction": direction, "variant": variant, "ms": t, "gbps": moved / t / 1e6,
                             "err": err, "err_kept": err_kept, "nans": nans, **extra})
            except Exception as e:       # noqa: BLE001  (a variant that cannot compile or run is recorded as such)
                rows.append({**base, "direction": direction, "variant": variant, "ms": float("nan"),
                             "error": repr(e)[:200]})

        def fwd_check(y):
            return (y.float() - ref).abs().max().item()
        dirs = args.directions.split(",")
        if "forward" in dirs:
            copy_out = torch.empty_like(x)
            record("forward", "copy", lambda: copy_out.copy_(x), lambda y: 0.0, nbytes)
            trans = transposes(x_layout, y_layout)
            for variant, kw in variants_of("forward", cols, kinds):
                try:
                    plan = _plan(x_layout, elt, shape.dtype, gpu, "forward", y_layout, trans, kw)
                except Exception as e:   # noqa: BLE001
                    rows.append({**base, "direction": "forward", "variant": variant, "error": repr(e)[:200]})
                    continue
                if plan is None:
                    continue
                if (variant.startswith("two") or variant.endswith("-two")) and plan.one_pass:
                    continue
                record("forward", variant, forward_call(x, dim, dt, plan if kw else None), fwd_check, nbytes, plan)
        if "backward" in dirs and not any_dim.rows_backward(tuple(x.shape), dim):
            y = ref.to(dt).contiguous()
            dy = torch.randn_like(y)
            dref = y.float() * (dy.float() - (y.float() * dy.float()).sum(dim, keepdim=True))
            c = torch.empty_like(y)
            record("backward", "copy", lambda: torch.add(y, dy, out=c), lambda _: 0.0, 1.5 * nbytes)
            g = dim_groups(tuple(y.shape), dim, y.stride(), y.stride())
            yl = layout_in(g, tuple(y.shape), tuple(y.stride()))
            for variant, kw in variants_of("backward", cols, kinds):
                try:
                    plan = _plan(yl, elt, shape.dtype, gpu, "backward", yl, False, kw)
                except Exception as e:   # noqa: BLE001
                    rows.append({**base, "direction": "backward", "variant": variant, "error": repr(e)[:200]})
                    continue
                if plan is None:
                    continue
                if (variant.startswith("two") or variant.endswith("-two")) and plan.one_pass:
                    continue
                record("backward", variant, backward_call(y, dy, dim, dt, plan if kw else None),
                       lambda d: (d.float() - dref).abs().max().item(), 1.5 * nbytes, plan)
        if args.warm is None:
            with open(args.out, "w", newline="") as f:
                keys = list(dict.fromkeys(k for r in rows for k in r))
                w = csv.DictWriter(f, keys)
                w.writeheader()
                w.writerows(rows)
        print(f"[{n + 1}/{len(shapes)}] {base['cls']} {base['shape']} {shape.dtype}", flush=True)
        del x, ref
        torch.cuda.empty_cache()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
