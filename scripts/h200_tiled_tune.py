"""Tuning sweep for the tiled path (a long row walked in tiles, twice) on a GPU: tile width, warps and
PREFETCH (the next tile asked for before this one is reduced), against copy, torch and the plan's own choice
in the same run. Every variant's answer is checked before it is timed. Writes a CSV. Not a test: run it on
the H200.

    PYTHONPATH=. python scripts/h200_tiled_tune.py OUT.csv

The question it answers (docs/performance.md, "Long bf16 rows"): a bf16 tile of 16,384 values is 32 KB, half
of a float32 tile's bytes, and the tiled loop issues its next load only after the current tile's arithmetic.
With one program per SM, that leaves too few bytes in flight to cover DRAM latency. Wider bf16 tiles, more
warps, or a tile prefetched one step ahead should each keep more bytes in flight.
"""
from __future__ import annotations

import os
import sys
import time

import pandas as pd
import torch
import triton

from softmax_core import dtypes
from softmax_core.gpu import default_gpu
from softmax_core.launchers import cached_plan, softmax_backward, softmax_forward
from softmax_core.memory import bytes_moved
from softmax_core.tuned_plan import plan_tiled


def _env_list(name: str, default, cast=int):
    value = os.environ.get(name)
    return [cast(v) for v in value.split(",")] if value else list(default)


# Narrower sweeps from the environment, e.g. TILED_TUNE_NS=131072 TILED_TUNE_DTYPES=bfloat16.
M = 4096
NS = _env_list("TILED_TUNE_NS", (32768, 65536, 131072, 262144))
DTYPES = [getattr(torch, d) for d in _env_list("TILED_TUNE_DTYPES", ("bfloat16", "float32"), str)]
SHAPES = [(16384, 16), (16384, 32), (32768, 16), (32768, 32), (8192, 16), (8192, 8), (4096, 8)]


def bench(fn) -> tuple[float, float, float]:
    """(p20, median, p80) milliseconds: do_bench with the L2 flushed before every call."""
    return tuple(triton.testing.do_bench(fn, warmup=10, rep=40, quantiles=[0.2, 0.5, 0.8]))


def variants(n_rows: int, n_cols: int, dtype: torch.dtype, direction: str):
    gpu = default_gpu()
    flags = {"SAFE": False, "FP64": False} if direction == "forward" else {"FP64": False}
    yield "default", cached_plan(n_rows, n_cols, dtype, direction, False)
    for tile, warps in SHAPES:
        for prefetch in (False, True):
            yield "tiled", plan_tiled(n_rows, n_cols, dtype, gpu, direction, flags, tile=tile, num_warps=warps,
                                      prefetch=prefetch)


def describe(plan) -> str:
    if plan is None:
        return "-"
    extra = f" split={plan.split}" if plan.path == "split" else f" prefetch={int(plan.prefetch)}"
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
            ref = torch.softmax(x.float(), -1)
            candidates(dtype, n, "", "forward", lambda plan: softmax_forward(x, plan, False), ref, fwd_bytes, copy_gbps)
            del ref, y_copy
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
            del x, y, dy, out3, dx_ref
            torch.cuda.empty_cache()
            pd.DataFrame(rows_out).to_csv(out_path, index=False)     # what is done so far survives a timeout
    pd.DataFrame(rows_out).to_csv(out_path, index=False)


if __name__ == "__main__":
    t0 = time.time()
    main(sys.argv[1])
    print(f"done in {time.time() - t0:.0f} s")
