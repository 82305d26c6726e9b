"""What one compiled variant of a user's kernel means on its GPU: programs per SM by the hardware's rules
beside the chapter's formula, the limiter, a what-if over registers and num_warps, and the floors (bytes
moved at the GPU's bandwidth, flops at its peak rate) for the tensor sizes and grid the user gives.

One function per fact: every figure comes from softmax_core.occupancy and the catalog's GpuSpec.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

from kernel_inspector.argspec import ELEMENT_BYTES, ArgSpec
from kernel_inspector.sandbox import Variant
from softmax_core.hardware.gpu import GpuSpec
from softmax_core.hardware.occupancy import Occupancy, occupancy

WHAT_IF_REGISTERS = (16, 32, 48, 64, 80, 96, 128, 160, 192, 224, 255)
WHAT_IF_WARPS = (1, 2, 4, 8, 16, 32)
FILLING_GRID = 1 << 30
FLOP_PRECISIONS = ("fp32", "bf16")      # the catalog's peak rates: fp32 non-tensor, bf16 dense tensor-core


@dataclass(frozen=True)
class Floors:
    bytes_moved: int | None          # each given tensor read or written once
    memory_seconds: float | None     # bytes_moved / the GPU's bandwidth
    flops: float | None
    compute_seconds: float | None    # flops / the GPU's peak rate at `precision`
    precision: str
    bound: str | None                # "memory" | "compute": the larger floor (None without both)

    @property
    def floor_seconds(self) -> float | None:
        known = [s for s in (self.memory_seconds, self.compute_seconds) if s is not None]
        return max(known) if known else None


@dataclass(frozen=True)
class Inspection:
    """One row of the per-GPU table."""

    gpu: GpuSpec
    variant: Variant
    occupancy: Occupancy | None      # None: the compile failed
    grid_programs: int
    floors: Floors
    exceeds_shared: bool             # asks for more shared memory than one program may have on this GPU
    exceeds_registers: bool

    @property
    def waves(self) -> float | None:
        """The grid in units of what the GPU holds at once (below 1: part of the GPU idles)."""
        occ = self.occupancy
        return self.grid_programs / occ.full_grid if occ and occ.full_grid else None

    def as_json(self) -> dict:
        r, occ = self.variant.resources, self.occupancy
        failure = self.variant.failure
        return {"gpu": self.gpu.key, "gpu_name": self.gpu.name, "config": self.variant.config,
                "constexprs": {n: (v if isinstance(v, (int, float, bool, str, type(None))) else str(v))
                               for n, v in self.variant.constexprs},
                "num_warps": self.variant.num_warps, "num_stages": self.variant.num_stages,
                "registers": r.n_regs if r else None, "spills": r.n_spills if r else None,
                "shared_bytes": r.shared_bytes if r else None,
                "programs_per_sm": occ.programs_per_sm if occ else None,
                "chapter_programs_per_sm": occ.chapter_programs_per_sm if occ else None,
                "limiter": occ.limiter if occ else None, "chapter_limiter": occ.chapter_limiter if occ else None,
                "resident_programs": occ.full_grid if occ else None, "grid_programs": self.grid_programs,
                "waves": self.waves,
                "exceeds_shared": self.exceeds_shared, "exceeds_registers": self.exceeds_registers,
                "bytes_moved": self.floors.bytes_moved, "memory_floor_s": self.floors.memory_seconds,
                "flops": self.floors.flops, "compute_floor_s": self.floors.compute_seconds,
                "floor_bound": self.floors.bound, "toolchain": r.toolchain if r else None,
                "sandbox": self.variant.sandbox,      # what it was compiled in: "bubblewrap" or "none"
                "error": None if failure is None else {"hint": failure.hint, "line": failure.line,
                                                        "message": failure.message}}


def numel(shape: tuple[int, ...]) -> int:
    return math.prod(int(d) for d in shape)


def bytes_moved(specs: tuple[ArgSpec, ...], sizes: dict[str, tuple[int, ...]]) -> int | None:
    """Bytes of every sized pointer argument, at its element type: each tensor crosses memory once (the
    floor a perfect kernel reaches; a kernel that rereads a tensor moves more)."""
    if not sizes:
        return None
    by_name = {s.name: s for s in specs}
    unknown = [n for n in sizes if n not in by_name or by_name[n].kind != "pointer"]
    if unknown:
        raise ValueError(f"not a pointer argument: {unknown[0]}")
    return sum(numel(shape) * ELEMENT_BYTES[by_name[name].dtype] for name, shape in sizes.items())


def peak_tflops(gpu: GpuSpec, precision: str) -> float | None:
    if precision not in FLOP_PRECISIONS:
        raise ValueError(f"precision must be one of {FLOP_PRECISIONS}, got {precision!r}")
    return gpu.peak_fp32_tflops if precision == "fp32" else gpu.peak_bf16_tflops


def floors(gpu: GpuSpec, moved: int | None, flops: float | None, precision: str = "fp32") -> Floors:
    memory = moved / (gpu.memory_bandwidth_gbps * 1e9) if moved is not None and gpu.memory_bandwidth_gbps else None
    peak = peak_tflops(gpu, precision)
    compute = flops / (peak * 1e12) if flops and peak else None
    bound = None if memory is None or compute is None else ("memory" if memory >= compute else "compute")
    return Floors(moved, memory, flops, compute, precision, bound)


def inspect_variant(gpu: GpuSpec, variant: Variant, grid_programs: int, moved: int | None = None,
                    flops: float | None = None, precision: str = "fp32") -> Inspection:
    r = variant.resources
    occ = None
    if r is not None:
        # Programs per SM and what limits them, for a grid large enough to fill the GPU; how the user's grid
        # compares with what is resident is `waves`.
        occ = occupancy(gpu, max(r.n_regs, 1), r.shared_bytes, variant.num_warps, FILLING_GRID)
    return Inspection(gpu, variant, occ, grid_programs, floors(gpu, moved, flops, precision),
                      exceeds_shared=bool(r and r.shared_bytes > gpu.max_shared_mem),
                      exceeds_registers=bool(r and gpu.max_regs_per_thread and r.n_regs > gpu.max_regs_per_thread))


def what_if(gpu: GpuSpec, shared_bytes: int, registers: tuple[int, ...] = WHAT_IF_REGISTERS,
            warps: tuple[int, ...] = WHAT_IF_WARPS) -> dict:
    """Programs per SM (hardware's rules) for each (registers per thread, num_warps), at the same shared
    memory: {(n_regs, num_warps): (programs_per_sm, limiter)}. A what-if: a real change of num_warps
    also changes what the compiler allocates; compile again to know."""
    cells = {}
    for n_regs in registers:
        if gpu.max_regs_per_thread and n_regs > gpu.max_regs_per_thread:
            continue
        for w in warps:
            if w * gpu.warp_size > (gpu.max_warps_per_sm or 64) * gpu.warp_size:
                continue
            occ = occupancy(gpu, n_regs, shared_bytes, w, 1 << 30)
            cells[(n_regs, w)] = (occ.programs_per_sm, occ.limiter)
    return cells


def parse_shape(text: str) -> tuple[int, ...]:
    """'4096x781' (or '4096,781') -> (4096, 781)."""
    parts = [p for p in text.replace(",", "x").replace("*", "x").split("x") if p.strip()]
    shape = tuple(int(p) for p in parts)
    if not shape or any(d <= 0 for d in shape):
        raise ValueError(text)
    return shape


def grid_programs(grid: tuple[int, ...]) -> int:
    return numel(grid) if grid else 1
