"""Compile results recorded on a real GPU with the toolchain of its recorded benchmark runs (the H200, triton
3.6: assets/device_compiles/, written by `python -m explorer_ui.record_compiles`), read back for the
pages. The pages compile offline with the local triton, whose ptxas may allocate registers otherwise (the
tutorial kernel at N = 781 on sm_90: 48 registers with triton 3.6 on the H200, 40 with triton 3.9 here); for
the GPU the record was made on, the pages state the record's figures, each with the toolchain that produced
them, and the local compile beside them where the two differ. Pure: no Streamlit."""
from __future__ import annotations

import json
import re
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

from softmax_core.hardware.compile import CompileJob, KernelResources, RegisterSource, job_identity

RECORD_DIR = Path(__file__).resolve().parents[1] / "assets" / "device_compiles"
# The catalog GPU each record was made on, and its files: the chapter kernel's grid and the pages' work items
# (`python -m explorer_ui.record_compiles`), then every compile the tuned plans the pages offer can ask for
# (`... --jobs`, the list from `--list-jobs`: explorer_ui.tuned_configs), then the tiny-rows programs of more than
# 64 rows that list first left out (`--jobs` on the 15 jobs it lacked), then the rows kernel's partial vectors
# (`--jobs` on the jobs the record lacked once 2-byte widths of a multiple of 2 values took VEC 2 or 4). That last
# run was made on an H100, the GPU the device tool lent: the same sm_90 target and the same triton 3.6 and ptxas
# as the H200's runs, so the same registers; its figures name the H100 as the card they were read on.
RECORDS = {"h200": ("h200-compiles.json", "h200-tuned-compiles.json", "h200-tuned-compiles-2.json",
                    "h200-tuned-compiles-3.json", "h200-tuned-compiles-4.json", "h200-tuned-compiles-5.json")}


@dataclass(frozen=True)
class DeviceRecord:
    gpu_key: str
    gpu_name: str
    toolchain: str                # "triton 3.6.0, ptxas 12.8.93 (ptxas, sm_90)"
    date: str                     # ISO date of the first run
    command: str
    results: dict                 # job_identity -> KernelResources
    files: tuple = ()             # (file name, its provenance) of every run read

    @property
    def label(self) -> str:
        """The toolchain as a figure's caption names it: compiler, GPU and the day it was recorded."""
        return _label({"toolchain": self.toolchain, "gpu": self.gpu_name, "date": self.date})


def _label(prov: dict) -> str:
    return f"{prov['toolchain']} on {prov['gpu']}, recorded {prov['date'][:10]}"


_LABEL = re.compile(r"^(?P<toolchain>.+) on (?P<gpu>.+), recorded (?P<date>\d{4}-\d{2}-\d{2})$")


def label_parts(text: str) -> dict | None:
    """A recorded figure's toolchain label ("triton 3.6.0, ptxas ... on NVIDIA H200, recorded 2026-12-01") as
    its toolchain, gpu and date, for the pages to say in the reader's language; None for any other text (a
    local compile's toolchain)."""
    found = _LABEL.match(text or "")
    return found.groupdict() if found else None


@lru_cache(maxsize=None)
def record(gpu_key: str) -> DeviceRecord | None:
    """The record made on catalog GPU `gpu_key` (its runs together), or None where there is none. A kernel the
    driver refused to load keeps its figures; the driver's own English message stays in the file (the pages
    explain a refusal from the figures, in the reader's language)."""
    runs = [(name, json.loads((RECORD_DIR / name).read_text())) for name in RECORDS.get(gpu_key, ())
            if (RECORD_DIR / name).exists()]
    if not runs:
        return None
    results: dict = {}
    for _, data in runs:
        label = _label(data["provenance"])
        for row in data["results"]:
            results.setdefault(row["identity"], KernelResources(
                int(row["n_regs"]), int(row["n_spills"]), int(row["shared_bytes"]), RegisterSource.RECORDED,
                f"sm_{row['target'][1]}", "", label))
    prov = runs[0][1]["provenance"]
    return DeviceRecord(gpu_key, prov["gpu"], prov["toolchain"], prov["date"], prov["command"], results,
                        tuple((name, data["provenance"]) for name, data in runs))


def recorded_resources(job: CompileJob, gpu_key: str) -> KernelResources | None:
    """`job`'s resources as recorded on catalog GPU `gpu_key`, or None (no record for that GPU, or this kernel
    specialisation was not among the recorded ones, e.g. an edited kernel: then the local compile stands)."""
    rec = record(gpu_key)
    return None if rec is None else rec.results.get(job_identity(job))
