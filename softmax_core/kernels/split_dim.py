"""A softmax down a strided axis, its reduced axis cut into parts: two launches, many programs, no waiting.

The index space is kernels/any_dim.py's: (outer, outer2, reduce, inner), one stride each per tensor. A tile is
BLOCK_I neighbouring inner columns of one outer index; its reduced axis is cut into parts of PART_R indices, and
each (tile, part) is one program, so a tensor with few tiles (a transposed view: one or two outer slices, a
few hundred column tiles) still gives the GPU thousands of programs, each with little in registers.

  PHASE 1  each program walks its part in [BLOCK_R, BLOCK_I] chunks with an online (max, sum) per column and
           writes the pair to its slot: one 64-bit word per column per part (kernels/row_slots.py's pack_pair).
  PHASE 2  each program reads the PEERS words of its tile's columns, combines them into the column's (max, sum)
           (each part's sum moved to the column's max), walks its part again and writes exp(x - max) / sum.
  PHASE 0  both in one launch: each program publishes its words, waits for its tile's other parts, and walks its
           part again at once, so its second read finds in L2 what its first read brought there a moment ago
           (the two-launch form's second read comes from DRAM wherever x outgrows L2).

x is read twice, as in the two-pass kernel; PHASE 2 takes the programs last first and each part's chunks last
first, so that its first reads are of what PHASE 1 read last, which is what L2 still holds. Between the two
launches nothing waits: the launch boundary is the only synchronisation, so every program may run whenever the
GPU has room. In the one-launch form a program waits for the other parts of its tile, which are its neighbours in
program order: the GPU starts programs in that order, so a tile whose parts are not all resident yet waits only for
earlier tiles to finish, and these wait on nothing. Where that fails (a GPU shared with other work), a program stops
waiting after SPIN polls and computes a missing part's words from x itself (kernels/row_slots.py).

Backward: dx = y * (dy - sum_r y * dy): PHASE 1 writes each part's share of the sum, PHASE 2 adds them and writes.
Arithmetic in float32 (the words hold float32; float64 tensors take the two-pass kernel).
"""
from __future__ import annotations

from softmax_core.hardware import runtime  # noqa: F401  (first: where the interpreter was asked for, triton's library is made interpretable before @triton.jit runs)

import triton
import triton.language as tl

from softmax_core.kernels.row_slots import (NO_PEER_BACKWARD, NO_PEER_FORWARD, NOT_PUBLISHED_WORD,
                                           column_shift_and_scale, gather_words, pack_pair, publish_word,
                                           unpack_pair)
from softmax_core.kernels.tuned import fast_exp, online_update


