"""Launch plans for the tuned kernels (softmax_core.kernels.tuned): which path, how many rows per program, how many warps.

The path is chosen from the compiled kernel's real resource needs, not from a row length written down
somewhere: we compile the kernel that would hold a whole row (block) in registers, and if not even one
program fits on an SM, or the compiler had to spill registers to memory, the row is walked in tiles
(or shared by several programs: the split path). Occupancy comes from `softmax_core.hardware.occupancy`, the
one place the hardware's rules live.
"""
from __future__ import annotations

from dataclasses import replace

import torch
import triton

from softmax_core.hardware import dtypes
from softmax_core.kernels.row_slots import SPIN_LIMIT  # noqa: F401  (read through this module)
from softmax_core.hardware.compile import KernelResources
from softmax_core.hardware.gpu import GpuSpec, default_gpu
from softmax_core.plans.kernel_jobs import (ROWS_KERNEL, SPLIT_KERNEL, TILED_KERNEL, TILED_SPLIT_KERNEL,  # noqa: F401
                                            SHARED_ROW_KERNELS, compile_job, judged, launch_divisible,
                                            rows_provably_aligned)
from softmax_core.plans.plan import SoftmaxPlan
from softmax_core.plans.reasons import PlanReason, ReasonCode
from softmax_core.hardware.occupancy import Occupancy, occupancy
# The rows path's shape (plans/whole_rows.py), read here and through this module.
from softmax_core.plans.whole_rows import (  # noqa: F401
    BYTES_PER_PROGRAM, PROGRAMS_PER_SM_TO_FILL, SHORT_ROW_BYTES, SHORT_PROGRAM_BYTES, BYTES_PER_THREAD,
    MAX_VALUES_PER_THREAD, MIN_WARPS, MAX_WARPS, BACKWARD_FIT_FROM_COLS, BACKWARD_BYTES_PER_THREAD,
    MIN_BACKWARD_WARPS, BACKWARD_ROWS_MIN_IN_FLIGHT, backward_rows_fit, backward_rows_take_edges,
    in_flight_bytes, max_values_per_thread, pow2_clamp, row_vector, rows_config, values_per_thread)

