"""Command line: `python -m softmax_core` runs the chapter's unit test (the tutorial kernel), then the same input
through the tuned softmax (on a machine without a GPU, both in Triton's interpreter); `--plan ROWS COLS` prints a
launch plan. Two commands hand over to the packages beside the library: `--benchmark ...` to the benchmark
harness (`python -m softmax_bench`), `inspect FILE.py` to the kernel inspector (`python -m kernel_inspector`).

Needs neither streamlit nor altair, so it runs on a bare GPU machine.
"""
from __future__ import annotations

import argparse
import runpy
import sys

from softmax_core.hardware import runtime

runtime.use_interpreter_without_gpu()   # this command runs the kernels: on a laptop, in the interpreter

import torch  # noqa: E402

from softmax_core.hardware import dtypes  # noqa: E402
from softmax_core.hardware.gpu import catalog_gpu, default_gpu
from softmax_core.plans.choose import plan_softmax
from softmax_core.plans.tutorial import plan_launch
from softmax_core.launch.api import softmax
from softmax_core.launch.chapter_test import (CHAPTER_TEST_ATOL, CHAPTER_TEST_RTOL,  # noqa: E402
                                               CHAPTER_TEST_SIZE, chapter_unit_test)
from softmax_core.words import describe

def chapter_and_tuned_checks(rows: int = CHAPTER_TEST_SIZE[0], cols: int = CHAPTER_TEST_SIZE[1],
                             atol: float = CHAPTER_TEST_ATOL, rtol: float = CHAPTER_TEST_RTOL) -> bool:
    """The chapter's unit test (test_softmax_kernel: seed 0, an irregular shape so that padding and masking are
    exercised, the tutorial's kernel against torch.softmax), then the same input through the tuned
    `softmax_core.softmax`. True when both match."""
    chapter = chapter_unit_test((rows, cols), atol, rtol)
    print(f"the chapter's unit test, tutorial kernel, {rows}x{cols} float32: "
          f"{'matches' if chapter.passed else 'DOES NOT match'} torch.softmax (max |error| {chapter.max_abs_error:.2e})")
    if not chapter.passed:
        print(chapter.message)
    torch.manual_seed(0)
    x = torch.randn(rows, cols, device=runtime.kernel_device())
    try:
        torch.testing.assert_close(softmax(x), torch.softmax(x, dim=1), atol=atol, rtol=rtol)
        tuned_ok = True
    except AssertionError as err:
        print(f"the tuned softmax FAILED on {rows}x{cols}: {err}")
        tuned_ok = False
    if tuned_ok:
        print(f"the tuned softmax, same input: matches torch.softmax (atol={atol}, rtol={rtol})")
    passed = chapter.passed and tuned_ok
    print("PASSED" if passed else "FAILED")
    return passed


def describe_plan(rows: int, cols: int, dtype: str, gpu_key: str | None) -> None:
    gpu = catalog_gpu(gpu_key) if gpu_key else default_gpu()
    plan = plan_launch(rows, cols, dtypes.torch_dtype(dtype), gpu)
    print(f"launch plan for {rows}x{cols} {dtype} on {gpu.label}")
    for name in ("block_size", "num_warps", "num_stages", "n_regs", "n_spills", "shared_bytes", "reg_occupancy",
                 "sram_occupancy", "programs_per_sm", "num_programs", "limiter", "fits"):
        print(f"  {name:16s} {getattr(plan, name)}")
    print(f"  resources from   {describe(plan.resources_how)}")
    print(f"  occupancy rule   {describe(plan.occupancy_rule)}")
    print(f"  {describe(plan.reason)}")
    tuned = plan_softmax(rows, cols, dtypes.torch_dtype(dtype), gpu)
    print(f"tuned plan (softmax_core.softmax): {tuned.path} path, block {tuned.block_n}, {tuned.num_warps} warps, "
          f"{tuned.num_programs} programs")
    print(f"  {describe(tuned.reason)}")


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="python -m softmax_core", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--plan", nargs=2, type=int, metavar=("ROWS", "COLS"), help="print the launch plan")
    parser.add_argument("--dtype", choices=dtypes.TUTORIAL_DTYPES, default="float32")
    parser.add_argument("--gpu", help="plan for a catalog GPU (key from softmax_core/data/gpus.json) instead of this one")
    parser.add_argument("--benchmark", action="store_true",
                        help="a benchmark sweep on this GPU: the rest of the line goes to `python -m softmax_bench` "
                             "(its --help lists the sweeps)")
    return parser


def hand_over(package: str, argv: list[str]) -> int:
    """Run `python -m <package> argv` in this process: the library names its neighbours' commands, by name
    alone, and imports none of their code itself."""
    saved = sys.argv
    sys.argv = [f"python -m {package}", *argv]
    try:
        runpy.run_module(package, run_name="__main__", alter_sys=True)
    except SystemExit as done:
        return done.code if isinstance(done.code, int) else (0 if done.code is None else 1)
    finally:
        sys.argv = saved
    return 0


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if argv[:1] == ["inspect"]:          # a kernel file's per-GPU table: the kernel inspector's command
        return hand_over("kernel_inspector", argv[1:])
    if "--benchmark" in argv:             # a sweep on this GPU: the benchmark harness's command
        return hand_over("softmax_bench", [a for a in argv if a != "--benchmark"])
    args = build_parser().parse_args(argv)
    print(runtime.backend_description())
    if args.plan:
        describe_plan(*args.plan, args.dtype, args.gpu)
        return 0
    return 0 if chapter_and_tuned_checks() else 1


if __name__ == "__main__":
    sys.exit(main())
