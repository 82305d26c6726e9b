"""How programs that share a row meet (the split kernels, softmax_core.kernels.shared_rows): one 64-bit slot per
program per row, a word published there with one atomic write, the peers' words gathered with a bounded wait, and
the fallback that computes a missing peer's word from memory, by the same partition its publisher uses."""
from __future__ import annotations

from softmax_core.hardware import runtime  # noqa: F401  (first: where the interpreter was asked for, triton's library is made interpretable before @triton.jit runs)

import triton
import triton.language as tl

from softmax_core.kernels.tuned import fast_exp, online_update

# Each program owns one 64-bit slot per row in a buffer filled with NOT_PUBLISHED before the launch; it
# publishes its partial result there with one atomic 64-bit write, and reads its peers' slots until none is
# NOT_PUBLISHED. Value and "it is there" travel in the same word, so no
# memory fence is needed: a fence would make the program wait for all its own loads and stores in flight
# (measured on the H200: a counter bumped with "release" semantics cost more than the split path gained).
# NOT_PUBLISHED is all ones; a published word never is, because its low half is the bits of a float32 sum
# computed on the GPU (a NaN produced by arithmetic there is 0x7FFFFFFF, never 0xFFFFFFFF).
NOT_PUBLISHED = -1                                  # what the launcher fills the slots with
NOT_PUBLISHED_WORD = tl.constexpr(NOT_PUBLISHED)    # the same word, as the kernels compare with it
# What a program reads for a peer that does not exist (SPLIT rounded up to PEERS, a power of two): the
# forward's pair (max -inf, sum 0) and the backward's 0, both of which change nothing.
NO_PEER_FORWARD = tl.constexpr(-(1 << 55))   # 0xFF80000000000000: high half -inf's bits, low half 0.0's
NO_PEER_BACKWARD = tl.constexpr(0)


def read_published(words):
    """The host's view of published slots (an int64 tensor): (high, low) as float32 tensors, the inverse of
    pack_pair below; for the forward kernel that is (max, sum) of each chunk. NOT_PUBLISHED reads as two NaNs."""
    import torch

    bits = words.to(torch.int64)
    high = ((bits >> 32) & 0xFFFFFFFF).to(torch.int32).view(torch.float32)
    low = (bits & 0xFFFFFFFF).to(torch.int32).view(torch.float32)
    return high, low


@triton.jit
def pack_pair(high, low):
    """Two float32 in one int64: `high` in the upper 32 bits, `low` in the lower (zero-extended)."""
    high_bits = high.to(tl.uint32, bitcast=True).to(tl.int64)
    low_bits = low.to(tl.uint32, bitcast=True).to(tl.int64)
    return (high_bits << 32) | low_bits


@triton.jit
def unpack_pair(word):
    high = (word >> 32).to(tl.uint32).to(tl.float32, bitcast=True)
    low = (word & 0xFFFFFFFF).to(tl.uint32).to(tl.float32, bitcast=True)
    return high, low


@triton.jit
def publish_word(slot, word, PHASE: tl.constexpr):
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
def gather_words(slots, is_peer, no_peer, PHASE: tl.constexpr, SPIN: tl.constexpr):
    """All slots of a row, and how many are still NOT_PUBLISHED. PHASE 0 polls until every peer has
    published or SPIN polls have passed (a slot still missing then is the caller's to fill); the two-launch
    form has them all already. Volatile loads go to L2 each time instead of a stale copy in L1."""
    words = tl.load(slots, mask=is_peer, other=no_peer, volatile=True)
    missing = tl.sum((words == NOT_PUBLISHED_WORD).to(tl.int32), axis=0)     # -1: NOT_PUBLISHED
    if PHASE == 0:
        polls = 0
        while (missing > 0) & (polls < SPIN):
            words = tl.load(slots, mask=is_peer, other=no_peer, volatile=True)
            missing = tl.sum((words == NOT_PUBLISHED_WORD).to(tl.int32), axis=0)
            polls += 1
    return words, missing


# Fallback reads of a peer's chunk go in pieces of this many values, so that they need few registers
# beside the chunk the program already holds.
FALLBACK_TILE = tl.constexpr(1024)


@triton.jit
def span_pair(x_row, lo, hi):
    """The (max, sum) a peer owning columns [lo, hi) publishes, read from memory by another program (the
    wait ran out; see gather_words): a running max and sum over FALLBACK_TILE-wide pieces, summed relative to the
    span's max (or to 0 for a span of only -inf), as the publishing program does."""
    run_max = tl.full((), float("-inf"), tl.float32)
    run_sum = tl.full((), 0.0, tl.float32)
    for start in range(lo, hi, FALLBACK_TILE):
        cols = start + tl.arange(0, FALLBACK_TILE)
        v = tl.load(x_row + cols, mask=cols < hi, other=float("-inf")).to(tl.float32)
        run_max, run_sum, _, _ = online_update(run_max, run_sum, v, False)
    return pack_pair(run_max, run_sum)


