"""Tuning sweep for the any-dim kernels on a GPU (issue 21 item 2): the tile (inner columns, values down the
reduced axis per step, warps; one pass or two) of the forward and of the backward, on channel softmax,
transposed views and a channels-last tensor, beside copy, torch and the fitted plan in the same run.

Every output is torch's layout (contiguous); each variant's output is checked against torch's in float32
before it is timed. Timer: triton.testing.do_bench (L2 flushed before every call), median ms.

    python -m bench_tools.record.any_dim_tune OUT.csv [--quick | --defaults]

--quick times the first few variants only; --defaults only copy, torch and the fitted plan.
"""
from __future__ import annotations

import csv
import sys

import torch
import triton
import triton.testing

from softmax_core.hardware.gpu import default_gpu
from softmax_core.launch import any_dim
from softmax_core.plans.any_dim import plan_any_dim

# (name, shape, dtype, dim, layout): layout "contiguous", "transposed" (the last two dims of a contiguous
# buffer swapped) or "channels_last"
CASES = (("channel", (64, 1000, 49), torch.float32, 1, "contiguous"),
         ("channel-large", (256, 1000, 196), torch.float32, 1, "contiguous"),
         ("transposed", (32, 2048, 2048), torch.bfloat16, 2, "transposed"),
         ("transposed-dim1", (32, 2048, 2048), torch.bfloat16, 1, "transposed"),
         ("channels-last", (32, 256, 56, 56), torch.float16, 1, "channels_last"))

# (block_i, block_r or None for one pass, warps)
FORWARD_VARIANTS = ((4, None, 4), (8, None, 4), (8, None, 8), (16, None, 8), (16, None, 16), (32, None, 16),
                    (8, 1024, 4), (16, 512, 4), (16, 512, 8), (32, 256, 4), (32, 256, 8), (64, 128, 4),
                    (128, 64, 4), (16, 256, 4), (32, 128, 4), (64, 64, 4))


def ms(fn) -> float:
    return triton.testing.do_bench(fn, warmup=10, rep=40, quantiles=[0.5])


def make(shape, dtype, layout) -> torch.Tensor:
    if layout == "transposed":
        return torch.randn(shape[:-2] + (shape[-1], shape[-2]), device="cuda").to(dtype).transpose(-1, -2)
    x = torch.randn(shape, device="cuda").to(dtype)
    return x.to(memory_format=torch.channels_last) if layout == "channels_last" else x


def main(argv: list[str]) -> int:
    out = argv[0]
    quick = "--quick" in argv
    defaults_only = "--defaults" in argv
    gpu = default_gpu()
    rows: list[tuple] = []

    def record(case, direction, variant, nbytes, fn, ref=None):
        try:
            if ref is not None:
                err = (fn().float() - ref).abs().max().item()
                if not err <= 2e-2:
                    rows.append((case, direction, variant, "wrong", err, ""))
                    print(rows[-1], flush=True)
                    return
            t = ms(fn)
            rows.append((case, direction, variant, "ok", t, nbytes * 1e-6 / t))
        except Exception as e:  # noqa: BLE001
            rows.append((case, direction, variant, "failed", str(e).splitlines()[0][:160], ""))
        print(rows[-1], flush=True)

    for name, shape, dtype, dim, layout in CASES:
        x = make(shape, dtype, layout)
        nbytes = 2 * x.numel() * x.element_size()
        ref = torch.softmax(x.float(), dim)
        record(name, "forward", "copy", nbytes, lambda: torch.empty_like(x).copy_(x))
        record(name, "forward", "torch", nbytes, lambda: torch.softmax(x, dim))
        record(name, "forward", "default", nbytes, lambda: any_dim.any_dim_forward(x, dim, False, x.dtype), ref)
        x_layout = any_dim.any_dim_layout(x, dim)
        variants = () if defaults_only else FORWARD_VARIANTS[:4] if quick else FORWARD_VARIANTS
        for block_i, block_r, warps in variants:
            plan = plan_any_dim(x_layout, x.element_size(), str(dtype), gpu, block_i=block_i,
                                block_r=block_r or 1 << 30, num_warps=warps)
            if plan.block_r * plan.block_i > 65536 or (block_r is not None and plan.one_pass):
                continue
            tag = f"bi{plan.block_i}-br{plan.block_r}-w{plan.num_warps}-{'one' if plan.one_pass else 'two'}"
            record(name, "forward", tag, nbytes, lambda p=plan: any_dim.any_dim_forward(x, dim, False, x.dtype, p),
                   ref)
        # backward: y contiguous (ours and torch's), dy in y's layout
        y = torch.softmax(x, dim)
        dy = torch.randn_like(y)
        bbytes = 1.5 * nbytes
        a, b = y.contiguous(), dy.contiguous()
        dx_ref = (y.float() * (dy.float() - (y.float() * dy.float()).sum(dim, keepdim=True)))
        record(name, "backward", "copy", bbytes, lambda: torch.add(a, b))
        record(name, "backward", "torch", bbytes, lambda: torch._softmax_backward_data(dy, y, dim, y.dtype))
        record(name, "backward", "default", bbytes, lambda: any_dim.any_dim_backward(y, dy, dim, x.dtype), dx_ref)
        if not any_dim.rows_backward(tuple(y.shape), dim):
            layout = any_dim.any_dim_layout(y, dim)
            for block_i, block_r, warps in (variants if not quick else variants[:2]):
                plan = plan_any_dim(layout, y.element_size(), str(dtype), gpu, "backward", block_i=block_i,
                                    block_r=block_r or 1 << 30, num_warps=warps)
                if plan.block_r * plan.block_i > 32768 or (block_r is not None and plan.one_pass):
                    continue
                tag = f"bi{plan.block_i}-br{plan.block_r}-w{plan.num_warps}-{'one' if plan.one_pass else 'two'}"
                record(name, "backward", tag, bbytes,
                       lambda p=plan: any_dim.any_dim_backward(y, dy, dim, x.dtype, p), dx_ref)
        del x, y, dy, a, b, ref, dx_ref
        torch.cuda.empty_cache()

    with open(out, "w", newline="") as f:
        writer = csv.writer(f)
        writer.writerow(("case", "direction", "variant", "status", "ms", "gbps"))
        writer.writerows(rows)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
