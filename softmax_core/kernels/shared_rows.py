"""The tuned kernels whose programs share a row, running at the same time (the plan's split path).

  split - a row too long for one program is shared by SPLIT programs that run at the same time, each holding
          one CHUNK of it in registers. Each computes its chunk's (max, sum), publishes the pair, and waits
          until its peers have published theirs; then every program combines the SPLIT pairs into the row's
          (max, sum) and writes its chunk. The row is read once and written once, like the rows path
          (softmax_core.kernels.tuned). This wants every program of a row on the GPU at the same time, so the
          plan launches no more programs than fit at once, and a row too long for that (beyond about 512K
          float32 values) goes back to tiles. Where the GPU is shared and a peer cannot start, a program stops
          waiting after SPIN_LIMIT polls and reads the peer's chunk itself (never a hang, only a slower row).
          Where programs cannot all be resident (the interpreter runs them one after another), the same
          kernel runs as two launches: publish, then finish.
Backward: dx = y * (dy - sum(dy * y)), split the same way; long 2-byte tiled rows are also shared by programs
that run at once (softmax_backward_tiled_split_kernel).
"""
from __future__ import annotations

from softmax_core.hardware import runtime  # noqa: F401  (must come first: it picks the interpreter before @triton.jit runs)

import triton
import triton.language as tl

from softmax_core.kernels.tuned import fast_exp, online_update

# How programs that share a row meet. Each program owns one 64-bit slot per row in a buffer filled with
# NOT_PUBLISHED before the launch; it publishes its partial result there with one atomic 64-bit write, and
# reads its peers' slots until none is NOT_PUBLISHED. Value and "it is there" travel in the same word, so no
# memory fence is needed: a fence would make the program wait for all its own loads and stores in flight
# (measured on the H200: a counter bumped with "release" semantics cost more than the split path gained).
# NOT_PUBLISHED is all ones; a published word never is, because its low half is the bits of a float32 sum
# computed on the GPU (a NaN produced by arithmetic there is 0x7FFFFFFF, never 0xFFFFFFFF).
NOT_PUBLISHED = -1                              # what the launcher fills the slots with
_NOT_PUBLISHED = tl.constexpr(NOT_PUBLISHED)    # the same word, as the kernels compare with it
# What a program reads for a peer that does not exist (SPLIT rounded up to PEERS, a power of two): the
# forward's pair (max -inf, sum 0) and the backward's 0, both of which change nothing.
NO_PEER_FORWARD = tl.constexpr(-(1 << 55))   # 0xFF80000000000000: high half -inf's bits, low half 0.0's
NO_PEER_BACKWARD = tl.constexpr(0)


def read_published(words):
    """The host's view of published slots (an int64 tensor): (high, low) as float32 tensors, the inverse of
    _pack below; for the forward kernel that is (max, sum) of each chunk. NOT_PUBLISHED reads as two NaNs."""
    import torch

    bits = words.to(torch.int64)
    high = ((bits >> 32) & 0xFFFFFFFF).to(torch.int32).view(torch.float32)
    low = (bits & 0xFFFFFFFF).to(torch.int32).view(torch.float32)
    return high, low


@triton.jit
def _pack(high, low):
    """Two float32 in one int64: `high` in the upper 32 bits, `low` in the lower (zero-extended)."""
    high_bits = high.to(tl.uint32, bitcast=True).to(tl.int64)
    low_bits = low.to(tl.uint32, bitcast=True).to(tl.int64)
    return (high_bits << 32) | low_bits


@triton.jit
def _unpack(word):
    high = (word >> 32).to(tl.uint32).to(tl.float32, bitcast=True)
    low = (word & 0xFFFFFFFF).to(tl.uint32).to(tl.float32, bitcast=True)
    return high, low


@triton.jit
def _publish(slot, word, PHASE: tl.constexpr):
    """One program's partial result for its peers: an atomic write by one thread in the one-launch form;
    between two launches (PHASE 1, then 2) a plain store will do."""
    if PHASE == 0:
        tl.atomic_xchg(slot, word, sem="relaxed")
    else:
        tl.store(slot, word)


