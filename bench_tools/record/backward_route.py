"""The backward of row shapes, timed four ways in one run, to see where the time of an eager backward goes.

    python -m bench_tools.record.backward_route OUT.csv [--seed 9797] [--classes long_rows] [--shapes-per-class 6]

The class sweep times a backward through `torch.autograd.grad`; rows_tune times the plan's kernel launch itself.
On the long rows of seed 9797 (an H100, 2026-12-07) the two disagreed: 0.31-0.81x copy through autograd, where the
launch alone ran 0.81-0.91 on other draws of the class. This tool times, for each shape of the class sweep's draw,
in one run and on the same y and dy:

- "add": torch.add(y, dy, out=z), the backward's copy (two reads and a write);
- "launch": softmax_backward(y, dy, plan), the plan's kernel launch, as rows_tune times it;
- "autograd": torch.autograd.grad through softmax_core.softmax, the kept eager route the class sweep times;
- "torch": torch.autograd.grad through torch.softmax.

Each is do_bench's 0.2 / 0.5 / 0.8 quantiles (the L2 flushed before every call, so the host starts each call some
tens of microseconds ahead of the GPU). Beside each, the host's own time per call: HOST_CALLS calls with no
synchronisation, then one. Where a route's host time is longer than its GPU time, the GPU waits for the host and
do_bench times the host. And the GPU's own time per call: every kernel the call launches, from torch's profiler
(`gpu_us`), which shows whether two routes run the same kernel. Each route's dx is checked first, as every sweep checks a provider (softmax_bench's
make_inputs and mismatch: torch's float32 backward, the dtype's tolerance); a route that fails is written with its
reason and not timed.
"""
from __future__ import annotations

import argparse
import csv
import sys
import time
from typing import Callable

import torch

HOST_CALLS = 200
HEADER = ["case", "M", "N", "dtype", "path", "route", "status", "ms_p20", "ms_median", "ms_p80", "ratio_to_add",
          "host_ms", "gpu_us"]
PROFILED_CALLS = 10


def routes(x: torch.Tensor, dy: torch.Tensor, plan) -> dict[str, Callable[[], torch.Tensor]]:
    """The four calls that give dx for softmax(x) over its last dim and the gradient dy (`plan`: the backward's
    plan for x's shape), each returning dx (the add returns y + dy: it is timed, not checked)."""
    import softmax_core as sc
    from softmax_core.launch.api import softmax_backward

    leaf = x.detach().requires_grad_()
    y = sc.softmax(leaf, -1)
    torch_leaf = x.detach().requires_grad_()
    torch_y = torch.softmax(torch_leaf, -1)
    y_plain = y.detach()
    z = torch.empty_like(x)
    return {
        "add": lambda: torch.add(y_plain, dy, out=z),
        "launch": lambda: softmax_backward(y_plain, dy, plan),
        "autograd": lambda: torch.autograd.grad(y, leaf, dy, retain_graph=True)[0],
        "torch": lambda: torch.autograd.grad(torch_y, torch_leaf, dy, retain_graph=True)[0],
    }


def host_ms(call: Callable[[], torch.Tensor]) -> float:
    torch.cuda.synchronize()
    start = time.perf_counter()
    for _ in range(HOST_CALLS):
        call()
    elapsed = time.perf_counter() - start
    torch.cuda.synchronize()
    return elapsed / HOST_CALLS * 1e3


def gpu_us(call: Callable[[], torch.Tensor]) -> float:
    """The GPU's kernel time per call, in microseconds, from torch's profiler over PROFILED_CALLS calls: every
    kernel the call launches (the split path's fill of its slots included), none of the time between them."""
    from torch.profiler import ProfilerActivity, profile

    torch.cuda.synchronize()
    with profile(activities=[ProfilerActivity.CUDA]) as prof:
        for _ in range(PROFILED_CALLS):
            call()
        torch.cuda.synchronize()
    kernels = [e for e in prof.events() if e.device_type.name == "CUDA"]
    return sum(e.device_time if hasattr(e, "device_time") else e.cuda_time for e in kernels) / PROFILED_CALLS


def main(argv: list[str]) -> int:
    from triton.testing import do_bench

    import softmax_bench as bench
    from bench_tools.class_sweep import draw
    from softmax_core.launch.launches import cached_plan

    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("out")
    p.add_argument("--seed", type=int, default=9797)
    p.add_argument("--classes", default="long_rows", help="row classes of bench_tools.class_sweep")
    p.add_argument("--shapes-per-class", type=int, default=6)
    args = p.parse_args(argv)
    shapes = [s for s in draw(args.seed, args.classes.split(","), args.shapes_per_class)
              if len(s.shape) == 2 and s.dim in (1, -1) and not s.transposed]
    with open(args.out, "w", newline="") as f:
        out = csv.writer(f)
        out.writerow(HEADER)
        for i, s in enumerate(shapes):
            (m, n), dtype = s.shape, getattr(torch, s.dtype)
            inputs = bench.make_inputs(m, n, dtype, True, i)
            plan = cached_plan(m, n, dtype, "backward", False)
            calls = routes(inputs.x, inputs.dy, plan)
            add_ms = None
            for name, call in calls.items():
                head = [f"{s.cls}-{i}", m, n, s.dtype, plan.path, name]
                wrong = None if name == "add" else bench.mismatch(call(), inputs.dx_ref, dtype)
                if wrong is not None:
                    row = head + [f"failed: {wrong}"] + [float("nan")] * 6
                else:
                    q = do_bench(call, quantiles=[0.2, 0.5, 0.8])
                    add_ms = q[1] if name == "add" else add_ms
                    row = head + ["ok", *q, add_ms / q[1], host_ms(call), gpu_us(call)]
                out.writerow(row)
                f.flush()
                print(*row, flush=True)
            del inputs, calls
            torch.cuda.empty_cache()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
