"""Compile results recorded on a real GPU with the toolchain of its recorded benchmark runs (the H200, triton
3.6: assets/device_compiles/, written by `python -m explorer_ui.record_compiles`), read back for the
pages. The pages compile offline with the local triton, whose ptxas may allocate registers otherwise (the
tutorial kernel at N = 781 on sm_90: 48 registers with triton 3.6 on the H200, 40 with triton 3.9 here); for
the GPU the record was made on, the pages state the record's figures, each with the toolchain that produced
them, and the local compile beside them where the two differ. Pure: no Streamlit."""
from __future__ import annotations

import json
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

from softmax_core.hardware.compile import CompileJob, KernelResources, RegisterSource, job_identity

RECORD_DIR = Path(__file__).resolve().parents[1] / "assets" / "device_compiles"
# The catalog GPU each record was made on, and its file.
RECORDS = {"h200": "h200-compiles.json"}


@dataclass(frozen=True)
class DeviceRecord:
    gpu_key: str
    gpu_name: str
    toolchain: str                # "triton 3.6.0, ptxas 12.8.93 (ptxas, sm_90)"
    date: str                     # ISO date of the run
    command: str
    results: dict                 # job_identity -> KernelResources

    @property
    def label(self) -> str:
        """The toolchain as a figure's caption names it: compiler, GPU and the day it was recorded."""
        return f"{self.toolchain} on {self.gpu_name}, recorded {self.date[:10]}"


@lru_cache(maxsize=None)
def record(gpu_key: str) -> DeviceRecord | None:
    """The record made on catalog GPU `gpu_key`, or None where there is none. A kernel the driver refused to
    load keeps its figures; the driver's own English message stays in the file (the pages explain a refusal
    from the figures, in the reader's language)."""
    name = RECORDS.get(gpu_key)
    if name is None or not (RECORD_DIR / name).exists():
        return None
    data = json.loads((RECORD_DIR / name).read_text())
    prov = data["provenance"]
    label = f"{prov['toolchain']} on {prov['gpu']}, recorded {prov['date'][:10]}"
    results = {row["identity"]: KernelResources(int(row["n_regs"]), int(row["n_spills"]), int(row["shared_bytes"]),
                                                 RegisterSource.RECORDED, f"sm_{row['target'][1]}", "", label)
               for row in data["results"]}
    return DeviceRecord(gpu_key, prov["gpu"], prov["toolchain"], prov["date"], prov["command"], results)


def recorded_resources(job: CompileJob, gpu_key: str) -> KernelResources | None:
    """`job`'s resources as recorded on catalog GPU `gpu_key`, or None (no record for that GPU, or this kernel
    specialisation was not among the recorded ones, e.g. an edited kernel: then the local compile stands)."""
    rec = record(gpu_key)
    return None if rec is None else rec.results.get(job_identity(job))
