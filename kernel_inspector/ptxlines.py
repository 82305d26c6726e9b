"""Which lines of the kernel's source each PTX, AMDGCN or SASS instruction comes from.

Triton writes DWARF-style line information into the assembly it emits: `.file N "path"` names a source
file, and `.loc N LINE COL` before an instruction says the instructions that follow come from LINE of
file N (until the next `.loc`). Read back, that links every line of a kernel to its instructions.

ptxas keeps that information in the cubin (.debug_line), and `nvdisasm -g` prints it back as a comment
`//## File "path", line N` before each run of SASS instructions (`/*0040*/  IMAD ... ;`): link_sass.
"""
from __future__ import annotations

import re
from dataclasses import dataclass

FILE = re.compile(r'^\s*\.file\s+(\d+)\s+"([^"]*)"(?:\s*,\s*\d+\s*,\s*\d+)?(?:\s+"([^"]*)")?')
LOC = re.compile(r"^\s*\.loc\s+(\d+)\s+(\d+)\s+(\d+)")
SASS_LINE = re.compile(r'^\s*//## File "([^"]*)", line (\d+)')
SASS_INSTRUCTION = re.compile(r"^\s*/\*[0-9a-f]{4,}\*/")


@dataclass(frozen=True)
class LineLinks:
    """For each assembly line, the source line it comes from (0: none), and the reverse map."""

    asm_to_source: tuple[int, ...]
    source_to_asm: dict            # source line -> tuple of assembly line numbers (1-based)

    def instructions_of(self, source_line: int) -> tuple[int, ...]:
        return self.source_to_asm.get(source_line, ())

    def outside(self, n_lines: int) -> int:
        """How many instructions name a line the file does not have. Triton 3.9 writes such lines for
        vectorised loads of pointers it knows are 16-byte aligned (seen: the vector add's two loads said
        to come from lines 14 and 15 of a 13-line file); a page leaves them unlinked and says how many."""
        return sum(len(numbers) for line, numbers in self.source_to_asm.items() if line > n_lines)


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


def link_sass(sass: str, source_name: str) -> LineLinks:
    """Link `sass` (nvdisasm -c -g output) to the lines of the file whose name ends in `source_name`. Without
    line comments (a disassembly made without -g) nothing is linked: source_to_asm is empty."""
    current = 0
    per_line = []
    reverse: dict[int, list[int]] = {}
    for number, text in enumerate(sass.splitlines(), start=1):
        if found := SASS_LINE.match(text):
            current = int(found.group(2)) if found.group(1).endswith(source_name) else 0
            per_line.append(0)
            continue
        source_line = current if current and SASS_INSTRUCTION.match(text) else 0
        per_line.append(source_line)
        if source_line:
            reverse.setdefault(source_line, []).append(number)
    return LineLinks(tuple(per_line), {line: tuple(numbers) for line, numbers in reverse.items()})
