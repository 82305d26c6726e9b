"""Which lines of the kernel's source each PTX (or AMDGCN) instruction comes from.

Triton writes DWARF-style line information into the assembly it emits: `.file N "path"` names a source
file, and `.loc N LINE COL` before an instruction says the instructions that follow come from LINE of
file N (until the next `.loc`). Read back, that links every line of a kernel to its instructions.
"""
from __future__ import annotations

import re
from dataclasses import dataclass

FILE = re.compile(r'^\s*\.file\s+(\d+)\s+"([^"]*)"(?:\s*,\s*\d+\s*,\s*\d+)?(?:\s+"([^"]*)")?')
LOC = re.compile(r"^\s*\.loc\s+(\d+)\s+(\d+)\s+(\d+)")


@dataclass(frozen=True)
class LineLinks:
    """For each assembly line, the source line it comes from (0: none), and the reverse map."""

    asm_to_source: tuple[int, ...]
    source_to_asm: dict            # source line -> tuple of assembly line numbers (1-based)

    def instructions_of(self, source_line: int) -> tuple[int, ...]:
        return self.source_to_asm.get(source_line, ())


def _is_instruction(text: str) -> bool:
    stripped = text.strip()
    return bool(stripped) and not stripped.startswith(("//", ";", ".", "$", "@!", "{", "}")) \
        and not stripped.endswith(":") or stripped.startswith("@%")


def link_lines(asm: str, source_name: str) -> LineLinks:
    """Link `asm` (PTX or AMDGCN text) to the lines of the file whose name ends in `source_name`."""
    lines = asm.splitlines()
    files = {found.group(1) for text in lines if (found := FILE.match(text))
             and (found.group(3) or found.group(2)).endswith(source_name)}    # PTX lists its files at the end
    current = 0
    per_line = []
    reverse: dict[int, list[int]] = {}
    for number, text in enumerate(lines, start=1):
        if FILE.match(text):
            per_line.append(0)
            continue
        if found := LOC.match(text):
            current = int(found.group(2)) if found.group(1) in files else 0
            per_line.append(0)
            continue
        source_line = current if current and _is_instruction(text) else 0
        per_line.append(source_line)
        if source_line:
            reverse.setdefault(source_line, []).append(number)
    return LineLinks(tuple(per_line), {line: tuple(numbers) for line, numbers in reverse.items()})
