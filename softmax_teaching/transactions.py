"""Memory transactions of one load, as Nsight Compute counts them: which lane reads which address, the
32-byte sectors and 128-byte lines one warp-level request touches, and what the bytes fetched cost.

Two recorded facts meet here, neither drawn from a formula:
- WHICH ELEMENTS a load touches: the offsets a program's `tl.load` computed when the real kernel ran in
  Triton's interpreter (softmax_teaching/load_record.py records them), one array of the tile's shape per
  load, with its mask;
- WHICH LANE holds which element: the kernel compiled for a GPU gives each load a distributed layout in its
  TTGIR (`#ttg.blocked<{sizePerThread, threadsPerWarp, warpsPerCTA, order}>`) and a width to each load
  instruction in its PTX / AMDGCN (16 bytes for `ld.global.v4.b32`).

A thread of a blocked layout holds `sizePerThread` neighbouring elements per dim, its warp's lanes tile
`threadsPerWarp` of those blocks, the warps tile `warpsPerCTA` of the warps' blocks, and the whole pattern
repeats until it covers the tile (or wraps round, several lanes holding one element, when the tile is
smaller). `order` lists the dims fastest first, for lanes, warps and registers alike. One load instruction
moves `vector` neighbouring elements of each lane's run along order[0]; executed by one warp, it is one
request. The memory system serves a request in 32-byte sectors; a fully used request of 32 lanes × 16 bytes
touches 16 sectors (4 lines) and uses every byte it fetches. A warp that walks down a column of fp32 values
touches one sector per lane and uses 4 of its 32 bytes.

Pure functions over numpy arrays and frozen dataclasses: no tensor, no device, no words.
"""
from __future__ import annotations

import math
import re
from dataclasses import dataclass

import numpy as np

SECTOR_BYTES = 32
LINE_BYTES = 128


@dataclass(frozen=True)
class BlockedLayout:
    """A `#ttg.blocked` layout as the TTGIR states it."""
    size_per_thread: tuple[int, ...]
    threads_per_warp: tuple[int, ...]
    warps_per_cta: tuple[int, ...]
    order: tuple[int, ...]

    @property
    def warp_size(self) -> int:
        return math.prod(self.threads_per_warp)

    @property
    def n_warps(self) -> int:
        return math.prod(self.warps_per_cta)


BLOCKED = re.compile(r"#ttg\.blocked<\{sizePerThread = \[([\d, ]+)\], threadsPerWarp = \[([\d, ]+)\], "
                     r"warpsPerCTA = \[([\d, ]+)\], order = \[([\d, ]+)\]")


def parse_blocked(text: str) -> BlockedLayout:
    """The layout in a TTGIR line `#blocked = #ttg.blocked<{sizePerThread = [1, 4], ...}>`; ValueError for any
    other kind of layout (a linear or sliced one)."""
    found = BLOCKED.search(text)
    if not found:
        raise ValueError(f"not a blocked layout: {text[:120]!r}")
    ints = [tuple(int(v) for v in part.split(",")) for part in found.groups()]
    return BlockedLayout(*ints)


def _split(index: np.ndarray, sizes: tuple[int, ...], order: tuple[int, ...]) -> list[np.ndarray]:
    """A linear index over `sizes` (order[0] fastest) as one index per dim."""
    out = [None] * len(sizes)
    rest = index
    for d in order:
        out[d] = rest % sizes[d]
        rest = rest // sizes[d]
    return out


def lane_elements(layout: BlockedLayout, shape: tuple[int, ...], vector: int) -> np.ndarray:
    """For each load instruction of one thread, each warp and each lane, the `vector` elements it moves, as
    flat (row-major) indices into a tile of `shape`: an int array (instructions, warps, lanes, vector).
    `vector` is the elements one instruction moves per lane (the PTX width over the element size); it must
    divide sizePerThread along order[0]."""
    dims = len(shape)
    if not (len(layout.size_per_thread) == len(layout.threads_per_warp) == len(layout.warps_per_cta) == dims):
        raise ValueError(f"a {len(layout.order)}-dim layout for a {dims}-dim tile")
    spt, tpw, wpc, order = layout.size_per_thread, layout.threads_per_warp, layout.warps_per_cta, layout.order
    fast = order[0]
    if vector < 1 or spt[fast] % vector:
        raise ValueError(f"{vector} elements per instruction do not divide sizePerThread {spt[fast]}")
    reps = tuple(max(1, math.ceil(shape[d] / (spt[d] * tpw[d] * wpc[d]))) for d in range(dims))
    per_thread = tuple(reps[d] * spt[d] for d in range(dims))       # registers per dim
    # instructions: every register position whose fast-dim element starts a vector
    chunks = list(per_thread)
    chunks[fast] = per_thread[fast] // vector
    n_instr = math.prod(chunks)
    instr = _split(np.arange(n_instr), tuple(chunks), order)
    warps = _split(np.arange(layout.n_warps), wpc, order)
    lanes = _split(np.arange(layout.warp_size), tpw, order)
    coords = []
    for d in range(dims):
        register = instr[d] * (vector if d == fast else 1)
        rep, element = register // spt[d], register % spt[d]
        x = ((rep[:, None, None] * wpc[d] + warps[d][None, :, None]) * tpw[d] + lanes[d][None, None, :]) * spt[d] \
            + element[:, None, None]
        if d == fast:
            x = x[..., None] + np.arange(vector)
        else:
            x = np.broadcast_to(x[..., None], x.shape + (vector,))
        coords.append(x % shape[d])                  # a tile smaller than the layout wraps round
    return np.ravel_multi_index(tuple(coords), shape)


