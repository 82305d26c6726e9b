"""Long rows, replayed from the real kernels: the tiled kernel's online (max, sum), and the split kernel's
published words.

`trace_online` runs `softmax_tiled_kernel` with TRACE on. For every row and tile it records what pass 1
knew before the tile (m, d), the tile's own max, the new max, the factor that moves the old sum to the
new max, the tile's sum and the new d (TRACE_TILE_FIELDS). Pass 2 is not traced: what it writes, y, is
the output itself.

`trace_split` runs `softmax_split_kernel` in its two-launch form (PHASE 1 publishes, PHASE 2 finishes),
always, even on a GPU: between the two launches the slots hold exactly the words the programs published,
and reading them is the trace. (On a GPU the library runs the one-launch form, where programs wait for
each other; the words are the same.)

The arithmetic that merges (max, sum) pairs lives here once (`merge_pairs`); the split page, the tests
and the FlashAttention example all call it.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import torch
import triton

from softmax_core.hardware import dtypes, runtime
from softmax_core.hardware.gpu import last_cache
from softmax_core.traffic import bytes_moved
from softmax_teaching.traced_matrix import TracedMatrix
from softmax_core.plans.choose import plan_softmax
from softmax_core.kernels.row_slots import NOT_PUBLISHED, SPIN_LIMIT, read_published
from softmax_core.kernels.shared_rows import softmax_split_kernel
from softmax_core.kernels.tuned import TRACE_TILE_FIELDS, softmax_tiled_kernel

TRACE_DTYPES = dtypes.TUTORIAL_DTYPES         # what a trace takes: float32 and the 2-byte types
# The interpreter runs a tile of 16K values in a few milliseconds: these caps keep a trace under a second.
MAX_TRACE_ROWS = 64
MAX_TRACE_VALUES = 1 << 20          # rows x columns
MAX_TRACE_TILES = 256               # tiles per row
MIN_TILE = 16


def _as_matrix(x, what: str) -> torch.Tensor:
    if not isinstance(x, torch.Tensor):
        x = torch.as_tensor(np.asarray(x, dtype=np.float32))
    if x.ndim == 1:
        x = x[None, :]
    if x.ndim != 2:
        raise ValueError(f"{what} traces a row or a matrix of rows, got a tensor of shape {tuple(x.shape)}")
    if dtypes.name_of_any(x.dtype) not in TRACE_DTYPES:
        raise TypeError(f"{what} takes {', '.join(TRACE_DTYPES)} rows, got {dtypes.name_of_any(x.dtype)}")
    n_rows, n_cols = x.shape
    if not 1 <= n_rows <= MAX_TRACE_ROWS:
        raise ValueError(f"a trace covers 1 to {MAX_TRACE_ROWS} rows, got {n_rows}")
    if n_cols < 1 or n_rows * n_cols > MAX_TRACE_VALUES:
        raise ValueError(f"a trace covers 1 to {MAX_TRACE_VALUES:,} values in all, got {n_rows} x {n_cols}")
    return x.to(runtime.kernel_device()).contiguous()


def _power_of_two(name: str, value: int, low: int) -> int:
    if not isinstance(value, int) or isinstance(value, bool) or value < low or value & (value - 1):
        raise ValueError(f"{name} must be a power of two of at least {low}, got {value!r}")
    return value


def _numpy(t: torch.Tensor) -> np.ndarray:
    return t.detach().to("cpu", torch.float32).numpy().copy()


def reference_pairs(x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Per row, in float64 with torch: m = max(x) and d = sum(exp(x - m)). A row of only -inf has m = -inf and
    d = 0 (no value contributes), which is what the kernel's guard keeps."""
    t = torch.as_tensor(np.asarray(x, dtype=np.float64))
    m = t.max(dim=-1).values
    shift = torch.where(torch.isinf(m) & (m < 0), torch.zeros_like(m), m)
    d = torch.exp(t - shift[..., None]).sum(dim=-1)
    return m.numpy(), d.numpy()


