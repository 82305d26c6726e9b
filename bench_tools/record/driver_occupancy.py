"""Ask the CUDA driver how many programs of each compiled kernel fit on one SM, and record it.

Run on a machine with an NVIDIA GPU (the project's H200):

    python -m bench_tools.record.driver_occupancy --out assets/occupancy

For the tutorial kernel over many (N, num_warps, num_stages, dtype), and for the tuned kernels of the live
plans (rows / tiled / split paths, several N, float32 and bfloat16), it compiles the kernel with triton for
this GPU, loads it, reads registers and shared memory from the loaded function, and asks the driver
`cuOccupancyMaxActiveBlocksPerMultiprocessor(function, 32 * num_warps, shared bytes)` — the same question
softmax_core.hardware.occupancy answers from the catalog's figures. It writes <gpu>-driver-occupancy.csv (one row per
kernel) and <gpu>-driver-occupancy.json (provenance: GPU, driver, versions, date, command, the device's own
attributes). tests/library/test_occupancy.py checks the rules against every row.
"""
from __future__ import annotations

import argparse
import csv
import ctypes
import datetime
import json
import platform
import sys
import time
from pathlib import Path

import torch
import triton

import softmax_core as sc
from softmax_core.hardware import dtypes
from softmax_core.hardware import compile as kc
from softmax_core.plans import tuned as tuned_plan
from softmax_core.plans.choose import plan_softmax
from softmax_core.plans.tutorial import tutorial_compile_job

# CUdevice_attribute values (cuda.h) for the figures the occupancy rules use.
DEVICE_ATTRIBUTES = {
    "warp_size": 10, "multiprocessor_count": 16, "l2_cache_size": 38, "max_threads_per_multiprocessor": 39,
    "max_shared_memory_per_multiprocessor": 81, "max_registers_per_multiprocessor": 82,
    "max_shared_memory_per_block_optin": 97, "max_blocks_per_multiprocessor": 106,
    "reserved_shared_memory_per_block": 111,
}
CU_FUNC_ATTRIBUTE_NUM_REGS = 4
CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES = 1   # static shared memory (triton uses dynamic only: expect 0)
CU_FUNC_ATTRIBUTE_LOCAL_SIZE_BYTES = 3

TUTORIAL_N = (128, 256, 512, 1024, 2048, 4096, 8192, 16384)
TUTORIAL_WARPS = (1, 2, 4, 8, 16, 32)
TUTORIAL_STAGES = (1, 2, 3, 4)
TUNED_N = (256, 781, 1024, 2048, 4096, 8192, 32768, 65536, 131072, 262144)
TUNED_ROWS = 4096

FIELDS = ("source", "kernel", "dtype", "n_cols", "block", "num_warps", "num_stages", "constexprs", "n_regs",
          "n_spills", "shared_bytes", "static_shared", "local_bytes", "driver_blocks_per_sm", "plan_path",
          "plan_num_programs", "compile_s")


def _libcuda():
    lib = ctypes.CDLL("libcuda.so.1")
    lib.cuOccupancyMaxActiveBlocksPerMultiprocessor.argtypes = [ctypes.POINTER(ctypes.c_int), ctypes.c_void_p,
                                                                ctypes.c_int, ctypes.c_size_t]
    lib.cuFuncGetAttribute.argtypes = [ctypes.POINTER(ctypes.c_int), ctypes.c_int, ctypes.c_void_p]
    lib.cuDeviceGetAttribute.argtypes = [ctypes.POINTER(ctypes.c_int), ctypes.c_int, ctypes.c_int]
    return lib


def _check(status: int, what: str) -> None:
    if status != 0:
        raise RuntimeError(f"{what} failed with CUresult {status}")


def device_attributes(lib, device: int) -> dict:
    out = {}
    for name, attr in DEVICE_ATTRIBUTES.items():
        value = ctypes.c_int()
        _check(lib.cuDeviceGetAttribute(ctypes.byref(value), attr, device), f"cuDeviceGetAttribute({name})")
        out[name] = value.value
    version = ctypes.c_int()
    lib.cuDriverGetVersion(ctypes.byref(version))
    out["cuda_driver_version"] = version.value
    return out


