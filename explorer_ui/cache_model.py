"""The cache model of the memory and long-rows pages: what the naive version's DRAM traffic and speedup become
when its re-reads are served by the last cache before DRAM, whether a tensor fits there, and that cache's name.
The cache is the library's fact (softmax_core.hardware.gpu.last_cache): the L2 on NVIDIA, the Infinity Cache
that every CU shares on AMD CDNA (each XCD's own L2 there serves only that XCD's CUs). Pure functions of the
catalog's figures. (How far a measured figure can be trusted is the library's rule: softmax_bench.trust.)
"""
from __future__ import annotations

import math

from softmax_core.hardware.gpu import LastCache, last_cache

from explorer_ui.i18n import t


def naive_bytes_with_cache(traffic) -> int:
    """DRAM bytes of the naive version when its tensors stay in the cache between its five kernels: x comes
    from DRAM once, and everything it writes goes back to DRAM once; every re-read hits the cache.
    `traffic`: softmax_core.traffic.MemoryTraffic."""
    return traffic.fused.bytes_read + sum(step.bytes_written for step in traffic.naive_steps)


def predicted_speedup_with_cache(traffic) -> float:
    """naive DRAM bytes ÷ fused DRAM bytes when the naive version's re-reads are served by the cache."""
    return naive_bytes_with_cache(traffic) / traffic.fused_bytes if traffic.fused_bytes else math.nan


def cache(gpu) -> LastCache | None:
    """The last cache before DRAM on `gpu`, or None when the catalog gives none."""
    return last_cache(gpu)


def cache_bytes(gpu) -> int | None:
    found = last_cache(gpu)
    return found.bytes if found else None


def fits_in_cache(M: int, N: int, element_size: int, gpu) -> bool | None:
    """Whether one M x N tensor (M·N·element size bytes) fits in the cache; None when its size is unknown."""
    size = cache_bytes(gpu)
    return None if size is None else M * N * element_size <= size


def cache_crossing_n(M: int, element_size: int, gpu) -> float | None:
    """The N at which M·N·element size equals the cache's size (above it a tensor no longer fits)."""
    size = cache_bytes(gpu)
    return None if size is None or M <= 0 else size / (M * element_size)


def cache_words(gpu) -> dict[str, str]:
    """The cache's names in the session's language, for sentences: `cache` ("L2", "Infinity Cache") and
    `cache_full` ("L2 cache", "Infinity Cache"), as the catalog names the GPU's last-level cache (also where
    it gives no size for it)."""
    kind = gpu.last_level_cache
    return {"cache": t(f"cache_name_{kind}"), "cache_full": t(f"cache_full_{kind}")}


def cache_size(gpu) -> str:
    """The cache's size as the vendor quotes it, in MiB ("60 MiB"), or "—"."""
    found = last_cache(gpu)
    return f"{found.mib:,g} MiB" if found else "—"


# What the measurements on one side of the cache crossing say about the two predictions (each row judged by its
# own figures): all nearer the cache's, all nearer the DRAM count, all above both, all below both, or mixed.
SIDE_READINGS = ("near_cache", "near_dram", "above_both", "below_both", "mixed")


def row_reading(measured: float, predicted: float, predicted_cache: float) -> str:
    """One N's measured speedup against the DRAM count and the cache prediction."""
    if measured > max(predicted, predicted_cache):
        return "above_both"
    if measured < min(predicted, predicted_cache):
        return "below_both"
    return "near_dram" if abs(measured - predicted) <= abs(measured - predicted_cache) else "near_cache"


def side_readings(table, cross_n: float) -> list[dict]:
    """For each side of the crossing that has measurements (N below it, then above it): the N range, the
    measured range, each prediction's range, and the reading every row agrees on ("mixed" if they differ).
    `table`: explorer_ui.data.speedup_table's columns N, measured, predicted, predicted_l2."""
    out = []
    for side, rows in (("below", table[table["N"] < cross_n]), ("above", table[table["N"] >= cross_n])):
        if rows.empty:
            continue
        readings = {row_reading(m, p, c) for m, p, c in zip(rows["measured"], rows["predicted"], rows["predicted_l2"])}
        out.append({"side": side, "reading": readings.pop() if len(readings) == 1 else "mixed",
                    "n_lo": int(rows["N"].min()), "n_hi": int(rows["N"].max()),
                    "lo": float(rows["measured"].min()), "hi": float(rows["measured"].max()),
                    "dram_lo": float(rows["predicted"].min()), "dram_hi": float(rows["predicted"].max()),
                    "cache_lo": float(rows["predicted_l2"].min()), "cache_hi": float(rows["predicted_l2"].max())})
    return out