# Every constant below was chosen by measurement on the H200; docs/performance.md, "The plan's constants",
# gives the figures and the sweeps they come from.
# Tiled path: values per tile and warps per program. Its grid is one program per row. The backward reads
# two tensors: from TILED_WIDE_FROM_BYTES of them per row it takes TILED_WIDE_WARPS (more loads in flight).
TILE_VALUES = 16384
MIN_TILE_VALUES = 1024        # the smallest tile a spilling tiled plan is cut down to
TILED_WARPS = 16
# 2-byte forward tiles take TILED_L2_FIT_WARPS warps (64 values a thread, more programs per SM, so more bytes in
# flight) where the rows then in flight still fit in TILED_SHARED_L2_FRACTION of the L2, for pass 2 to find
# them there: 8192 x 32000 bf16 ran 0.98x copy with 8 warps against 0.84 with 16 (396 rows of 64 KB in flight,
# 26 MB); at 65536 and 128256 values 8 warps were slower (tuning/h200-rows-tune-20261201-1.csv).
TILED_L2_FIT_WARPS = 8
TILED_WIDE_FROM_BYTES = 256 * 1024
TILED_WIDE_WARPS = 32
# A program has at most 1024 threads (CUDA's and HIP's block limit): 32 warps of 32, or 16 wavefronts of 64.
MAX_THREADS_PER_PROGRAM = 1024
# Tiled backward for 2-byte types: past TILED_SHARED_FROM_BYTES of y and dy per row, each row is shared by
# programs that run at once (kernels.shared_rows.softmax_backward_tiled_split_kernel), each owning about
# TILED_SPAN_BYTES of them, so that the rows in flight fit in L2 for pass 2; TILED_SHARED_TILE-wide tiles,
# TILED_SHARED_WARPS warps, at most MAX_TILED_SPLIT programs per row. (Sharing the forward's rows measured
# slower; float32 rows that long take the split path.)
TILED_SHARED_FROM_BYTES = 256 * 1024
# ... with at most TILED_SHARED_PROGRAMS_PER_SM programs per SM and rows in flight (rows x their bytes) within
# TILED_SHARED_L2_FRACTION of the L2, so that pass 2 still finds its row there: in the H200 sweep
# (tuning/h200-tiled-tune-20261130-2-shared-rows.csv) 33 MB in flight ran as fast as 16 MB, 66 MB fell to 0.62x copy.
TILED_SHARED_PROGRAMS_PER_SM = 2
TILED_SHARED_L2_FRACTION = 0.5
TILED_SPAN_BYTES = 64 * 1024
TILED_SHARED_TILE, TILED_SHARED_WARPS = 8192, 8
MAX_TILED_SPLIT = 16
# Which long-row path (float32 forward): from TILED_FROM_ROW_BYTES the tiled kernel (its second pass reads
# the row from L2); from SPLIT_FROM_ROW_BYTES, where rows in flight no longer fit in L2, the split path.
# 2-byte types take the split path from SPLIT_FROM_ROW_BYTES in both directions (bf16 forward 131072 /
# 262144: 0.80 / 0.91x copy against the tiled 0.76 / 0.70; backward 0.85 / 0.83 against 0.75 / 0.71;
# tuning/h200-split-tune-20261130-6-bfloat16-specialised.csv). The float32 backward (two tensors in) takes it
# as soon as whole rows no longer fit.
TILED_FROM_ROW_BYTES = 16 * 1024
# 2-byte forward rows padded to 16-32 KB, which would fit whole, also run faster read twice, in MID_TILE-wide tiles
# on MID_TILE_WARPS warps: 8192 x 11008 bf16 0.95x copy against 0.75 held whole on 16 warps, 8192 x 5000 fp16
# 0.73 (edge tiles) against 0.54 (tuning/h200-rows-tune-20261201-2.csv).
TILED_FROM_PADDED_BYTES_2_BYTE = 16 * 1024
MID_TILE, MID_TILE_WARPS = 4096, 4
SPLIT_FROM_ROW_BYTES = 256 * 1024
# Unaligned forward rows take the split path with edges (plan_rows_tiled_split) from EDGE_SPLIT_FORWARD_FROM_ROW_BYTES
# a row; 2-byte rows of a tensor of at most EDGE_SPLIT_FORWARD_FEW_ROWS rows from EDGE_SPLIT_FORWARD_FEW_ROWS_FROM_BYTES,
# the long rows class's shortest row (16K values). On the class's draws of seeds 808 and 7373 (627-1804 rows of
# 30814-63290 float16 and bfloat16 values; `python -m bench_tools.rows_tune STEM --classes long_rows --seed S`,
# tuning/h100-rows-classes-808-20261207.csv and h100-rows-classes-7373-20261207.csv, on an H100) the split path ran
# 0.87-0.90x copy at every such shape where the edge tiles of (8192, 4) ran 0.65-0.85. The edge tiles launch one
# program a row, so a few hundred rows leave the last wave part-empty; with many rows that tail is small, and on the
# H200 8192 x 50257 bf16 ran 0.72 on the tiles against the split path's 0.68 (tuning/h200-split-edges-20261201-2.csv),
# so tensors of more rows keep the tiles below 128 KB.
EDGE_SPLIT_FORWARD_FROM_ROW_BYTES = 128 * 1024
EDGE_SPLIT_FORWARD_FEW_ROWS = 4096
EDGE_SPLIT_FORWARD_FEW_ROWS_FROM_BYTES = 32 * 1024
# 2-byte rows take the split path sooner where the L2 is smaller than SPLIT_L2_ROWS_PER_SM rows of that length on
# every SM (the H200's 60 MiB / (2 x 132 SMs) = 238,313 B): 4096 x 128256 bf16 (256,512 B rows) ran 0.80x copy
# shared against the tiled path's 0.75, and its backward 0.87 against 0.73 (tuning/h200-rows-tune-20261201-1.csv).
SPLIT_L2_ROWS_PER_SM = 2
SPLIT_DTYPES = (torch.float32, torch.bfloat16, torch.float16)
# Split path shape: chunks of at least this many values, at most this many programs per row (more of them
# meet more often), and up to 64 values a thread.
SPLIT_MIN_CHUNK = 4096
MAX_SPLIT = {"forward": 32, "backward": 64}
SPLIT_VALUES_PER_THREAD = 64
# 2-byte types: programs of 2 warps, 64-128 values a thread (the best or within 1% of it at every bf16 size
# and direction measured; 4 warps: 0.73-0.86, 8 warps lower still).
# On the long rows class's random draw, backward (fit set, seed 4141: 18354-251638 values, 69-1509 rows,
# tuning/h200-rows-backward-tune-20261202-1.csv) these chunks and warps were within 0.015 of the best of 25-31
# launches at every shape (0.77-0.81x copy; chunks of 8192 on 4 warps tied); two passes over tiles reached 0.51-0.77,
# and bounding their grid so that the rows in flight fit in half the L2 made them slower at every shape (fewer
# programs, fewer bytes in flight), so the split path's meeting, not L2, is what holds these rows near 0.8.
SPLIT_WARPS_2_BYTE = 2