@triton.jit
def span_dot(y_row, dy_row, lo, hi):
    """The backward's share of a peer owning columns [lo, hi): sum(y * dy), read from memory."""
    acc = tl.full((), 0.0, tl.float32)
    for start in range(lo, hi, FALLBACK_TILE):
        cols = start + tl.arange(0, FALLBACK_TILE)
        ok = cols < hi
        acc += tl.sum(tl.load(y_row + cols, mask=ok, other=0.0).to(tl.float32)
                      * tl.load(dy_row + cols, mask=ok, other=0.0).to(tl.float32), axis=0)
    return pack_pair(tl.full((), 0.0, tl.float32), acc)


@triton.jit
def merge_words(word, other, BACKWARD: tl.constexpr):
    """Two published words of one row as one: the forward's (max, sum) pairs combined (each sum moved to the
    larger max), the backward's dots added. A pair of max -inf adds exactly 0."""
    if BACKWARD:
        _, dot = unpack_pair(word)
        _, other_dot = unpack_pair(other)
        merged = pack_pair(tl.full((), 0.0, tl.float32), dot + other_dot)
    else:
        high, low = unpack_pair(word)
        other_high, other_low = unpack_pair(other)
        top = tl.maximum(high, other_high)
        shift = tl.where(top == float("-inf"), 0.0, top)
        merged = pack_pair(top, tl.where(low == 0.0, 0.0, low * fast_exp(high - shift, False))
                       + tl.where(other_low == 0.0, 0.0, other_low * fast_exp(other_high - shift, False)))
    return merged


@triton.jit
def column_shift_and_scale(words, SAFE: tl.constexpr):
    """A column's (shift, 1 / sum) from the forward's (max, sum) words of its pieces, [PEERS, columns] (a missing
    peer's word NO_PEER_FORWARD): each piece's sum moved to the column's max. A column of only -inf gives NaN like
    torch, or with SAFE a shift of 0 and a scale of 0 (zeros out)."""
    maxes, sums = unpack_pair(words)
    col_max = tl.max(maxes, axis=0)
    col_shift = col_max
    if SAFE:
        col_shift = tl.where(col_max == float("-inf"), 0.0, col_max)
    # A piece of only -inf adds exactly 0 (-inf - (-inf) would be NaN without the guard).
    scaled = tl.where(sums == 0.0, 0.0, sums * fast_exp(maxes - col_shift[None, :], False))
    col_sum = tl.sum(scaled, axis=0)
    inv_sum = 1.0 / col_sum
    if SAFE:
        inv_sum = tl.where(col_sum == 0.0, 0.0, inv_sum)
    return col_shift, inv_sum


@triton.jit
def own_word(word, edge_word, part, EDGES: tl.constexpr, BACKWARD: tl.constexpr):
    """What program `part` publishes: its chunk's word, and for part 0 of a row read with EDGES, that merged
    with the head's and tail's word. peer_words computes a missing peer's word the same way."""
    if EDGES:
        word = tl.where(part == 0, merge_words(word, edge_word, BACKWARD), word)
    return word


@triton.jit
def peer_words(row_slots, peers, row_a, row_b, width, n_cols, SPLIT: tl.constexpr, PHASE: tl.constexpr,
                SPIN: tl.constexpr, BACKWARD: tl.constexpr, EDGES: tl.constexpr, edge_word):
    """The SPLIT published words of a row (see gather_words). Program p owns columns [p * width, (p + 1) * width)
    of the n_cols from row_a (and row_b): the whole row, or with EDGES its aligned body, whose head and tail
    part 0 owns besides (their word is edge_word). A peer still missing after the wait (PHASE 0 only) has its
    word computed here from memory: the forward's (max, sum) of x (row_a; row_b unused), or the backward's
    sum(y * dy) (row_a = y, row_b = dy)."""
    if BACKWARD:
        words, missing = gather_words(row_slots + peers, peers < SPLIT, NO_PEER_BACKWARD, PHASE, SPIN)
    else:
        words, missing = gather_words(row_slots + peers, peers < SPLIT, NO_PEER_FORWARD, PHASE, SPIN)
    if PHASE == 0:
        if missing > 0:
            for p in range(0, SPLIT):
                if tl.sum(((peers == p) & (words == NOT_PUBLISHED_WORD)).to(tl.int32), axis=0) > 0:
                    lo = p * width
                    hi = tl.minimum(lo + width, n_cols)
                    if BACKWARD:
                        word = span_dot(row_a, row_b, lo, hi)
                    else:
                        word = span_pair(row_a, lo, hi)
                    word = own_word(word, edge_word, p, EDGES, BACKWARD)
                    words = tl.where(peers == p, word, words)
    return words
