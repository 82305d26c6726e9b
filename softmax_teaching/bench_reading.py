"""Reading a benchmark honestly: which ceiling a GB/s figure is compared with, which points are dips the trend
does not explain, and which timings a machine could not have produced. Pure functions of recorded figures;
they return figures and codes, the pages say them.

- The ceiling. A softmax must read and write the matrix once, so a plain copy of the same bytes is the
  practical roofline — but only where the copy is bandwidth-bound. A small matrix is launch-bound and served
  from L2, and a kernel can beat a copy of it. So a run's ceiling is the GPU's spec peak and the best copy
  measured on a matrix far beyond L2 (FAR_BEYOND_L2 times its size), beside the same-size copy.
- A dip: a point below DIP times both of its neighbours in the same series. Its spread (p80 / p20) is kept
  beside it: a dip is a figure to question, not a result.
- A timing no machine could produce: on a CPU, the naive softmax (five passes, about four times the bytes)
  cannot beat torch.softmax by more than timing noise, and no softmax can run faster than a copy of its bytes.
"""
from __future__ import annotations

from dataclasses import dataclass

FAR_BEYOND_L2 = 4       # a copy of at least this many times the L2's size reads and writes DRAM, not the cache
DIP = 0.8               # a point below 0.8 x both neighbours is a dip
NOISE = 1.5             # a ratio beyond what the bytes allow by more than this is the machine's noise, not a result


@dataclass(frozen=True)
class CopyCeiling:
    spec_gbps: float | None      # the GPU's spec peak (catalog), None when unknown
    far_gbps: float | None       # the best copy measured on a matrix >= FAR_BEYOND_L2 x L2, None when none was
    far_n: int | None            # the N it was measured at
    far_bytes: int | None        # its matrix's size in bytes (one tensor)
    l2_bytes: int | None

    @property
    def of_spec(self) -> float | None:
        """The far copy as a fraction of the spec peak."""
        return self.far_gbps / self.spec_gbps if self.far_gbps and self.spec_gbps else None


def copy_ceiling(copies, l2_bytes: int | None, spec_gbps: float | None) -> CopyCeiling:
    """`copies`: (N, tensor bytes, GB/s) of a run's copy timings. The best far beyond L2 (all of them when L2 is
    unknown: then none is "far" and far_gbps is None)."""
    far = [(gbps, n, size) for n, size, gbps in copies if l2_bytes and size >= FAR_BEYOND_L2 * l2_bytes]
    if not far:
        return CopyCeiling(spec_gbps, None, None, None, l2_bytes)
    gbps, n, size = max(far)
    return CopyCeiling(spec_gbps, float(gbps), int(n), int(size), l2_bytes)


@dataclass(frozen=True)
class Dip:
    n: int
    gbps: float
    neighbours: tuple[float, float]
    spread: float | None         # p80 / p20 of its timing, None when not recorded


def dips(points) -> tuple[Dip, ...]:
    """`points`: (N, GB/s, p80/p20 or None) of one provider's series, any order. Each point below DIP x both of
    its neighbours (in N order)."""
    series = sorted(points)
    found = []
    for (_, before, _), (n, gbps, spread), (_, after, _) in zip(series, series[1:], series[2:]):
        if gbps < DIP * min(before, after):
            found.append(Dip(int(n), float(gbps), (float(before), float(after)), spread))
    return tuple(found)


IMPOSSIBLE = ("copy_stalled", "naive_beats_fused", "beats_copy")     # why a CPU timing is not a result


def impossible_cpu_timing(copy_gbps: float, naive_ms: float, torch_ms: float, torch_gbps: float,
                          min_copy_gbps: float = 1.0) -> str | None:
    """Why this size's CPU timings cannot be results (one of IMPOSSIBLE), or None: a copy under `min_copy_gbps`
    (the machine was busy elsewhere), the naive softmax faster than torch.softmax by more than NOISE, or
    torch.softmax faster than a copy of its bytes by more than NOISE."""
    if copy_gbps < min_copy_gbps:
        return "copy_stalled"
    if naive_ms * NOISE < torch_ms:
        return "naive_beats_fused"
    if torch_gbps > NOISE * copy_gbps:
        return "beats_copy"
    return None