# How long a program waits for its peers before it stops trusting that they run at all. The plan launches
# no more programs than fit on the GPU at once, so normally every peer has published within a few
# microseconds. But the GPU may be shared (MPS, green contexts, another stream's persistent kernel holding
# SMs) and then a peer may not start until this program ends: waiting for it would hang forever. After
# SPIN_LIMIT polls (each an L2 round trip of roughly a microsecond, so some tens of milliseconds in all) a
# program reads the missing peers' chunks from memory itself and computes what they would have published.
# Slower, but always an answer; and every program publishes before it waits, so a late peer finds its
# group's results in place and never waits long itself.
SPIN_LIMIT = 1 << 14


@triton.jit
def _gather(slots, is_peer, no_peer, PHASE: tl.constexpr, SPIN: tl.constexpr):
    """All slots of a row, and how many are still NOT_PUBLISHED. PHASE 0 polls until every peer has
    published or SPIN polls have passed (a slot still missing then is the caller's to fill); the two-launch
    form has them all already. Volatile loads go to L2 each time instead of a stale copy in L1."""
    words = tl.load(slots, mask=is_peer, other=no_peer, volatile=True)
    missing = tl.sum((words == _NOT_PUBLISHED).to(tl.int32), axis=0)     # -1: NOT_PUBLISHED
    if PHASE == 0:
        polls = 0
        while (missing > 0) & (polls < SPIN):
            words = tl.load(slots, mask=is_peer, other=no_peer, volatile=True)
            missing = tl.sum((words == _NOT_PUBLISHED).to(tl.int32), axis=0)
            polls += 1
    return words, missing


# Fallback reads of a peer's chunk go in pieces of this many values, so that they need few registers
# beside the chunk the program already holds.
FALLBACK_TILE = tl.constexpr(1024)


@triton.jit
def _span_pair(x_row, lo, hi):
    """The (max, sum) a peer owning columns [lo, hi) publishes, read from memory by another program (the
    wait ran out; see _gather): a running max and sum over FALLBACK_TILE-wide pieces, summed relative to the
    span's max (or to 0 for a span of only -inf), as the publishing program does."""
    run_max = tl.full((), float("-inf"), tl.float32)
    run_sum = tl.full((), 0.0, tl.float32)
    for start in range(lo, hi, FALLBACK_TILE):
        cols = start + tl.arange(0, FALLBACK_TILE)
        v = tl.load(x_row + cols, mask=cols < hi, other=float("-inf")).to(tl.float32)
        run_max, run_sum, _, _ = online_update(run_max, run_sum, v, False)
    return _pack(run_max, run_sum)


@triton.jit
def _span_dot(y_row, dy_row, lo, hi):
    """The backward's share of a peer owning columns [lo, hi): sum(y * dy), read from memory."""
    acc = tl.full((), 0.0, tl.float32)
    for start in range(lo, hi, FALLBACK_TILE):
        cols = start + tl.arange(0, FALLBACK_TILE)
        ok = cols < hi
        acc += tl.sum(tl.load(y_row + cols, mask=ok, other=0.0).to(tl.float32)
                      * tl.load(dy_row + cols, mask=ok, other=0.0).to(tl.float32), axis=0)
    return _pack(tl.full((), 0.0, tl.float32), acc)


