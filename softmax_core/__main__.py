"""Command line: `python -m softmax_core` runs the seed's check; `--benchmark` runs the seed's sweep.

Needs neither streamlit nor altair, so it runs on a bare GPU machine.
"""
from __future__ import annotations

import argparse
import sys

import torch

from . import runtime
from .gpu import catalog_gpu, default_gpu
from .launch import plan_launch
from .ops import softmax

DTYPES = {"float32": torch.float32, "float16": torch.float16, "bfloat16": torch.bfloat16}


def seed_check(rows: int = 1823, cols: int = 781, atol: float = 1e-3, rtol: float = 1e-3) -> bool:
    """The chapter's unit test: an irregular shape so that padding and masking are exercised."""
    torch.manual_seed(0)
    x = torch.randn(rows, cols, device=runtime.kernel_device())
    y = softmax(x)
    expected = torch.softmax(x, dim=1)
    try:
        torch.testing.assert_close(y, expected, atol=atol, rtol=rtol)
    except AssertionError as err:
        print(f"FAILED on {rows}x{cols}: {err}")
        return False
    print(f"softmax of {rows}x{cols} float32 matches torch.softmax (atol={atol}, rtol={rtol})")
    print("PASSED")
    return True


def describe_plan(rows: int, cols: int, dtype: str, gpu_key: str | None) -> None:
    gpu = catalog_gpu(gpu_key) if gpu_key else default_gpu()
    plan = plan_launch(rows, cols, DTYPES[dtype], gpu)
    print(f"launch plan for {rows}x{cols} {dtype} on {gpu.label}")
    for name in ("block_size", "num_warps", "num_stages", "n_regs", "n_spills", "shared_bytes", "reg_occupancy",
                 "sram_occupancy", "programs_per_sm", "num_programs", "limiter", "fits"):
        print(f"  {name:16s} {getattr(plan, name)}")
    print(f"  resources from   {plan.resources_how}")
    print(f"  occupancy rule   {plan.occupancy_rule}")
    print(f"  {plan.explanation}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m softmax_core", description=__doc__)
    parser.add_argument("--benchmark", action="store_true", help="run the seed's sweep (needs a GPU)")
    parser.add_argument("--csv", default="softmax-benchmark.csv", help="where --benchmark writes its table")
    parser.add_argument("--plan", nargs=2, type=int, metavar=("ROWS", "COLS"), help="print the launch plan")
    parser.add_argument("--dtype", choices=sorted(DTYPES), default="float32")
    parser.add_argument("--gpu", help="plan for a catalog GPU (key from assets/gpus.json) instead of this one")
    args = parser.parse_args(argv)
    print(runtime.backend_description())
    if args.plan:
        describe_plan(*args.plan, args.dtype, args.gpu)
        return 0
    if args.benchmark:
        if runtime.INTERPRETED:
            print("--benchmark needs a GPU: this machine has none (kernels run in Triton's interpreter, whose "
                  "timings say nothing about a GPU). Recorded H200 runs are in assets/benchmarks/.")
            return 2
        from .bench import run_seed_sweep

        return run_seed_sweep(args.csv)
    return 0 if seed_check() else 1


if __name__ == "__main__":
    sys.exit(main())
