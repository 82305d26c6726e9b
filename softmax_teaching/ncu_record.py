"""The H200's own counters for the transactions page's layouts: Nsight Compute's global-load sectors and
requests of each profiled launch (assets/benchmarks/profiles/h200-ncu-layout-sectors-*/, written by
bench_tools.record.layout_sectors under ncu), read back beside the case each launch ran."""
from __future__ import annotations

import csv
import json
import math
import re
from dataclasses import dataclass
from pathlib import Path

SECTORS = "l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum"
REQUESTS = "l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum"
RECORD_GLOB = "h200-ncu-layout-sectors-*"


@dataclass(frozen=True)
class CountedLaunch:
    name: str
    shape: tuple[int, ...]
    dtype: str
    dim: int
    view: str
    kernel: str                  # "planned" | "row_walk"
    kernel_name: str             # as ncu names it
    grid: str                    # as ncu writes it: "(256, 1, 1)"
    block: str                   # threads per program, the same way
    sectors: int
    requests: int
    correct: bool

    @property
    def sectors_per_request(self) -> float | None:
        return self.sectors / self.requests if self.requests else None

    @property
    def launch_shape(self) -> tuple[int, int]:
        """(programs, threads per program) of the counted launch."""
        return tuple(math.prod(int(v) for v in re.findall(r"\d+", text)) for text in (self.grid, self.block))


@dataclass(frozen=True)
class NcuRecord:
    folder: str
    machine: dict
    launches: tuple[CountedLaunch, ...]


def default_folder() -> Path | None:
    root = Path(__file__).resolve().parents[1] / "assets" / "benchmarks" / "profiles"
    found = sorted(root.glob(RECORD_GLOB))
    return found[-1] if found else None


def _number(text: str) -> int:
    return int(float(text.replace(",", "")))


def read_record(folder: Path | None = None) -> NcuRecord | None:
    """The latest record (None when there is none)."""
    folder = folder or default_folder()
    if folder is None:
        return None
    meta = json.loads((folder / "launches.json").read_text())
    lines = (folder / "ncu.csv").read_text().splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith('"ID"'))
    counts: dict[int, dict] = {}
    for row in csv.DictReader(lines[start:]):
        entry = counts.setdefault(int(row["ID"]), {"kernel_name": row["Kernel Name"], "grid": row["Grid Size"],
                                                   "block": row["Block Size"]})
        entry[row["Metric Name"]] = _number(row["Metric Value"])
    if len(counts) != len(meta["launches"]):
        raise ValueError(f"{folder}: {len(counts)} profiled kernels for {len(meta['launches'])} launches")
    launches = []
    for index, launch in enumerate(meta["launches"]):
        c = counts[index]
        launches.append(CountedLaunch(launch["name"], tuple(launch["shape"]), launch["dtype"], launch["dim"],
                                      launch["view"], launch["kernel"], c["kernel_name"], c["grid"], c["block"], c[SECTORS],
                                      c[REQUESTS], launch["correct"]))
    return NcuRecord(folder.name, meta["machine"], tuple(launches))
