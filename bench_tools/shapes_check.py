"""After the models sweep: the record sweep's odd width (781) and a bf16 twin, planned before this branch
(edges off) and now, timed in one run beside copy (issue 21: the any-width kernel took them over unmeasured).

    python -m bench_tools.shapes_check OUT.csv
"""
from __future__ import annotations

import csv
import sys

import torch
import triton.testing

from softmax_core.hardware import dtypes
from softmax_core.hardware.gpu import default_gpu
from softmax_core.launch.api import softmax_backward, softmax_forward
from softmax_core.plans.tuned import plan_rows_tiled_split
from softmax_core.plans.choose import plan_softmax


def main(out: str) -> None:
    gpu, rows = default_gpu(), []
    for M, N, dtype in [(4096, 781, torch.float32), (4096, 781, torch.bfloat16), (16384, 1000, torch.bfloat16)]:
        x = torch.randn(M, N, device="cuda").to(dtype)
        dy = torch.randn_like(x)
        nbytes = 2 * x.numel() * x.element_size()
        timed = {"copy": (lambda: torch.empty_like(x).copy_(x), nbytes),
                 "bwd:copy": (lambda: torch.add(x, dy), 1.5 * nbytes)}
        for name, direction in (("old", "forward"), ("new", "forward"), ("bwd:old", "backward"),
                                ("bwd:new", "backward")):
            plan = (plan_rows_tiled_split if "old" in name else plan_softmax)(M, N, dtype, gpu, direction)
            y = softmax_forward(x, plan_softmax(M, N, dtype, gpu))
            timed[f"{name}:edges{plan.edges}"] = ((lambda p=plan: softmax_forward(x, p)) if direction == "forward"
                                                  else (lambda p=plan, y=y: softmax_backward(y, dy, p)),
                                                  nbytes * (1 if direction == "forward" else 1.5))
        for variant, (fn, b) in timed.items():
            ms = triton.testing.do_bench(fn, warmup=10, rep=40, quantiles=[0.2, 0.5, 0.8])
            rows.append((f"{M}x{N}", dtypes.name_of_any(dtype), variant, *ms, b * 1e-6 / ms[1]))
            print(rows[-1], flush=True)
    with open(out, "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["shape", "dtype", "variant", "ms_p20", "ms_median", "ms_p80", "gbps"])
        w.writerows(rows)


if __name__ == "__main__":
    main(sys.argv[1])