def merge_pairs(maxes, sums) -> tuple[float, float]:
    """Combine partial (max, sum) pairs, each sum taken relative to its own max, into the whole row's:
    M = max(m_i), D = sum(d_i * exp(m_i - M)). A pair with m_i = -inf adds nothing. In float64."""
    m = np.asarray(maxes, dtype=np.float64)
    d = np.asarray(sums, dtype=np.float64)
    top = float(m.max()) if m.size else float("-inf")
    if top == float("-inf"):
        return top, 0.0
    with np.errstate(invalid="ignore"):
        scaled = np.where(d == 0.0, 0.0, d * np.exp(m - top))
    return top, float(scaled.sum())


# -- the tiled kernel -------------------------------------------------------------------------------------


@dataclass(frozen=True, eq=False)
class OnlineTrace(TracedMatrix):
    """One launch of the tiled kernel with TRACE on, one program per row."""

    x: np.ndarray                 # (n_rows, n_cols) the input as the kernel read it, in float32
    dtype: str
    tile: int
    safe: bool
    tiles: np.ndarray             # (n_rows, n_tiles, len(TRACE_TILE_FIELDS)) recorded by the kernel
    y: np.ndarray                 # (n_rows, n_cols) what pass 2 stored

    @property
    def n_tiles(self) -> int:
        return self.tiles.shape[1]

    def field(self, name: str) -> np.ndarray:
        """(n_rows, n_tiles): one of TRACE_TILE_FIELDS."""
        return self.tiles[:, :, TRACE_TILE_FIELDS.index(name)]

    @property
    def m_final(self) -> np.ndarray:
        return self.field("m_after")[:, -1]

    @property
    def d_final(self) -> np.ndarray:
        return self.field("d_after")[:, -1]

    def tile_columns(self, t: int) -> tuple[int, int]:
        """Columns [start, stop) of tile t (the last tile may be short: its padding lanes load -inf)."""
        return t * self.tile, min((t + 1) * self.tile, self.n_cols)

    @property
    def pass2_order(self) -> tuple[int, ...]:
        """The order pass 2 visits the tiles: last first, while it is still in L2."""
        return tuple(range(self.n_tiles - 1, -1, -1))

    @property
    def grew(self) -> np.ndarray:
        """(n_rows, n_tiles) bool: the tile raised the running max (so the sum so far was rescaled)."""
        return self.field("m_after") > self.field("m_before")

    @property
    def guarded(self) -> np.ndarray:
        """(n_rows, n_tiles) bool: after this tile every value so far is still -inf, so the kernel shifted by
        0 instead of by the max (-inf - (-inf) would have been NaN)."""
        return np.isneginf(self.field("m_after"))


def trace_online(x, tile: int = 16384, *, safe: bool = False) -> OnlineTrace:
    """Run the tiled softmax kernel with TRACE on over `x` (a row, or a matrix of rows) in tiles of `tile`
    values, one program per row, and return what it recorded per row and tile, and its output."""
    x = _as_matrix(x, "trace_online")
    tile = _power_of_two("tile", tile, MIN_TILE)
    n_rows, n_cols = x.shape
    n_tiles = triton.cdiv(n_cols, tile)
    if n_tiles > MAX_TRACE_TILES:
        raise ValueError(f"{n_cols:,} values in tiles of {tile} make {n_tiles} tiles; a trace holds at most "
                         f"{MAX_TRACE_TILES}: choose a wider tile")
    y = torch.empty_like(x)
    record = torch.full((n_rows * n_tiles * len(TRACE_TILE_FIELDS),), float("nan"), dtype=torch.float32,
                        device=x.device)
    with runtime.one_launch_at_a_time(), np.errstate(invalid="ignore", divide="ignore"):
        softmax_tiled_kernel[(n_rows,)](x, y, x.stride(0), y.stride(0), n_rows, n_cols, TILE=tile, SAFE=safe,
                                        FP64=False, trace_ptr=record, TRACE=True, num_warps=4, num_stages=1)
    tiles = record.view(n_rows, n_tiles, len(TRACE_TILE_FIELDS)).cpu().numpy().copy()
    return OnlineTrace(x=_numpy(x), dtype=dtypes.name_of_any(x.dtype), tile=tile, safe=safe,
                       tiles=tiles, y=_numpy(y))


# -- the split kernel -------------------------------------------------------------------------------------


