"""Compile every kernel configuration the pages show on a real GPU, with that machine's toolchain, and record
the registers, spills and shared memory its driver reports.

Run on the GPU of the recorded benchmarks (the project's H200, triton 3.6):

    python -m explorer_ui.record_compiles --out assets/device_compiles

The pages compile offline with the local triton, whose ptxas may allocate registers otherwise than the one
the recorded runs used (the tutorial kernel at N = 781 on sm_90: 40 registers with triton 3.9, 48 with 3.6).
This run compiles, loads and asks the driver for:
1. the tutorial kernel at every BLOCK_SIZE the pages offer (1 ... 262,144) with the chapter's num_warps for
   it, num_stages 1-4 and every dtype the pages offer;
2. every compile the pages themselves make for this GPU's architecture at their defaults and after a click
   (explorer_ui.prewarm.work_items: the tuned plans, the chapter notes' tables, the long-rows path map).
3. with `--jobs FILE`, instead: every compile the tuned plans the pages offer can ask for, listed here by
   `--list-jobs FILE` (explorer_ui.tuned_configs; no GPU needed), written to <gpu>-tuned-compiles.json.
It lives with the pages because it compiles what they ask for (explorer_ui.prewarm's work items, which the
shipped compile seed is also made of). Each result is keyed by `compile.job_identity` (the job, toolchain left out), so a page asking for the same
kernel finds it. It writes <gpu>-compiles.json: provenance (GPU, versions, date, command) and the results.
"""
from __future__ import annotations

import argparse
import dataclasses
import datetime
import json
import multiprocessing
import os
import platform
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ProcessPoolExecutor, as_completed
from pathlib import Path

TUTORIAL_STAGES = (1, 2, 3, 4)
TUTORIAL_BLOCKS = tuple(2 ** k for k in range(0, 19))       # 1 ... 262,144: the GPU page's longest row


_SEEN: list = []      # (job, resources) of every compile this worker made for the task at hand


def _record_compiles(offline: bool) -> None:
    """Make every compile of this process load the kernel on this GPU (the driver's answer; `offline`: read
    the cubin instead, for a smoke test without a GPU) and keep it in _SEEN."""
    from softmax_core.hardware import compile as kc

    original = kc.compile_for_target

    def compile_and_keep(job, want_asm=False):
        result = original(dataclasses.replace(job, on_device=not offline), want_asm)
        _SEEN.append((job, result))
        return result

    kc.compile_for_target = compile_and_keep


def _row(job, result) -> dict:
    from softmax_core.hardware import compile as kc

    return {"identity": kc.job_identity(job), "kernel": job.kernel, "signature": list(job.signature),
            "constexprs": list(job.constexprs), "num_warps": job.num_warps, "num_stages": job.num_stages,
            "target": list(job.target), "divisible": list(job.divisible), "n_regs": result.n_regs,
            "n_spills": result.n_spills, "shared_bytes": result.shared_bytes, "source": str(result.source),
            "refused": result.refused, "toolchain": result.toolchain}


def _run(task: tuple) -> dict:
    """Pool worker: one tutorial compile, or one of the pages' work items; every compile it made."""
    kind, what = task
    started = time.perf_counter()
    _SEEN.clear()
    from softmax_core.hardware import compile as kc
    error = ""
    try:
        if kind == "tutorial":
            import softmax_core as sc
            from softmax_core.hardware import dtypes
            from softmax_core.plans.tutorial import tutorial_compile_job

            block, warps, stages, dtype = what
            job = tutorial_compile_job(block, warps, stages, dtypes.torch_dtype(dtype), sc.catalog_gpu("h200"))
            kc.kernel_resources(job)
        else:
            from explorer_ui import prewarm

            prewarm.work_items(defaults_only=True)[what][1]()
    except Exception as exc:  # noqa: BLE001  record and go on: one refusal must not lose the rest
        error = f"{type(exc).__name__}: {exc}"[:300]
    rows = [_row(job, result) for job, result in _SEEN if tuple(job.target)[0] == "cuda"]
    return {"task": [kind, what], "rows": rows, "error": error, "seconds": round(time.perf_counter() - started, 2)}


def _job_of(spec: dict):
    """A listed job from its JSON form, as a job of the catalog GPU (on_device False: _record_compiles' hook is
    what loads it on this GPU, or reads the cubin offline)."""
    from softmax_core.hardware.compile import job_from_json

    return dataclasses.replace(job_from_json(spec), on_device=False)


def _run_job(spec: dict) -> dict:
    """Pool worker: one listed compile job (tuned_jobs), loaded on this GPU."""
    from softmax_core.hardware import compile as kc

    started = time.perf_counter()
    _SEEN.clear()
    error = ""
    try:
        kc.kernel_resources(_job_of(spec))
    except Exception as exc:  # noqa: BLE001  record and go on
        error = f"{type(exc).__name__}: {exc}"[:300]
    rows = [_row(job, result) for job, result in _SEEN]
    return {"task": ["job", spec["kernel"]], "rows": rows, "error": error,
            "seconds": round(time.perf_counter() - started, 2)}


def write_tuned_jobs(path: Path) -> int:
    """Write every compile the tuned plans the pages offer on the H200 can ask for (explorer_ui.tuned_configs),
    the plans it most likely needs first (fewest compiles that spilled on the way), as JSON; returns how many."""
    import softmax_core as sc
    from explorer_ui import tuned_configs

    jobs = tuned_configs.tuned_jobs(sc.catalog_gpu("h200"))
    path.write_text(json.dumps([dataclasses.asdict(job) for job in jobs]) + "\n")
    return len(jobs)