def ask_driver(lib, job: kc.CompileJob) -> dict:
    """Compile and load `job` on this GPU; its registers, shared memory and the driver's blocks per SM."""
    from triton.backends.compiler import GPUTarget
    from triton.compiler import ASTSource

    start = time.perf_counter()
    src = ASTSource(fn=kc.resolve_kernel(job.kernel), signature=dict(job.signature), constexprs=dict(job.constexprs))
    compiled = triton.compile(src, target=GPUTarget(*job.target),
                              options={"num_warps": job.num_warps, "num_stages": job.num_stages})
    row = {"shared_bytes": int(compiled.metadata.shared), "compile_s": round(time.perf_counter() - start, 3)}
    try:
        compiled._init_handles()   # loads the cubin; triton raises the shared-memory limit for big kernels
    except Exception as exc:  # noqa: BLE001  (OutOfResources: the kernel cannot run on this GPU at all)
        row.update(n_regs="", n_spills="", static_shared="", local_bytes="", driver_blocks_per_sm=0,
                   load_error=f"{type(exc).__name__}")
        return row
    function = ctypes.c_void_p(compiled.function)
    attrs = {}
    for name, attr in (("n_regs", CU_FUNC_ATTRIBUTE_NUM_REGS), ("static_shared", CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES),
                       ("local_bytes", CU_FUNC_ATTRIBUTE_LOCAL_SIZE_BYTES)):
        value = ctypes.c_int()
        _check(lib.cuFuncGetAttribute(ctypes.byref(value), attr, function), f"cuFuncGetAttribute({name})")
        attrs[name] = value.value
    blocks = ctypes.c_int()
    _check(lib.cuOccupancyMaxActiveBlocksPerMultiprocessor(ctypes.byref(blocks), function,
                                                            32 * job.num_warps, row["shared_bytes"]),
           "cuOccupancyMaxActiveBlocksPerMultiprocessor")
    row.update(attrs, n_spills=int(compiled.n_spills), driver_blocks_per_sm=blocks.value)
    return row


_LIB = None


def _ask_in_worker(job: kc.CompileJob) -> dict:
    """Pool worker: one CUDA context per process, so compiles run side by side."""
    global _LIB
    if _LIB is None:
        torch.cuda.init()
        torch.empty(1, device="cuda")   # make the primary context current, as triton expects
        _LIB = _libcuda()
    try:
        return ask_driver(_LIB, job)
    except Exception as exc:  # noqa: BLE001  (record and go on: one bad compile must not lose the sweep)
        return {"driver_blocks_per_sm": "", "load_error": f"{type(exc).__name__}: {exc}"[:200]}


def tutorial_jobs(gpu):
    for dtype in (torch.float32, torch.bfloat16):
        stages = TUTORIAL_STAGES if dtype == torch.float32 else (1, 4)
        for n in TUTORIAL_N:
            for warps in TUTORIAL_WARPS:
                for st in stages:
                    job = tutorial_compile_job(n, warps, st, dtype, gpu)
                    yield {"source": "tutorial sweep", "dtype": dtypes.name_of_any(dtype), "n_cols": n,
                           "block": n, "plan_path": "", "plan_num_programs": ""}, job


def tuned_jobs(gpu, quick: bool = False):
    """The jobs the live tuned plans compile (every candidate, also the ones a plan then rejects)."""
    seen = []
    original = tuned_plan.kernel_resources

    def recording(job, want_asm=False):
        seen.append(job)
        return original(job, want_asm)

    tuned_plan.kernel_resources = recording
    try:
        for direction in ("forward", "backward"):
            for dtype in (torch.float32, torch.bfloat16):
                for n in TUNED_N[:2] if quick else TUNED_N:
                    seen.clear()
                    plan = plan_softmax(TUNED_ROWS, n, dtype, gpu, direction)
                    for job in list(seen):
                        chosen = dict(job.constexprs) == _plan_constexprs(plan, job)
                        yield {"source": f"tuned {direction}", "dtype": dtypes.name_of_any(dtype),
                               "n_cols": n, "block": plan.block_n, "plan_path": plan.path if chosen else "candidate",
                               "plan_num_programs": plan.num_programs if chosen else ""}, job
    finally:
        tuned_plan.kernel_resources = original


