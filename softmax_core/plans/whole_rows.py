"""Whole rows held in registers (the rows path of plans/tuned.py): how many rows a program takes, how wide its
block is, on how many warps, how many values a thread may hold, and, for the backward's rows of more than 1024
values, which of two warp counts keeps more programs resident per SM (compiled to find out).
"""
from __future__ import annotations

from dataclasses import replace

import torch
import triton

from softmax_core.hardware import dtypes
from softmax_core.hardware.compile import KernelResources
from softmax_core.hardware.gpu import GpuSpec
from softmax_core.hardware.occupancy import Occupancy
from softmax_core.plans.kernel_jobs import judged
from softmax_core.plans.plan import SoftmaxPlan
from softmax_core.plans.reasons import FIGURES, PlanReason, ReasonCode

# Every constant below was chosen by measurement on the H200; docs/performance.md, "The plan's constants",
# gives the figures and the sweeps they come from.
# Each program should move enough bytes to hide DRAM latency: short rows are grouped until a
# program loads about this much (the tutorial's one-row programs move only N x 4 bytes each).
BYTES_PER_PROGRAM = 16 * 1024
PROGRAMS_PER_SM_TO_FILL = 2
# Short rows, forward (a padded row of at most SHORT_ROW_BYTES): programs of about SHORT_PROGRAM_BYTES, one
# warp for each SHORT_PROGRAM_BYTES. Replayed from a CUDA graph, where no launch cost hides the kernel, 1-2 rows
# on 1-2 warps beat 4-8 rows on 4-8 warps by 10-30% at N = 256-1024 (tuning/h200-short-rows-tune-20261130-*.csv):
# a row's max and sum stay among one warp's shuffles, with no barrier between warps, and small programs
# finish sooner in a grid that fits on the GPU at once.
SHORT_ROW_BYTES = 4 * 1024
SHORT_PROGRAM_BYTES = 2 * 1024
# Bytes of row each thread loads: four 16-byte vector loads (16 fp32 or 32 bf16 values).
BYTES_PER_THREAD = 64
# After the upcast every value is a float32 register. Beyond this many per thread the compiler runs out
# of registers (one program per SM, or spills).
MAX_VALUES_PER_THREAD = 32
# 16 warps, not the 32 a program may have: a 32-warp program leaves a single program per SM.
MIN_WARPS, MAX_WARPS = 4, 16
# Rows whose width is not a multiple of 16 are read as an aligned body between masked edges (the edge kernel of
# plans/any_width.py, one row a program) from this many bytes of padded row; plans/any_width.py says why.
EDGES_FROM_BYTES = 2 * 1024
# Whole rows, backward, of at least BACKWARD_FIT_FROM_COLS values (the mid rows class's part above 1024; shorter rows
# are another family's): a whole-row backward reads y and dy once and writes dx once, so its speed follows the bytes
# its resident programs hold in flight on each SM. Each thread holds BACKWARD_BYTES_PER_THREAD of y and as many of
# dy (32 float32 or 64 two-byte values of each), on at least MIN_BACKWARD_WARPS warps; the plan compiles that many
# warps and twice as many and keeps the one with more programs resident per SM, the larger where they tie
# (_backward_rows_fit). Measured on the H200 on the mid rows class's random draw (fit set, seed 4141, widths
# 1140-12040, tuning/h200-rows-backward-tune-20261202-1.csv): rows in flight of 128 KB of y and dy per SM ran
# 0.87-0.99x copy, 64-96 KB 0.67-0.95, 32 KB 0.42-0.57; 3635 x 5222 float32 0.67 on 16 warps (one program per SM)
# against 0.93 on 8 (two), 1259 x 7119 float32 0.75 against 0.94, 8751 x 3914 bf16 0.92 on 4 warps against 0.95
# on 2; 13492 x 1140 float32 0.98 on 4 warps against 0.97 on 2 (both eight programs per SM: the tie goes up).
# Rows the edge kernel would read whole, long enough to be shared (two chunks or more), are shared by programs
# instead (the split path with edges) where the rows its resident programs hold come to less than
# BACKWARD_ROWS_MIN_IN_FLIGHT of y and dy per SM: in the fit set 1259 x 7119 float32 with 57 KB in flight (one
# program of 16 warps per SM) ran 0.75x copy, 20315 x 1548 fp16 with 62 KB (ten programs of 2 warps) 0.87. (This
# bound was added after the check set, seed 8686, showed fp16 rows of 10670 and 11692 values held whole at 43-47 KB,
# one program per SM: 0.61-0.63 against the split path's 0.78-0.82.)
BACKWARD_FIT_FROM_COLS = 1025
BACKWARD_BYTES_PER_THREAD = 128
MIN_BACKWARD_WARPS = 2
BACKWARD_ROWS_MIN_IN_FLIGHT = 60 * 1024
# Whole rows, backward, of IN_FLIGHT_FROM_COLS to BACKWARD_FIT_FROM_COLS - 1 values (the mid rows class's lower
# part; shorter rows are the short-rows kernels'): the law the longer rows follow (above) decides their shape too.
# Every (rows a program, warps) of IN_FLIGHT_ROWS x IN_FLIGHT_WARPS holding IN_FLIGHT_VALUES of each tensor a
# thread is compiled (the edge kernel takes one row a program, so only its warps vary), and the one whose resident
# programs hold the most bytes per SM kept (ties: more warps resident, then fewer rows); the plan's own shape is
# among them. Measured on the H200 (tuning/h200-rows-backward-tune-256-1024-20261205-1.csv, fit seed 3131 and
# check seed 9292, eleven shapes of widths 282-963): on the edge kernel the warps holding the most bytes were the
# fastest of 1, 2, 4 and 8 warps at nine (float32 rows of 319-469 values: one warp, 32 programs per SM, 0.98-0.99x
# copy against 0.72-0.85 on the four warps it had, 12 programs; 2-byte rows of 526-805: two warps, 18 programs,
# 0.75-0.88 against 0.50-0.68 on four, 10) and tied within 0.02 at the other two (float32 rows of 753 and 963
# values, one and two warps holding as much), so an edge plan is always reshaped. The rows kernel is reshaped where
# its programs hold less than BACKWARD_ROWS_MIN_IN_FLIGHT: in the class sweep of seed 1
# (classes/nvidia-h200-classes-seed1-20261201T2358.csv, the plans of its commit f052ea1) 16 rows on 8 warps, one
# program per SM, ran 212739 x 263 fp16 at 0.27x copy with 16 KB in flight (torch 0.44) and 60180 x 442 fp16 at
# 0.41 with 28 KB, where rows plans holding 64-94 KB ran 0.97-1.00; reshaped to 2 rows on 1 warp, the record
# above's two rows-kernel shapes (282 and 454 bf16) ran 0.76 and 0.86, within 0.03 of the best rows-kernel shape
# timed (torch 0.44 and 0.48). Checked on a seed not looked at (classes/nvidia-h200-classes-seed6161-20261205T1711
# .csv): 312 float32 0.97, 537 and 515 bf16 0.76 and 0.75 (torch 0.51, 0.40, 0.40).
IN_FLIGHT_FROM_COLS = 256
IN_FLIGHT_ROWS = (1, 2, 4, 8, 16)
IN_FLIGHT_WARPS = (1, 2, 4, 8)
IN_FLIGHT_VALUES = (4, 32)


