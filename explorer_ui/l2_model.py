"""The L2 model of the memory page: what the naive version's DRAM traffic and speedup become when its
re-reads are served by the L2 cache, and whether a tensor fits there. Pure functions of the catalog's
figures. (How far a measured figure can be trusted is the library's rule: softmax_core.bench.trust.)
"""
from __future__ import annotations

import math

# -- the L2 cache --------------------------------------------------------------------------------------------


def naive_bytes_with_l2(traffic) -> int:
    """DRAM bytes of the naive version when its tensors stay in the L2 cache between its five kernels:
    x comes from DRAM once, and everything it writes goes back to DRAM once; every re-read hits L2.
    `traffic`: softmax_core.teaching.memory.MemoryTraffic."""
    return traffic.fused.bytes_read + sum(step.bytes_written for step in traffic.naive_steps)


def predicted_speedup_with_l2(traffic) -> float:
    """naive DRAM bytes ÷ fused DRAM bytes when the naive version's re-reads are served by L2."""
    return naive_bytes_with_l2(traffic) / traffic.fused_bytes if traffic.fused_bytes else math.nan


def l2_bytes(gpu) -> int | None:
    """The GPU's L2 size in bytes (the catalog keeps MiB), or None when unknown."""
    mib = getattr(gpu, "l2_mib", None)
    return int(mib * 2**20) if mib else None


def fits_in_l2(M: int, N: int, element_size: int, gpu) -> bool | None:
    """Whether one M x N tensor (M·N·element size bytes) fits in the GPU's L2; None when L2 is unknown."""
    l2 = l2_bytes(gpu)
    return None if l2 is None else M * N * element_size <= l2


def l2_crossing_n(M: int, element_size: int, gpu) -> float | None:
    """The N at which M·N·element size equals the GPU's L2 size (above it a tensor no longer fits)."""
    l2 = l2_bytes(gpu)
    return None if l2 is None or M <= 0 else l2 / (M * element_size)

