"""The H200 record of the four examples: the page's offline compile beside what Triton's JIT launched and the
driver's occupancy answer on that machine (bench_tools/record/your_kernel.py writes it; the JSON's
provenance says when, with which torch, triton and commit, and by which command)."""
from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

from softmax_core.data import assets_dir

RECORD = Path("benchmarks") / "your_kernel" / "your-kernel-h200.json"
RECORD_COMMAND = "python -m bench_tools.record.your_kernel --out OUT"


@dataclass(frozen=True)
class RecordedExample:
    example: str
    ours_registers: int
    ours_spills: int
    ours_shared_bytes: int
    ours_programs_per_sm: int
    jit_registers: int
    jit_local_bytes: int
    jit_shared_bytes: int
    driver_programs_per_sm: int

    @property
    def same_compile(self) -> bool:
        """Whether the offline compile allocated what the JIT's did (registers and shared memory)."""
        return (self.ours_registers, self.ours_shared_bytes) == (self.jit_registers, self.jit_shared_bytes)

    @property
    def driver_agrees(self) -> bool:
        return self.ours_programs_per_sm == self.driver_programs_per_sm


@dataclass(frozen=True)
class Provenance:
    date: str
    gpu: str
    torch: str
    triton: str
    commit: str


@dataclass(frozen=True)
class H200Record:
    provenance: Provenance
    examples: tuple[RecordedExample, ...]


def read_record(path: Path | None = None) -> H200Record | None:
    """The record, or None where this install carries none."""
    path = path or assets_dir() / RECORD
    if not path.is_file():
        return None
    data = json.loads(path.read_text())
    p = data["provenance"]
    rows = tuple(RecordedExample(r["example"], r["ours_registers"], r["ours_spills"], r["ours_shared_bytes"],
                                 r["ours_programs_per_sm"], r["jit_registers"], r["jit_local_bytes"],
                                 r["jit_shared_bytes"], r["driver_blocks_per_sm"]) for r in data["rows"])
    return H200Record(Provenance(p["date"], p["gpu"], p["torch"], p["triton"], p["commit"]), rows)
