"""softmax_teaching.load_record's records kept on disk, and made for any GPU on any server.

`recorded` is what a page asks for: the record of a case on a chosen GPU. The launch it records is
the one `sc.softmax` makes on that GPU, which plans for the machine's default GPU (the live one, else the
catalog's H200). So the record is made in this process only when this process interprets kernels and that GPU
is its default; otherwise in a child (`python -m softmax_teaching.recorded_loads`) that interprets, sees no GPU
of the machine's, and has the chosen GPU stand in for the machine's own (gpu.current_gpu, which the launches'
default_gpu reads): there the planner plans for it as it would on a machine that has it. A server that runs kernels on its GPU records so too: it cannot
switch to the interpreter once its kernels are defined. The child writes the records into the disk cache,
where this process reads them.
"""
from __future__ import annotations

import dataclasses
import hashlib
import json
import os
import subprocess
import sys
import threading
from dataclasses import asdict
from functools import lru_cache
from pathlib import Path

import numpy as np
import torch

from softmax_core.hardware import gpu as gpu_catalog
from softmax_core.hardware import runtime
from softmax_core.hardware.compile import cache_dir
from softmax_core.hardware.gpu import GpuSpec, default_gpu
from softmax_teaching import load_record
from softmax_teaching.load_record import MAX_LOADS, Case, ConstArg, RecordedLaunch, RecordedLoad, TensorArg

# Bump when what is recorded, or how it is stored, changes.
RECORD_VERSION = 2
ROOT = Path(__file__).resolve().parents[1]
# What decides a record besides its case: the library's planner, launch and kernels, and this package's
# recorder, case and row walk. Their sources are part of the key, so an edit to any of them records again.
RECORD_SOURCES = ("softmax_core", "softmax_teaching/load_record.py", "softmax_teaching/recorded_loads.py",
                  "softmax_teaching/layout_case.py", "softmax_teaching/row_walk.py")
CHILD_TIMEOUT_S = 300


@lru_cache(maxsize=1)
def _sources_digest() -> str:
    import triton

    digest = hashlib.sha256(f"{RECORD_VERSION} torch {torch.__version__} triton {triton.__version__}".encode())
    for name in RECORD_SOURCES:
        path = ROOT / name
        for file in sorted(path.rglob("*.py")) if path.is_dir() else [path]:
            digest.update(str(file.relative_to(ROOT)).encode())
            digest.update(file.read_bytes())
    return digest.hexdigest()


def record_path(case: Case, kernel: str, gpu: GpuSpec, program: int = 0) -> Path:
    """The disk cache's file for one record: keyed by the case, the kernel, the GPU's figures, the program
    and the sources that decide the launch."""
    spec = json.dumps([asdict(case), kernel, repr(gpu), program, MAX_LOADS, _sources_digest()], default=str)
    return cache_dir() / f"{hashlib.sha256(spec.encode()).hexdigest()[:24]}-record-v{RECORD_VERSION}.npz"


def _argument_json(value) -> dict:
    if isinstance(value, TensorArg):
        return {"tensor": asdict(value)}
    if isinstance(value, ConstArg):
        return {"const": value.value}
    return {"value": value}


def _argument_of(data: dict):
    if "tensor" in data:
        t = data["tensor"]
        return TensorArg(t["name"], tuple(t["shape"]), tuple(t["strides"]), t["storage_offset"], t["element_bytes"],
                         t["pointer"])
    return ConstArg(data["const"]) if "const" in data else data["value"]


def save_record(launch: RecordedLaunch, path: Path) -> None:
    """`launch` as one .npz (its figures as JSON, its loads' arrays beside them), written whole or not at all."""
    meta = {"kernel": launch.kernel, "source_file": launch.source_file, "grid": list(launch.grid),
            "program": launch.program, "num_warps": launch.num_warps, "num_stages": launch.num_stages,
            "arguments": [[name, _argument_json(value)] for name, value in launch.arguments],
            "loads": [{"line": l.line, "tensor": l.tensor, "element_bytes": l.element_bytes, "caller": list(l.caller),
                       "values_per_item": l.values_per_item}
                      for l in launch.loads], "complete": launch.complete}
    arrays = {f"offsets_{i}": l.offsets for i, l in enumerate(launch.loads)}
    arrays.update({f"mask_{i}": l.mask for i, l in enumerate(launch.loads)})
    tmp = path.with_name(f"{path.stem}.{os.getpid()}.{threading.get_ident()}.tmp.npz")
    np.savez_compressed(tmp, meta=np.array(json.dumps(meta)), **arrays)
    tmp.replace(path)