@dataclass(frozen=True, eq=False)
class SplitTrace(TracedMatrix):
    """The split kernel on one group of programs per row: program `part` of row r holds columns
    [part * chunk, (part + 1) * chunk) and publishes one 64-bit word: (its chunk's max, its chunk's sum)."""

    x: np.ndarray                 # (n_rows, n_cols) float32
    asked: int                    # programs per row asked for
    split: int                    # programs per row used: cdiv(n_cols, chunk)
    chunk: int                    # values per program: a power of two (tl.arange needs one)
    safe: bool
    before: np.ndarray            # (n_rows, split) int64 slots before the launch: NOT_PUBLISHED
    words: np.ndarray             # (n_rows, split) int64 slots after the publishing launch
    maxes: np.ndarray             # (n_rows, split) float32 high halves of the words
    sums: np.ndarray              # (n_rows, split) float32 low halves
    y: np.ndarray                 # (n_rows, n_cols) what the finishing launch stored

    @property
    def peers(self) -> int:
        return triton.next_power_of_2(self.split)

    def chunk_columns(self, part: int) -> tuple[int, int]:
        return part * self.chunk, min((part + 1) * self.chunk, self.n_cols)

    def merged(self, row: int) -> tuple[float, float]:
        """The row's (max, sum) from its published pairs: what every program of the row computes."""
        return merge_pairs(self.maxes[row], self.sums[row])


def word_hex(word) -> str:
    """A published 64-bit slot as 16 hex digits: max's float32 bits, then sum's."""
    return f"{int(word) & 0xFFFFFFFFFFFFFFFF:016X}"


def split_shape(n_cols: int, split: int) -> tuple[int, int]:
    """(programs used, chunk) for `split` programs asked over a row of n_cols: the chunk is rounded up to a
    power of two, so fewer programs may be needed."""
    if not isinstance(split, int) or isinstance(split, bool) or split < 1:
        raise ValueError(f"split must be a positive integer, got {split!r}")
    chunk = max(MIN_TILE, triton.next_power_of_2(triton.cdiv(n_cols, split)))
    return triton.cdiv(n_cols, chunk), chunk


def trace_split(x, split: int = 4, *, safe: bool = False) -> SplitTrace:
    """Run the split softmax kernel over `x` (a row or a matrix of float32 or 2-byte rows) with about `split` programs
    per row, in two launches, and return the words they published and the output."""
    x = _as_matrix(x, "trace_split")
    n_rows, n_cols = x.shape
    used, chunk = split_shape(n_cols, split)
    if used > MAX_TRACE_TILES:
        raise ValueError(f"at most {MAX_TRACE_TILES} programs per row in a trace, got {used}")
    peers = triton.next_power_of_2(used)
    y = torch.empty_like(x)
    slots = torch.full((n_rows * used,), NOT_PUBLISHED, dtype=torch.int64, device=x.device)
    before = slots.view(n_rows, used).cpu().numpy().copy()
    args = (x, y, x.stride(0), y.stride(0), n_rows, n_cols, slots)
    meta = dict(SPLIT=used, PEERS=peers, CHUNK=chunk, SAFE=safe, num_warps=4, num_stages=1)
    if "SPIN" in softmax_split_kernel.arg_names:     # a bounded wait (PHASE 0 only): the library's own limit
        meta["SPIN"] = SPIN_LIMIT
    with runtime.one_launch_at_a_time(), np.errstate(invalid="ignore", divide="ignore"):
        softmax_split_kernel[(n_rows * used,)](*args, PHASE=1, **meta)
        words = slots.clone()
        softmax_split_kernel[(n_rows * used,)](*args, PHASE=2, **meta)
    maxes, sums = read_published(words)
    return SplitTrace(x=_numpy(x), asked=split, split=used, chunk=chunk, safe=safe, before=before,
                      words=words.view(n_rows, used).cpu().numpy().copy(),
                      maxes=maxes.view(n_rows, used).cpu().numpy().copy(),
                      sums=sums.view(n_rows, used).cpu().numpy().copy(), y=_numpy(y))


# -- to FlashAttention --------------------------------------------------------------------------------------


