"""Tuning sweep for the rows kernels' vector hint (plans/whole_rows.py: row_vector, VEC) at widths Triton cannot
prove vector-aligned by itself: random rows of widths that are a multiple of 2 values but not of 16, each plan
timed with its VEC forced to 1 and to the largest power of two dividing the width (at most 16 bytes), forward
and backward (`--sweep partial`); and forward rows of even widths of at most 32 values on the lane kernel
(kernels/short_rows.py) against the plan (`--sweep lane`). Every launch is checked against torch first and timed
beside a copy of the same bytes (backward: an add of two tensors into a third) in one run.

    python -m bench_tools.record.row_vectors_tune OUT.csv --sweep partial --seed 4242 --shapes 24
    python -m bench_tools.record.row_vectors_tune OUT.csv --sweep lane --seed 5353 --shapes 12

writes OUT.csv after every shape (seed, M, N, dtype, direction, variant, kernel, vec, ms quantiles, copy ms, ratio)
and OUT.json (provenance).
"""
from __future__ import annotations

import argparse
import csv
import json
import math
import random
import shlex
import sys
from dataclasses import replace
from pathlib import Path

import torch
import triton
from triton.testing import do_bench

import softmax_core as sc
from softmax_core.hardware import dtypes
from softmax_core.launch.api import softmax_backward, softmax_forward
from softmax_core.plans.any_width import short_rows_plan

DTYPES = (torch.float16, torch.bfloat16, torch.float32)
MOVED_MB = (64, 256)                # forward bytes moved per tensor, drawn uniformly
PARTIAL_COLS = (33, 2048)           # widths drawn log-uniformly; rows of at most 2 KB (the edge kernel's start)
FIELDS = ["seed", "M", "N", "dtype", "direction", "variant", "kernel", "vec", "ms_p20", "ms_median", "ms_p80",
          "copy_ms", "ratio", "check"]


def largest_vector(n: int, element_bytes: int) -> int:
    """The largest power of two dividing `n` that fits a 16-byte vector."""
    v = 1
    while 2 * v * element_bytes <= 16 and n % (2 * v) == 0:
        v *= 2
    return v


def _timed(fn) -> list[float]:
    return do_bench(fn, warmup=10, rep=40, quantiles=[0.2, 0.5, 0.8])


def _partial_shape(rng: random.Random):
    """A (dtype, width) of the partial sweep: even, not a multiple of 16, below 2 KB of row."""
    while True:
        dtype = rng.choice(DTYPES)
        elt = dtypes.element_size(dtype)
        n = int(math.exp(rng.uniform(math.log(PARTIAL_COLS[0]), math.log(PARTIAL_COLS[1] // elt))))
        n += n % 2
        if n % 16 != 0 and largest_vector(n, elt) > 1:
            return dtype, n


def _lane_shape(rng: random.Random):
    """A (dtype, width) of the lane sweep: an even width of at most 32 values that is no power of two (4 bytes a
    multiple for float32, whose pairs the rule leaves out)."""
    dtype = rng.choice(DTYPES)
    step = 4 if dtype == torch.float32 else 2
    return dtype, rng.choice([k for k in range(step, 33, step) if k & (k - 1)])


def _rows_for(n: int, dtype: torch.dtype, rng: random.Random) -> int:
    return max(1, int(rng.uniform(*MOVED_MB) * 2**20 / (n * dtypes.element_size(dtype))))


def _variants(sweep: str, m: int, n: int, dtype: torch.dtype, direction: str, gpu):
    """(variant name, plan) pairs to time at one shape and direction."""
    plan = sc.plan_softmax(m, n, dtype, gpu, direction)
    if sweep == "lane":
        return [("planned", plan), ("lane", short_rows_plan(sc.plan_softmax(m, n, dtype, gpu, path="rows"), dtype))]
    if "VEC" not in dict(plan.constexprs):
        return [("planned", plan)]
    wide = largest_vector(n, dtypes.element_size(dtype))
    return [("vec1", replace(plan, vec=1)), (f"vec{wide}", replace(plan, vec=wide))]


def run(out: Path, sweep: str, seed: int, shapes: int) -> None:
    rng = random.Random(seed)
    gpu = sc.current_gpu()
    directions = ("forward",) if sweep == "lane" else ("forward", "backward")
    with open(out, "w", newline="") as f:
        writer = csv.writer(f)
        writer.writerow(FIELDS)
        for _ in range(shapes):
            dtype, n = (_lane_shape if sweep == "lane" else _partial_shape)(rng)
            m = _rows_for(n, dtype, rng)
            x = torch.randn(m, n, device="cuda", dtype=dtype)
            for direction in directions:
                if direction == "forward":
                    copy_ms = _timed(lambda: torch.empty_like(x).copy_(x))[1]
                    expected = torch.softmax(x.float(), -1)
                else:
                    y, dy = torch.softmax(x, -1), torch.randn_like(x)
                    z = torch.empty_like(x)
                    copy_ms = _timed(lambda: torch.add(y, dy, out=z))[1]
                    yf, dyf = y.float(), dy.float()
                    expected = yf * (dyf - (yf * dyf).sum(-1, keepdim=True))
                for variant, plan in _variants(sweep, m, n, dtype, direction, gpu):
                    call = (lambda p=plan: softmax_forward(x, p)) if direction == "forward" else \
                        (lambda p=plan: softmax_backward(y, dy, p))
                    ok = torch.allclose(call().float(), expected, atol=5e-2, rtol=5e-2)
                    ms = _timed(call)
                    row = [seed, m, n, dtypes.name(dtype), direction, variant, plan.kernel.split(":")[-1], plan.vec,
                           *(round(t, 5) for t in ms), round(copy_ms, 5), round(copy_ms / ms[1], 3),
                           "ok" if ok else "mismatch"]
                    writer.writerow(row)
                    f.flush()
                    print(*row, flush=True)
    provenance = {"what": __doc__.splitlines()[0], "sweep": sweep, "seed": seed, "shapes": shapes,
                  "command": "python -m bench_tools.record.row_vectors_tune " + shlex.join(sys.argv[1:]),
                  "gpu": torch.cuda.get_device_name(), "torch": torch.__version__, "triton": triton.__version__,
                  "timer": "triton.testing.do_bench quantiles 0.2 / 0.5 / 0.8, warmup 10 ms, rep 40 ms",
                  "csv": out.name}
    out.with_suffix(".json").write_text(json.dumps(provenance, indent=1) + "\n")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("out", type=Path, help="the CSV to write (its .json beside it)")
    parser.add_argument("--sweep", choices=("partial", "lane"), default="partial")
    parser.add_argument("--seed", type=int, required=True)
    parser.add_argument("--shapes", type=int, default=16)
    args = parser.parse_args()
    if not torch.cuda.is_available():
        sys.exit("needs a GPU: this sweep times kernels")
    run(args.out, args.sweep, args.seed, args.shapes)


if __name__ == "__main__":
    main()