def load_saved(path: Path) -> RecordedLaunch | None:
    """The record saved at `path`, None when there is none (or it is torn)."""
    if not path.exists():
        return None
    try:
        with np.load(path, allow_pickle=False) as saved:
            meta = json.loads(str(saved["meta"]))
            loads = tuple(RecordedLoad(l["line"], l["tensor"], l["element_bytes"], saved[f"offsets_{i}"],
                                       saved[f"mask_{i}"], tuple(l["caller"]), l.get("values_per_item", 1)) for i, l in enumerate(meta["loads"]))
    except (OSError, ValueError, KeyError, TypeError):
        return None
    return RecordedLaunch(meta["kernel"], meta["source_file"], tuple(meta["grid"]), meta["program"], meta["num_warps"],
                          meta["num_stages"], tuple((name, _argument_of(v)) for name, v in meta["arguments"]), loads,
                          meta["complete"])


def records_here(gpu: GpuSpec) -> bool:
    """Whether this process makes `gpu`'s records itself: it interprets kernels and `gpu` is the one its
    launches plan for."""
    return runtime.INTERPRETED and default_gpu() == gpu


def recorded(cases: list[tuple[Case, str]], gpu: GpuSpec, program: int = 0) -> list[RecordedLaunch]:
    """The record of each (case, kernel) on `gpu` (program `program`): from the disk cache, the missing ones
    recorded here when this process can (records_here), else all of them in one child process."""
    paths = [record_path(case, kernel, gpu, program) for case, kernel in cases]
    found = [load_saved(path) for path in paths]
    missing = [i for i, launch in enumerate(found) if launch is None]
    if missing and records_here(gpu):
        for i in missing:
            found[i] = load_record.record(*cases[i], program)
            save_record(found[i], paths[i])
    elif missing:
        _record_in_child([cases[i] for i in missing], gpu, program)
        for i in missing:
            found[i] = load_saved(paths[i])
            if found[i] is None:
                raise RuntimeError(f"the recording process left no record for {cases[i]}")
    return found


def _record_in_child(cases: list[tuple[Case, str]], gpu: GpuSpec, program: int) -> None:
    env = {k: v for k, v in os.environ.items() if k != runtime.OFFLINE_COMPILER_ENV}
    env[runtime.INTERPRET_ENV] = "1"
    env["CUDA_VISIBLE_DEVICES"] = env["HIP_VISIBLE_DEVICES"] = ""     # the child asks no driver anything
    job = {"gpu": asdict(gpu), "program": program, "cases": [[asdict(case), kernel] for case, kernel in cases]}
    done = subprocess.run([sys.executable, "-m", "softmax_teaching.recorded_loads"], input=json.dumps(job),
                          capture_output=True, text=True, env=env, cwd=str(ROOT), timeout=CHILD_TIMEOUT_S)
    if done.returncode != 0:
        raise RuntimeError(f"recording the loads on {gpu.name} failed: {done.stderr.strip()[-2000:]}")


def _child(job: dict) -> None:
    """The child's side: the GPU `job["gpu"]` (a GpuSpec's fields) stands in for the machine's, so the planner
    plans every launch for it (gpu.default_gpu is the live GPU when there is one); then every case is recorded
    into the disk cache, under the name the asking process looks for. A live GPU of the asking server stands in
    as a card of its figures without a driver here: its plans read registers from the kernel compiled for its
    architecture (the same binary its driver would load) instead of loading it."""
    spec = job["gpu"]
    asked = GpuSpec(**{**spec, "compute_capability": tuple(spec["compute_capability"])})
    chosen = dataclasses.replace(asked, live=False)
    gpu_catalog.current_gpu = lambda index=0: chosen
    if not runtime.INTERPRETED or default_gpu() != chosen:
        raise SystemExit(f"this process cannot record for {asked.name} (interpreting: {runtime.INTERPRETED})")
    for case, kernel in job["cases"]:
        case = Case(**{**case, "shape": tuple(case["shape"])})
        path = record_path(case, kernel, asked, job["program"])
        if load_saved(path) is None:
            save_record(load_record.record(case, kernel, job["program"]), path)


if __name__ == "__main__":
    _child(json.loads(sys.stdin.read()))
