"""Tuning sweep for the split path (a long row shared by programs that run at once) on a GPU: chunk size,
warps and grid, against copy and the other paths in the same run. Writes a CSV. Not a test: run it on the H200.

    PYTHONPATH=. python scripts/h200_split_tune.py OUT.csv
"""
from __future__ import annotations

import sys
import time
from pathlib import Path

import pandas as pd
import torch
import triton

from softmax_core.hardware import dtypes
from softmax_core.hardware.gpu import default_gpu
from softmax_core.teaching.memory import bytes_moved
from softmax_core.launch.api import cached_plan, softmax_backward, softmax_forward
from softmax_core.plans.tuned import plan_softmax, plan_split

sys.path.insert(0, str(Path(__file__).resolve().parent))
from tuning_kit import env_list  # noqa: E402



# Narrower sweeps from the environment, e.g. SPLIT_TUNE_NS=65536,262144 SPLIT_TUNE_WARPS=1,2,4
# SPLIT_TUNE_DTYPES=bfloat16 SPLIT_TUNE_CHUNKS=4096,8192.
M = 4096
NS = env_list("SPLIT_TUNE_NS", (16384, 32768, 65536, 131072, 262144))
WARPS = env_list("SPLIT_TUNE_WARPS", (4, 8))
CHUNKS = env_list("SPLIT_TUNE_CHUNKS", (2048, 4096, 8192, 16384))
DTYPES = [getattr(torch, d) for d in env_list("SPLIT_TUNE_DTYPES", ("float32", "bfloat16"), str)]


def bench(fn) -> float:
    return triton.testing.do_bench(fn, warmup=10, rep=40, return_mode="median")


def split_variants(n: int, dtype: torch.dtype, direction: str):
    gpu = default_gpu()
    elt = dtypes.element_size(dtype)
    flags = {"SAFE": False} if direction == "forward" else {}
    seen = set()
    for max_chunk in CHUNKS:
        for warps in WARPS:
            per_thread = min(max_chunk, triton.next_power_of_2(n)) // (warps * 32)
            if not 8 <= per_thread <= 64 * 4 // elt:
                continue
            plan = plan_split(M, n, dtype, gpu, direction, flags, None, max_chunk, warps)
            if plan is None or (plan.split, plan.block_n, warps) in seen:
                continue
            seen.add((plan.split, plan.block_n, warps))
            yield plan


def try_candidates(record, prefix, direction, n, dtype, launch, reference, tol, nbytes, base):
    """The plan's choice, every split variant, and the tiled path, each checked against `reference`, then timed."""
    default = cached_plan(M, n, dtype, direction, False)
    candidates = [("default", default)] + [("split", p) for p in split_variants(n, dtype, direction)]
    if default.path != "tiled":
        candidates.append(("tiled", plan_softmax(M, n, dtype, default.gpu, direction, path="tiled")))
    for kind, plan in candidates:
        try:
            out = launch(plan)
            torch.cuda.synchronize()
            ok = torch.allclose(out.float(), reference, atol=tol, rtol=tol)
            record(prefix + kind, plan, bench(lambda: launch(plan)), nbytes, ok, base=base)
        except Exception as exc:
            print("variant failed", n, plan.path, plan.split, plan.block_n, plan.num_warps, repr(exc)[:200], flush=True)


def main(out_path: str) -> None:
    rows_out = []
    for dtype in DTYPES:
        for n in NS:
            x = torch.randn(M, n, device="cuda", dtype=dtype)
            fwd_bytes, bwd_bytes = bytes_moved(M, n, x.element_size()), bytes_moved(M, n, x.element_size(), "backward")
            y_copy = torch.empty_like(x)
            copy_ms = bench(lambda: y_copy.copy_(x))
            copy_gbps = fwd_bytes / copy_ms * 1e-6
            ref = torch.softmax(x.float(), -1)
            tol = 1e-5 if dtype == torch.float32 else 1e-2

            def record(kind, plan, ms, nbytes, ok=True, base=copy_gbps):
                gbps = nbytes / ms * 1e-6
                variant = "-" if plan is None else (f"{plan.path} split={plan.split} chunk={plan.block_n} "
                                                    f"warps={plan.num_warps} grid={plan.num_programs} regs={plan.resources.n_regs}")
                rows_out.append(dict(dtype=dtypes.name(dtype), N=n, kind=kind, variant=variant, ms=round(ms, 5),
                                     gbps=round(gbps, 1), copy_ratio=round(gbps / base, 3), ok=ok))
                print(f"{dtypes.name(dtype):9s} N={n:7d} {kind:10s} {gbps:7.0f} GB/s {gbps / base:5.3f} {'ok' if ok else 'WRONG'} {variant}",
                      flush=True)

            record("copy", None, copy_ms, fwd_bytes)
            record("torch", None, bench(lambda: torch.softmax(x, -1)), fwd_bytes)
            try_candidates(record, "", "forward", n, dtype, lambda plan: softmax_forward(x, plan, False), ref, tol,
                           fwd_bytes, copy_gbps)
            dy = torch.randn_like(x)
            y = torch.softmax(x, -1)
            dx_ref = torch._softmax_backward_data(dy, y, -1, dtype).float()
            out3 = torch.empty_like(x)
            bcopy = bench(lambda: torch.add(y, dy, out=out3))
            bcopy_gbps = bwd_bytes / bcopy * 1e-6
            record("bwd-copy", None, bcopy, bwd_bytes, base=bcopy_gbps)
            record("bwd-torch", None, bench(lambda: torch._softmax_backward_data(dy, y, -1, dtype)), bwd_bytes, base=bcopy_gbps)
            try_candidates(record, "bwd-", "backward", n, dtype, lambda plan: softmax_backward(y, dy, plan), dx_ref,
                           tol, bwd_bytes, bcopy_gbps)
            del x, y, dy, y_copy, out3, ref, dx_ref
            torch.cuda.empty_cache()
    pd.DataFrame(rows_out).to_csv(out_path, index=False)


if __name__ == "__main__":
    t0 = time.time()
    main(sys.argv[1])
    print(f"done in {time.time() - t0:.0f} s")
