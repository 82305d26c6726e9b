"""Workloads for Nsight Compute: each runs once to compile and warm up, then once between cudaProfilerStart and
cudaProfilerStop, so that `ncu --profile-from-start off` profiles exactly those launches, in the order printed.
Not a test and not a timing (ncu replays a kernel many times, flushing the caches before each pass unless told
otherwise).

    ncu --clock-control none --profile-from-start off --set full --csv --page details \\
        python -m bench_tools.record.ncu_workloads [NAME ...]          # on a GPU
    python -m bench_tools.record.ncu_workloads --list                  # any machine: the workload names

The workloads: long rows (1024 x 131072, several times the H200's L2) through the plan softmax_core.softmax
picks and through the split and tiled paths forced, beside a copy of the same bytes; short rows (4096 x 256 and
x 1024) through the plan, torch.softmax, torch.compile's kernel and a copy. With `--cache-control none` the
warm-up leaves the matrix in L2, as the CUDA-graph timing does. The profiles recorded with it are in
assets/benchmarks/profiles/.
"""
from __future__ import annotations

import sys

import torch

from softmax_core.launch.api import cached_plan, softmax_forward
from softmax_core.plans.choose import plan_softmax

LONG_ROWS = 1024          # 1024 x 131072 bf16 = 256 MB in: several times the 60 MB L2
SHORT_ROWS = 4096


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