@dataclass(frozen=True)
class AttentionStep:
    """One tile of a row of scores s = q·kᵀ, with a value v_j per column: what an attention kernel keeps."""

    tile: int
    m_before: float
    m_after: float
    rescale: float                # from the trace: exp(m_before - m_after), 0 when nothing came before
    d_before: float
    d_after: float
    o_before: float               # output accumulator: sum over the columns so far of exp(s_j - m) * v_j
    o_after: float
    tile_o: float                 # this tile's part, relative to the new max

    @property
    def output(self) -> float:
        """What the row's output would be if the row ended here: o / d."""
        return self.o_after / self.d_after if self.d_after else float("nan")


def attention_walk(trace: OnlineTrace, row: int, values) -> tuple[AttentionStep, ...]:
    """FlashAttention's inner loop over one row of the trace: read the trace's row as scores and `values`
    (one number per column) as V. m, d and the rescale come from the kernel's record; the accumulator
    o = o * rescale + sum_tile exp(s_j - m_new) * v_j is the one new line, in float64."""
    v = np.asarray(values, dtype=np.float64)
    if v.shape != (trace.n_cols,):
        raise ValueError(f"values needs one number per column ({trace.n_cols}), got shape {v.shape}")
    s = trace.x[row].astype(np.float64)
    steps, o = [], 0.0
    for t in range(trace.n_tiles):
        a, b = trace.tile_columns(t)
        rec = {name: float(trace.tiles[row, t, i]) for i, name in enumerate(TRACE_TILE_FIELDS)}
        shift = 0.0 if rec["m_after"] == float("-inf") else rec["m_after"]
        with np.errstate(invalid="ignore"):
            tile_o = float(np.sum(np.exp(s[a:b] - shift) * v[a:b]))
        o_after = o * rec["rescale"] + tile_o
        steps.append(AttentionStep(t, rec["m_before"], rec["m_after"], rec["rescale"], rec["d_before"],
                                   rec["d_after"], o, o_after, tile_o))
        o = o_after
    return tuple(steps)


# -- the tiled path and L2 -----------------------------------------------------------------------------------


@dataclass(frozen=True)
class TiledTraffic:
    """What the tiled path moves for an M x N softmax, and whether its second pass can find rows in the last
    cache before DRAM (the L2; on AMD the Infinity Cache)."""

    n_rows: int
    n_cols: int
    element_bytes: int
    tile: int
    num_warps: int
    n_regs: int                   # the tiled kernel compiled for the GPU
    programs_per_sm: int
    rows_in_flight: int           # SMs x programs per SM, at most n_rows: rows being walked at once
    cache_bytes: int | None       # softmax_core.hardware.gpu.last_cache(gpu).bytes

    @property
    def row_bytes(self) -> int:
        return self.n_cols * self.element_bytes

    @property
    def bytes_in_flight(self) -> int:
        return self.rows_in_flight * self.row_bytes

    @property
    def nominal_bytes(self) -> int:
        """Pass 1 reads x, pass 2 reads x again and writes y: 3MN elements."""
        return bytes_moved(self.n_rows, self.n_cols, self.element_bytes) + self.n_rows * self.n_cols * self.element_bytes

    @property
    def dram_bytes_if_cache_hits(self) -> int:
        """If pass 2 finds the row in the cache, DRAM sees only x once and y once: 2MN, like a row held whole."""
        return bytes_moved(self.n_rows, self.n_cols, self.element_bytes)

    @property
    def fits_cache(self) -> bool | None:
        return None if self.cache_bytes is None else self.bytes_in_flight <= self.cache_bytes


def tiled_traffic(n_rows: int, n_cols: int, dtype: torch.dtype, gpu) -> TiledTraffic:
    """The tiled path's plan for this shape on `gpu` (compiled), and the rows it has in flight at once: one
    program per row, as many programs per SM as its registers allow."""
    if n_rows < 1 or n_cols < 1:
        raise ValueError(f"need a positive shape, got {n_rows} x {n_cols}")
    plan = plan_softmax(n_rows, n_cols, dtype, gpu, path="tiled")
    per_sm = plan.occupancy.programs_per_sm
    cache = last_cache(gpu)
    return TiledTraffic(n_rows, n_cols, dtypes.element_size(dtype), plan.block_n, plan.num_warps,
                        plan.resources.n_regs, per_sm, min(n_rows, per_sm * gpu.multiprocessor_count),
                        cache.bytes if cache else None)
