"""The tuned plans on the any-width kernels (kernels/any_width.py), where those are faster than the tuned
kernels the plan chose (plans/tuned.py): rows whose width Triton cannot prove vector-aligned, read as an aligned
body between masked edges, and tiny packed rows loaded with no column mask. `refine` takes a plan from
plans/tuned.py and returns it on those kernels, or unchanged.
"""
from __future__ import annotations

from dataclasses import replace

import torch
import triton

from softmax_core.hardware import dtypes
from softmax_core.plans.kernel_jobs import judged
from softmax_core.plans.reasons import PlanReason
from softmax_core.plans.whole_rows import EDGES_FROM_BYTES, filling_rows, whole_vectors, with_figures
from softmax_core.plans.tuned import MAX_WARPS, SHORT_ROW_BYTES, SoftmaxPlan, rows_config

# Widths that are not multiples of 16 (of the vocabularies 32000, 50257, 128256 and 151936, only 50257; odd
# widths anywhere): Triton cannot prove a row's loads 16-byte aligned, and loads one value at a time. From
# EDGES_FROM_BYTES of padded row (plans/whole_rows.py), one row per program, the row is read as an aligned body between two
# masked edges instead (kernels/any_width.py); shorter rows keep several rows per program. Long rows walked in
# tiles (forward) take EDGE_TILED_SHAPE[element bytes] = (tile, warps): on the H200 8192 x 50257 bf16 ran
# 0.72x copy with (8192, 4) against 0.48 with the tiled plan's (16384, 16), and 4096 x 50257 fp32 0.76
# with (16384, 8) against 0.69 (tuning/h200-shapes-tune-20261201-1.csv); the tuned kernels' plan had run 0.34 / 0.58.
# Rows the tiled plan walks in narrower tiles (2-byte mid rows, MID_TILE in plans/tuned.py) keep them where they pad
# the row less: 2645 x 10102 bf16 (3 tiles of 4096, 12288 values, against 2 of 8192, 16384) ran 0.94x copy on 4096
# against 0.88 on 8192 (tuning/h100-rows-classes-7373-20261207.csv, an H100); 8192 x 5000 fp16, one tile of 8192
# or two of 4096, kept 8192 (0.73, above).
# Short float32 forward rows (at most SHORT_ROW_BYTES padded) keep the rows kernel: 4096 x 781 ran 0.95x copy
# on it against 0.91 on the edge kernel, where bf16 gained (781: 0.86 -> 0.87, 16384 x 1000: 0.85 -> 0.95;
# tuning/h200-shapes-check-20261201-1.csv).
EDGE_TILED_SHAPE = {2: (8192, 4), 4: (16384, 8)}
# Tiny rows (forward, packed power-of-two rows of at most TINY_MAX_ROW_BYTES: routers, small heads): programs
# of TINY_PROGRAM_BYTES (at least PROGRAMS_PER_SM_TO_FILL per SM), one warp per TINY_WARP_BYTES. Measured on the
# H200: 65536 x 8 bf16 1.02-1.06x copy (the rows kernel 0.84), 1M x 8 1.00-1.05 (0.66); at 64 fp32 values
# (256 B) the rows kernel was as fast already (1.00 against 0.98), so the limit stops short of it.
TINY_MAX_ROW_BYTES = 64
TINY_PROGRAM_BYTES = 4 * 1024
TINY_WARP_BYTES = 2 * 1024
# Whole 2-byte rows, where a row is a whole number of 16-byte vectors (a multiple of 16 values, or of 8 with the
# rows kernel's vector hint, plan.vec): programs of about VECTOR_PROGRAM_BYTES of padded rows on VECTOR_ROWS_WARPS
# warps, instead of the edge kernel's one row a program or the rows plan's wider programs. Backward from
# EDGES_FROM_BYTES of padded row, forward from VECTOR_ROWS_FROM_BYTES (longer forward rows take tiles, plans/tuned.py).
# On the H200 backward: 16384 x 1000 bf16 0.97x copy against the edge kernel's 0.77, 10000 x 3000 fp16 0.99 against
# 0.86, 8192 x 5000 fp16 0.97 against 0.65, 8192 x 11008 bf16 0.95 against 0.78 on 16 warps; forward 10000 x 3000
# fp16 0.94 against 0.77 (tuning/h200-rows-tune-20261201-1.csv and -2.csv). Widths that are multiples of 16 load
# whole vectors in the rows plan already: their backward takes these programs only from VECTOR_ROWS_FROM_BYTES of
# padded row (8192 x 4096 bf16 0.98x copy against 0.97, tuning/h200-rows-dense-20261201-3.csv); below it the rows
# plan's 8 warps hold (524288 x 1024 fp16 1.00-1.01x copy, models/history/nvidia-h200-models-mixed-20261201T0946.csv
# and models/history/...T1629.csv, against 0.87-0.90 on 4 warps at 174 registers, models/...T1328.csv and T1331.csv).
VECTOR_ROWS_FROM_BYTES = 8 * 1024
VECTOR_PROGRAM_BYTES = 16 * 1024
VECTOR_ROWS_WARPS = 4

