"""Probe for long bf16 rows held whole in registers as bf16 (softmax_core.kernels.held_rows): the library's plan
beside the held-row kernel on several launch shapes, forward, each checked against torch's float32 answer and
timed by the benchmark harness beside copy and torch in the same run.

    python -m bench_tools.held_rows_probe OUT_STEM [--rep-ms 25]

writes OUT_STEM.csv (the harness's columns, plus case and settings) and OUT_STEM.json (provenance).
"""
from __future__ import annotations

import argparse
import json
import shlex
import sys
from pathlib import Path

import pandas as pd
import torch
import triton

from softmax_core import bench
from softmax_core.hardware.gpu import default_gpu
from softmax_core.kernels.held_rows import softmax_held_row_kernel
from softmax_core.launch.api import softmax_forward
from softmax_core.plans.choose import plan_softmax

BF16 = torch.bfloat16
CASES = (("gpt2", 8192, 50257), ("gpt2-2k", 2048, 50257), ("llama2", 8192, 32000), ("vocab-65536", 4096, 65536),
         ("vocab-40000", 8192, 40000), ("odd-20000", 8192, 20001))
TILE = 8192


def held(parts: int, warps: int, grid_per_sm: int | None):
    def forward(x):
        M, N = x.shape
        y = torch.empty_like(x)
        grid = M if grid_per_sm is None else min(M, grid_per_sm * default_gpu().multiprocessor_count)
        softmax_held_row_kernel[(grid,)](x, y, x.stride(0), y.stride(0), M, N, PARTS=parts, TILE=TILE, SAFE=False,
                                         num_warps=warps)
        return y
    return forward


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench_tools.held_rows_probe", description=__doc__.splitlines()[0])
    parser.add_argument("stem")
    parser.add_argument("--rep-ms", type=int, default=25)
    args = parser.parse_args(argv)
    timer = bench.TIMERS[bench.EAGER](args.rep_ms)
    gpu, rows = default_gpu(), []
    with bench.exclusive_gpu():
        for name, M, N in CASES:
            inputs = bench.make_inputs(M, N, BF16, False, 0)
            for b in ("copy", "torch"):
                rows.append({**bench.measure(bench.get_provider(b), "forward", inputs, timer), "case": name})
            plan = plan_softmax(M, N, BF16, gpu, "forward")
            r = bench.measure(bench.Provider("default", lambda x: softmax_forward(x, plan)), "forward", inputs, timer)
            rows.append({**r, "case": name, "settings": f"{plan.path} block={plan.block_n} warps={plan.num_warps} "
                                                        f"grid={plan.num_programs} edges={plan.edges}"})
            parts = triton.next_power_of_2(triton.cdiv(N, TILE))
            for warps in (16, 32):
                for per_sm in (None, 1, 2):
                    tag = f"held-p{parts}-w{warps}-g{per_sm or 'all'}"
                    r = bench.measure(bench.Provider(tag, held(parts, warps, per_sm)), "forward", inputs, timer)
                    rows.append({**r, "case": name, "settings": tag})
                    print(name, tag, r["status"], f"{r['ms_median']:.4f}", flush=True)
            del inputs
            torch.cuda.empty_cache()
    frame = pd.DataFrame(rows)
    copy = {r.case: r.gbps for r in frame.itertuples() if r.provider == "copy" and r.status == "ok"}
    frame["copy_ratio"] = [r.gbps / copy[r.case] if r.case in copy else float("nan") for r in frame.itertuples()]
    stem = Path(args.stem)
    stem.parent.mkdir(parents=True, exist_ok=True)
    bench.csv_frame(frame).to_csv(stem.with_suffix(".csv"), index=False)
    command = shlex.join(["python", "-m", "bench_tools.held_rows_probe", *(argv if argv is not None else sys.argv[1:])])
    info = bench.provenance(0, sorted({int(n) for n in frame.N}), "bfloat16", ["copy", "torch"], ["forward"],
                            bench.timer_kind(timer), bench.timer_figures(timer), command, 0)
    info.update(csv=stem.with_suffix(".csv").name, cases=[list(c) for c in CASES])
    stem.with_suffix(".json").write_text(json.dumps(info, indent=2) + "\n")
    ok = frame[frame.status == "ok"]
    print(ok[["case", "provider", "ms_median", "copy_ratio"]].to_string(index=False))
    return 0


if __name__ == "__main__":
    sys.exit(main())
