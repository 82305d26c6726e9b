"""What a model whose sequence length changes every step costs the planner: attention scores of B*H*S rows of S
values, S drawn at random, planned forward and backward on a catalog GPU (no GPU needed). It prints how many
distinct compile jobs those plans need (a job is the plan's kernel, constexprs, warps and the JIT's
specialisation: what Triton compiles once per process) and what planning one new shape costs on this CPU, the
slowest being those that compile.

    python -m bench_tools.record.changing_lengths [--shapes 300] [--seed 5] [--gpu h200]

tests/library/test_changing_lengths.py checks the bound; docs/performance.md quotes a run of this.
"""
from __future__ import annotations

import argparse
import random
import statistics
import time

import torch

from softmax_core.hardware.gpu import catalog_gpu
from softmax_core.plans.choose import plan_softmax
from softmax_core.plans.kernel_jobs import compile_job


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--shapes", type=int, default=300, help="random lengths S (each planned both ways)")
    parser.add_argument("--seed", type=int, default=5)
    parser.add_argument("--gpu", default="h200", help="a catalog GPU's key")
    parser.add_argument("--dtype", default="bfloat16")
    args = parser.parse_args(argv)
    gpu, dtype = catalog_gpu(args.gpu), getattr(torch, args.dtype)
    rng = random.Random(args.seed)
    jobs, seconds = set(), []
    for _ in range(args.shapes):
        length, heads = rng.randint(128, 8192), rng.choice((12, 16, 32))
        for direction in ("forward", "backward"):
            start = time.perf_counter()
            plan = plan_softmax(heads * length, length, dtype, gpu, direction)
            seconds.append(time.perf_counter() - start)
            jobs.add(compile_job(plan.kernel, dtype, dict(plan.constexprs), plan.num_warps, gpu, length,
                                 plan.aligned).key())
    print(f"{len(seconds)} shapes (S = 128-8192, {args.dtype}, both directions, {gpu.name}): "
          f"{len(jobs)} distinct compile jobs")
    print(f"planning one new shape: median {statistics.median(seconds) * 1e6:.0f} us, "
          f"slowest {max(seconds) * 1e3:.0f} ms (a compile not cached yet)")


if __name__ == "__main__":
    main()
