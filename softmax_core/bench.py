"""Benchmarks on a GPU. The seed's sweep: M = 4096, N = 256 ... 12672, Triton vs torch, GB/s."""
from __future__ import annotations

import csv

import torch

from .memory import bytes_moved
from .ops import softmax

SEED_SWEEP_M = 4096
SEED_SWEEP_N = [128 * i for i in range(2, 100)]  # the chapter's x_vals


def gbps(nbytes: int, ms: float) -> float:
    return nbytes * 1e-9 / (ms * 1e-3)


def run_seed_sweep(csv_path: str) -> int:
    import triton

    rows = []
    for n in SEED_SWEEP_N:
        x = torch.randn(SEED_SWEEP_M, n, device="cuda", dtype=torch.float32)
        nbytes = bytes_moved(SEED_SWEEP_M, n, x.element_size())
        row = {"N": n}
        for name, fn in (("triton", lambda: softmax(x)), ("torch", lambda: torch.softmax(x, dim=-1))):
            row[name] = round(gbps(nbytes, triton.testing.do_bench(fn)), 1)
        print(f"N={n:6d}  triton {row['triton']:8.1f} GB/s  torch {row['torch']:8.1f} GB/s", flush=True)
        rows.append(row)
    with open(csv_path, "w", newline="") as f:
        writer = csv.DictWriter(f, fieldnames=["N", "triton", "torch"])
        writer.writeheader()
        writer.writerows(rows)
    print(f"wrote {csv_path}")
    return 0
