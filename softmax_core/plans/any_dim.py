"""Plans for a softmax over a non-contiguous axis (kernels/any_dim.py, kernels/split_dim.py), over the index space
plans/strided.py folds a tensor into: the tile of inner columns each program owns; whether the reduced axis is
held whole, walked twice, or cut into parts walked by the programs of two launches or of one launch whose programs
wait for each other; each plan compiled for the GPU it is for. `plan_strided` is the planner's choice among them.

Pure functions of layouts and a `GpuSpec`: nothing here touches a tensor or a device.
"""
from __future__ import annotations

from dataclasses import replace

import triton

from softmax_core.hardware.gpu import GpuSpec
from softmax_core.hardware import runtime
from softmax_core.plans.kernel_jobs import launch_resources
from softmax_core.plans.reasons import PlanReason, ReasonCode
from softmax_core.plans.strided import AnyDimPlan, ReductionLayout, slices_span_32_bits, takes_32_bit_offsets

# The tile a program owns is [BLOCK_O outer slices, BLOCK_R down the reduced axis, BLOCK_I inner columns], sized
# by values and bytes, then compiled for the GPU: a tile that spills registers is halved (plan_any_dim). Fitted on
# the class sweep's seed-1 draw of the strided classes on the H200 (assets/benchmarks/classes/: ...seed1-20261201T2358,
# 16,384-value slabs on up to 16 warps; ...seed1-20261202T0030, these constants), checked on seed 2 (...T0027):
# - a program holds at most TILE_VALUES values (forward; the backward holds y and dy, half as many), on warps that
#   give each thread VALUES_PER_THREAD: slabs of 16,384 values on 16 warps (one program per SM, its loads, sums
#   and stores never overlapping another's) ran 0.30-0.65x copy where tiles of 4,096 on 4 warps ran 0.72-0.93;
TILE_VALUES = {"forward": 4096, "backward": 2048}
VALUES_PER_THREAD = {"forward": 32, "backward": 16}
# - one pass when the whole [reduced, columns] slab fits TILE_VALUES with columns of at least ONE_PASS_MIN_BYTES
#   (a 32-byte column tile, 1,024 values down it, ran 0.30x copy); the columns then widen up to INNER_BYTES per
#   reduced index (wide runs at 2-8 reduced values ran 0.67-0.81 with 512-byte columns);
ONE_PASS_MIN_BYTES = 128
INNER_BYTES = 2048
# - where the tile holds the whole inner run, several outer slices per program up to TILE_VALUES (an (outer, 14,
#   8) float32 tensor: 0.93x copy at 32 slices a program, 0.22 at one);
# - else two passes, chunks of TILE_VALUES, on columns as wide as keep the slabs of the programs in flight within
#   L2_SHARE of L2 (pass 2 reads them again, last chunk first, from L2), between INNER_MIN_BYTES (a sector) and
#   TWO_PASS_MAX_BYTES; programs in flight counted as RESIDENT_PER_SM a SM;
L2_SHARE = 0.5
RESIDENT_PER_SM = 4
INNER_MIN_BYTES = 32
TWO_PASS_MAX_BYTES = 512
# - at least FILL_PROGRAMS_PER_SM programs per SM: the slices, then the columns, are narrowed until there are;
FILL_PROGRAMS_PER_SM = 2
MAX_WARPS = 16
# - the forward holds a larger slab in one pass rather than walk it twice (`slab_columns`): columns of
#   SLAB_TARGET_VALUES // the padded reduced axis, at least a sector (SLAB_MIN_BYTES), a line (LINE_BYTES) over a
#   `wide_run`, the slab at most SLAB_MAX_VALUES; two passes over a wide run take lines too, in chunks padded past the
#   reduced axis by at most CHUNK_PAD; transposed views keep the L2 rule. Fitted on an H100 on the strided classes'
#   draws of seeds 31337 and 4711 (tuning/h100-strided-slab-tune-31337-4711.csv; docs/performance.md, "Slabs held
#   in one pass"): the eight forwards walked twice there, 0.42-0.81 -> 0.60-0.88.
SLAB_TARGET_VALUES = 8192
SLAB_MAX_VALUES = 32768
SLAB_MIN_BYTES = 32
LINE_BYTES = 128
WIDE_RUN_BYTES = 256
CHUNK_PAD = 1.25
# - where a side of the call steps down the reduced axis with unit stride (a transposed view in, a contiguous y
#   out), a chunk spans at least REDUCE_MIN_BYTES of it, so those stores are whole sectors too.
REDUCE_MIN_BYTES = 128