def tiled_config(n_cols: int, element_bytes: int = 4, direction: str = "forward",
                 gpu: GpuSpec | None = None) -> tuple[int, int, int]:
    """(TILE, num_warps, programs per row) for the tiled path."""
    tile = min(triton.next_power_of_2(n_cols), TILE_VALUES)
    if direction == "forward":
        return tile, TILED_WARPS, 1
    pair_bytes = 2 * n_cols * element_bytes            # y and dy
    if (element_bytes == 2 and pair_bytes > TILED_SHARED_FROM_BYTES
            and (gpu is None or gpu.vendor == "nvidia")):
        split = min(MAX_TILED_SPLIT, triton.cdiv(pair_bytes, TILED_SPAN_BYTES))
        return min(tile, TILED_SHARED_TILE), TILED_SHARED_WARPS, split
    if pair_bytes < TILED_WIDE_FROM_BYTES:
        return tile, TILED_WARPS, 1
    return tile, min(TILED_WIDE_WARPS, MAX_THREADS_PER_PROGRAM // (gpu.warp_size if gpu else 32)), 1


def split_config(n_cols: int, gpu: GpuSpec, direction: str = "forward",
                 chunk: int | None = None, element_bytes: int = 4) -> tuple[int, int, int]:
    """(SPLIT, CHUNK, num_warps): chunks of SPLIT_MIN_CHUNK values or more (a power of two: the kernel's
    tl.arange needs it), as many as the row needs, at most about MAX_SPLIT[direction] programs per row."""
    if chunk is None:
        chunk = max(SPLIT_MIN_CHUNK, triton.next_power_of_2(triton.cdiv(n_cols, MAX_SPLIT[direction])))
    chunk = min(chunk, triton.next_power_of_2(n_cols))
    split = triton.cdiv(n_cols, chunk)
    if element_bytes == 2:
        return split, chunk, SPLIT_WARPS_2_BYTE
    warps = pow2_clamp(chunk // (gpu.warp_size * SPLIT_VALUES_PER_THREAD), MIN_WARPS, MAX_WARPS)
    return split, chunk, warps


def split_from_row_bytes(element_bytes: int, gpu: GpuSpec) -> int:
    """Row bytes from which a row is shared by programs that run at once (where the dtype allows it)."""
    if element_bytes == 2 and gpu.l2_mib:
        return min(SPLIT_FROM_ROW_BYTES, int(gpu.l2_mib * 2**20) // (SPLIT_L2_ROWS_PER_SM * gpu.multiprocessor_count))
    return SPLIT_FROM_ROW_BYTES


def edge_split_forward_from_row_bytes(n_rows: int, element_bytes: int) -> int:
    """Row bytes from which an unaligned forward row of an n_rows tensor is shared by programs (edges split)."""
    if element_bytes == 2 and n_rows <= EDGE_SPLIT_FORWARD_FEW_ROWS:
        return EDGE_SPLIT_FORWARD_FEW_ROWS_FROM_BYTES
    return EDGE_SPLIT_FORWARD_FROM_ROW_BYTES


PATHS = ("rows", "tiled", "split")


def plan_rows_tiled_split(n_rows: int, n_cols: int, dtype: torch.dtype = torch.float32,
                          gpu: GpuSpec | None = None, direction: str = "forward", safe: bool = False, *,
                          path: str | None = None, aligned: bool = True, edges: bool | None = None,
                          packed: bool = True) -> SoftmaxPlan:
    """The plan for an n_rows x n_cols softmax on `gpu`. `path` forces "rows", "tiled" or "split" (for
    tests and tuning sweeps); a forced path that cannot run here raises ValueError. `aligned`: the tensors
    start on 16-byte boundaries (as PyTorch allocates them), so the kernels load 16-byte vectors. `edges`
    forces a split plan's reads either way (plan_split). `packed`: every tensor's rows are n_cols apart."""
    if path is not None and path not in PATHS:
        raise ValueError(f"path must be one of {', '.join(PATHS)}, got {path!r}")
    gpu = gpu or default_gpu()
    elt = dtypes.element_size(dtype)
    fp64 = dtype == torch.float64

    row_bytes = n_cols * elt
    float32_forward = direction == "forward" and dtype == torch.float32
    vec = row_vector(n_cols, dtype)
    fitted_backward = direction == "backward" and n_cols >= BACKWARD_FIT_FROM_COLS
    edge_rows = fitted_backward and backward_rows_take_edges(n_cols, dtype, gpu, aligned, vec, path, edges)
    # rows the edge kernel reads are one a program
    rows, block_n, warps = rows_config(n_cols, elt, gpu, 1 if edge_rows else n_rows, direction)
    # every plan below is this draft with its path's shape, judged (compiled) before it is kept
    draft = SoftmaxPlan(gpu, direction, n_rows, n_cols, dtypes.name(dtype), "rows", rows, block_n, warps,
                        triton.cdiv(n_rows, rows), None, None, None, edges=edge_rows, vec=vec, safe=safe,
                        aligned=aligned, packed=packed)
    per_thread = values_per_thread(rows, block_n, warps, gpu.warp_size)
    max_per_thread = max_values_per_thread(n_cols, elt, direction)
    why: dict = {"why": ReasonCode.FORCED}
    if path in ("tiled", "split"):
        pass
    elif path is None and float32_forward and row_bytes >= TILED_FROM_ROW_BYTES:
        why = {"why": ReasonCode.READ_TWICE_FASTER, "row_bytes": row_bytes}
    elif (path is None and direction == "forward" and elt == 2 and block_n * elt >= TILED_FROM_PADDED_BYTES_2_BYTE
          and per_thread <= MAX_VALUES_PER_THREAD):
        why = {"why": ReasonCode.READ_TWICE_FASTER, "row_bytes": row_bytes}
    elif path is None and per_thread > max_per_thread:
        why = {"why": ReasonCode.TOO_MANY_VALUES_PER_THREAD, "threads": warps * gpu.warp_size,
               "values_per_thread": per_thread, "block_n": block_n, "max_values_per_thread": max_per_thread}
    else:
        # Compile the whole-row kernel; if it does not fit or spills, try fewer rows per program first.
        while True:
            if fitted_backward:
                draft, res, occ = backward_rows_fit(draft)
            else:
                res, occ = judged(draft)
            if (occ.programs_per_sm > 0 and res.n_spills == 0) or rows == 1:
                break
            rows //= 2
            draft = replace(draft, rows_per_program=rows, num_programs=triton.cdiv(n_rows, rows))
        warps = draft.num_warps
        fits = occ.programs_per_sm > 0
        in_flight = in_flight_bytes(draft, occ)                      # y and dy of the rows resident on an SM
        shareable = split_config(n_cols, gpu, direction, element_bytes=elt)[0] > 1
        if (edge_rows and path is None and fits and res.n_spills == 0 and in_flight < BACKWARD_ROWS_MIN_IN_FLIGHT
                and shareable):
            # too few bytes in flight for one pass to pay: the row is shared (below), else read twice in tiles
            why = {"why": ReasonCode.READ_TWICE_FASTER, "row_bytes": row_bytes}
        elif (fits and res.n_spills == 0) or (fits and path == "rows"):
            reason = PlanReason.of(ReasonCode.ROWS, why=ReasonCode.FORCED if path else ReasonCode.FITS_IN_REGISTERS,
                                   rows=rows, block_n=block_n, block_bytes=block_n * elt, n_regs=res.n_regs,
                                   n_spills=res.n_spills, programs_per_sm=occ.programs_per_sm)
            return replace(draft, resources=res, occupancy=occ, reason=reason)
        elif path == "rows":
            raise ValueError(f"path='rows': not even one program holding a {block_n:,}-value row fits on an SM")
        elif occ.by_shared == 0:
            why = {"why": ReasonCode.ROW_OVER_SHARED_MEMORY, "row_shared_bytes": res.shared_bytes,
                   "max_shared_mem": gpu.max_shared_mem}
        elif occ.programs_per_sm == 0:
            why = {"why": ReasonCode.ROW_OVER_REGISTERS, "row_n_regs": res.n_regs,
                   "threads": warps * gpu.warp_size, "max_num_regs": gpu.max_num_regs}
        else:
            why = {"why": ReasonCode.ROW_SPILLS, "block_n": block_n, "row_n_spills": res.n_spills}
    # A row of a width Triton cannot prove vector-aligned, too long for one program, is shared by programs that
    # run at once, each reading its part of an aligned body (kernels/shared_rows.py, EDGES): backward at every
    # such width (bf16 20001-151935: 0.79-0.82x copy, tuning/h200-split-edges-20261201-2.csv, where tiles had run
    # 0.51-0.72x in -1.csv), forward from edge_split_forward_from_row_bytes (bf16 65537-151935: 0.74-0.76x against
    # 0.63-0.72x in -2.csv). Where that split plan cannot run, the rules below decide.
    if (path is None and aligned and packed and n_cols % 16 != 0 and dtype in SPLIT_DTYPES and gpu.vendor == "nvidia"
            and (direction == "backward" or row_bytes >= edge_split_forward_from_row_bytes(n_rows, elt))):
        edge_split = plan_split(n_rows, n_cols, dtype, gpu, direction, safe,
                                {"why": ReasonCode.UNALIGNED_LONG_ROW, "row_bytes": row_bytes}, aligned=aligned,
                                edges=True, packed=packed)
        if edge_split is not None:
            return edge_split
    # A backward row of a width Triton cannot prove vector-aligned, shorter than split_from_row_bytes, takes tiles,
    # which plans/any_width.py then reads as an aligned body between masked edges: 4096 x 50257 float32 ran 0.79x
    # copy so against the split path's 0.73 (which loads it value by value), 4096 x 100277 bf16 0.58 against the
    # shared tiles' 0.50 (tuning/h200-rows-tune-20261201-1.csv); 1024 x 100277 float32, past it, 0.64 against 0.73.
    edge_backward = (direction == "backward" and path is None and n_cols % 16 != 0 and aligned and not fp64
                     and gpu.vendor == "nvidia" and row_bytes < split_from_row_bytes(elt, gpu))
    wants_split = dtype in SPLIT_DTYPES and not edge_backward and (
        (direction == "backward" and elt == 4) or row_bytes >= split_from_row_bytes(elt, gpu))
    split_declined = False
    if path == "split" or (path is None and gpu.vendor == "nvidia" and wants_split):
        if path is None and (float32_forward or elt == 2):
            why = {"why": ReasonCode.ROW_PAST_L2, "row_bytes": row_bytes}
        # The split path the planner chooses itself reads rows plainly; forced, it reads rows it cannot prove
        # aligned as an aligned body between masked edges (plan_split's default), unless `edges` says otherwise.
        split_edges = edges if edges is not None else (None if path == "split" else False)
        split_plan = plan_split(n_rows, n_cols, dtype, gpu, direction, safe, why, aligned=aligned,
                                edges=split_edges, packed=packed)
        if split_plan is not None:
            return split_plan
        if path == "split":
            raise ValueError("path='split': the row's programs would spill registers, or more of them would "
                             "have to run at once than fit on this GPU")
        split_declined = True
    shape = {"tile": TILE_VALUES, "num_warps": TILED_WARPS, "split": 1} if edge_backward else {}
    if elt == 2 and why.get("why") == ReasonCode.READ_TWICE_FASTER:
        shape = {"tile": MID_TILE, "num_warps": MID_TILE_WARPS, "split": 1}
    return plan_tiled(n_rows, n_cols, dtype, gpu, direction, safe, why, split_declined, aligned=aligned,
                      packed=packed, **shape)


def plan_tiled(n_rows: int, n_cols: int, dtype: torch.dtype, gpu: GpuSpec, direction: str, safe: bool = False,
               why: dict | None = None, split_declined: bool = False, *, tile: int | None = None,
               num_warps: int | None = None, split: int | None = None, aligned: bool = True,
               packed: bool = True) -> SoftmaxPlan:
    """The tiled path: two passes over TILE-wide tiles, one program per row or (split > 1) a row's tiles
    shared by `split` programs that run at once. `tile`, `num_warps` and `split` override tiled_config's
    shape for the tuning sweep (bench_tools/rows_tune.py)."""
    elt = dtypes.element_size(dtype)
    default_tile, default_warps, default_split = tiled_config(n_cols, elt, direction, gpu)
    tile_forced = tile is not None
    draft = SoftmaxPlan(gpu, direction, n_rows, n_cols, dtypes.name(dtype), "tiled", 1,
                        min(tile or default_tile, triton.next_power_of_2(n_cols)), num_warps or default_warps, n_rows,
                        None, None, None, safe=safe, aligned=aligned, packed=packed)
    if split is None and tile is None and num_warps is None:
        split = default_split
        if direction == "forward" and elt == 2 and gpu.l2_mib:
            draft = _l2_fit_warps(draft)
    split = 1 if split is None else split
    if split > 1:
        shared = _plan_shared_tiles(replace(draft, split=split), why, split_declined)
        if shared is not None:
            return shared
    # The fitted tiles hold as many values a thread on every GPU; where this one's compiler spills them (float64
    # on 32 warps, whose 1024 threads get at most 64 registers each), halve the tile, as the rows path its rows.
    while True:
        res, occ = judged(draft)
        if tile_forced or res.n_spills == 0 or draft.block_n <= MIN_TILE_VALUES:
            break
        draft = replace(draft, block_n=draft.block_n // 2)
    reason = PlanReason.of(ReasonCode.TILED, **(why or {"why": ReasonCode.FORCED}), split_declined=split_declined,
                           tile=draft.block_n, n_tiles=triton.cdiv(n_cols, draft.block_n),
                           programs_per_sm=occ.programs_per_sm, shared_by=1)
    return replace(draft, resources=res, occupancy=occ, reason=reason)


def _l2_fit_warps(draft: SoftmaxPlan) -> SoftmaxPlan:
    """`draft` on TILED_L2_FIT_WARPS warps where, with as many programs of it as fit on every SM, the rows in
    flight take at most TILED_SHARED_L2_FRACTION of the L2; else `draft` itself."""
    fitted = replace(draft, num_warps=TILED_L2_FIT_WARPS)
    res, occ = judged(fitted)
    gpu, per_sm = draft.gpu, occ.programs_per_sm
    in_flight = min(draft.n_rows, per_sm * gpu.multiprocessor_count)
    fits = in_flight * draft.n_cols * draft.element_bytes <= TILED_SHARED_L2_FRACTION * gpu.l2_mib * 2**20
    return fitted if per_sm > 0 and res.n_spills == 0 and fits else draft


def _plan_shared_tiles(draft: SoftmaxPlan, why, split_declined) -> SoftmaxPlan | None:
    """The tiled backward `draft`, its rows shared by draft.split programs, or None where they cannot all run at
    once (or float64, or the forward, whose tiled rows are never shared)."""
    gpu, direction = draft.gpu, draft.direction
    if draft.dtype == "float64" or gpu.vendor != "nvidia" or direction not in TILED_SPLIT_KERNEL:
        return None
    fit = _co_resident(draft, spills_allowed=True)
    if fit is None:
        return None
    res, _, groups, _ = fit
    # Pass 2 re-reads each row's span from L2, so the rows in flight must leave it room.
    groups = min(groups, gpu.multiprocessor_count * TILED_SHARED_PROGRAMS_PER_SM // draft.split)
    if gpu.l2_mib:
        row_bytes = draft.n_cols * draft.element_bytes * (2 if direction == "backward" else 1)
        groups = min(groups, int(gpu.l2_mib * 2**20 * TILED_SHARED_L2_FRACTION) // row_bytes)
    groups = max(1, groups)
    plan = replace(draft, num_programs=groups * draft.split)
    occ = occupancy(gpu, res.n_regs, res.shared_bytes, plan.num_warps, plan.num_programs)
    reason = PlanReason.of(ReasonCode.TILED, **(why or {"why": ReasonCode.FORCED}), split_declined=split_declined,
                           tile=draft.block_n, n_tiles=triton.cdiv(draft.n_cols, draft.block_n),
                           programs_per_sm=occ.programs_per_sm, shared_by=draft.split)
    return replace(plan, resources=res, occupancy=occ, reason=reason)


def _co_resident(draft: SoftmaxPlan,
                 spills_allowed: bool = False) -> tuple[KernelResources, int, int, Occupancy] | None:
    """For plans whose `split` programs per row wait for each other: (resources, programs resident per SM,
    groups, occupancy), where groups (rows in flight) is as many as can all run at once (by the hardware's
    occupancy rules: programs that wait for each other must all be resident, so the grid is never larger than
    programs per SM x SMs); None when not one
    group fits, or the compile spilled registers (unless `spills_allowed`: the shared-tile kernels hold no row
    in registers, and on triton 3.6 their 16-byte specialisation spills 2 registers yet ran 0.83x copy at
    bf16 131072). The kernel is compiled in its one-launch form (PHASE 0, the plan's constexprs)."""
    # The grid must fit whichever form the launch compiles: strides typed i32 (every real row) or i64, which
    # can need more registers or fewer (sm_90, fp32 262144: 187 with i32, 167 with i64). Plan with the larger.
    res, alone = max((judged(draft, 1, stride) for stride in ("i32", "i64")),
                     key=lambda f: (f[0].n_regs, f[0].n_spills, f[0].shared_bytes))
    per_sm = alone.programs_per_sm
    groups = min(draft.n_rows, draft.gpu.multiprocessor_count * per_sm // draft.split)
    if groups == 0 or (res.n_spills > 0 and not spills_allowed):
        return None
    occ = occupancy(draft.gpu, res.n_regs, res.shared_bytes, draft.num_warps, groups * draft.split)
    return res, per_sm, groups, occ


def plan_split(n_rows: int, n_cols: int, dtype: torch.dtype, gpu: GpuSpec, direction: str, safe: bool = False,
               why: dict | None = None, chunk: int | None = None, num_warps: int | None = None,
               aligned: bool = True, edges: bool | None = None, packed: bool = True) -> SoftmaxPlan | None:
    """The split path, or None when a row needs more programs than the GPU runs at once (or the chunk
    spills). `why` holds the reason's why code and its figures (default: forced); `chunk` and `num_warps`
    override the shape for the tuning sweep (bench_tools/rows_tune.py). `edges`: read each row as an
    aligned body between masked edges (kernels/shared_rows.py, EDGES), so that the chunks load 16-byte
    vectors where the plain reads could not be proved to (default: exactly there, rows_provably_aligned, on
    `packed` rows: the edges' pieces are shared by every tensor only where all their rows are n_cols apart)."""
    if edges and not packed:
        raise ValueError("edges=True: the split kernels read an aligned body between edges only where every "
                         "tensor's rows are n_cols apart")
    split, chunk, warps = split_config(n_cols, gpu, direction, chunk, dtypes.element_size(dtype))
    edges = packed and not rows_provably_aligned(n_cols, aligned) if edges is None else edges
    draft = SoftmaxPlan(gpu, direction, n_rows, n_cols, dtypes.name(dtype), "split", 1, chunk, num_warps or warps,
                        split, None, None, None, split, edges=edges, safe=safe, aligned=aligned, packed=packed)
    fit = _co_resident(draft)
    if fit is None:
        return None
    res, per_sm, groups, occ = fit
    reason = PlanReason.of(ReasonCode.SPLIT, **(why or {"why": ReasonCode.FORCED}), direction=direction,
                           split=split, chunk=chunk, n_regs=res.n_regs, programs_per_sm=per_sm, groups=groups,
                           num_programs=groups * split)
    return replace(draft, num_programs=groups * split, resources=res, occupancy=occ, reason=reason)