@dataclass(frozen=True)
class Requests:
    """Every warp-level request of one load of one program, in issue order (instruction, then warp).
    Arrays of shape (requests,) unless said: `addresses` (requests, lanes, vector) in bytes from the start of
    the tensor's storage, -1 where the lane's element is masked off; `lane_count` active lanes."""
    element_bytes: int
    addresses: np.ndarray
    sectors: np.ndarray              # distinct 32-byte sectors
    lines: np.ndarray                # distinct 128-byte lines
    useful_bytes: np.ndarray         # bytes of distinct elements asked for
    lane_count: np.ndarray

    @property
    def n_requests(self) -> int:
        return int(len(self.sectors))

    @property
    def fetched_bytes(self) -> int:
        return int(self.sectors.sum()) * SECTOR_BYTES

    @property
    def sectors_per_request(self) -> float | None:
        return float(self.sectors.sum()) / self.n_requests if self.n_requests else None

    @property
    def used_fraction(self) -> float | None:
        """Bytes asked for over bytes fetched (1.0: every byte of every sector used)."""
        fetched = self.fetched_bytes
        return float(self.useful_bytes.sum()) / fetched if fetched else None


def _distinct_per_row(values: np.ndarray) -> np.ndarray:
    """How many distinct non-negative values each row holds (-1 marks none)."""
    if values.shape[1] == 0:
        return np.zeros(values.shape[0], dtype=np.int64)
    ordered = np.sort(values, axis=1)
    fresh = np.ones_like(ordered, dtype=bool)
    fresh[:, 1:] = ordered[:, 1:] != ordered[:, :-1]
    return (fresh & (ordered >= 0)).sum(axis=1)


def group_requests(offsets: np.ndarray, mask: np.ndarray, element_bytes: int, layout: BlockedLayout,
                   vector: int) -> Requests:
    """A recorded load's requests: `offsets` (elements from the start of the tensor's storage) and `mask` of
    the tile's shape, as the interpreter recorded them; lanes from `layout`, `vector` elements per lane per
    instruction. A request whose lanes are all masked off is not issued (the instruction is predicated off),
    as Nsight Compute does not count it."""
    offsets, mask = np.asarray(offsets), np.asarray(mask, dtype=bool)
    if offsets.shape != mask.shape:
        raise ValueError(f"offsets {offsets.shape} and mask {mask.shape} differ")
    elements = lane_elements(layout, offsets.shape, vector)
    n_instr, n_warps, n_lanes, _ = elements.shape
    flat_off, flat_mask = offsets.reshape(-1), mask.reshape(-1)
    addr = np.where(flat_mask[elements], flat_off[elements] * element_bytes, -1).reshape(
        n_instr * n_warps, n_lanes, vector)
    active = (addr >= 0).any(axis=2)
    issued = active.any(axis=1)
    addr, active = addr[issued], active[issued]
    flat = addr.reshape(len(addr), n_lanes * vector)
    sectors = _distinct_per_row(np.where(flat >= 0, flat // SECTOR_BYTES, -1))
    lines = _distinct_per_row(np.where(flat >= 0, flat // LINE_BYTES, -1))
    useful = _distinct_per_row(flat) * element_bytes
    return Requests(element_bytes, addr, sectors, lines, useful, active.sum(axis=1))


@dataclass(frozen=True)
class Totals:
    """One program's loads together."""
    requests: int
    sectors: int
    useful_bytes: int

    @property
    def sectors_per_request(self) -> float | None:
        return self.sectors / self.requests if self.requests else None

    @property
    def fetched_bytes(self) -> int:
        return self.sectors * SECTOR_BYTES

    @property
    def used_fraction(self) -> float | None:
        return self.useful_bytes / self.fetched_bytes if self.sectors else None


def totals(groups: list[Requests] | tuple[Requests, ...]) -> Totals:
    return Totals(sum(g.n_requests for g in groups), sum(int(g.sectors.sum()) for g in groups),
                  sum(int(g.useful_bytes.sum()) for g in groups))


def ideal_sectors(lanes: int, bytes_per_lane: int) -> int:
    """Sectors a request of `lanes` lanes each loading `bytes_per_lane` contiguous, aligned bytes touches."""
    return math.ceil(lanes * bytes_per_lane / SECTOR_BYTES)


@dataclass(frozen=True)
class Cost:
    """What a layout's over-fetch costs: the bytes a whole softmax moves when every sector fetched comes from
    DRAM (none of its other bytes reused later from a cache), and the time that takes at the GPU's bandwidth."""
    read_bytes: int                  # the tensors read, each element once
    write_bytes: int
    fetched_read_bytes: int          # the reads over the used fraction
    bandwidth_gbps: float | None

    @property
    def over_fetch(self) -> float:
        return self.fetched_read_bytes / self.read_bytes if self.read_bytes else 1.0

    @property
    def floor_us(self) -> float | None:
        if not self.bandwidth_gbps:
            return None
        return (self.fetched_read_bytes + self.write_bytes) / (self.bandwidth_gbps * 1e9) * 1e6

    @property
    def ideal_us(self) -> float | None:
        if not self.bandwidth_gbps:
            return None
        return (self.read_bytes + self.write_bytes) / (self.bandwidth_gbps * 1e9) * 1e6


def cost(n_elements: int, element_bytes: int, tensors_read: int, tensors_written: int, used_fraction: float | None,
         bandwidth_gbps: float | None) -> Cost:
    read = n_elements * element_bytes * tensors_read
    fetched = read if not used_fraction else math.ceil(read / used_fraction)
    return Cost(read, n_elements * element_bytes * tensors_written, fetched, bandwidth_gbps)
