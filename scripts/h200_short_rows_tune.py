"""Tuning sweep for short rows (the rows path, N <= 2048) on a GPU, timed both ways: eager
(`triton.testing.do_bench`, L2 flushed) and replayed from a CUDA graph (the harness's CudaGraphTimer: no launch
cost, L2 warm). Variants: rows per program x warps, against copy, torch, torch.compile and QuACK (when
installed) in the same run; every variant's answer is checked before it is timed. Writes a CSV. Not a test.

    PYTHONPATH=. python scripts/h200_short_rows_tune.py OUT.csv        # on the H200
    PYTHONPATH=. python scripts/h200_short_rows_tune.py --list         # any machine: the variants only

The whole sweep is about 250 variants x 2 clocks with some 240 compiles: several minutes; narrow it with
SHORT_TUNE_NS, SHORT_TUNE_DTYPES, SHORT_TUNE_ROWS and SHORT_TUNE_WARPS (comma-separated) to fit a device call.

Why (docs/performance.md, v7): replayed from a CUDA graph, our forward at N = 256-1024 ran 0.56-0.78x copy,
behind QuACK (0.85-0.95), torch.compile and Liger (0.99 at fp32 1024); eager timing had hidden it under the
launch cost every provider pays. The prediction written before the run: the plan's short-row programs spread a
row over several warps (fp32 256: 8 rows x 256 values, 4 warps: two warps a row), so each row block's max and
sum are block-wide reductions with 4 bar.sync (sm_90 PTX of the offline compile); one warp per program has
none, so 1-warp programs of 1-4 rows should win at N <= 1024 once the launch cost is gone.
"""
from __future__ import annotations

import sys
import time
from pathlib import Path

import pandas as pd
import torch

from softmax_core.hardware import dtypes
from softmax_core.hardware.gpu import default_gpu
from softmax_core.launch.api import cached_plan, softmax_forward
from softmax_core.teaching.memory import bytes_moved

sys.path.insert(0, str(Path(__file__).resolve().parent))
from tuning_kit import env_list, rows_variant  # noqa: E402


M = 4096
NS = env_list("SHORT_TUNE_NS", (256, 512, 781, 1024, 2048))
DTYPES = [getattr(torch, d) for d in env_list("SHORT_TUNE_DTYPES", ("float32", "bfloat16"), str)]
ROWS = env_list("SHORT_TUNE_ROWS", (1, 2, 4, 8, 16, 32))
WARPS = env_list("SHORT_TUNE_WARPS", (1, 2, 4, 8))


def variants(n_cols: int, dtype: torch.dtype):
    """The plan's own choice, then every ROWS x warps with no more threads than values."""
    plan = cached_plan(M, n_cols, dtype, "forward", False)
    yield "default", plan
    for rows in ROWS:
        for warps in WARPS:
            if warps * default_gpu().warp_size > rows * plan.block_n:
                continue
            yield "rows", rows_variant(plan, rows, warps)


def peers() -> dict:
    found = {"torch": lambda x: torch.softmax(x, -1)}
    compiled = torch.compile(lambda x: torch.softmax(x, -1), dynamic=False)
    found["torch_compile"] = compiled
    try:
        from quack.softmax import softmax as quack_softmax
        found["quack"] = quack_softmax
    except Exception as exc:                  # not installed here: the sweep goes on without it
        print("no QuACK:", repr(exc)[:120], flush=True)
    return found


def main(out_path: str) -> None:
    from softmax_core.bench.harness import CudaGraphTimer, DoBenchTimer, _preparing_for

    clocks = {"eager": DoBenchTimer(), "graph": CudaGraphTimer()}
    rows_out = []
    others = peers()
    for dtype in DTYPES:
        for n in NS:
            x = torch.randn(M, n, device="cuda", dtype=dtype)
            nbytes = bytes_moved(M, n, x.element_size())
            ref = torch.softmax(x.float(), -1)
            calls = [("copy", "-", lambda: torch.empty_like(x).copy_(x))]
            calls += [(name, "-", (lambda f: lambda: f(x))(f)) for name, f in others.items()]
            calls += [(kind, f"rows={p.rows_per_program} warps={p.num_warps} grid={p.num_programs}",
                       (lambda p: lambda: softmax_forward(x, p, False))(p)) for kind, p in variants(n, dtype)]
            for clock, timer in clocks.items():
                base = None
                for kind, variant, call in calls:
                    try:
                        with _preparing_for(timer):
                            out = call()
                            ok = kind == "copy" or torch.allclose(out.float(), ref, atol=1e-2, rtol=1e-2)
                            t = timer(call)
                    except Exception as exc:
                        print("failed", clock, n, kind, variant, repr(exc)[:160], flush=True)
                        continue
                    gbps = nbytes / t.median * 1e-6
                    base = gbps if kind == "copy" else base
                    rows_out.append(dict(dtype=dtypes.name(dtype), N=n, clock=clock, kind=kind, variant=variant,
                                         ms_p20=t.p20, ms=t.median, ms_p80=t.p80, gbps=round(gbps, 1),
                                         copy_ratio=round(gbps / base, 3) if base else float("nan"), ok=ok))
                    print(f"{dtypes.name(dtype):9s} N={n:5d} {clock:5s} {kind:13s} {gbps:7.0f} GB/s "
                          f"{gbps / base if base else float('nan'):5.2f} {'ok' if ok else 'WRONG'} {variant}",
                          flush=True)
            pd.DataFrame(rows_out).to_csv(out_path, index=False)
    pd.DataFrame(rows_out).to_csv(out_path, index=False)


if __name__ == "__main__":
    if "--list" in sys.argv:
        for dtype in DTYPES:
            for n in NS:
                for kind, p in variants(n, dtype):
                    print(dtypes.name(dtype), n, kind, p.rows_per_program, p.num_warps, p.num_programs)
        sys.exit(0)
    t0 = time.time()
    main(sys.argv[1])
    print(f"done in {time.time() - t0:.0f} s")
