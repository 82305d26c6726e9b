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
          EDGES: rows whose start or width Triton cannot prove 16-byte aligned (GPT-2's 50257 values, odd row
          strides) are read as kernels/any_width.py reads them, an aligned body between two masked edges of
          at most VEC values: the SPLIT chunks cover the body, so that every chunk load is a 16-byte vector,
          and part 0 also owns the head and the tail. Without EDGES a chunk is read value by value there.
Backward: dx = y * (dy - sum(dy * y)), split the same way; long 2-byte tiled rows are also shared by programs
that run at once (softmax_backward_tiled_split_kernel). How the programs meet (their slots, the bounded wait,
a missing peer's word computed from memory) is softmax_core.kernels.row_slots.
"""
from __future__ import annotations

from softmax_core.hardware import runtime  # noqa: F401  (first: where the interpreter was asked for, triton's library is made interpretable before @triton.jit runs)

import triton
import triton.language as tl

from softmax_core.kernels.any_width import row_pieces
from softmax_core.kernels.row_slots import (NO_PEER_BACKWARD, NO_PEER_FORWARD, own_word, pack_pair,
                                           peer_words, publish_word, unpack_pair)
from softmax_core.kernels.tuned import fast_exp


@triton.jit
def _chunk_start(row, row_stride, n_cols, EDGES: tl.constexpr, VEC: tl.constexpr):
    """Where the columns the chunks cover start, counted from the tensor's base, and how many there are: the
    whole row, or with EDGES its aligned body (see row_pieces: a multiple of VEC, a whole number of vectors)."""
    if EDGES:
        _, start, _, width, _ = row_pieces(row, row_stride, n_cols, VEC)
    else:
        start = tl.cast(row, tl.int64) * row_stride
        width = n_cols
    return start, width


@triton.jit
def _load_chunk(x_ptr, row, n_rows, x_row_stride, n_cols, cols, EDGES: tl.constexpr, VEC: tl.constexpr):
    """This program's chunk of x's row `row`: -inf past the row's columns, and all of it past n_rows."""
    start, width = _chunk_start(row, x_row_stride, n_cols, EDGES, VEC)
    return tl.load(x_ptr + start + cols, mask=cols < tl.where(row < n_rows, width, 0), other=float("-inf"),
                   eviction_policy="evict_first")


@triton.jit
def edge_pair(x_ptr, s, b, head, body, tail, edge):
    """A row's head and tail (as float32, -inf where masked) and their (max, sum) as one word, summed relative
    to their max (or to 0 where both are empty or all -inf), as a chunk's pair is."""
    x_head = tl.load(x_ptr + s + edge, mask=edge < head, other=float("-inf")).to(tl.float32)
    x_tail = tl.load(x_ptr + b + body + edge, mask=edge < tail, other=float("-inf")).to(tl.float32)
    top = tl.maximum(tl.max(x_head, axis=0), tl.max(x_tail, axis=0))
    shift = tl.where(top == float("-inf"), 0.0, top)
    total = tl.sum(fast_exp(x_head - shift, False), axis=0) + tl.sum(fast_exp(x_tail - shift, False), axis=0)
    return x_head, x_tail, pack_pair(top, total)


@triton.jit
def softmax_split_kernel(
    x_ptr, y_ptr,
    x_row_stride, y_row_stride,
    n_rows, n_cols,
    slots_ptr,
    SPLIT: tl.constexpr, PEERS: tl.constexpr, CHUNK: tl.constexpr, SAFE: tl.constexpr, PHASE: tl.constexpr,
    SPIN: tl.constexpr, EDGES: tl.constexpr = False, VEC: tl.constexpr = 1,
):
    # PHASE 0: publish, wait for the peers, finish - one launch, one read of x (GPU only).
    # PHASE 1 then PHASE 2: two launches, no waiting (the second reads x again). The interpreter runs
    # programs one after another, so this is how the same arithmetic is tested on a CPU.
    # Programs come in groups of SPLIT consecutive ids; a group walks rows strided by the number of groups,
    # and program `part` of a group always holds columns [part * CHUNK, (part + 1) * CHUNK) of its row, or
    # with EDGES of its aligned body (VEC values to 16 bytes); part 0 then also holds the head and the tail,
    # includes them in the pair it publishes, and writes them. With EDGES y's rows must be as far apart as
    # x's (the launcher sees to it, launches.py): y then takes x's pieces, so its body is aligned too.
    part = tl.program_id(0) % SPLIT
    group = tl.program_id(0) // SPLIT
    n_groups = tl.num_programs(0) // SPLIT
    cols = part * CHUNK + tl.arange(0, CHUNK)
    peers = tl.arange(0, PEERS)
    edge = tl.arange(0, VEC)
    # While a program waits for its peers its SM would idle, so it asks for its next row's chunk before
    # waiting: DRAM keeps streaming while the group meets. (A row past the end loads nothing: its
    # columns are masked by a width of 0.)
    x_next = _load_chunk(x_ptr, group, n_rows, x_row_stride, n_cols, cols, EDGES, VEC)
    for row in tl.range(group, n_rows, n_groups):
        row64 = tl.cast(row, tl.int64)
        # The chunk stays in registers in its own dtype (two bf16 values share a register, so a program
        # can hold twice the chunk); exp is computed twice instead of keeping float32 numerators.
        x = x_next
        if EDGES:
            s, b, head, body, tail = row_pieces(row, x_row_stride, n_cols, VEC)
            # Every program reads the edges (two masked vectors): part 0 publishes them, and any program
            # may have to compute part 0's word itself (peer_words).
            x_head, x_tail, edge_word = edge_pair(x_ptr, s, b, head, body, tail, edge)
        else:
            b = row64 * x_row_stride
            body = n_cols
            edge_word = NO_PEER_FORWARD
        # This chunk's own max and sum. A chunk of only -inf (padding past the row's end, or masked
        # values) sums relative to 0 instead, so that its sum is a clean 0 rather than NaN; it still
        # publishes its max, -inf, so that it cannot lift the row's max (a published 0 would, and a row
        # whose real values all sit below about -88 would then underflow to 0 / 0).
        chunk_max = tl.max(x, axis=0).to(tl.float32)
        chunk_shift = tl.where(chunk_max == float("-inf"), 0.0, chunk_max)
        row_slots = slots_ptr + row64 * SPLIT
        if PHASE != 2:
            chunk_sum = tl.sum(fast_exp(x.to(tl.float32) - chunk_shift, False), axis=0)
            publish_word(row_slots + part, own_word(pack_pair(chunk_max, chunk_sum), edge_word, part, EDGES, False), PHASE)
        x_next = _load_chunk(x_ptr, row + n_groups, n_rows, x_row_stride, n_cols, cols, EDGES, VEC)
        if PHASE != 1:
            # Every program combines the same SPLIT pairs the same way, so all agree on the row's (max, sum).
            # A peer that never published within the wait: compute its pair from x. (One test per row when
            # all arrived; looking at each peer in turn is only for the rare row that needs it.)
            words = peer_words(row_slots, peers, x_ptr + b, x_ptr, CHUNK, body, SPLIT, PHASE, SPIN, False,
                                EDGES, edge_word)
            maxes, sums = unpack_pair(words)
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
            if EDGES:
                tl.store(y_ptr + b + cols, y, mask=cols < body, eviction_policy="evict_first")
                mine = part == 0            # the edges are part 0's to write
                tl.store(y_ptr + s + edge, fast_exp(x_head - row_shift, False) * inv_sum,
                         mask=edge < tl.where(mine, head, 0))
                tl.store(y_ptr + b + body + edge, fast_exp(x_tail - row_shift, False) * inv_sum,
                         mask=edge < tl.where(mine, tail, 0))
            else:
                tl.store(y_ptr + row64 * y_row_stride + cols, y, mask=cols < n_cols, eviction_policy="evict_first")


@triton.jit
def _load_pair_chunk(y_ptr, dy_ptr, row, n_rows, y_row_stride, dy_row_stride, n_cols, cols,
                     EDGES: tl.constexpr, VEC: tl.constexpr):
    """This program's chunks of y's and dy's row `row` (0 past the row's columns, and past n_rows). With
    EDGES the pieces are y's, and dy's rows are as far apart as y's, so it takes them too."""
    row64 = tl.cast(row, tl.int64)
    if EDGES:
        _, b, head, body, _ = row_pieces(row, y_row_stride, n_cols, VEC)
        ok = cols < tl.where(row < n_rows, body, 0)
        y = tl.load(y_ptr + b + cols, mask=ok, other=0.0, eviction_policy="evict_first")
        dy = tl.load(dy_ptr + b + cols, mask=ok, other=0.0, eviction_policy="evict_first")
    else:
        ok = cols < tl.where(row < n_rows, n_cols, 0)
        y = tl.load(y_ptr + row64 * y_row_stride + cols, mask=ok, other=0.0, eviction_policy="evict_first")
        dy = tl.load(dy_ptr + row64 * dy_row_stride + cols, mask=ok, other=0.0, eviction_policy="evict_first")
    return y, dy


@triton.jit
def edge_dot(y_ptr, dy_ptr, s, b, head, body, tail, edge):
    """A row's head and tail of y and dy (as float32, 0 where masked; dy's at y's offsets) and their share
    of sum(y * dy) as a word."""
    y_head = tl.load(y_ptr + s + edge, mask=edge < head, other=0.0).to(tl.float32)
    dy_head = tl.load(dy_ptr + s + edge, mask=edge < head, other=0.0).to(tl.float32)
    y_tail = tl.load(y_ptr + b + body + edge, mask=edge < tail, other=0.0).to(tl.float32)
    dy_tail = tl.load(dy_ptr + b + body + edge, mask=edge < tail, other=0.0).to(tl.float32)
    dot = tl.sum(y_head * dy_head, axis=0) + tl.sum(y_tail * dy_tail, axis=0)
    return y_head, dy_head, y_tail, dy_tail, pack_pair(tl.full((), 0.0, tl.float32), dot)


@triton.jit
def softmax_backward_split_kernel(
    y_ptr, dy_ptr, dx_ptr,
    y_row_stride, dy_row_stride, dx_row_stride,
    n_rows, n_cols,
    slots_ptr,
    SPLIT: tl.constexpr, PEERS: tl.constexpr, CHUNK: tl.constexpr, PHASE: tl.constexpr, SPIN: tl.constexpr,
    EDGES: tl.constexpr = False, VEC: tl.constexpr = 1,
):
    # The backward needs one number per row, sum(dy * y): each program publishes its chunk's share
    # (in the low half of its slot; the high half is 0). PHASE, the early loads and EDGES as in the forward:
    # with EDGES the pieces are y's, and dy's and dx's rows must be as far apart as y's (the launcher sees to
    # it), so they take the same pieces.
    part = tl.program_id(0) % SPLIT
    group = tl.program_id(0) // SPLIT
    n_groups = tl.num_programs(0) // SPLIT
    cols = part * CHUNK + tl.arange(0, CHUNK)
    peers = tl.arange(0, PEERS)
    edge = tl.arange(0, VEC)
    y_next, dy_next = _load_pair_chunk(y_ptr, dy_ptr, group, n_rows, y_row_stride, dy_row_stride, n_cols, cols,
                                       EDGES, VEC)
    for row in tl.range(group, n_rows, n_groups):
        row64 = tl.cast(row, tl.int64)
        y = y_next            # kept in their own dtype, as in the forward
        dy = dy_next
        if EDGES:
            s, b, head, body, tail = row_pieces(row, y_row_stride, n_cols, VEC)
            y_head, dy_head, y_tail, dy_tail, edge_word = edge_dot(y_ptr, dy_ptr, s, b, head, body, tail, edge)
            y_row = y_ptr + b                  # the columns the chunks cover, in y and in dy
            dy_row = dy_ptr + b
        else:
            y_row = y_ptr + row64 * y_row_stride
            dy_row = dy_ptr + row64 * dy_row_stride
            body = n_cols
            edge_word = NO_PEER_BACKWARD
        row_slots = slots_ptr + row64 * SPLIT
        if PHASE != 2:
            dot_part = tl.sum(y.to(tl.float32) * dy.to(tl.float32), axis=0)
            publish_word(row_slots + part, own_word(pack_pair(tl.full((), 0.0, tl.float32), dot_part), edge_word, part,
                                                 EDGES, True), PHASE)
        y_next, dy_next = _load_pair_chunk(y_ptr, dy_ptr, row + n_groups, n_rows, y_row_stride, dy_row_stride,
                                           n_cols, cols, EDGES, VEC)
        if PHASE != 1:
            words = peer_words(row_slots, peers, y_row, dy_row, CHUNK, body, SPLIT, PHASE, SPIN, True, EDGES,
                                edge_word)
            _, dots = unpack_pair(words)
            dot = tl.sum(dots, axis=0)
            dx = y.to(tl.float32) * (dy.to(tl.float32) - dot)
            if EDGES:
                tl.store(dx_ptr + b + cols, dx, mask=cols < body, eviction_policy="evict_first")
                mine = part == 0
                tl.store(dx_ptr + s + edge, y_head * (dy_head - dot), mask=edge < tl.where(mine, head, 0))
                tl.store(dx_ptr + b + body + edge, y_tail * (dy_tail - dot),
                         mask=edge < tl.where(mine, tail, 0))
            else:
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
            publish_word(row_slots + part, pack_pair(tl.full((), 0.0, tl.float32), dot_part), PHASE)
        if PHASE != 1:
            words = peer_words(row_slots, peers, y_row, dy_row, span, n_cols, SPLIT, PHASE, SPIN, True, False,
                                NO_PEER_BACKWARD)
            _, dots = unpack_pair(words)
            dot = tl.sum(dots, axis=0)
            for t in range(0, n_span_tiles):
                cols = lo + (n_span_tiles - 1 - t) * TILE + offsets
                mask = cols < hi
                y = tl.load(y_row + cols, mask=mask, other=0.0, eviction_policy="evict_first").to(tl.float32)
                dy = tl.load(dy_row + cols, mask=mask, other=0.0, eviction_policy="evict_first").to(tl.float32)
                tl.store(dx_row + cols, y * (dy - dot), mask=mask, eviction_policy="evict_first")