@triton.jit
def _part(n_outer2, n_reduce, n_inner, PART_R: tl.constexpr, BLOCK_I: tl.constexpr, PHASE: tl.constexpr):
    """This program's (tile, part), the tile's outer indices (o1, o2, int64), its columns and their mask.
    PHASE 2 numbers the programs from the end, so the first to run are those whose data PHASE 1 read last; PHASE 0
    keeps the parts of a tile neighbours in program order."""
    pid = tl.program_id(0)
    if PHASE == 2:
        pid = tl.num_programs(0) - 1 - pid
    n_parts = tl.cdiv(n_reduce, PART_R)
    tile = pid // n_parts
    part = pid % n_parts
    n_inner_blocks = tl.cdiv(n_inner, BLOCK_I)
    outer = (tile // n_inner_blocks).to(tl.int64)
    cols = (tile % n_inner_blocks) * BLOCK_I + tl.arange(0, BLOCK_I)
    return tile, part, n_parts, outer // n_outer2, outer % n_outer2, cols, cols < n_inner


@triton.jit
def _at(base, r, stride_r, cols, stride_i, OFFSETS_32: tl.constexpr):
    """Pointers to the [len(r), len(cols)] elements at reduced indices `r` and columns `cols` of the slice that
    starts at `base`. A pointer per element is a 64-bit register pair; OFFSETS_32: the slice spans under 2**31
    elements, so the offsets within it are 32-bit, one register each, and only `base` is 64-bit."""
    if OFFSETS_32:
        return base + ((r * stride_r)[:, None] + (cols * stride_i)[None, :])
    else:
        return base + (r.to(tl.int64) * stride_r)[:, None] + (cols.to(tl.int64) * stride_i)[None, :]


@triton.jit
def _tile_slots(slots_ptr, tile, PEERS: tl.constexpr, BLOCK_I: tl.constexpr):
    """Where a tile's words begin: PEERS parts of BLOCK_I columns each, part by part, so that the second launch's
    gather of a tile's words is one contiguous span."""
    return slots_ptr + tl.cast(tile, tl.int64) * (PEERS * BLOCK_I)


@triton.jit
def _tile_words(slots_ptr, tile, n_parts, no_peer, PEERS: tl.constexpr, BLOCK_I: tl.constexpr, PHASE: tl.constexpr,
                SPIN: tl.constexpr):
    """The [PEERS, BLOCK_I] words of a tile's parts (`no_peer` for parts past n_parts: a word that changes nothing,
    row_slots' NO_PEER_FORWARD or NO_PEER_BACKWARD) and how many are still missing (PHASE 0: after a bounded
    wait; PHASE 2: none)."""
    peers = tl.arange(0, PEERS)
    at = _tile_slots(slots_ptr, tile, PEERS, BLOCK_I) + (peers * BLOCK_I)[:, None] + tl.arange(0, BLOCK_I)[None, :]
    is_peer = tl.broadcast_to((peers < n_parts)[:, None], (PEERS, BLOCK_I))
    # gathered as one run of PEERS * BLOCK_I slots (the tile's words are contiguous), then put back in shape
    words, missing = gather_words(tl.ravel(at), tl.ravel(is_peer), no_peer, PHASE, SPIN)
    return tl.reshape(words, [PEERS, BLOCK_I]), missing


@triton.jit
def _part_pair(x_base, x_reduce, cols, x_inner, first, n_reduce, col_ok, BLOCK_R: tl.constexpr,
               N_CHUNKS: tl.constexpr, OFFSETS_32: tl.constexpr):
    """The (max, sum) word per column of the part whose reduced indices start at `first`: an online (max, sum)
    over its chunks. A part of only -inf gives (-inf, 0), which adds exactly nothing to its column."""
    run_max = tl.full((cols.shape[0],), float("-inf"), tl.float32)
    run_sum = tl.zeros((cols.shape[0],), tl.float32)
    steps = first + tl.arange(0, BLOCK_R)
    for c in range(0, N_CHUNKS):
        r = c * BLOCK_R + steps
        ok = (r < n_reduce)[:, None] & col_ok[None, :]
        x = tl.load(_at(x_base, r, x_reduce, cols, x_inner, OFFSETS_32), mask=ok, other=float("-inf"),
                    eviction_policy="evict_last").to(tl.float32)
        run_max, run_sum, _, _ = online_update(run_max, run_sum, x, False)
    return pack_pair(run_max, run_sum)


@triton.jit
def _part_dot(y_base, dy_base, y_reduce, dy_reduce, cols, y_inner, dy_inner, first, n_reduce, col_ok,
              BLOCK_R: tl.constexpr, N_CHUNKS: tl.constexpr, OFFSETS_32: tl.constexpr):
    """The backward's word per column of the part whose reduced indices start at `first`: sum(y * dy) in the low
    half, 0 in the high."""
    acc = tl.zeros((cols.shape[0],), tl.float32)
    steps = first + tl.arange(0, BLOCK_R)
    for c in range(0, N_CHUNKS):
        r = c * BLOCK_R + steps
        ok = (r < n_reduce)[:, None] & col_ok[None, :]
        y = tl.load(_at(y_base, r, y_reduce, cols, y_inner, OFFSETS_32), mask=ok, other=0.0,
                    eviction_policy="evict_last")
        dy = tl.load(_at(dy_base, r, dy_reduce, cols, dy_inner, OFFSETS_32), mask=ok, other=0.0,
                     eviction_policy="evict_last")
        acc += tl.sum(y.to(tl.float32) * dy.to(tl.float32), axis=0)
    return pack_pair(tl.zeros((cols.shape[0],), tl.float32), acc)


@triton.jit
def softmax_split_dim_kernel(
    x_ptr, y_ptr,
    x_outer, x_outer2, x_reduce, x_inner, y_outer, y_outer2, y_reduce, y_inner,
    n_outer, n_outer2, n_reduce, n_inner,
    slots_ptr,
    BLOCK_R: tl.constexpr, BLOCK_I: tl.constexpr, PART_R: tl.constexpr, PEERS: tl.constexpr, SAFE: tl.constexpr,
    OFFSETS_32: tl.constexpr, PHASE: tl.constexpr, SPIN: tl.constexpr,
):
    tile, part, n_parts, o1, o2, cols, col_ok = _part(n_outer2, n_reduce, n_inner, PART_R, BLOCK_I, PHASE)
    x_base = x_ptr + (o1 * x_outer + o2 * x_outer2)
    n_chunks: tl.constexpr = PART_R // BLOCK_R
    if PHASE != 2:
        own = _tile_slots(slots_ptr, tile, PEERS, BLOCK_I) + part * BLOCK_I + tl.arange(0, BLOCK_I)
        publish_word(own, _part_pair(x_base, x_reduce, cols, x_inner, part * PART_R, n_reduce, col_ok, BLOCK_R,
                                     n_chunks, OFFSETS_32), PHASE)
    if PHASE != 1:
        words, missing = _tile_words(slots_ptr, tile, n_parts, NO_PEER_FORWARD, PEERS, BLOCK_I, PHASE, SPIN)
        if PHASE == 0:
            if missing > 0:         # a part never published within the wait: its words from x
                peers = tl.arange(0, PEERS)[:, None]
                for p in range(0, n_parts):
                    gap = (peers == p) & (words == NOT_PUBLISHED_WORD)
                    if tl.sum(tl.ravel(gap.to(tl.int32)), axis=0) > 0:
                        pair = _part_pair(x_base, x_reduce, cols, x_inner, p * PART_R, n_reduce, col_ok, BLOCK_R,
                                          n_chunks, OFFSETS_32)
                        words = tl.where(gap, pair[None, :], words)
        col_shift, inv_sum = column_shift_and_scale(words, SAFE)
        y_base = y_ptr + (o1 * y_outer + o2 * y_outer2)
        steps = part * PART_R + tl.arange(0, BLOCK_R)
        for c in range(0, n_chunks):        # last chunk first: the likeliest still in L2
            r = (n_chunks - 1 - c) * BLOCK_R + steps
            ok = (r < n_reduce)[:, None] & col_ok[None, :]
            x = tl.load(_at(x_base, r, x_reduce, cols, x_inner, OFFSETS_32), mask=ok, other=float("-inf"),
                        eviction_policy="evict_first")
            tl.store(_at(y_base, r, y_reduce, cols, y_inner, OFFSETS_32),
                     fast_exp(x.to(tl.float32) - col_shift[None, :], False) * inv_sum[None, :], mask=ok,
                     eviction_policy="evict_first")


@triton.jit
def softmax_backward_split_dim_kernel(
    y_ptr, dy_ptr, dx_ptr,
    y_outer, y_outer2, y_reduce, y_inner, dy_outer, dy_outer2, dy_reduce, dy_inner,
    n_outer, n_outer2, n_reduce, n_inner,
    slots_ptr,
    BLOCK_R: tl.constexpr, BLOCK_I: tl.constexpr, PART_R: tl.constexpr, PEERS: tl.constexpr,
    OFFSETS_32: tl.constexpr, PHASE: tl.constexpr, SPIN: tl.constexpr,
):
    # dx has y's strides (both are allocated by the launcher); dy has its own. A part's share of sum(y * dy) per
    # column is the low half of its word (the high half 0).
    tile, part, n_parts, o1, o2, cols, col_ok = _part(n_outer2, n_reduce, n_inner, PART_R, BLOCK_I, PHASE)
    y_at = o1 * y_outer + o2 * y_outer2            # dx's slice starts here too
    dy_base = dy_ptr + (o1 * dy_outer + o2 * dy_outer2)
    n_chunks: tl.constexpr = PART_R // BLOCK_R
    if PHASE != 2:
        own = _tile_slots(slots_ptr, tile, PEERS, BLOCK_I) + part * BLOCK_I + tl.arange(0, BLOCK_I)
        publish_word(own, _part_dot(y_ptr + y_at, dy_base, y_reduce, dy_reduce, cols, y_inner, dy_inner,
                                    part * PART_R, n_reduce, col_ok, BLOCK_R, n_chunks, OFFSETS_32), PHASE)
    if PHASE != 1:
        words, missing = _tile_words(slots_ptr, tile, n_parts, NO_PEER_BACKWARD, PEERS, BLOCK_I, PHASE, SPIN)
        if PHASE == 0:
            if missing > 0:         # a part never published within the wait: its words from y and dy
                peers = tl.arange(0, PEERS)[:, None]
                for p in range(0, n_parts):
                    gap = (peers == p) & (words == NOT_PUBLISHED_WORD)
                    if tl.sum(tl.ravel(gap.to(tl.int32)), axis=0) > 0:
                        share = _part_dot(y_ptr + y_at, dy_base, y_reduce, dy_reduce, cols, y_inner, dy_inner,
                                          p * PART_R, n_reduce, col_ok, BLOCK_R, n_chunks, OFFSETS_32)
                        words = tl.where(gap, share[None, :], words)
        _, dots = unpack_pair(words)
        dot = tl.sum(dots, axis=0)
        steps = part * PART_R + tl.arange(0, BLOCK_R)
        for c in range(0, n_chunks):        # last chunk first: the likeliest still in L2
            r = (n_chunks - 1 - c) * BLOCK_R + steps
            ok = (r < n_reduce)[:, None] & col_ok[None, :]
            y = tl.load(_at(y_ptr + y_at, r, y_reduce, cols, y_inner, OFFSETS_32), mask=ok, other=0.0,
                        eviction_policy="evict_first").to(tl.float32)
            dy = tl.load(_at(dy_base, r, dy_reduce, cols, dy_inner, OFFSETS_32), mask=ok, other=0.0,
                         eviction_policy="evict_first").to(tl.float32)
            tl.store(_at(dx_ptr + y_at, r, y_reduce, cols, y_inner, OFFSETS_32), y * (dy - dot[None, :]), mask=ok,
                     eviction_policy="evict_first")
