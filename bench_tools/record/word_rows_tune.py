"""The backward of short packed 2-byte rows read in words across the rows' boundaries (kernels/word_rows.py), timed
on a GPU beside the plan without words, torch and an add of the same bytes in the same run: random widths 2-255
(log-uniform), float16 or bfloat16 at random, 64-256 MB moved, each variant checked against a float64 reference
before it is timed.

    python -m bench_tools.record.word_rows_tune OUT.csv --seed 222 [--shapes 5] [--fitted-only]

Variants: "plan" (the library's plan), "old:<kernel>" (the span kernel the words replace), "torch", and
"word_pP_vV_wW" (the word kernel at P values a word, about V values a program, W warps; --fitted-only leaves these
out, to check the fitted plan on a new seed). Baseline: an add of two
tensors into a third (torch.add(y, dy, out=z)). Timer: triton.testing.do_bench, quantiles 0.2 / 0.5 / 0.8. The CSV
is rewritten after every row.
"""
from __future__ import annotations

import argparse
import csv
import math
import random
import sys

import torch
import triton
from triton.testing import do_bench

import softmax_core as sc
from softmax_core.launch.api import softmax_backward
from softmax_core.plans import any_width

SHAPES = tuple((pack, values, warps) for pack in (2, 4) for values, warps in ((1024, 2), (1024, 4), (2048, 4),
                                                                              (4096, 8)))


def quantiles(fn) -> list[float]:
    return do_bench(fn, warmup=10, rep=30, quantiles=[0.2, 0.5, 0.8])


def draw(rng: random.Random) -> tuple[int, int, torch.dtype]:
    """(rows, width, dtype): y, dy and dx together move 64-256 MB."""
    dtype = rng.choice([torch.float16, torch.bfloat16])
    n = min(255, int(math.exp(rng.uniform(math.log(2), math.log(256)))))
    m = int(math.exp(rng.uniform(math.log(64), math.log(256))) * 1e6 / (3 * 2 * n))
    return m, n, dtype


def main(argv: list[str]) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("out")
    p.add_argument("--seed", type=int, default=222)
    p.add_argument("--shapes", type=int, default=5)
    p.add_argument("--fitted-only", action="store_true", help="time only the plan, the plan without words and torch")
    args = p.parse_args(argv)
    rng = random.Random(args.seed)
    gpu = sc.current_gpu()
    rows: list[list] = []
    header = ["seed", "M", "N", "dtype", "variant", "ms_p20", "ms_median", "ms_p80", "baseline_ms", "ratio", "err"]
    for _ in range(args.shapes):
        m, n, dtype = draw(rng)
        rows_plan = sc.plan_softmax(m, n, dtype, gpu, "backward", path="rows")
        old = any_width.short_rows_plan(rows_plan, dtype)          # the span kernel the words replace
        plans = [("plan", sc.plan_softmax(m, n, dtype, gpu, "backward")), (f"old:{old.kernel.split(':')[1]}", old)]
        if not args.fitted_only:
            plans += [(f"word_p{pk}_v{v}_w{w}", any_width.word_rows_plan(rows_plan, dtype, pk, v, w))
                      for pk, v, w in SHAPES]
        y = torch.softmax(torch.randn(m, n, device="cuda"), -1).to(dtype)
        dy = torch.randn(m, n, device="cuda", dtype=dtype)
        yd, dyd = y.double(), dy.double()
        expected = yd * (dyd - (yd * dyd).sum(-1, keepdim=True))
        z = torch.empty_like(y)
        baseline = quantiles(lambda: torch.add(y, dy, out=z))[1]
        calls = [(name, lambda plan=plan: softmax_backward(y, dy, plan)) for name, plan in plans]
        calls.append(("torch", lambda: torch._softmax_backward_data(dy, y, -1, dtype)))
        for name, fn in calls:
            err = (fn().double() - expected).abs().max().item()
            t = quantiles(fn)
            rows.append([args.seed, m, n, str(dtype).removeprefix("torch."), name,
                         *[round(v, 5) for v in t], round(baseline, 5), round(baseline / t[1], 3), f"{err:.1e}"])
            print(*rows[-1], flush=True)
            with open(args.out, "w", newline="") as f:
                csv.writer(f).writerows([header] + rows)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
