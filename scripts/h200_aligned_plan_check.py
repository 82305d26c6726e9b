"""A/B on a GPU: the plan sized from the kernel that runs (compiled with the JIT's 16-byte specialisation,
`aligned=True`, the default since 2026-11-30) against the plan sized from the unspecialised compile
(`aligned=False`, what every plan did before). Both launch the same specialised kernel on the same aligned
tensors; only the grid differs where the register counts changed the programs that fit on an SM at once
(split and shared-tile paths). Checked against torch before timing; copy in the same run. Writes a CSV.

    PYTHONPATH=. python scripts/h200_aligned_plan_check.py OUT.csv      # on the H200
    PYTHONPATH=. python scripts/h200_aligned_plan_check.py --list       # any machine: the cases and grids

Recorded at commit b3d3a9f (tuning/h200-aligned-plan-check-20261130.csv). Since then an `aligned=False` plan keeps
the output's pointer aligned and every plan compiles i32 strides, so running it again compares other plans.
"""
from __future__ import annotations

import sys
from pathlib import Path

import pandas as pd
import torch

from softmax_core.hardware import dtypes
from softmax_core.launch.api import cached_plan, softmax_backward, softmax_forward
from softmax_core.teaching.memory import bytes_moved

sys.path.insert(0, str(Path(__file__).resolve().parent))
from tuning_kit import bench  # noqa: E402

M = 4096
# (dtype, N, direction): the plans whose grid the specialised compile changed on the H200 (triton 3.9 offline).
CASES = [(torch.float32, 262144, "forward"), (torch.bfloat16, 131072, "backward"),
         (torch.bfloat16, 262144, "backward"), (torch.float32, 131072, "forward")]


def plans(dtype, n, direction):
    return {f"aligned={aligned}": cached_plan(M, n, dtype, direction, False, 0, aligned) for aligned in (True, False)}


def describe(plan) -> str:
    return (f"{plan.path} block={plan.block_n} warps={plan.num_warps} split={plan.split} grid={plan.num_programs} "
            f"regs={plan.resources.n_regs} per_sm={plan.occupancy.programs_per_sm}")


def main(out_path: str) -> None:
    rows = []
    for dtype, n, direction in CASES:
        x = torch.randn(M, n, device="cuda", dtype=dtype)
        if direction == "forward":
            nbytes, reference = bytes_moved(M, n, x.element_size()), torch.softmax(x.float(), -1)
            out = torch.empty_like(x)
            calls = {"copy": lambda: out.copy_(x), "torch": lambda: torch.softmax(x, -1)}
            calls.update({name: (lambda p: lambda: softmax_forward(x, p))(p)
                          for name, p in plans(dtype, n, direction).items()})
        else:
            nbytes = bytes_moved(M, n, x.element_size(), "backward")
            y, dy = torch.softmax(x, -1), torch.randn_like(x)
            reference = torch._softmax_backward_data(dy, y, -1, dtype).float()
            out = torch.empty_like(x)
            calls = {"copy": lambda: torch.add(y, dy, out=out),
                     "torch": lambda: torch._softmax_backward_data(dy, y, -1, dtype)}
            calls.update({name: (lambda p: lambda: softmax_backward(y, dy, p))(p)
                          for name, p in plans(dtype, n, direction).items()})
        base = None
        for name, call in calls.items():
            result = call()
            ok = name == "copy" or torch.allclose(result.float(), reference, atol=1e-2, rtol=1e-2)
            p20, ms, p80 = bench(call)
            gbps = nbytes / ms * 1e-6
            base = base or gbps
            plan = plans(dtype, n, direction).get(name)
            rows.append(dict(dtype=dtypes.name(dtype), N=n, direction=direction, kind=name,
                             variant=describe(plan) if plan else "-", ms_p20=p20, ms=ms, ms_p80=p80,
                             gbps=round(gbps, 1), copy_ratio=round(gbps / base, 3), ok=ok))
            print(f"{dtypes.name(dtype):9s} {n:7d} {direction:8s} {name:13s} {gbps / base:6.3f} "
                  f"[{nbytes / p80 * 1e-6 / base:.3f}-{nbytes / p20 * 1e-6 / base:.3f}] {'ok' if ok else 'WRONG'} "
                  f"{describe(plan) if plan else ''}", flush=True)
        del x, out, reference
        torch.cuda.empty_cache()
        pd.DataFrame(rows).to_csv(out_path, index=False)


if __name__ == "__main__":
    if "--list" in sys.argv:
        for dtype, n, direction in CASES:
            for name, plan in plans(dtype, n, direction).items():
                print(dtypes.name(dtype), n, direction, name, describe(plan))
        sys.exit(0)
    main(sys.argv[1])
