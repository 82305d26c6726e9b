"""Compile the tutorial and tuned kernels for every catalog GPU with this machine's triton, and record what
`softmax_teaching.gpu_compare.compare_gpus` computes (registers, shared memory, programs per SM by the hardware's
rules and by the chapter's formula, limiter, grid, toolchain):

    python -m bench_tools.record.gpu_compare --out assets/occupancy

Register counts depend on the toolchain (triton and ptxas versions), so the file is named after triton's version.
"""
from __future__ import annotations

import argparse
import csv
import datetime
import json
import platform
import sys
import time
from pathlib import Path

import torch
import triton

from softmax_teaching.gpu_compare import compare_gpus
from softmax_core.hardware import dtypes

SHAPES = ((4096, 781, torch.float32), (4096, 4096, torch.bfloat16), (4096, 32768, torch.float32))
FIELDS = ("kernel", "n_cols", "dtype", "gpu", "arch", "path", "n_regs", "n_spills", "shared_bytes", "num_warps",
          "programs_per_sm", "chapter_programs_per_sm", "limiter", "grid", "toolchain")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", default="assets/occupancy")
    args = parser.parse_args()
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    stem = f"{out}/compare-triton-{triton.__version__}"   # (not a Path: with_suffix would eat ".0")
    started = time.perf_counter()
    with open(f"{stem}.csv", "w", newline="") as fh:
        writer = csv.writer(fh)
        writer.writerow(FIELDS)
        for kernel in ("tutorial", "tuned"):
            for n_rows, n_cols, dtype in SHAPES:
                for r in compare_gpus(kernel, n_rows, n_cols, dtype):
                    writer.writerow([kernel, n_cols, dtypes.name_of_any(dtype), r.gpu.key, r.gpu.arch, r.path,
                                     r.n_regs, r.n_spills, r.shared_bytes, r.num_warps, r.programs_per_sm,
                                     r.chapter_programs_per_sm, r.limiter, r.grid, r.toolchain])
    provenance = {"what": "compare_gpus() for the tutorial and tuned kernels on every catalog GPU, compiled offline",
                  "shapes": [[m, n, dtypes.name_of_any(d)] for m, n, d in SHAPES],
                  "versions": {"python": platform.python_version(), "torch": torch.__version__,
                               "triton": triton.__version__},
                  "date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
                  "command": " ".join(["python", "-m", __spec__.name, *sys.argv[1:]]), "seconds": round(time.perf_counter() - started, 1)}
    Path(f"{stem}.json").write_text(json.dumps(provenance, indent=1) + "\n")
    print(f"{stem}.csv in {provenance['seconds']} s")


if __name__ == "__main__":
    main()
