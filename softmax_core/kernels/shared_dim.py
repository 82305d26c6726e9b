"""A softmax down a strided axis too long for one program's registers, shared by programs that run at once.

The index space is kernels/any_dim.py's: (outer, outer2, reduce, inner), one stride each per tensor. A tile is
BLOCK_I neighbouring inner columns of one outer index, the whole reduced axis down them; SPLIT programs share a
tile, program `part` holding reduced indices [part * BLOCK_R, (part + 1) * BLOCK_R) of its BLOCK_I columns in
registers. Each program computes its piece's (max, sum) per column, publishes the BLOCK_I pairs (one 64-bit
slot per column per program, kernels/row_slots.py's words), and waits until its peers have published theirs;
then every program combines the SPLIT pairs of each column into the column's (max, sum) and writes its piece.
x is read once and y written once, as in the one-pass any-dim kernel, where the two-pass one reads x twice
(the second time from DRAM once the slabs of the programs in flight outgrow L2).

Programs come in groups of SPLIT consecutive ids; a group walks tiles strided by the number of groups, and
asks for its next tile before it waits for its peers, so that DRAM keeps streaming while a group meets. The
plan launches no more programs than the GPU holds at once (plans/shared_dim.py), so every peer runs; where one
cannot start (a shared GPU), a program stops waiting after SPIN polls and computes the missing pairs from x
itself. Under the interpreter, which runs programs one after another, the same kernel runs as two launches:
PHASE 1 publishes, PHASE 2 finishes.

Backward: dx = y * (dy - sum_r y * dy), the same way: each program publishes its piece's share of the dot.

Status: exact under the interpreter (tests/library/test_shared_dim.py); on the H200 not yet faster than two
passes and not yet trusted (plans/shared_dim.py, plan_shared_dim, says what was measured), so only a tuning sweep
launches it.
"""
from __future__ import annotations

from softmax_core.hardware import runtime  # noqa: F401  (first: where the interpreter was asked for, triton's library is made interpretable before @triton.jit runs)

import triton
import triton.language as tl

from softmax_core.kernels.row_slots import (NO_PEER_BACKWARD, NO_PEER_FORWARD, NOT_PUBLISHED_WORD,
                                           column_shift_and_scale, pack_pair, publish_word, unpack_pair)
from softmax_core.kernels.tuned import fast_exp, online_update

# Fallback reads of a missing peer's piece go this many reduced indices at a time.
FALLBACK_R = tl.constexpr(16)