@triton.jit
def _peer_words(row_slots, peers, row_a, row_b, width, n_cols, SPLIT: tl.constexpr, PHASE: tl.constexpr,
                SPIN: tl.constexpr, BACKWARD: tl.constexpr):
    """The SPLIT published words of a row (see _gather). Program p owns columns [p * width, (p + 1) * width).
    A peer still missing after the wait (PHASE 0 only) has its word computed here from memory: the forward's
    (max, sum) of x (row_a; row_b unused), or the backward's sum(y * dy) (row_a = y, row_b = dy)."""
    if BACKWARD:
        words, missing = _gather(row_slots + peers, peers < SPLIT, NO_PEER_BACKWARD, PHASE, SPIN)
    else:
        words, missing = _gather(row_slots + peers, peers < SPLIT, NO_PEER_FORWARD, PHASE, SPIN)
    if PHASE == 0:
        if missing > 0:
            for p in range(0, SPLIT):
                if tl.sum(((peers == p) & (words == _NOT_PUBLISHED)).to(tl.int32), axis=0) > 0:
                    lo = p * width
                    hi = tl.minimum(lo + width, n_cols)
                    if BACKWARD:
                        word = _span_dot(row_a, row_b, lo, hi)
                    else:
                        word = _span_pair(row_a, lo, hi)
                    words = tl.where(peers == p, word, words)
    return words


@triton.jit
def softmax_split_kernel(
    x_ptr, y_ptr,
    x_row_stride, y_row_stride,
    n_rows, n_cols,
    slots_ptr,
    SPLIT: tl.constexpr, PEERS: tl.constexpr, CHUNK: tl.constexpr, SAFE: tl.constexpr, PHASE: tl.constexpr,
    SPIN: tl.constexpr,
):
    # PHASE 0: publish, wait for the peers, finish - one launch, one read of x (GPU only).
    # PHASE 1 then PHASE 2: two launches, no waiting (the second reads x again). The interpreter runs
    # programs one after another, so this is how the same arithmetic is tested on a CPU.
    # Programs come in groups of SPLIT consecutive ids; a group walks rows strided by the number of groups,
    # and program `part` of a group always holds columns [part * CHUNK, (part + 1) * CHUNK) of its row.
    part = tl.program_id(0) % SPLIT
    group = tl.program_id(0) // SPLIT
    n_groups = tl.num_programs(0) // SPLIT
    cols = part * CHUNK + tl.arange(0, CHUNK)
    peers = tl.arange(0, PEERS)
    # While a program waits for its peers its SM would idle, so it asks for its next row's chunk before
    # waiting: DRAM keeps streaming while the group meets. (A row past the end loads nothing: its
    # columns are masked by a width of 0.)
    x_next = tl.load(x_ptr + tl.cast(group, tl.int64) * x_row_stride + cols,
                     mask=cols < tl.where(group < n_rows, n_cols, 0), other=float("-inf"),
                     eviction_policy="evict_first")
    for row in tl.range(group, n_rows, n_groups):
        row64 = tl.cast(row, tl.int64)
        # The chunk stays in registers in its own dtype (two bf16 values share a register, so a program
        # can hold twice the chunk); exp is computed twice instead of keeping float32 numerators.
        x = x_next
        # This chunk's own max and sum. A chunk of only -inf (padding past the row's end, or masked
        # values) sums relative to 0 instead, so that its sum is a clean 0 rather than NaN; it still
        # publishes its max, -inf, so that it cannot lift the row's max (a published 0 would, and a row
        # whose real values all sit below about -88 would then underflow to 0 / 0).
        chunk_max = tl.max(x, axis=0).to(tl.float32)
        chunk_shift = tl.where(chunk_max == float("-inf"), 0.0, chunk_max)
        row_slots = slots_ptr + row64 * SPLIT
        if PHASE != 2:
            chunk_sum = tl.sum(fast_exp(x.to(tl.float32) - chunk_shift, False), axis=0)
            _publish(row_slots + part, _pack(chunk_max, chunk_sum), PHASE)
        next_row = row + n_groups
        x_next = tl.load(x_ptr + tl.cast(next_row, tl.int64) * x_row_stride + cols,
                         mask=cols < tl.where(next_row < n_rows, n_cols, 0), other=float("-inf"),
                         eviction_policy="evict_first")
        if PHASE != 1:
            # Every program combines the same SPLIT pairs the same way, so all agree on the row's (max, sum).
            # A peer that never published within the wait: compute its pair from x. (One test per row when
            # all arrived; looking at each peer in turn is only for the rare row that needs it.)
            words = _peer_words(row_slots, peers, x_ptr + row64 * x_row_stride, x_ptr, CHUNK, n_cols,
                                SPLIT, PHASE, SPIN, False)
            maxes, sums = _unpack(words)
            row_max = tl.max(maxes, axis=0)
            # A row of only -inf: NaN like torch, or zeros with SAFE (shift by 0, and 1/0 becomes 0 below).
            row_shift = row_max
            if SAFE:
                row_shift = tl.where(row_max == float("-inf"), 0.0, row_max)
            # A peer whose chunk was all -inf adds exactly 0 (-inf - (-inf) would be NaN without the guard).
            scaled = tl.where(sums == 0.0, 0.0, sums * fast_exp(maxes - row_shift, False))
            row_sum = tl.sum(scaled, axis=0)
            inv_sum = 1.0 / row_sum
            if SAFE:
                inv_sum = tl.where(row_sum == 0.0, 0.0, inv_sum)
            y = fast_exp(x.to(tl.float32) - row_shift, False) * inv_sum
            tl.store(y_ptr + row64 * y_row_stride + cols, y, mask=cols < n_cols, eviction_policy="evict_first")