def _init_worker(cache: str, offline: bool) -> None:
    os.environ["SOFTMAX_EXPLORER_CACHE"] = cache
    _record_compiles(offline)
    if offline:
        return
    import torch

    torch.cuda.init()
    torch.empty(1, device="cuda")      # the primary context current, as triton expects


def _write(path: Path, provenance: dict, rows: dict, started: float) -> None:
    provenance["seconds"] = round(time.perf_counter() - started, 1)
    provenance["results"] = len(rows)
    tmp = path.with_suffix(".tmp")
    tmp.write_text(json.dumps({"provenance": provenance,
                               "results": sorted(rows.values(), key=lambda r: r["identity"])}, indent=0) + "\n")
    tmp.replace(path)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", default="assets/device_compiles")
    parser.add_argument("--workers", type=int, default=14)
    parser.add_argument("--offline", action="store_true", help="smoke test without a GPU: the catalog's H200, "
                        "registers read from the cubin")
    parser.add_argument("--jobs", help="compile the jobs listed in this JSON file (written by --list-jobs) "
                        "instead of the tutorial grid and the pages' work items; the record is <gpu>-tuned-compiles.json")
    parser.add_argument("--list-jobs", metavar="FILE", help="write the tuned plans' compile jobs "
                        "(explorer_ui.tuned_configs) to FILE and exit (no GPU needed)")
    parser.add_argument("--limit", type=int, default=0, help="only the first LIMIT tasks (smoke test)")
    args = parser.parse_args()
    if args.list_jobs:
        print(f"{write_tuned_jobs(Path(args.list_jobs))} jobs -> {args.list_jobs}", flush=True)
        return
    import torch
    import triton

    if not args.offline and not torch.cuda.is_available():
        sys.exit("needs a GPU: the driver's answer is what is recorded")
    import softmax_core as sc
    from softmax_core.hardware import compile as kc
    from softmax_core.hardware import dtypes
    from softmax_core.plans.tutorial import tutorial_num_warps
    from explorer_ui import prewarm

    gpu = sc.catalog_gpu("h200") if args.offline else sc.current_gpu(0)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    stem = "h200" if "H200" in gpu.name else gpu.key
    ptxas = subprocess.run([kc.nvidia_tool("ptxas"), "--version"], capture_output=True, text=True).stdout.strip()
    provenance = {
        "what": "registers (the driver's NUM_REGS after loading), spills and shared memory of every kernel "
                "configuration the pages show, compiled with this machine's triton for its GPU",
        "gpu": gpu.name, "compute_capability": list(gpu.compute_capability),
        "versions": {"python": platform.python_version(), "torch": torch.__version__, "triton": triton.__version__,
                     "torch_cuda": torch.version.cuda, "ptxas": ptxas.splitlines()[-1] if ptxas else ""},
        "toolchain": kc.toolchain(tuple(gpu.compile_target)),
        "offline_smoke_test": args.offline,
        "date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
        "command": " ".join(["python", "-m", "explorer_ui.record_compiles", *sys.argv[1:]]),
    }
    if args.jobs:
        provenance["what"] = ("registers (the driver's NUM_REGS after loading), spills and shared memory of every "
                              "compile the tuned plans the pages offer can ask for (explorer_ui.tuned_configs), "
                              "compiled with this machine's triton for its GPU")
        items = []
        tasks = [("job", spec) for spec in json.loads(Path(args.jobs).read_text())]
        stem += "-tuned"
    else:
        items = prewarm.work_items(defaults_only=True)
        tasks = [("item", i) for i in range(len(items))]
        tasks += [("tutorial", (b, tutorial_num_warps(b), s, d)) for d in dtypes.TUTORIAL_DTYPES
                  for b in TUTORIAL_BLOCKS for s in TUTORIAL_STAGES]
        # the widest rows first: their compiles take longest, so they start while the short ones fill the gaps
        tasks.sort(key=lambda task: -task[1][0] if task[0] == "tutorial" else 0)
    tasks = tasks[:args.limit] if args.limit else tasks
    started = written = time.perf_counter()
    rows: dict[str, dict] = {}
    log = open(out / f"{stem}-compiles.log.jsonl", "w")
    cache = tempfile.mkdtemp(prefix="device-compiles-")     # empty: every compile is made here, none read
    ctx = multiprocessing.get_context("spawn")
    with ProcessPoolExecutor(args.workers, mp_context=ctx, initializer=_init_worker, initargs=(cache, args.offline)) as pool:
        futures = {(pool.submit(_run_job, task[1]) if task[0] == "job" else pool.submit(_run, task)): task
                   for task in tasks}
        for future in as_completed(futures):
            done = future.result()
            done["what"] = items[done["task"][1]][0] if done["task"][0] == "item" else done["task"]
            log.write(json.dumps({k: v for k, v in done.items() if k != "rows"}) + "\n")
            log.flush()
            for row in done["rows"]:
                rows[row["identity"]] = row
            if time.perf_counter() - written > 5 or len(rows) >= len(tasks):      # what is done survives a timeout
                _write(out / f"{stem}-compiles.json", provenance, rows, started)
                written = time.perf_counter()
    _write(out / f"{stem}-compiles.json", provenance, rows, started)
    print(f"{len(rows)} compiles from {len(tasks)} tasks in {time.perf_counter() - started:.0f} s -> {out}", flush=True)


if __name__ == "__main__":
    main()
