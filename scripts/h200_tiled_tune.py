"""Tuning sweep for the tiled path (a long row walked in tiles, twice) on a GPU: tile width, warps and
programs per row, against copy, torch and the plan's own choice in the same run. Every variant's answer is
checked before it is timed. Writes a CSV. Not a test: run it on the H200.

    PYTHONPATH=. python scripts/h200_tiled_tune.py OUT.csv

What the three sweeps of 2026-11-30 asked (assets/benchmarks/tuning/h200-tiled-tune-20261130-*.csv;
docs/performance.md, "Long rows"). Sweeps 1 and 3 ran variants that are no longer in the kernels: PREFETCH
and SLOTS, in commit 11e51aa with this script's version for them.
  1. Does the tiled loop keep too few bytes in flight (tile width, warps, the next tile prefetched)? Not at
     the long rows: at 131072 and 262144 every shape ended at 0.71-0.76x copy, forward.
  2. Is it the L2 (a row's tiles shared by SPLIT programs, so fewer rows are in flight)? For the backward,
     partly (bf16 131072: 0.64 -> 0.75x); for the bf16 forward no (slower).
  3. Is it the two block-wide reductions (barriers) per tile in pass 1 (SLOTS: per-slot reductions)? No.
Then Nsight Compute (scripts/h200_profile.py, 2026-11-30): the bf16 tiled forward at 131072 kept DRAM 75% busy
(copy ~89%) with its warps mostly waiting on loads (long scoreboard), and read 1.17x the bytes a single pass
would. So:
  4. Tiles copied ahead into shared memory by Triton's pipeliner (cp.async; a STAGES switch on the tiled
     kernels), so loads stay in flight while a tile is reduced without the registers the prefetch of sweep 1
     spilled? No for the forward (65536-262144: every STAGES = 2-3 variant at or below STAGES = 1); the bf16
     backward's shared rows gained 3-8%, within reach of the spread. Sweep 4 ran commit baab450, which has the
     switch and this script's version for it; the switch was then taken out.
"""
from __future__ import annotations

import sys
import time
from pathlib import Path

import pandas as pd
import torch

from softmax_core.hardware import dtypes
from softmax_core.hardware.gpu import default_gpu
from softmax_core.launch.api import cached_plan, softmax_backward, softmax_forward
from softmax_core.teaching.memory import bytes_moved
from softmax_core.plans.tuned import plan_tiled

sys.path.insert(0, str(Path(__file__).resolve().parent))
from tuning_kit import bench, env_list  # noqa: E402


# Narrower sweeps from the environment, e.g. TILED_TUNE_NS=131072 TILED_TUNE_DTYPES=bfloat16.
M = 4096
NS = env_list("TILED_TUNE_NS", (32768, 65536, 131072, 262144))
DTYPES = [getattr(torch, d) for d in env_list("TILED_TUNE_DTYPES", ("bfloat16", "float32"), str)]
# (tile, warps): the three best of the first sweep (tuning/h200-tiled-tune-20261130-1-prefetch.csv).
SHAPES = [tuple(int(v) for v in shape.split("x"))
          for shape in env_list("TILED_TUNE_SHAPES", ("16384x16", "16384x32", "8192x8", "4096x8"), str)]
SPLITS = env_list("TILED_TUNE_SPLITS", (1, 4, 8))
DIRECTIONS = env_list("TILED_TUNE_DIRECTIONS", ("forward", "backward"), str)


def variants(n_rows: int, n_cols: int, dtype: torch.dtype, direction: str):
    """The plan's choice; then each tiled shape with a row shared by 1, 4 or 8 programs (TILED_TUNE_SPLITS)."""
    gpu = default_gpu()
    flags = {"SAFE": False, "FP64": False} if direction == "forward" else {"FP64": False}
    yield "default", cached_plan(n_rows, n_cols, dtype, direction, False)
    for tile, warps in SHAPES:
        for split in SPLITS:
            yield "tiled", plan_tiled(n_rows, n_cols, dtype, gpu, direction, flags, tile=tile, num_warps=warps,
                                      split=split)


