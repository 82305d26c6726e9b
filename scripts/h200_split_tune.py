"""Tuning sweep for the split path (a long row shared by programs that run at once) on a GPU: chunk size,
warps and grid, against copy and the other paths in the same run. Writes a CSV. Not a test: run it on the H200.

    PYTHONPATH=. python scripts/h200_split_tune.py OUT.csv
"""
from __future__ import annotations

import csv
import dataclasses
import sys
import time

import torch
import triton

from softmax_core.gpu import default_gpu
from softmax_core.memory import bytes_moved
from softmax_core.ops import _launch_backward, _launch_forward, cached_plan
from softmax_core.plan import _plan_split, plan_softmax

M = 4096
NS = [16384, 32768, 65536, 131072, 262144]


def bench(fn) -> float:
    return triton.testing.do_bench(fn, warmup=10, rep=40, return_mode="median")


def split_variants(n: int, dtype: torch.dtype, direction: str):
    gpu = default_gpu()
    elt = torch.empty((), dtype=dtype).element_size()
    flags = {"SAFE": False} if direction == "forward" else {}
    seen = set()
    for max_chunk in (2048, 4096, 8192, 16384):
        for warps in (4, 8):
            per_thread = min(max_chunk, triton.next_power_of_2(n)) // (warps * 32)
            if not 8 <= per_thread <= 64 * 4 // elt:
                continue
            plan = _plan_split(M, n, dtype, gpu, direction, flags, "tuning", max_chunk, warps)
            if plan is None or (plan.split, plan.block_n, warps) in seen:
                continue
            seen.add((plan.split, plan.block_n, warps))
            yield plan


def as_tiled(plan):
    return dataclasses.replace(plan, path="tiled", block_n=min(16384, triton.next_power_of_2(plan.n_cols)),
                               num_warps=16, num_programs=plan.n_rows, split=1, rows_per_program=1)


def main(out_path: str) -> None:
    rows_out = []
    for dtype in (torch.float32, torch.bfloat16):
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
                rows_out.append(dict(dtype=str(dtype)[6:], N=n, kind=kind, variant=variant, ms=round(ms, 5),
                                     gbps=round(gbps, 1), copy_ratio=round(gbps / base, 3), ok=ok))
                print(f"{str(dtype)[6:]:9s} N={n:7d} {kind:10s} {gbps:7.0f} GB/s {gbps / base:5.3f} {'ok' if ok else 'WRONG'} {variant}",
                      flush=True)

            record("copy", None, copy_ms, fwd_bytes)
            record("torch", None, bench(lambda: torch.softmax(x, -1)), fwd_bytes)
            default = cached_plan(M, n, dtype, "forward", False)
            tiled = plan_softmax(M, n, dtype, direction="forward")
            candidates = [("default", default)] + [("split", p) for p in split_variants(n, dtype, "forward")]
            if default.path != "tiled":
                candidates.append(("tiled", as_tiled(default)))
            for kind, plan in candidates:
                try:
                    y = _launch_forward(x, plan, False)
                    torch.cuda.synchronize()
                    ok = torch.allclose(y.float(), ref, atol=tol, rtol=tol)
                    record(kind, plan, bench(lambda: _launch_forward(x, plan, False)), fwd_bytes, ok)
                except Exception as exc:
                    print("variant failed", n, plan.path, plan.split, plan.block_n, plan.num_warps, repr(exc)[:200], flush=True)
            dy = torch.randn_like(x)
            y = torch.softmax(x, -1)
            dx_ref = torch._softmax_backward_data(dy, y, -1, dtype).float()
            out3 = torch.empty_like(x)
            bcopy = bench(lambda: torch.add(y, dy, out=out3))
            bcopy_gbps = bwd_bytes / bcopy * 1e-6
            record("bwd-copy", None, bcopy, bwd_bytes, base=bcopy_gbps)
            record("bwd-torch", None, bench(lambda: torch._softmax_backward_data(dy, y, -1, dtype)), bwd_bytes, base=bcopy_gbps)
            bdefault = cached_plan(M, n, dtype, "backward", False)
            bcands = [("bwd-default", bdefault)] + [("bwd-split", p) for p in split_variants(n, dtype, "backward")]
            if bdefault.path != "tiled":
                bcands.append(("bwd-tiled", as_tiled(bdefault)))
            for kind, plan in bcands:
                try:
                    dx = _launch_backward(y, dy, plan)
                    torch.cuda.synchronize()
                    ok = torch.allclose(dx.float(), dx_ref, atol=tol, rtol=tol)
                    record(kind, plan, bench(lambda: _launch_backward(y, dy, plan)), bwd_bytes, ok, base=bcopy_gbps)
                except Exception as exc:
                    print("variant failed", n, plan.path, plan.split, plan.block_n, plan.num_warps, repr(exc)[:200], flush=True)
            del x, y, dy, y_copy, out3, ref, dx_ref
            torch.cuda.empty_cache()
    with open(out_path, "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=list(rows_out[0]))
        w.writeheader()
        w.writerows(rows_out)


if __name__ == "__main__":
    t0 = time.time()
    main(sys.argv[1])
    print(f"done in {time.time() - t0:.0f} s")