# Short rows of any width (kernels/short_rows.py), on NVIDIA GPUs, where the rows kernel gives each row a group of
# lanes that meet through shuffles and loads it a value at a time. Forward: rows of at most LANE_MAX_COLS values,
# power-of-two rows of at most TINY_MAX_ROW_BYTES excepted (the tiny kernel's vectors are faster there), one lane a
# row. Backward: rows of at most SHORT_MAX_COLS values (the short rows class, 2-255), a block of packed rows moved
# as one span in 16-byte vectors. SHORT_BLOCK_VALUES values a program (padded), on SHORT_WARPS[direction] warps.
# Fitted on the short rows class's random draw of seed 101 (ten shapes, widths 2-127, the three dtypes; each kernel
# at 1024-4096 values a program on 2-8 warps; tuning/h200-short-rows-layouts-20261204-1.csv): the lane kernel at
# 1024 values on 8 warps ran 0.35-0.63x copy at widths 3-25 where the rows plan ran 0.19-0.55 (and torch
# 0.24-0.43); at widths 53-127 it did not gain (0.34-0.38 against 0.36-0.75), so the forward stops at 32. The
# backward span kernel at 1024 values on 4 warps ran 0.43-0.92 where the rows plan ran 0.27-0.65 and torch
# 0.28-0.49; it lost 0.01-0.07 at widths 3, 5 and 17 float32. In the class sweep through autograd (seed 101 fitted,
# seed 5151 not looked at while fitting; classes/nvidia-h200-classes-seed{101,5151}-20261204T2034.csv): forward
# 0.35 / 0.60 and 0.37 / 0.92 (min / median; seeds 1 and 2 had 0.20 / 0.55 and 0.21 / 1.02), backward 0.28 / 0.46
# and 0.29 / 0.39, its lowest 0.97x and 0.88x torch's.
# Rows the rows kernel loads in vectors (plan.vec > 1: 2-byte widths of a multiple of 2 values, any width of a
# multiple of 16 bytes) stay on it: on an H100 (tuning/h100-lane-vs-rows-20261206.csv, seed 5353, twelve even
# 2-byte widths 6-28; `python -m bench_tools.record.row_vectors_tune OUT --sweep lane --seed S`) the rows kernel
# ran 0.58-1.00x copy where the lane kernel ran 0.40-0.67 (20 bf16: 0.44 -> 0.87, 6 fp16: 0.60 -> 0.80, 18 bf16:
# 0.40 -> 0.58).
LANE_MAX_COLS = 32
SHORT_MAX_COLS = 255
SHORT_BLOCK_VALUES = 1024
SHORT_WARPS = {"forward": 8, "backward": 4}
# The backward of short 2-byte rows (at most SHORT_MAX_COLS values), by the bytes a load moves: the word-rows kernel
# (kernels/word_rows.py) reads 4-byte words of WORD_ROWS_PACK values across the rows' boundaries, the rows kernel
# reads plan.vec values a load (16-byte vectors where the width is a multiple of 16). Packed, aligned rows the rows
# kernel would read at most 4 bytes a load (odd widths, and widths of 2 mod 4) take the words, WORD_ROWS_VALUES
# values (padded) a program on WORD_ROWS_WARPS warps; the others stay on the rows kernel, SHORT_VECTOR_ROWS_VALUES
# values a program on SHORT_VECTOR_ROWS_WARPS warps. Both shapes hold 8 values a thread.
# Timed on an H100 (docs/performance.md "The rows classes on their own draw"): seed 557 of `python -m bench_tools.record.word_rows_tune
# OUT --seed 557` (five shapes, widths 13-251; tuning/h100-word-rows-557-20261207.csv): words at 2 values a word
# and 1024 values a program ran 0.69-0.93x the add of two tensors into a third on 4 warps (0.72-0.95 on 2 warps at
# 135 and 251 values, 0.58-0.71 at 13-23) where the span kernel they replace ran 0.48-0.75 and torch 0.39-0.50. On
# the short rows class's draw of seed 808 (`python -m bench_tools.rows_tune STEM --classes long_rows,short_rows --seed
# 808`, tuning/h100-rows-classes-808-20261207.csv) the rows kernel at 1024 values on 4 warps was within 0.03 of the
# best of 15 shapes at every width (20 bf16, 8-byte loads: 0.95, where the words on 2 warps ran 0.59; 235 fp16:
# 0.91, where the span ran 0.70). Earlier, on the H200 (seed 222): 51 bf16 0.44 -> 0.63, 6 fp16 0.47 -> 0.58, 3 fp16
# 0.48 -> 0.68 in words (tuning/h200-word-rows-20261206.csv). The forward in words ran 0.21-0.33x copy where the
# lane and rows kernels ran 0.24-0.53 (seeds 333 and 444), so forward rows keep those. float32 rows keep the span.
WORD_ROWS_PACK = 2
WORD_ROWS_VALUES = 1024
WORD_ROWS_WARPS = 4
WORD_ROWS_MAX_COLS = SHORT_MAX_COLS
SHORT_VECTOR_ROWS_VALUES = 1024
SHORT_VECTOR_ROWS_WARPS = 4


