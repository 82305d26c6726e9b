"""How far a measured figure can be trusted: one rule for the app's pages and docs/performance.md alike.

A benchmark row keeps its timings' spread: the 20th / 50th / 80th percentiles and the min and max of its
samples. Runs recorded before the percentiles were kept have only min, median and max; for those a figure
is shown with min–max and said to be not judged, rather than given an invented spread.

The rule:
- a timing is *unsteady* when its p80 is more than SPREAD_LIMIT times its p20;
- a ratio of two timings (a speedup, a GB/s over the copy roofline's) is shown only when neither timing is
  unsteady;
- a speedup (naive time ÷ fused time) is *too spread to conclude* when either timing is unsteady, or when its
  interval [naive p20 ÷ fused p80, naive p80 ÷ fused p20] contains 1 (it might be no faster at all); a run
  without percentiles is judged on min–max only where that settles it: an interval [naive min ÷ fused max,
  naive max ÷ fused min] that contains 1 is too spread to conclude; otherwise it is not judged;
- a ratio to a copy replayed from a CUDA graph is not shown where that copy ran below GRAPH_ROOFLINE_LIMIT
  times the same copy launched from Python (records.slower_graph_roofline): it would flatter every provider.

`ratio_to_copy` applies the whole rule to one row and answers the ratio to show (or None) with a `Trust`
code and its figures.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

from softmax_bench.records import GRAPH_ROOFLINE_LIMIT
from softmax_core.words import Code, Coded

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


class Trust(Code):
    """Whether a ratio of measured figures is shown, and why not."""
    SHOWN = "shown"                          # both timings steady (p80 / p20 within the limit)
    SHOWN_NOT_JUDGED = "shown_not_judged"    # recorded without percentiles: shown with min–max, not judged
    UNSTEADY = "unsteady"                    # provider: the timing whose p80 / p20 (spread) is over limit
    ROOFLINE_BELOW_EAGER = "roofline_below_eager"   # graph, eager (copy GB/s), limit
    NOT_TIMED = "not_timed"                  # a row that has no timing (failed, skipped)


def copy_gbps(rows) -> dict[int, float]:
    """N -> the copy roofline's GB/s, from a run's rows of one direction (mappings; ok rows only)."""
    return {int(r["N"]): float(r["gbps"]) for r in rows if r["provider"] == "copy" and r["status"] == "ok"}


def ratio_to_copy(row, copy_row, eager_copy_gbps: float | None = None) -> tuple[float | None, Coded]:
    """`row`'s GB/s over the copy roofline's (`copy_row`, same run, N and direction), and whether the rule
    lets it be shown: (ratio, Trust SHOWN...) or (None, why not). `eager_copy_gbps`: for a run replayed from
    a CUDA graph, the same copy's GB/s launched from Python (the roofline check)."""
    if copy_row is None or row.get("status") != "ok" or copy_row.get("status") != "ok":
        return None, Coded.of(Trust.NOT_TIMED)
    for r in (row, copy_row):
        spread = timing_spread(r)
        if spread.steady is False:
            return None, Coded.of(Trust.UNSTEADY, provider=str(r["provider"]), spread=spread.hi / spread.lo,
                                  limit=SPREAD_LIMIT)
    copy_gbps = float(copy_row["gbps"])
    if eager_copy_gbps is not None and copy_gbps < GRAPH_ROOFLINE_LIMIT * eager_copy_gbps:
        return None, Coded.of(Trust.ROOFLINE_BELOW_EAGER, graph=copy_gbps, eager=eager_copy_gbps,
                              limit=GRAPH_ROOFLINE_LIMIT)
    judged = timing_spread(row).steady is not None and timing_spread(copy_row).steady is not None
    return float(row["gbps"]) / copy_gbps, Coded.of(Trust.SHOWN if judged else Trust.SHOWN_NOT_JUDGED)
