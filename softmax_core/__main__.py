"""Command line: `python -m softmax_core` runs the tutorial's check; `--benchmark` runs a benchmark sweep.

Needs neither streamlit nor altair, so it runs on a bare GPU machine.
"""
from __future__ import annotations

import argparse
import shlex
import sys

import torch

from . import bench, dtypes, runtime
from .bench import PROVIDERS
from .gpu import catalog_gpu, default_gpu
from .tutorial_plan import plan_launch
from .launchers import softmax
from .reason_text import describe

def tutorial_check(rows: int = 1823, cols: int = 781, atol: float = 1e-3, rtol: float = 1e-3) -> bool:
    """The tutorial's unit test: an irregular shape so that padding and masking are exercised."""
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
    plan = plan_launch(rows, cols, dtypes.torch_dtype(dtype), gpu)
    print(f"launch plan for {rows}x{cols} {dtype} on {gpu.label}")
    for name in ("block_size", "num_warps", "num_stages", "n_regs", "n_spills", "shared_bytes", "reg_occupancy",
                 "sram_occupancy", "programs_per_sm", "num_programs", "limiter", "fits"):
        print(f"  {name:16s} {getattr(plan, name)}")
    print(f"  resources from   {plan.resources_how}")
    print(f"  occupancy rule   {plan.occupancy_rule}")
    print(f"  {describe(plan.reason)}")


def _csv_list(text: str | None, cast=str) -> list | None:
    return [cast(item.strip()) for item in text.split(",") if item.strip()] if text else None


def run_benchmark(args: argparse.Namespace, argv: list[str]) -> int:
    """Run the chosen sweep once per dtype, print each table, save each run as CSV + JSON in --out."""
    if args.sweep == "tutorial":  # the tutorial's benchmark, plus the copy roofline so ratios can be read off
        M, sizes, dtypes = bench.TUTORIAL_SWEEP_M, bench.TUTORIAL_SWEEP_N, ["float32"]
        providers, directions = ["copy", "tutorial", "ours", "torch"], ["forward"]
    else:
        M, sizes, dtypes = bench.FULL_SWEEP_M, bench.FULL_SWEEP_N, bench.FULL_SWEEP_DTYPES
        providers, directions = bench.available_providers(), ["forward", "backward"]
    try:
        sizes = _csv_list(args.sizes, int) or sizes
    except ValueError:
        print(f"--sizes takes integers separated by commas, got {args.sizes!r}")
        return 2
    dtypes, providers = _csv_list(args.dtypes) or dtypes, _csv_list(args.providers) or providers
    if bad := [d for d in dtypes if d not in dtypes.TUTORIAL_DTYPES] + [p for p in providers if p not in PROVIDERS]:
        print(f"unknown dtype or provider: {', '.join(bad)} (dtypes: {', '.join(dtypes.TUTORIAL_DTYPES)}; "
              f"providers: {', '.join(PROVIDERS)})")
        return 2
    command = shlex.join(["python", "-m", "softmax_core", *argv])
    timer = bench.DoBenchTimer(warmup_ms=10, rep_ms=args.rep_ms)
    for dtype in dtypes:
        print(f"{args.sweep} sweep: M={M}, {dtype}, {len(sizes)} sizes, {', '.join(providers)}, "
              f"{' + '.join(directions)}", flush=True)
        run = bench.run_sweep(M, sizes, dtype, providers, directions, timer=timer,
                              progress=bench.text_progress(), command=command)
        print(bench.format_table(run), flush=True)
        if args.sweep == "tutorial" and len(dtypes) == 1:
            stem = "softmax-benchmark"
        else:
            gpu = "".join(c if c.isalnum() else "-" for c in (run.provenance["gpu"] or "gpu").lower()).strip("-")
            stamp = run.provenance["date"][:16].replace(":", "").replace("-", "")
            stem = f"{gpu}-{args.sweep}-{dtype}-{stamp}"
        csv_path, json_path = bench.save_run(run, args.out, stem)
        print(f"wrote {csv_path} (table) and {json_path} (provenance)", flush=True)
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m softmax_core", description=__doc__)
    parser.add_argument("--benchmark", action="store_true", help="run a benchmark sweep (needs a GPU)")
    parser.add_argument("--sweep", choices=("tutorial", "full"), default="tutorial",
                        help="tutorial: the tutorial's sweep (M=4096, N=256..12672, fp32, forward); "
                             "full: the project's record sweep (fp32 + bf16, N=256..262144, forward + backward)")
    parser.add_argument("--out", default=".", help="directory where --benchmark writes <name>.csv and <name>.json")
    parser.add_argument("--providers", help="comma-separated subset of: " + ", ".join(PROVIDERS))
    parser.add_argument("--sizes", help="comma-separated N values instead of the sweep's own")
    parser.add_argument("--dtypes", help="comma-separated dtypes instead of the sweep's own")
    parser.add_argument("--rep-ms", type=int, default=40, help="do_bench's timed milliseconds per measurement")
    parser.add_argument("--plan", nargs=2, type=int, metavar=("ROWS", "COLS"), help="print the launch plan")
    parser.add_argument("--dtype", choices=dtypes.TUTORIAL_DTYPES, default="float32")
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
        return run_benchmark(args, argv if argv is not None else sys.argv[1:])
    return 0 if tutorial_check() else 1


if __name__ == "__main__":
    sys.exit(main())