def refine(plan: SoftmaxPlan, dtype: torch.dtype, *, path: str | None = None, aligned: bool = True,
           edges: bool | None = None) -> SoftmaxPlan:
    """`plan` on the tiny-rows or the edge kernel where those apply (a forced `path` keeps its kernel unless
    `edges` is given), else `plan` itself."""
    n_cols, direction, gpu = plan.n_cols, plan.direction, plan.gpu
    elt = dtypes.element_size(dtype)
    if takes_word_rows(plan, dtype, path, edges):
        return word_rows_plan(plan, dtype)
    if takes_short_vector_rows(plan, dtype, path, edges):
        return _blocks_of_rows(plan, max(1, SHORT_VECTOR_ROWS_VALUES // plan.block_n), SHORT_VECTOR_ROWS_WARPS)
    if takes_short_rows(plan, dtype, path, edges):
        return short_rows_plan(plan, dtype)
    if (direction == "forward" and path is None and edges is None and dtype != torch.float64 and aligned
            and n_cols * elt <= TINY_MAX_ROW_BYTES and n_cols == triton.next_power_of_2(n_cols)
            and plan.path == "rows"):
        return tiny_plan(plan, dtype)
    padded_bytes = triton.next_power_of_2(n_cols) * elt
    hinted_vectors = whole_vectors(plan.vec, elt)
    vectors = hinted_vectors or n_cols % 16 == 0
    if (plan.path == "rows" and vectors and elt == 2 and aligned and path is None and edges is None
            and padded_bytes >= (EDGES_FROM_BYTES if direction == "backward" and hinted_vectors else VECTOR_ROWS_FROM_BYTES)
            and (direction == "backward" or hinted_vectors)):
        hinted = vector_rows_plan(plan, dtype)
        if hinted is not None:
            return hinted
    short_float32_forward = elt == 4 and direction == "forward" and padded_bytes <= SHORT_ROW_BYTES
    wanted = (n_cols % 16 != 0 and aligned and gpu.vendor == "nvidia" and padded_bytes >= EDGES_FROM_BYTES
              and not short_float32_forward and path is None) if edges is None else edges
    if not wanted or dtype == torch.float64 or plan.shares_rows or plan.path == "split":
        return plan
    if plan.path == "rows" and plan.rows_per_program > 1:
        _, _, warps = rows_config(n_cols, elt, gpu, 1, direction)
        plan = replace(plan, rows_per_program=1, num_warps=warps, num_programs=plan.n_rows)
    if plan.path == "tiled" and direction == "forward" and elt in EDGE_TILED_SHAPE:
        tile, warps = EDGE_TILED_SHAPE[elt]
        if plan.block_n < tile and _padded(n_cols, plan.block_n) < _padded(n_cols, tile):
            tile = plan.block_n
        tile = min(tile, triton.next_power_of_2(n_cols))
        figures = {**plan.reason.values, "tile": tile, "n_tiles": triton.cdiv(n_cols, tile)}
        plan = replace(plan, block_n=tile, num_warps=warps, reason=PlanReason.of(plan.reason.code, **figures))
    return edge_plan(plan, dtype)


def _padded(n_cols: int, tile: int) -> int:
    """Values a row of n_cols spans in tiles of `tile`, the last one masked."""
    return triton.cdiv(n_cols, tile) * tile


def vector_rows_plan(plan: SoftmaxPlan, dtype: torch.dtype) -> SoftmaxPlan | None:
    """`plan` (rows of whole vectors) reshaped to VECTOR_PROGRAM_BYTES programs of VECTOR_ROWS_WARPS warps (twice
    that where those would spill), with that kernel's resources; None where neither fits without spilling."""
    padded_bytes = plan.block_n * dtypes.element_size(dtype)
    rows = max(1, min(VECTOR_PROGRAM_BYTES // padded_bytes, filling_rows(plan.n_rows, plan.gpu)))
    for warps in (VECTOR_ROWS_WARPS, 2 * VECTOR_ROWS_WARPS):
        candidate = replace(plan, rows_per_program=rows, num_warps=warps, num_programs=triton.cdiv(plan.n_rows, rows))
        res, occ = judged(candidate)
        if occ.programs_per_sm > 0 and res.n_spills == 0:
            return with_figures(candidate, res, occ, rows=rows, n_regs=res.n_regs, n_spills=res.n_spills)
    return None


def takes_short_rows(plan: SoftmaxPlan, dtype: torch.dtype, path: str | None, edges: bool | None) -> bool:
    """Whether the rows plan `plan` runs on the short-rows kernels (LANE_MAX_COLS, SHORT_MAX_COLS above)."""
    if plan.path != "rows" or path is not None or edges is not None or dtype == torch.float64 or not plan.packed:
        return False
    if plan.gpu.vendor != "nvidia":
        return False
    if plan.direction == "backward":
        return plan.n_cols <= SHORT_MAX_COLS
    tiny = plan.n_cols * dtypes.element_size(dtype) <= TINY_MAX_ROW_BYTES and plan.n_cols == plan.block_n
    return plan.n_cols <= LANE_MAX_COLS and not tiny and plan.vec == 1


def takes_word_rows(plan: SoftmaxPlan, dtype: torch.dtype, path: str | None, edges: bool | None) -> bool:
    """Whether the rows plan `plan` runs on the word-rows kernel (WORD_ROWS_PACK above): a short 2-byte backward
    (_short_2_byte_backward) of packed, aligned rows that the rows kernel would read at most 4 bytes a load."""
    return (_short_2_byte_backward(plan, dtype, path, edges) and plan.packed and plan.aligned
            and not _wide_loads(plan))


def takes_short_vector_rows(plan: SoftmaxPlan, dtype: torch.dtype, path: str | None, edges: bool | None) -> bool:
    """Whether the rows plan `plan` keeps the rows kernel in the short shape (SHORT_VECTOR_ROWS_VALUES above): a
    short 2-byte backward (_short_2_byte_backward) whose rows the rows kernel reads more than 4 bytes a load."""
    return _short_2_byte_backward(plan, dtype, path, edges) and _wide_loads(plan)


def _short_2_byte_backward(plan: SoftmaxPlan, dtype: torch.dtype, path: str | None, edges: bool | None) -> bool:
    """A rows plan of the backward of 2-byte rows of at most SHORT_MAX_COLS (= WORD_ROWS_MAX_COLS) values, on
    NVIDIA GPUs, its path and edges not forced."""
    return (plan.path == "rows" and path is None and edges is None and plan.direction == "backward"
            and plan.gpu.vendor == "nvidia" and dtypes.element_size(dtype) == 2 and plan.n_cols <= SHORT_MAX_COLS)


def _wide_loads(plan: SoftmaxPlan) -> bool:
    """Whether the rows kernel reads `plan`'s 2-byte rows more than 4 bytes a load (a word's worth)."""
    return plan.n_cols % 16 == 0 or plan.vec >= 4


def word_rows_plan(plan: SoftmaxPlan, dtype: torch.dtype, pack: int | None = None, values: int | None = None,
                   num_warps: int | None = None) -> SoftmaxPlan:
    """`plan` (a backward of 2-byte rows) on the word-rows kernel: groups of `pack` rows, about `values` values
    (padded) a program, on `num_warps` warps (the fitted shape where not given: on twice the warps where the fitted
    one spills registers)."""
    pack = pack or WORD_ROWS_PACK
    groups = max(1, (values or WORD_ROWS_VALUES) // (plan.block_n * pack))
    words = replace(plan, short_rows=True, row_words=pack)
    found = _blocks_of_rows(words, groups * pack, num_warps or WORD_ROWS_WARPS)
    if num_warps is None and found.resources.n_spills:
        found = _blocks_of_rows(words, groups * pack, 2 * WORD_ROWS_WARPS)
    return found


def short_rows_plan(plan: SoftmaxPlan, dtype: torch.dtype, rows: int | None = None,
                    num_warps: int | None = None) -> SoftmaxPlan:
    """`plan` (rows) on the short-rows kernel of its direction; `rows` and `num_warps` override the fitted shape."""
    rows = rows or max(1, SHORT_BLOCK_VALUES // plan.block_n)
    return _blocks_of_rows(replace(plan, short_rows=True), rows, num_warps or SHORT_WARPS[plan.direction])


def tiny_plan(plan: SoftmaxPlan, dtype: torch.dtype, rows: int | None = None,
              num_warps: int | None = None) -> SoftmaxPlan:
    """`plan` (rows, forward) on the tiny-rows kernel; `rows` and `num_warps` override the fitted shape."""
    row_bytes = plan.n_cols * dtypes.element_size(dtype)
    if rows is None:
        rows = max(1, min(TINY_PROGRAM_BYTES // row_bytes, filling_rows(plan.n_rows, plan.gpu)))
    warps = num_warps or max(1, min(MAX_WARPS, rows * row_bytes // TINY_WARP_BYTES))
    return _blocks_of_rows(replace(plan, tiny=True), rows, warps)


def _blocks_of_rows(plan: SoftmaxPlan, rows: int, warps: int) -> SoftmaxPlan:
    """`plan` (on the tiny or the short-rows kernel), `rows` rows a program on `warps` warps (one program a block
    of rows): compiled for its resources and occupancy, the reason's figures updated."""
    plan = replace(plan, rows_per_program=rows, num_warps=warps, num_programs=triton.cdiv(plan.n_rows, rows))
    res, occ = judged(plan)
    return with_figures(plan, res, occ, rows=rows, n_regs=res.n_regs, n_spills=res.n_spills)


def edge_plan(plan: SoftmaxPlan, dtype: torch.dtype) -> SoftmaxPlan:
    """`plan` (rows or tiled, one row per program) on the any-width kernel, with that kernel's resources."""
    plan = replace(plan, edges=True)
    res, occ = judged(plan)
    if plan.path == "rows":
        return with_figures(plan, res, occ, rows=1, n_regs=res.n_regs, n_spills=res.n_spills)
    return with_figures(plan, res, occ)