def describe(plan) -> str:
    if plan is None:
        return "-"
    extra = f" split={plan.split} shared={plan.resources.shared_bytes}"
    return (f"{plan.path} block={plan.block_n} warps={plan.num_warps}{extra} grid={plan.num_programs} "
            f"regs={plan.resources.n_regs} spills={plan.resources.n_spills} "
            f"per_sm={plan.occupancy.programs_per_sm}")


def main(out_path: str) -> None:
    rows_out = []

    def record(dtype, n, kind, plan, times, nbytes, base, ok=True):
        p20, ms, p80 = times
        gbps = nbytes / ms * 1e-6
        rows_out.append(dict(dtype=dtypes.name(dtype), N=n, kind=kind, variant=describe(plan), ms_p20=round(p20, 5),
                             ms=round(ms, 5), ms_p80=round(p80, 5), gbps=round(gbps, 1),
                             copy_ratio=round(gbps / base, 3) if base else 1.0, ok=ok))
        print(f"{dtypes.name(dtype):9s} N={n:7d} {kind:12s} {gbps:7.0f} GB/s {gbps / base if base else 1:5.3f} "
              f"{'ok' if ok else 'WRONG'} {describe(plan)}", flush=True)

    def candidates(dtype, n, prefix, direction, launch, reference, nbytes, base):
        tol = 1e-5 if dtype == torch.float32 else 1e-2
        for kind, plan in variants(M, n, dtype, direction):
            try:
                out = launch(plan)
                torch.cuda.synchronize()
                ok = torch.allclose(out.float(), reference, atol=tol, rtol=tol)
                record(dtype, n, prefix + kind, plan, bench(lambda: launch(plan)), nbytes, base, ok)
            except Exception as exc:
                print("variant failed", n, describe(plan), repr(exc)[:200], flush=True)

    for dtype in DTYPES:
        for n in NS:
            x = torch.randn(M, n, device="cuda", dtype=dtype)
            fwd_bytes = bytes_moved(M, n, x.element_size())
            bwd_bytes = bytes_moved(M, n, x.element_size(), "backward")
            y_copy = torch.empty_like(x)
            copy_times = bench(lambda: y_copy.copy_(x))
            copy_gbps = fwd_bytes / copy_times[1] * 1e-6
            record(dtype, n, "copy", None, copy_times, fwd_bytes, copy_gbps)
            record(dtype, n, "torch", None, bench(lambda: torch.softmax(x, -1)), fwd_bytes, copy_gbps)
            if "forward" in DIRECTIONS:
                ref = torch.softmax(x.float(), -1)
                candidates(dtype, n, "", "forward", lambda plan: softmax_forward(x, plan, False), ref, fwd_bytes,
                           copy_gbps)
                del ref
            del y_copy
            if "backward" in DIRECTIONS:
                dy = torch.randn_like(x)
                y = torch.softmax(x, -1)
                dx_ref = torch._softmax_backward_data(dy, y, -1, dtype).float()
                out3 = torch.empty_like(x)
                bcopy_times = bench(lambda: torch.add(y, dy, out=out3))
                bcopy_gbps = bwd_bytes / bcopy_times[1] * 1e-6
                record(dtype, n, "bwd-copy", None, bcopy_times, bwd_bytes, bcopy_gbps)
                record(dtype, n, "bwd-torch", None, bench(lambda: torch._softmax_backward_data(dy, y, -1, dtype)),
                       bwd_bytes, bcopy_gbps)
                candidates(dtype, n, "bwd-", "backward", lambda plan: softmax_backward(y, dy, plan), dx_ref, bwd_bytes,
                           bcopy_gbps)
                del y, dy, out3, dx_ref
            del x
            torch.cuda.empty_cache()
            pd.DataFrame(rows_out).to_csv(out_path, index=False)     # what is done so far survives a timeout
    pd.DataFrame(rows_out).to_csv(out_path, index=False)


if __name__ == "__main__":
    t0 = time.time()
    main(sys.argv[1])
    print(f"done in {time.time() - t0:.0f} s")