def _plan_constexprs(plan, job) -> dict | None:
    kernel = job.kernel
    if plan.path == "rows" and kernel in tuned_plan.ROWS_KERNEL.values() and job.num_warps == plan.num_warps:
        c = dict(job.constexprs)
        return c if c.get("ROWS") == plan.rows_per_program and c.get("BLOCK_N") == plan.block_n else None
    if plan.path == "tiled" and kernel in tuned_plan.TILED_KERNEL.values():
        return dict(job.constexprs)
    if plan.path == "split" and kernel in tuned_plan.SPLIT_KERNEL.values():
        return dict(job.constexprs)
    return None


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", default="assets/occupancy", help="folder for the CSV and its provenance JSON")
    parser.add_argument("--quick", action="store_true", help="a few configurations only (smoke test)")
    parser.add_argument("--workers", type=int, default=12, help="processes compiling side by side")
    args = parser.parse_args()
    if not torch.cuda.is_available():
        sys.exit("needs an NVIDIA GPU: the driver is what is being asked")
    gpu = sc.current_gpu()
    lib = _libcuda()
    attrs = device_attributes(lib, torch.cuda.current_device())
    import multiprocessing
    from concurrent.futures import ProcessPoolExecutor

    started = time.perf_counter()
    with ProcessPoolExecutor(args.workers, mp_context=multiprocessing.get_context("spawn")) as pool:
        jobs = list(tutorial_jobs(gpu))
        if args.quick:
            jobs = jobs[:6]
        futures = [pool.submit(_ask_in_worker, job) for _, job in jobs]
        # While the pool works on the sweep, plan the tuned kernels here (each plan compiles its candidates).
        tuned = list(tuned_jobs(gpu, quick=args.quick))
        futures += [pool.submit(_ask_in_worker, job) for _, job in tuned]
        jobs += tuned
        results = [f.result() for f in futures]
    rows = []
    for (meta, job), result in zip(jobs, results):
        row = {**meta, "kernel": job.kernel.split(":")[1], "num_warps": job.num_warps, "num_stages": job.num_stages,
               "constexprs": json.dumps(dict(job.constexprs), sort_keys=True), **result}
        rows.append(row)
    elapsed = time.perf_counter() - started
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    stem = "h200" if "H200" in gpu.name else gpu.name.lower().replace(" ", "-")
    fields = FIELDS + ("load_error",)
    with open(out / f"{stem}-driver-occupancy.csv", "w", newline="") as fh:
        writer = csv.DictWriter(fh, fieldnames=fields, extrasaction="ignore")
        writer.writeheader()
        writer.writerows(rows)
    import subprocess
    ptxas = subprocess.run([kc.nvidia_tool("ptxas"), "--version"], capture_output=True, text=True).stdout.strip()
    provenance = {
        "what": "cuOccupancyMaxActiveBlocksPerMultiprocessor(function, 32 * num_warps, metadata.shared) for each "
                "compiled kernel; n_regs from cuFuncGetAttribute(NUM_REGS)",
        "gpu": gpu.name, "compute_capability": list(gpu.compute_capability), "device_attributes": attrs,
        "torch_device_properties": {k: getattr(torch.cuda.get_device_properties(0), k, None) for k in
                                    ("name", "total_memory", "L2_cache_size", "max_threads_per_multi_processor",
                                     "shared_memory_per_multiprocessor", "shared_memory_per_block_optin",
                                     "regs_per_multiprocessor", "multi_processor_count")},
        "versions": {"python": platform.python_version(), "torch": torch.__version__, "triton": triton.__version__,
                     "torch_cuda": torch.version.cuda, "ptxas": ptxas.splitlines()[-1] if ptxas else ""},
        "date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
        "command": " ".join(["python", "-m", __spec__.name, *sys.argv[1:]]), "configurations": len(rows), "seconds": round(elapsed, 1),
    }
    (out / f"{stem}-driver-occupancy.json").write_text(json.dumps(provenance, indent=1, default=str) + "\n")
    print(f"{len(rows)} configurations in {elapsed:.0f} s -> {out}", flush=True)
    # A first look (the test suite does the real check): the rules and the chapter's formula against the driver.
    rules = chapter = asked = 0
    for row in rows:
        if row.get("n_regs") in ("", None) or row.get("driver_blocks_per_sm") in ("", None):
            continue
        asked += 1
        occ = sc.occupancy(gpu, int(row["n_regs"]), int(row["shared_bytes"]), int(row["num_warps"]), 1)
        rules += occ.programs_per_sm == row["driver_blocks_per_sm"]
        chapter += occ.chapter_programs_per_sm == row["driver_blocks_per_sm"]
        if occ.programs_per_sm != row["driver_blocks_per_sm"]:
            print("rules differ:", row["kernel"], row["constexprs"], row["num_warps"], row["n_regs"],
                  row["shared_bytes"], "driver", row["driver_blocks_per_sm"], "rules", occ.programs_per_sm)
    print(f"of {asked} loaded kernels: rules match the driver in {rules}, the chapter's formula in {chapter}")


if __name__ == "__main__":
    main()