@triton.jit
def _tile_at(tile, n_inner, n_outer2, BLOCK_I: tl.constexpr):
    """Tile number `tile`'s outer indices (o1, o2, int64) and its inner columns (int64, [BLOCK_I])."""
    n_inner_blocks = tl.cdiv(n_inner, BLOCK_I)
    outer = tl.cast(tile // n_inner_blocks, tl.int64)
    cols = ((tile % n_inner_blocks) * BLOCK_I + tl.arange(0, BLOCK_I)).to(tl.int64)
    return outer // n_outer2, outer % n_outer2, cols


@triton.jit
def _piece_at(s_outer, s_outer2, s_reduce, s_inner, tile, n_tiles, n_outer2, n_reduce, n_inner, steps,
              BLOCK_I: tl.constexpr):
    """Tile number `tile`'s piece in one tensor: the offsets [BLOCK_R, BLOCK_I] of reduced indices `steps`, their
    mask (nothing past n_tiles), its columns' offsets at reduced index 0 and which columns exist."""
    o1, o2, cols = _tile_at(tile, n_inner, n_outer2, BLOCK_I)
    col_at = o1 * s_outer + o2 * s_outer2 + cols * s_inner
    col_ok = (cols < n_inner) & (cols * 0 + tile < n_tiles)
    ok = (steps < n_reduce)[:, None] & col_ok[None, :]
    return col_at[None, :] + steps.to(tl.int64)[:, None] * s_reduce, ok, col_at, col_ok


@triton.jit
def _gather(tile_slots, peers, is_peer, no_peer, PHASE: tl.constexpr, SPIN: tl.constexpr):
    """The [PEERS, BLOCK_I] published words of a tile (`tile_slots`: its columns' first slots) and how many are
    still missing: PHASE 0 polls until all are there or SPIN polls have passed; PHASE 2 finds them all. Volatile
    loads go to L2 each time."""
    at = tile_slots[None, :] + peers[:, None]
    words = tl.load(at, mask=is_peer, other=no_peer, volatile=True)
    missing = tl.sum(tl.sum((words == NOT_PUBLISHED_WORD).to(tl.int32), axis=1), axis=0)
    if PHASE == 0:
        polls = 0
        while (missing > 0) & (polls < SPIN):
            words = tl.load(at, mask=is_peer, other=no_peer, volatile=True)
            missing = tl.sum(tl.sum((words == NOT_PUBLISHED_WORD).to(tl.int32), axis=1), axis=0)
            polls += 1
    return words, missing


@triton.jit
def _span_pairs(col_base, s_reduce, col_ok, lo, hi, BLOCK_I: tl.constexpr):
    """The (max, sum) words a peer owning reduced indices [lo, hi) of these columns publishes, read from x."""
    run_max = tl.full((BLOCK_I,), float("-inf"), tl.float32)
    run_sum = tl.zeros((BLOCK_I,), tl.float32)
    for start in range(lo, hi, FALLBACK_R):
        r = start + tl.arange(0, FALLBACK_R)
        v = tl.load(col_base[None, :] + r.to(tl.int64)[:, None] * s_reduce,
                    mask=(r < hi)[:, None] & col_ok[None, :], other=float("-inf")).to(tl.float32)
        run_max, run_sum, _u1, _u2 = online_update(run_max, run_sum, v, False)
    return pack_pair(run_max, run_sum)


@triton.jit
def _span_dots(y_base, dy_base, y_reduce, dy_reduce, col_ok, lo, hi, BLOCK_I: tl.constexpr):
    """The backward's words a peer owning reduced indices [lo, hi) publishes: sum(y * dy) per column."""
    acc = tl.zeros((BLOCK_I,), tl.float32)
    for start in range(lo, hi, FALLBACK_R):
        r = (start + tl.arange(0, FALLBACK_R)).to(tl.int64)
        ok = (r < hi)[:, None] & col_ok[None, :]
        y = tl.load(y_base[None, :] + r[:, None] * y_reduce, mask=ok, other=0.0).to(tl.float32)
        dy = tl.load(dy_base[None, :] + r[:, None] * dy_reduce, mask=ok, other=0.0).to(tl.float32)
        acc += tl.sum(y * dy, axis=0)
    return pack_pair(tl.zeros((BLOCK_I,), tl.float32), acc)


@triton.jit
def softmax_shared_dim_kernel(
    x_ptr, y_ptr,
    x_outer, x_outer2, x_reduce, x_inner, y_outer, y_outer2, y_reduce, y_inner,
    n_outer, n_outer2, n_reduce, n_inner,
    slots_ptr,
    BLOCK_R: tl.constexpr, BLOCK_I: tl.constexpr, SPLIT: tl.constexpr, PEERS: tl.constexpr, SAFE: tl.constexpr,
    PHASE: tl.constexpr, SPIN: tl.constexpr,
):
    part = tl.program_id(0) % SPLIT
    group = tl.program_id(0) // SPLIT
    n_groups = tl.num_programs(0) // SPLIT
    n_tiles = n_outer * tl.cdiv(n_inner, BLOCK_I)
    steps = part * BLOCK_R + tl.arange(0, BLOCK_R)
    peers = tl.arange(0, PEERS)
    is_peer = (peers < SPLIT)[:, None]
    columns = tl.arange(0, BLOCK_I)
    at, ok, _u3, _u4 = _piece_at(x_outer, x_outer2, x_reduce, x_inner, group, n_tiles, n_outer2, n_reduce, n_inner,
                                 steps,
                             BLOCK_I)
    # The piece stays in registers in its own dtype; exp is computed twice instead of keeping float32 numerators.
    x_next = tl.load(x_ptr + at, mask=ok, other=float("-inf"), eviction_policy="evict_first")
    for tile in tl.range(group, n_tiles, n_groups):
        x = x_next
        tile_slots = slots_ptr + (tl.cast(tile, tl.int64) * BLOCK_I + columns) * SPLIT
        # This piece's max and sum per column; a column of only -inf here sums relative to 0 (a clean 0, not
        # NaN) and publishes max -inf, which cannot lift the column's max.
        piece_max = tl.max(x, axis=0).to(tl.float32)
        if PHASE != 2:
            piece_shift = tl.where(piece_max == float("-inf"), 0.0, piece_max)
            piece_sum = tl.sum(fast_exp(x.to(tl.float32) - piece_shift[None, :], False), axis=0)
            publish_word(tile_slots + part, pack_pair(piece_max, piece_sum), PHASE)
        at, next_ok, _u5, _u6 = _piece_at(x_outer, x_outer2, x_reduce, x_inner, tile + n_groups, n_tiles, n_outer2,
                                      n_reduce, n_inner, steps, BLOCK_I)
        x_next = tl.load(x_ptr + at, mask=next_ok, other=float("-inf"), eviction_policy="evict_first")
        if PHASE != 1:
            words, missing = _gather(tile_slots, peers, is_peer, NO_PEER_FORWARD, PHASE, SPIN)
            if PHASE == 0:
                if missing > 0:         # a peer never published within the wait: its pairs from x
                    _u20, _u21, col_at, col_ok = _piece_at(x_outer, x_outer2, x_reduce, x_inner, tile, n_tiles,
                                                           n_outer2,
                                                     n_reduce, n_inner, steps, BLOCK_I)
                    for p in range(0, SPLIT):
                        lo = p * BLOCK_R
                        span = _span_pairs(x_ptr + col_at, x_reduce, col_ok, lo, tl.minimum(lo + BLOCK_R, n_reduce),
                                           BLOCK_I)
                        words = tl.where((peers == p)[:, None] & (words == NOT_PUBLISHED_WORD), span[None, :], words)
            col_shift, inv_sum = column_shift_and_scale(words, SAFE)
            y_at, y_ok, _u7, _u8 = _piece_at(y_outer, y_outer2, y_reduce, y_inner, tile, n_tiles, n_outer2, n_reduce,
                                         n_inner, steps, BLOCK_I)
            tl.store(y_ptr + y_at, fast_exp(x.to(tl.float32) - col_shift[None, :], False) * inv_sum[None, :],
                     mask=y_ok, eviction_policy="evict_first")


@triton.jit
def softmax_backward_shared_dim_kernel(
    y_ptr, dy_ptr, dx_ptr,
    y_outer, y_outer2, y_reduce, y_inner, dy_outer, dy_outer2, dy_reduce, dy_inner,
    n_outer, n_outer2, n_reduce, n_inner,
    slots_ptr,
    BLOCK_R: tl.constexpr, BLOCK_I: tl.constexpr, SPLIT: tl.constexpr, PEERS: tl.constexpr,
    PHASE: tl.constexpr, SPIN: tl.constexpr,
):
    # dx has y's strides (both are allocated by the launcher); dy has its own. Each program publishes its
    # piece's share of sum(y * dy) per column in the low half of its slot (the high half 0).
    part = tl.program_id(0) % SPLIT
    group = tl.program_id(0) // SPLIT
    n_groups = tl.num_programs(0) // SPLIT
    n_tiles = n_outer * tl.cdiv(n_inner, BLOCK_I)
    steps = part * BLOCK_R + tl.arange(0, BLOCK_R)
    peers = tl.arange(0, PEERS)
    is_peer = (peers < SPLIT)[:, None]
    columns = tl.arange(0, BLOCK_I)
    y_at, ok, _u9, _u10 = _piece_at(y_outer, y_outer2, y_reduce, y_inner, group, n_tiles, n_outer2, n_reduce, n_inner,
                               steps, BLOCK_I)
    dy_at, _u11, _u12, _u13 = _piece_at(dy_outer, dy_outer2, dy_reduce, dy_inner, group, n_tiles, n_outer2, n_reduce,
                                        n_inner,
                               steps, BLOCK_I)
    y_next = tl.load(y_ptr + y_at, mask=ok, other=0.0, eviction_policy="evict_first")
    dy_next = tl.load(dy_ptr + dy_at, mask=ok, other=0.0, eviction_policy="evict_first")
    for tile in tl.range(group, n_tiles, n_groups):
        y = y_next
        dy = dy_next
        tile_slots = slots_ptr + (tl.cast(tile, tl.int64) * BLOCK_I + columns) * SPLIT
        if PHASE != 2:
            dot_part = tl.sum(y.to(tl.float32) * dy.to(tl.float32), axis=0)
            publish_word(tile_slots + part, pack_pair(tl.zeros((BLOCK_I,), tl.float32), dot_part), PHASE)
        y_at, ok, y_col, col_ok = _piece_at(y_outer, y_outer2, y_reduce, y_inner, tile, n_tiles, n_outer2, n_reduce,
                                            n_inner, steps, BLOCK_I)
        next_at, next_ok, _u14, _u15 = _piece_at(y_outer, y_outer2, y_reduce, y_inner, tile + n_groups, n_tiles,
                                                 n_outer2,
                                           n_reduce, n_inner, steps, BLOCK_I)
        dy_next_at, _u16, _u17, _u18 = _piece_at(dy_outer, dy_outer2, dy_reduce, dy_inner, tile + n_groups, n_tiles,
                                                 n_outer2,
                                        n_reduce, n_inner, steps, BLOCK_I)
        y_next = tl.load(y_ptr + next_at, mask=next_ok, other=0.0, eviction_policy="evict_first")
        dy_next = tl.load(dy_ptr + dy_next_at, mask=next_ok, other=0.0, eviction_policy="evict_first")
        if PHASE != 1:
            words, missing = _gather(tile_slots, peers, is_peer, NO_PEER_BACKWARD, PHASE, SPIN)
            if PHASE == 0:
                if missing > 0:
                    _u22, _u23, dy_col, _u24 = _piece_at(dy_outer, dy_outer2, dy_reduce, dy_inner, tile, n_tiles,
                                                         n_outer2,
                                                n_reduce, n_inner, steps, BLOCK_I)
                    for p in range(0, SPLIT):
                        lo = p * BLOCK_R
                        span = _span_dots(y_ptr + y_col, dy_ptr + dy_col, y_reduce, dy_reduce, col_ok, lo,
                                          tl.minimum(lo + BLOCK_R, n_reduce), BLOCK_I)
                        words = tl.where((peers == p)[:, None] & (words == NOT_PUBLISHED_WORD), span[None, :], words)
            _u19, dots = unpack_pair(words)
            dot = tl.sum(dots, axis=0)
            tl.store(dx_ptr + y_at, y.to(tl.float32) * (dy.to(tl.float32) - dot[None, :]), mask=ok,
                     eviction_policy="evict_first")