@triton.jit
def softmax_backward_split_kernel(
    y_ptr, dy_ptr, dx_ptr,
    y_row_stride, dy_row_stride, dx_row_stride,
    n_rows, n_cols,
    slots_ptr,
    SPLIT: tl.constexpr, PEERS: tl.constexpr, CHUNK: tl.constexpr, PHASE: tl.constexpr, SPIN: tl.constexpr,
):
    # The backward needs one number per row, sum(dy * y): each program publishes its chunk's share
    # (in the low half of its slot; the high half is 0). PHASE and the early loads as in the forward.
    part = tl.program_id(0) % SPLIT
    group = tl.program_id(0) // SPLIT
    n_groups = tl.num_programs(0) // SPLIT
    cols = part * CHUNK + tl.arange(0, CHUNK)
    peers = tl.arange(0, PEERS)
    first = tl.cast(group, tl.int64)
    first_ok = cols < tl.where(group < n_rows, n_cols, 0)
    y_next = tl.load(y_ptr + first * y_row_stride + cols, mask=first_ok, other=0.0, eviction_policy="evict_first")
    dy_next = tl.load(dy_ptr + first * dy_row_stride + cols, mask=first_ok, other=0.0, eviction_policy="evict_first")
    for row in tl.range(group, n_rows, n_groups):
        row64 = tl.cast(row, tl.int64)
        y = y_next            # kept in their own dtype, as in the forward
        dy = dy_next
        row_slots = slots_ptr + row64 * SPLIT
        if PHASE != 2:
            dot_part = tl.sum(y.to(tl.float32) * dy.to(tl.float32), axis=0)
            _publish(row_slots + part, _pack(tl.full((), 0.0, tl.float32), dot_part), PHASE)
        next64 = tl.cast(row + n_groups, tl.int64)
        next_ok = cols < tl.where(row + n_groups < n_rows, n_cols, 0)
        y_next = tl.load(y_ptr + next64 * y_row_stride + cols, mask=next_ok, other=0.0, eviction_policy="evict_first")
        dy_next = tl.load(dy_ptr + next64 * dy_row_stride + cols, mask=next_ok, other=0.0,
                          eviction_policy="evict_first")
        if PHASE != 1:
            words = _peer_words(row_slots, peers, y_ptr + row64 * y_row_stride, dy_ptr + row64 * dy_row_stride,
                                CHUNK, n_cols, SPLIT, PHASE, SPIN, True)
            _, dots = _unpack(words)
            dot = tl.sum(dots, axis=0)
            dx = y.to(tl.float32) * (dy.to(tl.float32) - dot)
            tl.store(dx_ptr + row64 * dx_row_stride + cols, dx, mask=cols < n_cols, eviction_policy="evict_first")


