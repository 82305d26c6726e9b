"""Counting memory traffic: why fusing softmax into one kernel moves ~4x fewer bytes, and what that makes of
its speed.

Every step of the naive softmax is a separate kernel, and each one reads its input from DRAM and writes
its output back. The fused kernel reads x once and writes y once. These counts are the tutorial's, step by
step; `bytes_moved` is the single definition of "bytes" that benchmarks and charts use.

Fewer bytes is not the speedup by itself: time = bytes ÷ the bandwidth a kernel reaches, and the two versions
reach different fractions of what a plain copy reaches. `speedup_parts` splits a measured speedup into the
byte ratio and those two efficiencies.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

import torch

from softmax_core.hardware import dtypes


@dataclass(frozen=True)
class MemoryStep:
    name: str
    code: str
    elements_read: int
    elements_written: int
    bytes_read: int
    bytes_written: int

    @property
    def elements(self) -> int:
        return self.elements_read + self.elements_written

    @property
    def bytes(self) -> int:
        return self.bytes_read + self.bytes_written


@dataclass(frozen=True)
class MemoryTraffic:
    M: int
    N: int
    dtype: str
    element_size: int
    naive_steps: tuple[MemoryStep, ...]
    fused: MemoryStep

    @property
    def naive_elements(self) -> int:        # 8MN + 4M
        return sum(s.elements for s in self.naive_steps)

    @property
    def naive_bytes(self) -> int:
        return sum(s.bytes for s in self.naive_steps)

    @property
    def fused_elements(self) -> int:        # 2MN
        return self.fused.elements

    @property
    def fused_bytes(self) -> int:
        return self.fused.bytes

    @property
    def predicted_speedup(self) -> float:
        """If both are bound by memory bandwidth, time is proportional to bytes moved."""
        return self.naive_bytes / self.fused_bytes if self.fused_bytes else float("nan")


def memory_traffic(M: int, N: int, dtype=torch.float32) -> MemoryTraffic:
    """The tutorial's accounting for an M x N softmax, naive (five kernels) and fused (one)."""
    if M < 0 or N < 0:
        raise ValueError(f"M and N must be non-negative, got {M} x {N}")
    size = dtypes.element_size(dtype)
    MN = M * N

    def step(name, code, read, written):
        return MemoryStep(name, code, read, written, read * size, written * size)

    naive = (
        step("max", "x_max = x.max(dim=1)[0]", MN, M),                         # read x, write M maxima
        step("subtract", "z = x - x_max[:, None]", MN + M, MN),               # read x and maxima, write z
        step("exp", "numerator = torch.exp(z)", MN, MN),                       # read z, write exp(z)
        step("sum", "denominator = numerator.sum(dim=1)", MN, M),              # read exp(z), write M sums
        step("divide", "out = numerator / denominator[:, None]", MN + M, MN),  # read both, write out
    )
    fused = step("fused", "one kernel: load row, max, subtract, exp, sum, divide, store", MN, MN)
    return MemoryTraffic(M, N, dtypes.name(dtype), size, naive, fused)


def linear_formula(count: Callable[[int, int], int]) -> str:
    """A count that is linear in M·N and M, written as "aMN + bM" with its coefficients read off the
    accounting itself (at M = 1 and N = 1, 2), so the formula a page prints can't drift from the code."""
    per_mn = count(1, 2) - count(1, 1)
    per_m = count(1, 1) - per_mn
    if count(3, 5) != per_mn * 15 + per_m * 3:
        raise ValueError("the count is not of the form aMN + bM")
    terms = [f"{c if c != 1 else ''}{unit}" for c, unit in ((per_mn, "MN"), (per_m, "M")) if c]
    return " + ".join(terms) or "0"


def traffic_formulas() -> dict[str, str]:
    """The tutorial's element counts as formulas: naive reads, writes and total; fused total."""
    def naive(attr):
        return lambda M, N: sum(getattr(s, attr) for s in memory_traffic(M, N).naive_steps)

    return {"naive_read": linear_formula(naive("elements_read")),
            "naive_written": linear_formula(naive("elements_written")),
            "naive_total": linear_formula(lambda M, N: memory_traffic(M, N).naive_elements),
            "fused_read": linear_formula(lambda M, N: memory_traffic(M, N).fused.elements_read),
            "fused_written": linear_formula(lambda M, N: memory_traffic(M, N).fused.elements_written),
            "fused_total": linear_formula(lambda M, N: memory_traffic(M, N).fused_elements)}


# Bytes a softmax pass must move at least once, per element of the matrix:
# forward reads x and writes y; backward reads y and dy and writes dx.
PASS_TENSORS = {"forward": 2, "backward": 3}


def bytes_moved(M: int, N: int, element_bytes: int, direction: str = "forward") -> int:
    return PASS_TENSORS[direction] * M * N * element_bytes


@dataclass(frozen=True)
class SpeedupParts:
    """A measured speedup as byte ratio × (fused efficiency ÷ naive efficiency). Efficiency is the bandwidth a
    version really moves its own bytes at, as a fraction of a plain copy's measured at the same shape."""

    byte_ratio: float            # naive bytes ÷ fused bytes (MemoryTraffic.predicted_speedup)
    naive_efficiency: float      # byte_ratio × naive GB/s (counted on the fused bytes) ÷ copy GB/s
    fused_efficiency: float      # fused GB/s ÷ copy GB/s
    speedup: float               # byte_ratio × fused_efficiency ÷ naive_efficiency = fused GB/s ÷ naive GB/s


def speedup_parts(byte_ratio: float, naive_gbps: float, fused_gbps: float, copy_gbps: float) -> SpeedupParts:
    """Split a measured speedup. The GB/s are a benchmark's, each counted on the same bytes (one read and one
    write of the matrix: `bytes_moved`), so the naive version's real rate is byte_ratio × its GB/s."""
    if min(byte_ratio, naive_gbps, fused_gbps, copy_gbps) <= 0:
        raise ValueError("byte ratio and bandwidths must be positive")
    naive_eff = byte_ratio * naive_gbps / copy_gbps
    fused_eff = fused_gbps / copy_gbps
    return SpeedupParts(byte_ratio, naive_eff, fused_eff, byte_ratio * fused_eff / naive_eff)
