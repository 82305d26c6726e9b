"""How sure a measured figure is, and what the L2 cache does to the prediction. Pure functions.

A benchmark row keeps its timings' spread: the 20th / 50th / 80th percentiles and the min and max of its
samples (softmax_core.bench). Runs recorded before the percentiles were kept have only min, median and max;
for those the page shows min–max and says that it cannot judge the spread, rather than invent one.

The rule, defined here once and quoted by the pages:
- a timing is *unsteady* when its p80 is more than SPREAD_LIMIT times its p20;
- a speedup (naive time ÷ fused time) is *too spread to conclude* when either timing is unsteady, or when its
  interval [naive p20 ÷ fused p80, naive p80 ÷ fused p20] contains 1 (it might be no faster at all);
- a run without percentiles is judged on min–max only where that settles it: an interval [naive min ÷ fused
  max, naive max ÷ fused min] that contains 1 is too spread to conclude; otherwise it is not judged.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

SPREAD_LIMIT = 1.5
# verdicts on a measured figure
CLEAR, TOO_SPREAD, NOT_JUDGED = "clear", "too_spread", "not_judged"
VERDICTS = (CLEAR, TOO_SPREAD, NOT_JUDGED)
# which interval a spread is
QUANTILES, MIN_MAX = "p20_p80", "min_max"


def _number(row, name: str) -> float:
    try:
        value = float(row[name])
    except (KeyError, TypeError, ValueError):
        return math.nan
    return value


@dataclass(frozen=True)
class Spread:
    """One timing: its median and an interval around it (p20–p80 when recorded, else min–max)."""
    median: float
    lo: float
    hi: float
    kind: str                    # QUANTILES | MIN_MAX

    @property
    def steady(self) -> bool | None:
        """False when p80 / p20 > SPREAD_LIMIT; None when the percentiles were not recorded."""
        if self.kind != QUANTILES:
            return None
        return self.hi <= SPREAD_LIMIT * self.lo


def timing_spread(row) -> Spread:
    """A benchmark row's (mapping with ms_median, ms_p20, ms_p80, ms_min, ms_max) timing and spread."""
    p20, p80 = _number(row, "ms_p20"), _number(row, "ms_p80")
    median = _number(row, "ms_median")
    if math.isfinite(p20) and math.isfinite(p80):
        return Spread(median, p20, p80, QUANTILES)
    return Spread(median, _number(row, "ms_min"), _number(row, "ms_max"), MIN_MAX)


@dataclass(frozen=True)
class Speedup:
    value: float                 # naive median ÷ fused median
    lo: float                    # slow end: naive lo ÷ fused hi
    hi: float                    # fast end: naive hi ÷ fused lo
    kind: str                    # the intervals it was built from (QUANTILES only when both had them)
    verdict: str                 # CLEAR | TOO_SPREAD | NOT_JUDGED


def speedup(naive: Spread, fused: Spread) -> Speedup:
    value = naive.median / fused.median
    lo, hi = naive.lo / fused.hi, naive.hi / fused.lo
    if naive.kind != QUANTILES or fused.kind != QUANTILES:
        return Speedup(value, lo, hi, MIN_MAX, TOO_SPREAD if lo <= 1.0 <= hi else NOT_JUDGED)
    clear = naive.steady and fused.steady and not (lo <= 1.0 <= hi)
    return Speedup(value, lo, hi, QUANTILES, CLEAR if clear else TOO_SPREAD)


def shown_ratio(numerator: Spread, denominator: Spread) -> float | None:
    """median ÷ median, or None when either timing is unsteady (a ratio of an unsteady timing says nothing)."""
    if numerator.steady is False or denominator.steady is False:
        return None
    return numerator.median / denominator.median


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

