"""How the app writes numbers: byte sizes in a unit that fits them, counts with thousands separators, values
with significant digits, tables with all of them. One module, so that every page writes "12.8 MB", "4,096"
and "−inf" the same way.

Byte sizes are decimal (1 kB = 1,000 B, 1 MB = 10⁶ B, 1 GB = 10⁹ B), as GPU makers quote bandwidth; the
glossary says so ("decimal units"). A figure the catalog quotes in binary units (L2 in MiB) keeps its MiB and
is converted for comparison by `fmt_bytes`. Pure functions.
"""
from __future__ import annotations

import math

import pandas as pd

# (unit, bytes in one unit), largest first
BYTE_UNITS = (("TB", 1e12), ("GB", 1e9), ("MB", 1e6), ("kB", 1e3), ("B", 1.0))


def byte_unit(n: float) -> tuple[str, float]:
    """The unit a size of `n` bytes reads best in: the largest with at least one whole unit (B below 1 kB)."""
    size = abs(float(n))
    for unit, scale in BYTE_UNITS:
        if size >= scale:
            return unit, scale
    return "B", 1.0


def fmt_bytes(n: float) -> str:
    """`n` bytes as "781 B", "3.1 kB", "12.8 MB", "4.4 TB"; never thousands of one unit next to a larger one."""
    unit, scale = byte_unit(n)
    if unit == "B":
        return f"{n:,.0f} B"
    value = n / scale
    if round(abs(value), 1) >= 1000 and unit != BYTE_UNITS[0][0]:     # 999.96 MB rounds to 1,000.0: say 1.0 GB
        bigger = BYTE_UNITS[[u for u, _ in BYTE_UNITS].index(unit) - 1]
        unit, value = bigger[0], n / bigger[1]
    return f"{value:,.1f} {unit}"


def axis_bytes(values) -> tuple[str, float]:
    """One unit for a chart axis whose values (bytes) are `values`: the unit of the largest, so that the
    axis reads "0 … 40 MB" and not "0 … 40,000,000 B" or "0.000040 TB". Returns (unit, divisor)."""
    largest = max((abs(float(v)) for v in values), default=0.0)
    return byte_unit(largest)


def number(v: float, digits: int = 4) -> str:
    """A value as the pages print it: "NaN", "−inf" / "+inf", "0", else `digits` significant digits."""
    v = float(v)
    if math.isnan(v):
        return "NaN"
    if math.isinf(v):
        return "−inf" if v < 0 else "+inf"
    return "0" if v == 0 else f"{v:.{digits}g}"


def duration(seconds: float | None) -> str:
    """A time as the pages print it: "9.6 ns" below a microsecond (a floor of a few kilobytes is nanoseconds, and
    "0.0 µs" would read as none), else "12.3 µs"; "—" when there is none."""
    if seconds is None or not math.isfinite(seconds):
        return "—"
    return f"{seconds * 1e9:,.1f} ns" if seconds < 1e-6 else f"{seconds * 1e6:,.1f} µs"


def count(n) -> str:
    """An integer with thousands separators ("262,144")."""
    return f"{int(n):,}"


def ratio(x: float, digits: int = 2) -> str:
    """A speedup or a ratio: "1.85×"; "—" when there is none."""
    if x is None or not math.isfinite(x):
        return "—"
    return f"{x:,.{digits}f}×"


def table(frame: pd.DataFrame, digits: int = 2) -> pd.DataFrame:
    """A copy of `frame` ready to show: integer columns with thousands separators, float columns rounded to
    `digits` places with separators, everything else as it is. The shown table is text, so it reads the same
    in every browser (Streamlit's own number format drops the separators)."""
    out = frame.copy()
    for column in out.columns:
        series = out[column]
        if pd.api.types.is_bool_dtype(series):
            continue
        if pd.api.types.is_integer_dtype(series):
            out[column] = [f"{v:,}" for v in series]
        elif pd.api.types.is_float_dtype(series):
            out[column] = ["—" if not math.isfinite(v) else
                           f"{int(v):,}" if float(v).is_integer() and abs(v) >= 1000 else f"{v:,.{digits}f}"
                           for v in series]
    return out


def ratio_range(lo: float, hi: float, digits: int = 2) -> str:
    """A range of ratios as shown: "2.97–3.86×", or one figure when both ends print the same ("2.00×")."""
    a, b = f"{lo:.{digits}f}", f"{hi:.{digits}f}"
    return f"{a}×" if a == b else f"{a}–{b}×"


def product_shown(ratio: float, fused: float, naive: float, result: float, ratio_digits: int = 3,
                  result_digits: int = 2) -> tuple[str, str, bool]:
    """`ratio × fused ÷ naive = result` written so that the figures shown give the result shown: the two
    percentages get the fewest decimals (0-3) for which they do. Returns (fused, naive, exact): exact is False
    when no such number of decimals exists (then the sentence says "≈")."""
    want = f"{result:.{result_digits}f}"
    shown_ratio = round(ratio, ratio_digits)
    for d in range(4):
        f, n = round(fused * 100, d), round(naive * 100, d)
        if n and f"{shown_ratio * f / n:.{result_digits}f}" == want:
            return f"{f:.{d}f}%", f"{n:.{d}f}%", True
    return f"{fused:.1%}", f"{naive:.1%}", False
