"""Workloads for Nsight Compute on the H200: each one runs once to compile and warm up, then once between
cudaProfilerStart and cudaProfilerStop, so that `ncu --profile-from-start off` profiles exactly those launches,
in the order the script prints. Not a test and not a timing (ncu replays a kernel many times, flushing the
caches before each pass).

    ncu --clock-control none --profile-from-start off --set full --csv --page details \\
        python3 scripts/h200_profile.py [NAME ...]                  # on the H200
    PYTHONPATH=. python scripts/h200_profile.py --list              # any machine: the workload names

With `--cache-control none` instead of ncu's default, the warm-up leaves the matrix in L2, as the CUDA-graph
timing does (the short rows' second question: why torch.compile's kernel reaches 1.00x copy at fp32 1024 there
and ours 0.84x).

The questions (docs/performance.md, v7, "Not met"): why the bf16 forward's long rows stop at 0.70-0.77x copy
when three causes were already ruled out by timing (loads in flight, L2 capacity, per-tile barriers); and why
our short-row programs run at 0.6-0.8x copy once the launch cost is gone (CUDA-graph timing) where torch.compile
and QuACK reach 0.85-0.99. Prediction written before profiling: the long bf16 rows are bound by the SM's issue
and special-function (MUFU) work per byte, not by DRAM: the tiled forward computes exp twice per element (once
in each pass), which at bf16's 4 bytes moved per element is twice float32's exp work per byte; the short rows
are bound by latency (few loads in flight per warp, barriers between a row's max and its sum).
"""
from __future__ import annotations

import sys
from pathlib import Path

import torch

from softmax_core.launch.api import cached_plan, softmax_forward
from softmax_core.plans.tuned import plan_softmax

sys.path.insert(0, str(Path(__file__).resolve().parent))
from tuning_kit import rows_variant  # noqa: E402

LONG_ROWS = 1024          # 1024 x 131072 bf16 = 256 MB in: several times the 60 MB L2
SHORT_ROWS = 4096


def _rows_variant(n_cols: int, dtype: torch.dtype, rows: int, warps: int):
    return rows_variant(cached_plan(SHORT_ROWS, n_cols, dtype, "forward", False), rows, warps)


def workloads() -> dict:
    """name -> (input shape, dtype, the call)."""
    bf16, f32 = torch.bfloat16, torch.float32
    found = {}

    def ours(name, n_rows, n_cols, dtype, plan):
        found[name] = ((n_rows, n_cols), dtype, lambda x: softmax_forward(x, plan, False))

    def plan_of(n_rows, n_cols, dtype, **kw):
        return plan_softmax(n_rows, n_cols, dtype, **kw) if kw else cached_plan(n_rows, n_cols, dtype,
                                                                                "forward", False)

    for dtype in (bf16, f32):
        tag = "bf16" if dtype == bf16 else "f32"
        found[f"copy_{tag}_131072"] = ((LONG_ROWS, 131072), dtype, lambda x: torch.empty_like(x).copy_(x))
        ours(f"plan_{tag}_131072", LONG_ROWS, 131072, dtype, plan_of(LONG_ROWS, 131072, dtype))
    ours("split_bf16_131072", LONG_ROWS, 131072, bf16, plan_of(LONG_ROWS, 131072, bf16, path="split"))
    ours("tiled_f32_131072", LONG_ROWS, 131072, f32, plan_of(LONG_ROWS, 131072, f32, path="tiled"))
    for n_cols in (256, 1024):
        for dtype in (f32, bf16):
            tag = "bf16" if dtype == bf16 else "f32"
            ours(f"plan_{tag}_{n_cols}", SHORT_ROWS, n_cols, dtype, plan_of(SHORT_ROWS, n_cols, dtype))
            found[f"torch_{tag}_{n_cols}"] = ((SHORT_ROWS, n_cols), dtype, lambda x: torch.softmax(x, -1))
            found[f"copy_{tag}_{n_cols}"] = ((SHORT_ROWS, n_cols), dtype, lambda x: torch.empty_like(x).copy_(x))
        ours(f"onewarp_f32_{n_cols}", SHORT_ROWS, n_cols, f32, _rows_variant(n_cols, f32, 1, 1))
        # Inductor's own kernel for the same softmax (compiled in the warm-up call, outside the profiled range).
        compiled = torch.compile(lambda x: torch.softmax(x, -1), dynamic=False)
        found[f"compile_f32_{n_cols}"] = ((SHORT_ROWS, n_cols), f32, compiled)
    return found


def main(names: list[str]) -> None:
    every = workloads()
    for name in names or list(every):
        shape, dtype, call = every[name]
        x = torch.randn(shape, device="cuda", dtype=dtype)
        expected = torch.softmax(x.float(), -1)
        out = call(x)                                   # compile + warm up, outside the profiled range
        if not name.startswith("copy") and not torch.allclose(out.float(), expected, atol=1e-2, rtol=1e-2):
            raise SystemExit(f"{name}: wrong answer")
        torch.cuda.synchronize()
        torch.cuda.profiler.start()
        call(x)
        torch.cuda.synchronize()
        torch.cuda.profiler.stop()
        print("profiled", name, flush=True)


if __name__ == "__main__":
    if "--list" in sys.argv:
        print("\n".join(workloads()))
        sys.exit(0)
    main(sys.argv[1:])