# -- Backward tiles shared by programs that run at once ----------------------------------------------------
# The tiled backward's second pass re-reads y and dy from L2. With one program per row and one or two programs
# per SM, the rows in flight are 132 or more on an H200: at 2 x 256 KB a row (131072 bf16 values of each) that
# is far more than the L2 keeps near an SM, and the second read goes back to DRAM. Here a row is walked by
# SPLIT programs at once, each owning a span of whole tiles: pass 1 over its span gives its share of
# sum(y * dy), which it publishes as the split kernels' programs do; once its peers' shares are in, pass 2
# writes its span, last tile first. Fewer rows are in flight (the programs per SM divided by SPLIT), and each
# program re-reads only the span it just read, so the second read finds it in L2. (The forward's tiled rows
# are not shared: 2-byte rows that long take the split path, and float32 ones the split path or tiles.)


@triton.jit
def _my_span(n_cols, TILE: tl.constexpr, SPLIT: tl.constexpr):
    """Where this program stands in a shared tiled row: its part of the group, its group, the number of
    groups, the span width (whole tiles, the same for every part), and its columns [lo, hi) with their tile
    count (the last parts may own fewer tiles, or none)."""
    part = tl.program_id(0) % SPLIT
    group = tl.program_id(0) // SPLIT
    n_groups = tl.num_programs(0) // SPLIT
    span = tl.cdiv(tl.cdiv(n_cols, TILE), SPLIT) * TILE
    lo = part * span
    hi = tl.minimum(lo + span, n_cols)
    return part, group, n_groups, span, lo, hi, tl.cdiv(tl.maximum(hi - lo, 0), TILE)


@triton.jit
def softmax_backward_tiled_split_kernel(
    y_ptr, dy_ptr, dx_ptr,
    y_row_stride, dy_row_stride, dx_row_stride,
    n_rows, n_cols,
    slots_ptr,
    TILE: tl.constexpr, SPLIT: tl.constexpr, PEERS: tl.constexpr, PHASE: tl.constexpr, SPIN: tl.constexpr,
):
    # Programs come in groups of SPLIT, as in softmax_backward_split_kernel (PHASE too).
    part, group, n_groups, span, lo, hi, n_span_tiles = _my_span(n_cols, TILE, SPLIT)
    offsets = tl.arange(0, TILE)
    peers = tl.arange(0, PEERS)
    for row in tl.range(group, n_rows, n_groups):
        row64 = tl.cast(row, tl.int64)
        y_row = y_ptr + row64 * y_row_stride
        dy_row = dy_ptr + row64 * dy_row_stride
        dx_row = dx_ptr + row64 * dx_row_stride
        row_slots = slots_ptr + row64 * SPLIT
        if PHASE != 2:
            dot_part = tl.full((), 0.0, tl.float32)
            for t in range(0, n_span_tiles):
                cols = lo + t * TILE + offsets
                ok = cols < hi
                y = tl.load(y_row + cols, mask=ok, other=0.0, eviction_policy="evict_last").to(tl.float32)
                dy = tl.load(dy_row + cols, mask=ok, other=0.0, eviction_policy="evict_last").to(tl.float32)
                dot_part += tl.sum(y * dy, axis=0)
            _publish(row_slots + part, _pack(tl.full((), 0.0, tl.float32), dot_part), PHASE)
        if PHASE != 1:
            words = _peer_words(row_slots, peers, y_row, dy_row, span, n_cols, SPLIT, PHASE, SPIN, True)
            _, dots = _unpack(words)
            dot = tl.sum(dots, axis=0)
            for t in range(0, n_span_tiles):
                cols = lo + (n_span_tiles - 1 - t) * TILE + offsets
                mask = cols < hi
                y = tl.load(y_row + cols, mask=mask, other=0.0, eviction_policy="evict_first").to(tl.float32)
                dy = tl.load(dy_row + cols, mask=mask, other=0.0, eviction_policy="evict_first").to(tl.float32)
                tl.store(dx_row + cols, y * (dy - dot), mask=mask, eviction_policy="evict_first")
