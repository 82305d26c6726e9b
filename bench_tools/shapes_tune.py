"""Tuning sweep for the real-shape kernels on a GPU (issue 21): the any-dim kernel's tile (BLOCK_I, chunk,
warps), the any-width kernel's tile and warps on vocabulary rows, the tiny-rows kernel's rows and warps,
each beside copy, torch and the plan the library had before (edges / tiny off) in the same run.

    python -m bench_tools.shapes_tune OUT.csv
"""
from __future__ import annotations

import csv
import sys

import torch
import triton.testing

import softmax_core as sc
from softmax_core.hardware.gpu import default_gpu
from softmax_core.launch import any_dim
from softmax_core.launch.api import softmax_backward, softmax_forward
from softmax_core.plans.any_dim import plan_any_dim
from softmax_core.plans.any_width import edge_plan, tiny_plan
from softmax_core.plans.tuned import plan_rows_tiled_split, plan_tiled
from softmax_core.plans.choose import plan_softmax


def ms(fn):
    return triton.testing.do_bench(fn, warmup=10, rep=40, quantiles=[0.5])


def main(out: str) -> None:
    gpu = default_gpu()
    rows = []

    def record(case, variant, nbytes, fn, ref=None):
        try:
            if ref is not None:
                got = fn()
                err = (got.float() - ref).abs().max().item()
                if not err <= 2e-2:
                    rows.append((case, variant, "wrong", err, ""))
                    return
            t = ms(fn)
            rows.append((case, variant, "ok", t, nbytes * 1e-6 / t))
        except Exception as e:  # noqa: BLE001
            rows.append((case, variant, "failed", str(e).splitlines()[0][:120], ""))
        print(rows[-1], flush=True)

    # any-dim: channel softmax and a transposed view
    for name, shape, dtype, dim, transposed in [("channel", (64, 1000, 49), torch.float32, 1, False),
                                                ("channel-large", (256, 1000, 196), torch.float32, 1, False),
                                                ("transposed", (32, 2048, 2048), torch.bfloat16, 2, True)]:
        base = torch.randn(shape[:-2] + (shape[-1], shape[-2]) if transposed else shape, device="cuda").to(dtype)
        x = base.transpose(-1, -2) if transposed else base
        dy = torch.randn_like(x)
        layout = any_dim.any_dim_layout(x, dim)
        nbytes = 2 * x.numel() * x.element_size()
        ref = torch.softmax(x.float(), dim)
        record(name, "copy", nbytes, lambda: torch.empty_like(x).copy_(x))
        record(name, "torch", nbytes, lambda: torch.softmax(x, dim))
        record(name, "old:contiguous-rows", nbytes,
               lambda: sc.softmax(x.movedim(dim, -1).contiguous(), -1).movedim(-1, dim))
        y = any_dim.any_dim_forward(x, dim, False, x.dtype)
        record(name, "bwd:copy", 1.5 * nbytes, lambda: torch.add(x, dy))
        record(name, "bwd:default", 1.5 * nbytes, lambda: any_dim.any_dim_backward(y, dy, dim, x.dtype))
        for block_i in (16, 32, 64, 128):
            for block_r, warps in ((None, None), (None, 8), (None, 16), (32, 8), (64, 8), (64, 4)):
                if True:
                    try:
                        plan = plan_any_dim(layout, x.element_size(), str(dtype), gpu, block_i=block_i,
                                            block_r=block_r, num_warps=warps)
                    except Exception:  # noqa: BLE001
                        continue
                    if plan.block_r * plan.block_i > 65536 or (block_r is not None and plan.one_pass):
                        continue
                    tag = f"bi{plan.block_i}-br{plan.block_r}-w{plan.num_warps}-{'one' if plan.one_pass else 'two'}"
                    record(name, tag, nbytes, lambda p=plan: any_dim.any_dim_forward(x, dim, False, x.dtype, p),
                           ref if block_r is None and warps is None else None)
        del x, base, dy, y
        torch.cuda.empty_cache()

    # any-width: vocabulary rows and an odd width
    for name, M, N, dtype in [("gpt2", 8192, 50257, torch.bfloat16), ("qwen-151936", 2048, 151936, torch.bfloat16),
                              ("odd-3000", 10000, 3000, torch.float16), ("llama2-32000", 8192, 32000, torch.bfloat16),
                              ("fp32-50257", 4096, 50257, torch.float32)]:
        x = torch.randn(M, N, device="cuda").to(dtype)
        dy = torch.randn_like(x)
        nbytes = 2 * x.numel() * x.element_size()
        ref = torch.softmax(x.float(), -1)
        record(name, "copy", nbytes, lambda: torch.empty_like(x).copy_(x))
        record(name, "torch", nbytes, lambda: torch.softmax(x, -1))
        old = plan_rows_tiled_split(M, N, dtype, gpu)
        record(name, f"old:{old.path}-{old.block_n}-w{old.num_warps}", nbytes, lambda: softmax_forward(x, old), ref)
        new = plan_softmax(M, N, dtype, gpu)
        record(name, f"default:{new.path}-{new.block_n}-w{new.num_warps}-edges{new.edges}", nbytes,
               lambda: softmax_forward(x, new), ref)
        y = softmax_forward(x, new)
        for d, p in (("old", plan_rows_tiled_split(M, N, dtype, gpu, "backward")),
                     ("default", plan_softmax(M, N, dtype, gpu, "backward"))):
            record(name, f"bwd:{d}:{p.path}-{p.block_n}-w{p.num_warps}-edges{p.edges}", 1.5 * nbytes,
                   lambda p=p: softmax_backward(y, dy, p))
        record(name, "bwd:copy", 1.5 * nbytes, lambda: torch.add(x, dy))
        if N % 16:
            for tile, warps in ((16384, 16), (16384, 8), (8192, 8), (8192, 4), (4096, 4), (4096, 8), (2048, 4)):
                p = edge_plan(plan_tiled(M, N, dtype, gpu, "forward", tile=tile,
                                         num_warps=warps), dtype)
                record(name, f"edges-tiled-{tile}-w{warps}", nbytes, lambda p=p: softmax_forward(x, p))
        del x, dy, y
        torch.cuda.empty_cache()

    # tiny rows
    for name, M, N, dtype in [("router-8", 65536, 8, torch.bfloat16), ("router-64", 65536, 64, torch.float32),
                              ("router-8-big", 1 << 20, 8, torch.bfloat16)]:
        x = torch.randn(M, N, device="cuda").to(dtype)
        nbytes = 2 * x.numel() * x.element_size()
        record(name, "copy", nbytes, lambda: torch.empty_like(x).copy_(x))
        record(name, "torch", nbytes, lambda: torch.softmax(x, -1))
        old = plan_rows_tiled_split(M, N, dtype, gpu)
        record(name, f"old:rows{old.rows_per_program}-w{old.num_warps}", nbytes, lambda: softmax_forward(x, old))
        for r in (64, 128, 256, 512):
            for w in (1, 2, 4):
                p = tiny_plan(old, dtype, rows=r, num_warps=w)
                record(name, f"tiny-r{r}-w{w}", nbytes, lambda p=p: softmax_forward(x, p))

    with open(out, "w", newline="") as f:
        writer = csv.writer(f)
        writer.writerow(["case", "variant", "status", "ms_or_error", "gbps"])
        writer.writerows(rows)


if __name__ == "__main__":
    main(sys.argv[1])
