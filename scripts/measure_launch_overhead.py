"""CPU cost of one softmax call on small matrices, where it decides the speed: calls issued back to back
without waiting for the GPU, for our softmax, our kernel launched bare through Triton's JIT (no wrapper),
the tutorial's wrapper, and torch. Not a test: run it on a GPU machine.

The recorded run (assets/benchmarks/tuning/h200-launch-overhead-20261129.csv) was made at commit 69c0de7,
where "ours" went through a launcher that cached the compiled kernel per specialisation and skipped the
JIT's binding; it saved nothing measurable, and was removed.

    PYTHONPATH=. python scripts/measure_launch_overhead.py [OUT.csv]
"""
from __future__ import annotations

import csv
import sys
import time

import torch
import triton

import softmax_core as sc
from softmax_core import dtypes, launchers

CALLS = 3000


def per_call_us(fn) -> float:
    fn()
    torch.cuda.synchronize()
    best = float("inf")
    for _ in range(3):
        start = time.perf_counter()
        for _ in range(CALLS):
            fn()
        torch.cuda.synchronize()
        best = min(best, (time.perf_counter() - start) / CALLS * 1e6)
    return best


def jit_path(x):
    """Our rows kernel launched bare through Triton's JIT: the launch without our wrapper's Python."""
    plan = launchers.cached_plan(*x.shape, x.dtype, "forward", False)
    y = torch.empty_like(x)
    launchers.softmax_rows_kernel[plan.grid](x, y, x.stride(0), y.stride(0), *x.shape, ROWS=plan.rows_per_program,
                                       BLOCK_N=plan.block_n, SAFE=False, FP64=False, num_warps=plan.num_warps,
                                       num_stages=1)
    return y


def main(out: str | None) -> None:
    if "--with-liger" in sys.argv:   # does merely importing a peer's Triton kernels change launch costs?
        import liger_kernel.ops.softmax  # noqa: F401
    rows = []
    for dtype in (torch.float32, torch.bfloat16):
        for n in (256, 781, 1024, 2048):
            x = torch.randn(4096, n, device="cuda", dtype=dtype)
            gpu_us = triton.testing.do_bench(lambda: sc.softmax(x), warmup=10, rep=40) * 1e3
            for name, fn in (("ours", lambda: sc.softmax(x)), ("ours via JIT", lambda: jit_path(x)),
                             ("tutorial", lambda: sc.tutorial_softmax(x)), ("torch", lambda: torch.softmax(x, -1))):
                us = per_call_us(fn)
                rows.append(dict(dtype=dtypes.name(dtype), N=n, provider=name, us_per_call=round(us, 2),
                                 ours_do_bench_us=round(gpu_us, 2)))
                print(f"{dtypes.name(dtype):9s} N={n:5d} {name:13s} {us:6.1f} us/call (ours by do_bench {gpu_us:.1f} us)",
                      flush=True)
    if out:
        with open(out, "w", newline="") as f:
            w = csv.DictWriter(f, fieldnames=list(rows[0]))
            w.writeheader()
            w.writerows(rows)


if __name__ == "__main__":
    paths = [a for a in sys.argv[1:] if not a.startswith("--")]
    main(paths[0] if paths else None)
