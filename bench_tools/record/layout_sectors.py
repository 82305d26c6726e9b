"""The layouts of the transactions page on a GPU, for Nsight Compute: each case's softmax runs once to compile
and warm up, then once between cudaProfilerStart and cudaProfilerStop, so that

    ncu --clock-control none --profile-from-start off --csv \\
        --metrics l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum,l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum \\
        python -m bench_tools.record.layout_sectors OUT.json

counts the global-load sectors and requests of exactly those launches, in the order OUT.json lists them
(with the machine's versions). `softmax_teaching.ncu_record` reads both back for the page.
"""
from __future__ import annotations

import json
import platform
import sys

import torch

# (name, case, kernel): the page's layouts, at sizes that fill the GPU
CASES = (
    ("rows_fp32", ((4096, 1024), "float32", 1, "contiguous"), "planned"),
    ("transposed_fp32", ((4096, 1024), "float32", 1, "transposed"), "planned"),
    ("transposed_fp32_row_walk", ((4096, 1024), "float32", 1, "transposed"), "row_walk"),
    ("nchw_dim1_fp32", ((64, 1000, 49), "float32", 1, "contiguous"), "planned"),
    ("padded_fp32", ((4096, 1000), "float32", 1, "padded"), "planned"),
    ("offset_fp32", ((4096, 1000), "float32", 1, "offset"), "planned"),
)


def main(out: str) -> None:
    import triton

    import softmax_core as sc
    from softmax_teaching.layout_case import Case, make_input, planner_view
    from softmax_teaching.row_walk import launch_row_walk
    from softmax_core.hardware.gpu import default_gpu

    done = []
    for name, spec, kernel in CASES:
        case = Case(*spec)
        x = make_input(case, "cuda")
        x.copy_(torch.randn(case.shape, device="cuda", dtype=x.dtype))
        if kernel == "row_walk":
            fold = planner_view(case.shape, tuple(x.stride()), case.dim, case.dtype, default_gpu()).fold
            storage = torch.empty(x.untyped_storage().nbytes() // x.element_size(), device="cuda", dtype=x.dtype)
            y = storage.as_strided(x.shape, x.stride(), x.storage_offset())

            def call():
                launch_row_walk(x, y, fold)
                return y
        else:
            def call():
                return sc.softmax(x, case.dim)
        got = call()
        ok = torch.allclose(got.float(), torch.softmax(x.float(), case.dim), atol=1e-4, rtol=1e-3)
        torch.cuda.synchronize()
        torch.cuda.profiler.start()
        call()
        torch.cuda.synchronize()
        torch.cuda.profiler.stop()
        done.append({"name": name, "shape": list(case.shape), "dtype": case.dtype, "dim": case.dim,
                     "view": case.view, "kernel": kernel, "strides": list(x.stride()),
                     "storage_offset": int(x.storage_offset()), "correct": bool(ok)})
        print("profiled", name, flush=True)
    machine = {"gpu": torch.cuda.get_device_name(), "torch": torch.__version__, "triton": triton.__version__,
               "cuda": torch.version.cuda, "python": platform.python_version()}
    with open(out, "w") as f:
        json.dump({"machine": machine, "launches": done}, f, indent=1)


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else "layout_sectors.json")
