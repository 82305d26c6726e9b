"""Which lane holds which element of each load, read from the kernel compiled for a GPU (no GPU needed).

A recorded launch (load_record.RecordedLaunch.compile_job) is compiled for a target as Triton's JIT would
specialise it. Its TTGIR gives every `tt.load` a distributed layout (`#blocked`: sizePerThread,
threadsPerWarp, warpsPerCTA, order) and a source location; its PTX (NVIDIA) or AMDGCN (AMD) gives each load
instruction a width, and `.loc` lines link the instructions to the same source lines ("Your kernel" reads
them the same way: kernel_inspector.ptxlines). The compile is the project's one (softmax_core.hardware.compile,
in its compiler child when this process interprets kernels); what is read from it is kept on disk beside the
project's other compile results.
"""
from __future__ import annotations

import json
import os
import re
from dataclasses import asdict, dataclass
from pathlib import Path

from softmax_core.hardware import compile as kc
from softmax_core.hardware.compile import CompileJob, cache_dir, resolve_kernel, toolchain

READER_VERSION = 2

LOAD = re.compile(r"= tt\.load .*: tensor<(?P<shape>[\dx]+)x!tt\.ptr<(?P<elt>\w+)>, (?P<layout>#[\w.]+)> "
                  r"loc\((?P<loc>#loc\d*|\"[^)]*)\)")
# AMD's TTGIR turns a load into a buffer load of a base pointer and offsets, typed by the values it returns
AMD_BUFFER_LOAD = re.compile(r"= amdg\w*\.buffer_load .*-> tensor<(?P<shape>[\dx]+)x(?P<elt>\w+), "
                             r"(?P<layout>#[\w.]+)> loc\((?P<loc>#loc\d*|\"[^)]*)\)")
ALIAS = re.compile(r"^(#[\w.]+) = (#ttg\.\w+<.*>)\s*$")
LOC_DEF = re.compile(r"^(#loc\d*) = loc\((.*)\)\s*$")
FILE_LOC = re.compile(r'^"([^"]+)":(\d+):\d+')
NAMED_LOC = re.compile(r'^"[^"]*"\((#loc\d*)\)$')
CALLSITE = re.compile(r"^callsite\((#loc\d*) at (#loc\d*)\)$")
FUSED = re.compile(r"^fused\[(#loc\d*)")
PTX_LOAD = re.compile(r"\bld\.global\S*")
AMD_LOAD = re.compile(r"\b(?:global|buffer)_load_(\w+)")
AMD_WIDTH = {"dword": 4, "dwordx2": 8, "dwordx3": 12, "dwordx4": 16, "ushort": 2, "sshort": 2, "short_d16": 2,
             "short_d16_hi": 2, "ubyte": 1, "sbyte": 1, "b32": 4, "b64": 8, "b96": 12, "b128": 16, "u16": 2,
             "i16": 2, "b16": 2, "u8": 1, "i8": 1}
ELEMENT_BYTES = {"f32": 4, "f16": 2, "bf16": 2, "f64": 8, "i64": 8, "i32": 4, "i16": 2, "i8": 1, "i1": 1}


@dataclass(frozen=True)
class CompiledLoad:
    line: int                      # the kernel source line of the tt.load
    caller: tuple[int, ...]        # the kernel's line that called the helper holding it, if any
    shape: tuple[int, ...]         # the loaded tile
    element_bytes: int
    layout: str                    # the layout as the TTGIR states it
    width_bytes: int | None        # bytes one load instruction moves per lane (None: no instruction found)
    instruction: str               # that instruction's opcode, as the assembly writes it
    linked: bool                   # the instructions were found on the load's own source line


@dataclass(frozen=True)
class CompiledLoads:
    target: tuple
    toolchain: str
    assembly: str                  # "ptx" | "amdgcn"
    loads: tuple[CompiledLoad, ...]

    def for_load(self, line: int, shape: tuple[int, ...], caller: tuple[int, ...] = ()) -> CompiledLoad | None:
        """The compiled load of a recorded one: same line, tile and calling line (or the only candidate)."""
        same = [l for l in self.loads if l.line == line and tuple(l.shape) == tuple(shape)]
        exact = [l for l in same if tuple(l.caller) == tuple(caller)]
        return (exact or same or [None])[0]


def _resolver(ttgir: str, source_name: str):
    defs = {}
    for text in ttgir.splitlines():
        if found := LOC_DEF.match(text):
            defs[found.group(1)] = found.group(2)

    def resolve(body: str, depth: int = 0) -> tuple[int, ...]:
        """The location's lines in the kernel's file, innermost first (a callsite: callee, then caller)."""
        if depth > 64:
            return ()
        if body.startswith("#loc"):
            return resolve(defs.get(body, "unknown"), depth + 1)
        if found := FILE_LOC.match(body):
            return (int(found.group(2)),) if found.group(1).endswith(source_name) else ()
        if found := NAMED_LOC.match(body):
            return resolve(found.group(1), depth + 1)
        if found := CALLSITE.match(body):
            return resolve(found.group(1), depth + 1) + resolve(found.group(2), depth + 1)
        if found := FUSED.match(body):
            return resolve(found.group(1), depth + 1)
        return ()
    return resolve