def pow2_clamp(value: int, low: int, high: int) -> int:
    return max(low, min(high, triton.next_power_of_2(max(1, value))))


def filling_rows(n_rows: int, gpu: GpuSpec) -> int:
    """The most rows a program may take (a power of two) and still leave PROGRAMS_PER_SM_TO_FILL programs for
    every SM: more rows per program than that and the grid leaves SMs idle."""
    fill = max(1, n_rows // (PROGRAMS_PER_SM_TO_FILL * gpu.multiprocessor_count))
    return 1 << (fill.bit_length() - 1)


def rows_config(n_cols: int, element_bytes: int, gpu: GpuSpec, n_rows: int,
                direction: str = "forward") -> tuple[int, int, int]:
    """(ROWS, BLOCK_N, num_warps) for holding whole rows in registers."""
    warp_size = gpu.warp_size
    block_n = triton.next_power_of_2(n_cols)
    row_bytes = block_n * element_bytes
    short = direction == "forward" and row_bytes <= SHORT_ROW_BYTES
    rows = pow2_clamp((SHORT_PROGRAM_BYTES if short else BYTES_PER_PROGRAM) // row_bytes, 1, 64)
    # ... but never so many rows per program that the grid leaves SMs idle: keep at least
    # PROGRAMS_PER_SM_TO_FILL programs for every SM.
    rows = min(rows, filling_rows(n_rows, gpu))
    program_bytes = rows * row_bytes
    if short:
        return rows, block_n, max(1, program_bytes // SHORT_PROGRAM_BYTES)
    if direction == "backward" and n_cols >= BACKWARD_FIT_FROM_COLS:
        warps = pow2_clamp(program_bytes // (warp_size * BACKWARD_BYTES_PER_THREAD), MIN_BACKWARD_WARPS, MAX_WARPS)
    else:
        warps = pow2_clamp(program_bytes // (warp_size * BYTES_PER_THREAD), MIN_WARPS, MAX_WARPS)
    warps = min(warps, max(1, rows * block_n // warp_size))   # never more threads than values
    return rows, block_n, warps


def max_values_per_thread(n_cols: int, element_bytes: int, direction: str) -> int:
    """Values of a whole row a thread may hold before the row is walked in tiles or shared instead: at least
    MAX_VALUES_PER_THREAD, and for the backward's fitted rows BACKWARD_BYTES_PER_THREAD of them."""
    if direction == "backward" and n_cols >= BACKWARD_FIT_FROM_COLS:
        return max(MAX_VALUES_PER_THREAD, BACKWARD_BYTES_PER_THREAD // element_bytes)
    return MAX_VALUES_PER_THREAD


def backward_rows_take_edges(n_cols: int, dtype: torch.dtype, gpu: GpuSpec, aligned: bool, vec: int,
                             path: str | None, edges: bool | None) -> bool:
    """Whether plans/any_width.py's refine reads this backward's whole rows as an aligned body between masked edges
    (its edge kernel, one row per program): the kernel whose registers the rows path must compile. (refine's own
    rule, for the backward's rows; 2-byte rows with the vector hint take refine's vector rows instead.)"""
    elt = dtypes.element_size(dtype)
    automatic = (path is None and aligned and n_cols % 16 != 0 and gpu.vendor == "nvidia"
                 and triton.next_power_of_2(n_cols) * elt >= EDGES_FROM_BYTES)
    wanted = automatic if edges is None else edges
    vector_rows = elt == 2 and whole_vectors(vec, elt) and path is None and edges is None
    return wanted and dtype != torch.float64 and not vector_rows


def backward_rows_fit(draft: SoftmaxPlan) -> tuple[SoftmaxPlan, KernelResources, Occupancy]:
    """(plan, resources, occupancy) of the whole-row backward `draft` (BACKWARD_BYTES_PER_THREAD): its warps and
    twice as many compiled (the edge kernel where draft.edges, else the rows kernel), keeping the one with more
    programs resident per SM that neither spills nor fails to fit, the larger where they tie; the draft's own
    warps where neither fits."""
    found = []
    for w in (draft.num_warps, 2 * draft.num_warps):
        if w > MAX_WARPS or (w > draft.num_warps and w * draft.gpu.warp_size > draft.rows_per_program * draft.block_n):
            continue
        candidate = replace(draft, num_warps=w)
        found.append((candidate, *judged(candidate)))
    usable = [f for f in found if f[2].programs_per_sm > 0 and f[1].n_spills == 0]
    if not usable:
        return found[0]
    return max(usable, key=lambda f: (f[2].programs_per_sm, f[0].num_warps))


def takes_most_in_flight(plan: SoftmaxPlan, path: str | None, edges: bool | None) -> bool:
    """Whether `plan` (as refined) is a backward of whole rows of IN_FLIGHT_FROM_COLS to BACKWARD_FIT_FROM_COLS - 1
    values on the edge kernel, or on the rows kernel holding less than BACKWARD_ROWS_MIN_IN_FLIGHT per SM, which
    most_in_flight shapes: not forced, not float64."""
    return (plan.direction == "backward" and path is None and edges is None and plan.path == "rows"
            and not (plan.short_rows or plan.tiny) and plan.dtype != "float64"
            and IN_FLIGHT_FROM_COLS <= plan.n_cols < BACKWARD_FIT_FROM_COLS
            and (plan.edges or in_flight_bytes(plan, plan.occupancy) < BACKWARD_ROWS_MIN_IN_FLIGHT))


def most_in_flight(plan: SoftmaxPlan) -> SoftmaxPlan:
    """`plan` (takes_most_in_flight) reshaped to the (rows, warps) whose resident programs hold the most bytes of y
    and dy per SM (IN_FLIGHT_ROWS x IN_FLIGHT_WARPS, IN_FLIGHT_VALUES a thread, each compiled; never so many rows
    that fewer than PROGRAMS_PER_SM_TO_FILL programs per SM remain), or `plan` itself where none holds more."""
    max_rows = filling_rows(plan.n_rows, plan.gpu)
    best = ((in_flight_bytes(plan, plan.occupancy), plan.occupancy.programs_per_sm * plan.num_warps,
             -plan.rows_per_program), plan, plan.resources, plan.occupancy)
    shapes = 0
    for rows in (r for r in ((1,) if plan.edges else IN_FLIGHT_ROWS) if r <= max_rows):
        for warps in IN_FLIGHT_WARPS:
            if not IN_FLIGHT_VALUES[0] <= values_per_thread(rows, plan.block_n, warps, plan.gpu.warp_size) \
                    <= IN_FLIGHT_VALUES[1]:
                continue
            candidate = replace(plan, rows_per_program=rows, num_warps=warps,
                                num_programs=triton.cdiv(plan.n_rows, rows))
            res, occ = judged(candidate)
            shapes += 1
            if occ.programs_per_sm == 0 or res.n_spills > 0:
                continue
            key = (in_flight_bytes(candidate, occ), occ.programs_per_sm * warps, -rows)
            if key > best[0]:
                best = (key, candidate, res, occ)
    (held, _, _), candidate, res, occ = best
    if candidate is plan:
        return plan
    return with_figures(candidate, res, occ, rows=candidate.rows_per_program, n_regs=res.n_regs,
                        n_spills=res.n_spills, why=ReasonCode.MOST_IN_FLIGHT, shapes=shapes, in_flight_bytes=held)


def in_flight_bytes(plan: SoftmaxPlan, occ: Occupancy) -> int:
    """Bytes of its tensors (y and dy backward, x forward) the programs of `plan` resident on one SM hold."""
    return occ.programs_per_sm * plan.rows_per_program * plan.n_cols * plan.element_bytes * (
        2 if plan.direction == "backward" else 1)


def with_figures(plan: SoftmaxPlan, res: KernelResources, occ: Occupancy, **figures) -> SoftmaxPlan:
    """`plan` with the resources and occupancy it was judged to have, and its reason's figures updated to them."""
    values = {**plan.reason.values, **figures, "programs_per_sm": occ.programs_per_sm}
    if "why" in figures:          # a new why: its own figures, not the old one's
        old = set(FIGURES[ReasonCode(plan.reason.values["why"])]) - set(figures)
        values = {k: v for k, v in values.items() if k not in old}
    return replace(plan, resources=res, occupancy=occ, reason=PlanReason.of(plan.reason.code, **values))


# Rows whose width is a multiple of 2 or 4 values but not of a whole 16-byte vector (a 62-wide or 236-wide float16
# row): the rows kernels' VEC hint lets Triton load them 4 or 8 bytes a thread where it loaded 2. Timed on an H100
# (the device tool lent no H200) beside the same plan unhinted, at random widths 33-1023 of seed 4242 (fit) and
# 6464 (check; tuning/h100-rows-partial-vectors-20261206.csv, `python -m bench_tools.record.row_vectors_tune OUT
# --sweep partial --seed S`): 2-byte rows forward 36 wide 0.30 -> 0.84x copy, 70: 0.65 -> 0.74, 94: 0.74 -> 0.84,
# 166: 0.73 -> 0.88, 236: 0.85 -> 0.98, 254: 0.87 -> 0.99, 278: 0.83 -> 0.86, 492: 0.93 -> 1.00, none slower;
# backward 278: 0.91 -> 0.98, 430: 0.93 -> 0.97. float32 rows in 8-byte pairs were level or slower (94 wide
# 0.95 -> 0.92, 138: 0.92 -> 0.94), so float32 keeps whole vectors only.
PARTIAL_VECTOR_MAX_ELEMENT_BYTES = 2


def row_vector(n_cols: int, dtype: torch.dtype) -> int:
    """The rows kernels' VEC, for widths that are not multiples of 16 (Triton's JIT vectorises those by itself):
    the values of one 16-byte vector where `n_cols` is a multiple of it; for 2-byte values, else the largest of 4
    and 2 that divides `n_cols`; 1 otherwise, and for float64."""
    if dtype == torch.float64 or n_cols % 16 == 0:
        return 1
    elt = dtypes.element_size(dtype)
    whole = 16 // elt
    if n_cols % whole == 0:
        return whole
    if elt > PARTIAL_VECTOR_MAX_ELEMENT_BYTES:
        return 1
    return 4 if n_cols % 4 == 0 else 2 if n_cols % 2 == 0 else 1


def whole_vectors(vec: int, element_bytes: int) -> bool:
    """Whether a rows plan's VEC is a whole 16-byte vector (the plans that read rows as whole vectors need it)."""
    return vec * element_bytes == 16


def values_per_thread(rows: int, block_n: int, warps: int, warp_size: int = 32) -> int:
    return rows * block_n // (warps * warp_size)
