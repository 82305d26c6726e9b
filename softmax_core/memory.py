"""Counting memory traffic: why fusing softmax into one kernel is ~4x faster.

Every step of the naive softmax is a separate kernel, and each one reads its input from DRAM and writes
its output back. The fused kernel reads x once and writes y once. These counts are the tutorial's, step by
step; `bytes_moved` is the single definition of "bytes" that benchmarks and charts use.
"""
from __future__ import annotations

from dataclasses import dataclass

import torch

from . import dtypes


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


# Bytes a softmax pass must move at least once, per element of the matrix:
# forward reads x and writes y; backward reads y and dy and writes dx.
PASS_TENSORS = {"forward": 2, "backward": 3}


def bytes_moved(M: int, N: int, element_bytes: int, direction: str = "forward") -> int:
    return PASS_TENSORS[direction] * M * N * element_bytes