ASM_FILE = re.compile(r'^\s*\.file\s+(\d+)\s+"([^"]*)"(?:\s*,\s*\d+\s*,\s*\d+)?(?:\s+"([^"]*)")?')
ASM_LOC = re.compile(r"^\s*\.loc\s+(\d+)\s+(\d+)\s+\d+(?:.*?inlined_at\s+(\d+)\s+(\d+))?")


def asm_sites(assembly: str, source_name: str) -> list[tuple[int, int | None]]:
    """For each assembly line, (source line, the line it was inlined at or None) in the kernel's file, from
    the `.loc` directives (PTX writes `inlined_at` for a helper's instructions); (0, None) outside it."""
    lines = assembly.splitlines()
    files = {found.group(1) for text in lines if (found := ASM_FILE.match(text))
             and (found.group(3) or found.group(2)).endswith(source_name)}
    current: tuple[int, int | None] = (0, None)
    sites = []
    for text in lines:
        if found := ASM_LOC.match(text):
            if found.group(1) in files:
                caller = int(found.group(4)) if found.group(3) in files and found.group(4) else None
                current = (int(found.group(2)), caller)
            else:
                current = (0, None)
        sites.append(current)
    return sites


def ptx_width(text: str) -> tuple[int, str] | None:
    """(bytes per lane, the opcode) of a PTX global load (`ld.global.v4.b32` -> 16), None for anything else."""
    found = PTX_LOAD.search(text)
    if not found:
        return None
    parts = found.group(0).split(".")
    vector = next((int(p[1:]) for p in parts if re.fullmatch(r"v\d+", p)), 1)
    bits = next((int(p[1:]) for p in reversed(parts) if re.fullmatch(r"[bsuf]\d+", p)), None)
    return (vector * bits // 8, found.group(0)) if bits else None


def amd_width(text: str) -> tuple[int, str] | None:
    """(bytes per lane, the opcode) of an AMDGCN global or buffer load (`buffer_load_dwordx4` -> 16)."""
    found = AMD_LOAD.search(text)
    width = AMD_WIDTH.get(found.group(1)) if found else None
    return (width, found.group(0)) if width else None


def read_loads(ttgir: str, assembly: str, kind: str, source_name: str) -> list[CompiledLoad]:
    """Every tensor load of the TTGIR with its layout, and the width of the instructions at its line."""
    aliases = {found.group(1): found.group(2) for text in ttgir.splitlines() if (found := ALIAS.match(text))}
    resolve = _resolver(ttgir, source_name)
    width_of = ptx_width if kind == "ptx" else amd_width
    found_loads = []
    for text in ttgir.splitlines():
        found = LOAD.search(text) or AMD_BUFFER_LOAD.search(text)
        if not found:
            continue
        shape = tuple(int(v) for v in found.group("shape").split("x"))
        ref = found.group("loc")
        chain = resolve(ref if ref.startswith("#") else ref.strip('"'))
        found_loads.append((chain, shape, found.group("elt"), found.group("layout")))
    keys = {(c[0] if c else 0, c[1] if len(c) > 1 else None) for c, *_ in found_loads}
    by_site: dict[tuple, list[tuple[int, str]]] = {}
    elsewhere: list[tuple[int, str]] = []
    for site, text in zip(asm_sites(assembly, source_name), assembly.splitlines()):
        found = width_of(text) if not text.lstrip().startswith((".", ";", "//")) else None
        if found is None:
            continue
        (by_site.setdefault(site, []) if site in keys else elsewhere).append(found)
    loads = []
    for chain, shape, elt, layout in found_loads:
        key = (chain[0] if chain else 0, chain[1] if len(chain) > 1 else None)
        here = by_site.get(key, [])
        candidates = here or elsewhere      # triton 3.9 can write an aligned vector load's line wrongly
        width, instruction = max(candidates) if candidates else (None, "")
        loads.append(CompiledLoad(key[0], tuple(chain[1:2]), shape, ELEMENT_BYTES.get(elt, 4),
                                  aliases.get(layout, layout), width, instruction, bool(here)))
    return loads


def _source_name(job: CompileJob) -> str:
    return Path(resolve_kernel(job.kernel).fn.__code__.co_filename).name


def _from_json(data: dict) -> CompiledLoads:
    return CompiledLoads(tuple(data["target"]), data["toolchain"], data["assembly"],
                         tuple(CompiledLoad(**{**load, "shape": tuple(load["shape"]), "caller": tuple(load["caller"])})
                               for load in data["loads"]))


def compiled_loads(job: CompileJob) -> CompiledLoads:
    """The loads of `job`'s kernel compiled for its target (the compiler's TTGIR and PTX / AMDGCN, from
    softmax_core.hardware.compile.compiler_texts), kept on disk once read: a second question is a file read."""
    path = cache_dir() / f"{job.key()}-loads-v{READER_VERSION}.json"
    if path.exists():
        try:
            return _from_json(json.loads(path.read_text()))
        except (ValueError, KeyError, TypeError):
            pass                                     # a torn file: compile again
    texts = kc.compiler_texts(job)
    kind = "amdgcn" if job.target[0] == "hip" else "ptx"
    loads = read_loads(texts["ttgir"], texts[kind], kind, _source_name(job))
    result = CompiledLoads(tuple(job.target), toolchain(tuple(job.target)), kind, tuple(loads))
    tmp = path.with_suffix(f".{os.getpid()}.tmp")
    tmp.write_text(json.dumps(asdict(result)))
    tmp.replace(path)
    return result