def l2_share_bytes(gpu: GpuSpec) -> float:
    """The bytes of L2 that the slabs or parts of the programs in flight may hold between a value's first read and
    its second (L2_SHARE of the GPU's L2; 0 where its size is not known)."""
    return (gpu.l2_mib or 0) * 2**20 * L2_SHARE


def pow2_floor(n: int) -> int:
    return 1 << (max(1, n).bit_length() - 1)


def narrowest_slab(layout: ReductionLayout, element_bytes: int) -> int:
    """Values of the slab down the reduced axis at the narrowest one-pass tile (columns of ONE_PASS_MIN_BYTES): what
    one program must hold to take the softmax in one pass, the figure the strided plans' reasons state."""
    columns = min(triton.next_power_of_2(layout.n_inner), max(1, pow2_floor(ONE_PASS_MIN_BYTES // element_bytes)))
    return triton.next_power_of_2(layout.n_reduce) * columns


def wide_run(layout: ReductionLayout, element_bytes: int, transposing: bool) -> bool:
    """Whether each reduced row of a tile is a run of memory of its own for both sides: WIDE_RUN_BYTES or more."""
    return not transposing and layout.n_inner * element_bytes >= WIDE_RUN_BYTES


def slab_columns(layout: ReductionLayout, element_bytes: int, transposing: bool) -> int | None:
    """The columns of the forward's larger one-pass slab, or None: narrower than a sector, a slab past SLAB_MAX_VALUES,
    or a run where the cut plan was measured faster than two passes (`cuts`) and no slab was timed beside it."""
    if not transposing and cuts(layout, element_bytes, "forward"):
        return None
    reduce_pow2 = triton.next_power_of_2(layout.n_reduce)
    least = (LINE_BYTES if wide_run(layout, element_bytes, transposing) else SLAB_MIN_BYTES) // element_bytes
    cols = min(triton.next_power_of_2(layout.n_inner), max(least, pow2_floor(SLAB_TARGET_VALUES // reduce_pow2)))
    if cols * element_bytes < SLAB_MIN_BYTES or reduce_pow2 * cols > SLAB_MAX_VALUES:
        return None
    return cols


def plan_any_dim(layout: ReductionLayout, element_bytes: int, dtype_name: str, gpu: GpuSpec,
                 direction: str = "forward", *, block_i: int | None = None, block_r: int | None = None,
                 num_warps: int | None = None, block_o: int | None = None, transposing: bool = False,
                 written: ReductionLayout | None = None, safe: bool = False, compile: bool = True,
                 addresses: tuple[int, int] = (0, 0), packs: tuple[int, int] | None = None) -> AnyDimPlan:
    """The plan for a softmax down `layout`'s reduced axis (two passes where the slab is more than one program
    holds; plans/shared_dim.py's tiles shared by programs are a tuning sweep's opt-in). `transposing`: one side
    of the call steps down the reduced axis with unit stride (a transposed view in, a contiguous output), so a
    chunk spans at least REDUCE_MIN_BYTES of it. `block_i`, `block_r`, `block_o` and `num_warps` override the
    fitted shape (tuning sweeps); a `block_r` below the padded reduced axis means two passes. With `compile`, the
    fitted tile is compiled for `gpu` (with `written`, the other tensor's layout: y forward, dy backward; default
    `layout`'s) and halved while the compiler spills registers. `safe`: the forward's -inf columns give zeros.
    `addresses`: where the two tensors' data start within a 16-byte line; each is loaded in words of neighbouring
    values where its layout and address allow and that was measured faster (`word_packs`), or as `packs` says.
    """
    forced = any(v is not None for v in (block_i, block_r, num_warps, block_o))
    inner_pow2 = triton.next_power_of_2(layout.n_inner)
    reduce_pow2 = triton.next_power_of_2(layout.n_reduce)

    def columns(nbytes: float) -> int:
        return min(inner_pow2, max(1, pow2_floor(int(nbytes) // element_bytes)))
    narrowest = columns(INNER_MIN_BYTES)
    slab_values = narrowest_slab(layout, element_bytes)         # the slab one pass holds at the narrowest columns
    wanted = FILL_PROGRAMS_PER_SM * gpu.multiprocessor_count
    l2_bytes = l2_share_bytes(gpu)
    in_flight = RESIDENT_PER_SM * gpu.multiprocessor_count
    on_lines = wide_run(layout, element_bytes, transposing)
    slab = slab_columns(layout, element_bytes, transposing) if direction == "forward" else None

    def programs(o: int, i: int) -> int:
        return triton.cdiv(layout.n_outer, o) * triton.cdiv(layout.n_inner, i)

    def fitted(values: int) -> tuple[int, int, int]:
        if slab_values <= values:                                  # one pass: the widest columns that fit
            bi = min(columns(INNER_BYTES), max(1, values // reduce_pow2))
            br, bo = reduce_pow2, 1
            if bi >= inner_pow2:                                   # the whole inner run: several outer slices
                bo = min(max(1, values // (reduce_pow2 * bi)), triton.next_power_of_2(layout.n_outer))
        elif slab and reduce_pow2 * slab <= values * SLAB_MAX_VALUES // TILE_VALUES["forward"]:
            bi, br, bo = slab, reduce_pow2, 1                      # one pass over a larger slab (forward)
        elif on_lines:                                             # two passes on lines, chunks padded little
            bi, bo = columns(LINE_BYTES), 1
            br = min(reduce_pow2, pow2_floor(max(1, values // bi)))
            while br > 1 and triton.cdiv(layout.n_reduce, br) * br > CHUNK_PAD * layout.n_reduce:
                br //= 2
        else:                                                      # two passes, the slabs in flight within L2
            fit = l2_bytes / max(1, in_flight * layout.n_reduce)
            bi = max(narrowest, columns(min(TWO_PASS_MAX_BYTES, fit)))
            bo = 1
            br = min(reduce_pow2, max(1, values // bi))
            if transposing:
                br = min(reduce_pow2, max(br, REDUCE_MIN_BYTES // element_bytes))
        while programs(bo, bi) < wanted and (bo > 1 or bi > narrowest):
            if bo > 1:
                bo //= 2
            else:
                bi //= 2
                if br < reduce_pow2:                               # two passes: keep the chunk's values
                    br = min(reduce_pow2, br * 2)
        return bo, br, bi

    def warps_for(values: int) -> int:
        return max(1, min(MAX_WARPS, triton.next_power_of_2(triton.cdiv(values, VALUES_PER_THREAD[direction] * 32))))

    limit = TILE_VALUES[direction]
    res = None
    while True:
        bo, br, bi = fitted(limit)
        bo, br, bi = block_o or bo, min(block_r or br, reduce_pow2), block_i or bi
        if block_i is not None and block_r is None and block_o is None:
            br = reduce_pow2 if reduce_pow2 * bi <= limit else min(reduce_pow2, max(1, limit // bi))
        one_pass = br >= reduce_pow2
        held = one_pass and slab_values > limit                    # the larger slab (forward)
        warps = num_warps or warps_for(bo * br * bi)
        pack, pack_written = packs or word_packs(layout, written or layout, element_bytes, direction, addresses)
        # the plan as it will launch, its reason to come: what is compiled is its own kernel and constexprs
        draft = AnyDimPlan(gpu, direction, layout, dtype_name, bi, br, one_pass, warps, programs(bo, bi), None, bo,
                           safe and direction == "forward", pack=min(pack, bi), pack_written=min(pack_written, bi),
                           offsets_32=takes_32_bit_offsets(direction, one_pass, layout, written or layout))
        if not compile or runtime_interpreted():
            break
        res = launch_resources(draft, written)
        if forced or res.n_spills == 0 or limit <= 1024:
            break
        if held:
            slab = None                                            # the larger slab spilled: two passes
            continue
        limit //= 2                                                # spilled: a smaller tile
    if forced:
        why = dict(why=ReasonCode.FORCED)
    elif held:
        why = dict(why=ReasonCode.SLAB_HELD, slab_values=slab_values, max_values=limit, held_values=bo * br * bi,
                   column_bytes=min(bi, layout.n_inner) * element_bytes)
    else:
        why = dict(why=ReasonCode.SLAB_FITS if one_pass else ReasonCode.SLAB_OVER_LIMIT, slab_values=slab_values,
                   max_values=limit)
    # the columns a program reads: its tile's, or the inner run where the tile is padded past it
    reason = PlanReason.of(ReasonCode.ANY_DIM, block_o=bo, block_i=min(bi, layout.n_inner), block_r=br,
                           n_chunks=draft.n_chunks, num_warps=warps,
                           num_programs=programs(bo, bi), word_values=draft.pack, **why)
    return replace(draft, reason=reason, n_regs=res.n_regs if res else None, n_spills=res.n_spills if res else 0,
                   n_shared=res.shared_bytes if res else 0)


# A lane loads at most a 64-bit word of neighbouring values (Triton has no wider scalar; 16-byte vectors need the
# alignment proofs an arbitrary stride does not give).
WORD_BYTES = 8


def word_values(layout: ReductionLayout, element_bytes: int, address: int = 0) -> int:
    """How many neighbouring inner values (4, 2 or 1) a lane can load as one word from a tensor of this layout whose
    data starts at byte `address`: the inner run is unit-stride, and every element offset a program starts a word
    at (each outer and reduced step, the run's length) is a multiple of the count, as is the address in bytes of
    the word. Where the strides are not, values are loaded one by one (2 bytes a lane for float16)."""
    steps = [layout.n_inner]
    if layout.n_reduce > 1:
        steps.append(layout.reduce_stride)
    if layout.n_outer // max(1, layout.n_outer2) > 1:
        steps.append(layout.outer_stride)
    if layout.n_outer2 > 1:
        steps.append(layout.outer2_stride)
    for count in (4, 2):
        word = count * element_bytes
        if (word <= WORD_BYTES and layout.inner_stride == 1 and address % word == 0
                and all(s % count == 0 for s in steps)):
            return count
    return 1


# Words (word_values, above) are used for 2-byte values (a lane then moves 4 or 8 bytes, where an odd stride would
# leave it 2), never for 4-byte ones. Timed on the H200 on the strided classes' draws of seeds 2727 and 3838 (48
# shapes, each plan beside itself with words; tuning/h200-any-dim-words-20261206.csv): 2-byte values ran 0.34 ->
# 0.50, 0.42 -> 0.64 and 0.72 -> 0.89x copy at narrow inner runs (backward), 0.37 -> 0.55 and 0.49 -> 0.59 forward,
# 0.04 below at worst; float32's 8-byte words were as often slower as faster (275602x24x4 backward 0.80 -> 0.58).
WORD_MAX_ELEMENT_BYTES = 2


def word_packs(layout: ReductionLayout, written: ReductionLayout, element_bytes: int, direction: str,
               addresses: tuple[int, int] = (0, 0)) -> tuple[int, int]:
    """Values a lane loads as one word from the layout's tensor and from the written one (1: one value), for
    either direction (the rule is the same both ways)."""
    if element_bytes > WORD_MAX_ELEMENT_BYTES:
        return 1, 1
    return word_values(layout, element_bytes, addresses[0]), word_values(written, element_bytes, addresses[1])


# Where the cut plan is faster than two passes: the forward over an inner run shorter than CUT_INNER_BYTES (16-38 byte
# runs: 0.36-0.56x copy against 0.29-0.48, tuning/h100-split-dim-tune-2727-20261206.csv; a 108-byte run: 0.42 cut
# against 0.62 in two passes, h100-strided-slab-tune-31337-4711.csv; docs/performance.md).
CUT_INNER_BYTES = 64


def cuts(layout: ReductionLayout, element_bytes: int, direction: str) -> bool:
    """Whether cutting the tiles into parts is faster than two passes (measured): the forward, a short inner run."""
    return direction == "forward" and layout.n_inner * element_bytes < CUT_INNER_BYTES


# The shapes a program may take: (column bytes, chunk values forward; the backward holds y and dy, half as many
# values each). Each is compiled for the GPU (both launches), and the plan keeps the one whose resident programs
# hold the most bytes of their chunks per SM, the wider columns where two hold about as much (IN_FLIGHT_TIE): a
# 64-column bf16 chunk down a transposed view compiled to 233 registers where 32 columns took 127, so the widest
# column is not always the most in flight (docs/performance.md).
CUT_SHAPES = ((64, 2048), (128, 2048), (128, 4096), (256, 4096))
CUT_DEFAULT_SHAPE = (128, 4096)      # where nothing is compiled (the interpreter)
IN_FLIGHT_TIE = 0.9
# Enough parts that the GPU has CUT_PROGRAMS_PER_SM programs an SM; at most MAX_PARTS parts a tile (the words a
# program of the second launch gathers: 8 bytes per part per column).
CUT_PROGRAMS_PER_SM = 8
MAX_PARTS = 64
# Where the call transposes (a strided view in, a contiguous y out), the forward that would walk its tiles twice takes
# parts that wait for each other in one launch (`takes_waiting_parts`), of WAIT_SHAPE (column bytes, chunk values),
# sized for CUT_PROGRAMS_PER_SM programs an SM. Timed on an H100 at the four transposed draws of seeds 27182 and 9018
# that the fitted plan walked twice (tuning/h100-waiting-parts-tune-27182-9018-20261208.csv): 0.49, 0.54, 0.54 and
# 0.64x copy against two passes' 0.31, 0.28, 0.39 and 0.50, and ahead of the best two-launch cut (0.48, 0.53, 0.48,
# 0.60); at a channel softmax walked twice (18 x 1351 x 762 float32) this shape ran 0.44 against 0.52, so the rule
# keeps to the transposing calls.
WAIT_SHAPE = (32, 2048)


def plan_split_dim(layout: ReductionLayout, element_bytes: int, dtype_name: str, gpu: GpuSpec, direction: str,
                   *, written: ReductionLayout | None = None, transposing: bool = False, safe: bool = False,
                   compile: bool = True, column_bytes: int | None = None, values: int | None = None,
                   per_sm: int | None = None, num_warps: int | None = None,
                   waits: bool = False) -> AnyDimPlan | None:
    """The plan whose programs each walk one part of a column tile's reduced axis, twice, in two launches
    (kernels/split_dim.py), or None where it does not apply: float64 (the words hold float32), fewer than two
    parts, every shape spills, or (unless forced) where two passes are as fast (`cuts`). `column_bytes`, `values`,
    `per_sm` and `num_warps` force one shape (tuning sweeps); `transposing`: a side of the call steps down the
    reduced axis with unit stride, so a chunk spans at least REDUCE_MIN_BYTES of it. `waits`: one launch whose
    programs wait for their tile's other parts, each part small enough that the parts of the programs resident at
    once fit L2_SHARE of L2, so that each second read is L2's; unless forced, of WAIT_SHAPE, and only where
    `takes_waiting_parts`."""
    forced = any(v is not None for v in (column_bytes, values, per_sm, num_warps))
    measured = takes_waiting_parts(direction, transposing) if waits else cuts(layout, element_bytes, direction)
    if dtype_name == "float64" or not (forced or measured):
        return None
    judging = compile and not runtime_interpreted()
    half = 2 if direction == "backward" else 1
    if forced or not judging or waits:
        default = WAIT_SHAPE if waits else CUT_DEFAULT_SHAPE
        shapes = ((column_bytes or default[0], values or default[1] // half),)
    else:
        shapes = tuple((b, v // half) for b, v in CUT_SHAPES)
    made = [_shaped(layout, element_bytes, dtype_name, gpu, direction, written, transposing, safe, b, v,
                    per_sm or CUT_PROGRAMS_PER_SM, num_warps, judging, waits) for b, v in shapes]
    made = [p for p in made if p is not None and (forced or not p.n_spills)]
    if not made or forced:
        return made[0] if made else None
    best = made[0]
    if judging:       # the widest columns among the shapes that hold about as much as the most
        held = [_bytes_in_flight(p, element_bytes) for p in made]
        best = max((ph for ph in zip(made, held) if ph[1] >= IN_FLIGHT_TIE * max(held)),
                   key=lambda ph: (ph[0].block_i, ph[1]))[0]
    if waits:
        why = dict(why=ReasonCode.SLAB_WAITS)
    else:
        why = dict(why=ReasonCode.SLAB_CUT, inner_bytes=layout.n_inner * element_bytes, cut_bytes=CUT_INNER_BYTES)
    reason = PlanReason.of(ReasonCode.ANY_DIM, block_o=1, block_i=min(best.block_i, layout.n_inner),
                           block_r=best.block_r, n_chunks=best.part_r // best.block_r, num_warps=best.num_warps,
                           num_programs=best.num_programs, word_values=1,
                           slab_values=narrowest_slab(layout, element_bytes),
                           max_values=best.block_r * best.block_i, parts=best.parts, **why)
    return replace(best, reason=reason)


def takes_waiting_parts(direction: str, transposing: bool) -> bool:
    """Whether a strided softmax that would walk its tiles twice takes parts that wait for each other in one launch
    (measured faster, WAIT_SHAPE): the forward of a call that transposes."""
    return direction == "forward" and transposing


def _bytes_in_flight(plan: AnyDimPlan, element_bytes: int) -> float:
    """Bytes of their chunks the programs resident on one SM hold (y and dy backward): programs per SM as the
    occupancy rules give them for the compiled kernel, at most the grid's share of an SM."""
    from softmax_core.hardware.occupancy import occupancy

    per_sm = occupancy(plan.gpu, plan.n_regs, plan.n_shared, plan.num_warps, 1).programs_per_sm
    resident = min(per_sm, plan.num_programs / plan.gpu.multiprocessor_count)
    tensors = 2 if plan.direction == "backward" else 1
    return resident * plan.block_r * plan.block_i * element_bytes * tensors


def _shaped(layout, element_bytes, dtype_name, gpu, direction, written, transposing, safe, column_bytes, values,
            per_sm, num_warps, judging, waits=False) -> AnyDimPlan | None:
    """The cut plan of one shape (None where it gives fewer than two parts), compiled where `judging`: each
    launch, the registers and shared memory the larger of the two. Enough parts that `per_sm` programs an SM fill
    the GPU; where the parts wait for each other, also few enough chunks a part that the parts of the programs
    resident at once fit L2's share, and addressed by 32-bit offsets within a slice where every slice spans under
    2**31 elements: compiled offline with Triton 3.6 (the H200's) at seed 27182's strided draws, the waiting forms
    of 2,048-value chunks went from 150-215 registers to 128-168 (6 -> 8 programs an SM at 32-byte columns), while
    the two-launch form's were as often more as fewer (127 -> 168, 216 -> 168), so that form keeps 64-bit pointers."""
    inner_pow2 = triton.next_power_of_2(layout.n_inner)
    reduce_pow2 = triton.next_power_of_2(layout.n_reduce)
    bi = min(inner_pow2, max(1, pow2_floor(column_bytes // element_bytes)))
    br = min(reduce_pow2, max(1, pow2_floor(values // bi)))
    if transposing:
        br = min(reduce_pow2, max(br, REDUCE_MIN_BYTES // element_bytes))
    n_chunks = triton.cdiv(layout.n_reduce, br)
    n_tiles = layout.n_outer * triton.cdiv(layout.n_inner, bi)
    wanted_parts = triton.cdiv(per_sm * gpu.multiprocessor_count, n_tiles)
    chunks_per_part = pow2_floor(max(1, n_chunks // wanted_parts))
    if waits:
        tensors = 2 if direction == "backward" else 1
        part_bytes = l2_share_bytes(gpu) / (per_sm * gpu.multiprocessor_count)
        chunks_per_part = min(chunks_per_part, pow2_floor(max(1, int(part_bytes // (br * bi * element_bytes
                                                                                     * tensors)))))
    while triton.cdiv(n_chunks, chunks_per_part) > MAX_PARTS:
        chunks_per_part *= 2
    part_r = br * chunks_per_part
    parts = triton.cdiv(layout.n_reduce, part_r)
    if parts < 2:
        return None
    warps = num_warps or max(1, min(MAX_WARPS, triton.next_power_of_2(
        triton.cdiv(br * bi, VALUES_PER_THREAD[direction] * 32))))
    plan = AnyDimPlan(gpu, direction, layout, dtype_name, bi, br, False, warps, n_tiles * parts,
                      PlanReason.of(ReasonCode.ANY_DIM, block_o=1, block_i=min(bi, layout.n_inner), block_r=br,
                                    n_chunks=chunks_per_part, num_warps=warps, num_programs=n_tiles * parts,
                                    word_values=1, why=ReasonCode.FORCED),
                      1, safe and direction == "forward", part_r=part_r, waits=waits,
                      offsets_32=waits and slices_span_32_bits(layout, written or layout))
    if not judging:
        return plan
    found = [launch_resources(plan, written, launch) for launch in plan.launches]
    return replace(plan, n_regs=max(r.n_regs for r in found), n_spills=max(r.n_spills for r in found),
                   n_shared=max(r.shared_bytes for r in found))


def plan_strided(layout: ReductionLayout, element_bytes: int, dtype_name: str, gpu: GpuSpec,
                 direction: str = "forward", *, transposing: bool = False, written: ReductionLayout | None = None,
                 safe: bool = False, compile: bool = True, addresses: tuple[int, int] = (0, 0)) -> AnyDimPlan:
    """The plan for a softmax down `layout`'s strided reduced axis (`written`: the other tensor's layout, y
    forward and dy backward; `transposing`: a side steps down the reduced axis with unit stride): the any-dim
    plan where it holds the slab in one pass; where it walks its tiles twice, the tiles cut into parts that wait for
    each other in one launch (`takes_waiting_parts`) or that meet between two launches (`cuts`) where that was
    measured faster, else two passes. `addresses`: where the two tensors' data start within a 16-byte line (the
    any-dim plan's words)."""
    plan = plan_any_dim(layout, element_bytes, dtype_name, gpu, direction, transposing=transposing,
                        written=written, safe=safe, compile=compile, addresses=addresses)
    if plan.one_pass:
        return plan
    cut = plan_split_dim(layout, element_bytes, dtype_name, gpu, direction, written=written,
                         transposing=transposing, safe=safe, compile=compile,
                         waits=takes_waiting_parts(direction, transposing))
    return plan if cut is None else cut


def runtime_interpreted() -> bool:
    return runtime.INTERPRETED
