"""Tuning sweep for the tuned kernels on a GPU: variants of the plan around its defaults, with copy as the
roofline, all in one run. Writes a CSV (and prints a summary). Not a test: run it on the H200.

    python scripts/h200_tune.py OUT.csv [--quick]
"""
from __future__ import annotations

import csv
import dataclasses
import sys
import time

import torch
import triton

import softmax_core as sc
from softmax_core.hardware import dtypes
from softmax_core.teaching.memory import bytes_moved
from softmax_core.launch.api import cached_plan, softmax_backward, softmax_forward

M = 4096
NS = [256, 1024, 4096, 16384, 32768, 65536, 131072, 262144]


def bench(fn) -> float:
    return triton.testing.do_bench(fn, warmup=10, rep=40, return_mode="median")


def forward_variants(plan):
    sms = plan.gpu.multiprocessor_count
    if plan.path == "rows":
        for rows in sorted({max(1, plan.rows_per_program // 2), plan.rows_per_program, plan.rows_per_program * 2}):
            for warps in sorted({max(1, plan.num_warps // 2), plan.num_warps, min(32, plan.num_warps * 2)}):
                if rows * plan.block_n < warps * 32:
                    continue
                n_blocks = triton.cdiv(plan.n_rows, rows)
                yield dataclasses.replace(plan, rows_per_program=rows, num_warps=warps, num_programs=n_blocks)
        # persistent grids for the default block shape
        for grid in (sms * 2, sms * 4, sms * 8):
            if grid < plan.num_programs:
                yield dataclasses.replace(plan, num_programs=grid)
    else:
        for tile_elems in (4096, 8192, 16384):
            for warps in (8, 16):
                for grid in (sms, 2 * sms, 4 * sms, plan.n_rows):
                    yield dataclasses.replace(plan, block_n=tile_elems, num_warps=warps, num_programs=min(grid, plan.n_rows))


def main(out_path: str, quick: bool) -> None:
    rows_out = []
    ns = NS[::2] if quick else NS
    for dtype in (torch.float32, torch.bfloat16):
        for n in ns:
            x = torch.randn(M, n, device="cuda", dtype=dtype)
            elt = x.element_size()
            fwd_bytes, bwd_bytes = bytes_moved(M, n, elt), bytes_moved(M, n, elt, "backward")
            y_copy = torch.empty_like(x)
            copy_ms = bench(lambda: y_copy.copy_(x))
            copy_gbps = fwd_bytes / copy_ms * 1e-6
            ref = torch.softmax(x.float(), -1)

            def record(kind, variant, ms, nbytes, ok=True):
                gbps = nbytes / ms * 1e-6
                rows_out.append(dict(dtype=dtypes.name(dtype), N=n, kind=kind, variant=variant, ms=round(ms, 5),
                                     gbps=round(gbps, 1), copy_ratio=round(gbps / copy_gbps, 3), ok=ok))

            record("copy", "copy", copy_ms, fwd_bytes)
            record("torch", "torch.softmax", bench(lambda: torch.softmax(x, -1)), fwd_bytes)
            try:
                record("tutorial", "tutorial", bench(lambda: sc.tutorial_softmax(x)), fwd_bytes)
            except Exception as exc:  # the tutorial's OutOfResources is data
                rows_out.append(dict(dtype=dtypes.name(dtype), N=n, kind="tutorial", variant=type(exc).__name__, ms=None,
                                     gbps=None, copy_ratio=None, ok=False))
            plan = cached_plan(M, n, dtype, "forward", False)
            for v in forward_variants(plan):
                try:
                    y = softmax_forward(x, v, False)
                    ok = torch.allclose(y.float(), ref, atol=1e-2 if dtype != torch.float32 else 1e-5, rtol=1e-2)
                    ms = bench(lambda: softmax_forward(x, v, False))
                except Exception as exc:
                    print("variant failed", n, v.path, v.rows_per_program, v.block_n, v.num_warps, exc)
                    continue
                default = (v.rows_per_program, v.block_n, v.num_warps, v.num_programs) == (
                    plan.rows_per_program, plan.block_n, plan.num_warps, plan.num_programs)
                record("ours" + ("*" if default else ""), f"{v.path} rows={v.rows_per_program} block={v.block_n} "
                       f"warps={v.num_warps} grid={v.num_programs}", ms, fwd_bytes, ok)
            # backward: ours (default plan) vs torch, against a 2-read-1-write copy-equivalent
            dy = torch.randn_like(x)
            y = torch.softmax(x, -1)
            bplan = cached_plan(M, n, dtype, "backward", False)
            dx_ref = torch._softmax_backward_data(dy, y, -1, dtype)
            dx = softmax_backward(y, dy, bplan)
            ok = torch.allclose(dx.float(), dx_ref.float(), atol=1e-2 if dtype != torch.float32 else 1e-5, rtol=1e-2)
            out3 = torch.empty_like(x)
            record("bwd-copy", "add(y, dy) 2 reads + 1 write", bench(lambda: torch.add(y, dy, out=out3)), bwd_bytes)
            record("bwd-torch", "_softmax_backward_data", bench(lambda: torch._softmax_backward_data(dy, y, -1, dtype)), bwd_bytes)
            record("bwd-ours", f"{bplan.path} rows={bplan.rows_per_program} block={bplan.block_n} warps={bplan.num_warps} "
                   f"grid={bplan.num_programs}", bench(lambda: softmax_backward(y, dy, bplan)), bwd_bytes, ok)
            best = max((r for r in rows_out if r["N"] == n and r["dtype"] == dtypes.name(dtype) and r["kind"].startswith("ours")),
                       key=lambda r: r["gbps"] or 0, default=None)
            print(f"{dtypes.name(dtype):9s} N={n:7d} copy {copy_gbps:7.0f}  best ours {best['gbps'] if best else '-'} "
                  f"({best['copy_ratio'] if best else '-'}) {best['variant'] if best else ''}", flush=True)
            del x, y, dy, y_copy, out3, ref
            torch.cuda.empty_cache()
    with open(out_path, "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=list(rows_out[0]))
        w.writeheader()
        w.writerows(rows_out)


if __name__ == "__main__":
    t0 = time.time()
    main(sys.argv[1], "--quick" in sys.argv)
    print(f"done in {time.time() - t0:.0f} s")
