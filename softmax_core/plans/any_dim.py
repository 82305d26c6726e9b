"""Plans for a softmax over a non-contiguous axis (kernels/any_dim.py), over the index space plans/strided.py folds
a tensor into: the tile of inner columns each program owns; whether the reduced axis is held whole or walked
twice; each plan compiled for the GPU it is for. Tiles cut into parts are plans/split_dim.py's; `plan_strided`
(plans/choose.py) is the planner's choice among them.

Pure functions of layouts and a `GpuSpec`: nothing here touches a tensor or a device.
"""
from __future__ import annotations

from dataclasses import replace

import triton

from softmax_core.hardware.gpu import GpuSpec
from softmax_core.hardware import runtime
from softmax_core.plans.reasons import PlanReason, ReasonCode
from softmax_core.plans.strided import AnyDimPlan, ReductionLayout, takes_32_bit_offsets

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


# The any-dim kernels' index space, in the order they take each tensor's strides.
AXES = ("outer", "outer2", "reduce", "inner")


def any_dim_compile_job(layout: ReductionLayout, written: ReductionLayout, dtype_name: str, gpu: GpuSpec,
                        direction: str, constexprs, num_warps: int, kernel: str, pointers: dict | None = None):
    """The compile job of one any-dim launch, specialised as Triton's JIT will launch it on a fresh contiguous
    output and an aligned input: pointers 16-byte aligned, integer arguments equal to 1 constants, the others
    that are multiples of 16 marked so (the unit stride is what makes the loads vectors)."""
    from softmax_core.hardware import dtypes
    from softmax_core.hardware.compile import CompileJob
    from softmax_core.hardware.signatures import kernel_signature

    signature, values = kernel_signature(kernel, dtypes.of(dtype_name).triton_pointer, "i32", dict(constexprs),
                                         pointers)
    sides = ("x", "y") if direction == "forward" else ("y", "dy")
    ints = dict(zip([f"{sides[0]}_{a}" for a in AXES], layout.strides))
    ints.update(zip([f"{sides[1]}_{a}" for a in AXES], written.strides))
    ints.update(n_outer=layout.n_outer, n_outer2=layout.n_outer2, n_reduce=layout.n_reduce, n_inner=layout.n_inner)
    sig, consts, divisible = [], dict(values), []
    for name, kind in signature:
        value = ints.get(name)
        if kind == "i32" and value == 1:
            sig.append((name, "constexpr"))
            consts[name] = 1
            continue
        sig.append((name, kind))
        if kind.startswith("*") or (value is not None and value % 16 == 0):
            divisible.append(name)
    order = [name for name, _ in sig]
    return CompileJob(kernel, tuple(sig), tuple(sorted(consts.items(), key=lambda kv: order.index(kv[0]))),
                      num_warps, 1, gpu.compile_target, on_device=gpu.live, divisible=tuple(divisible))


def launch_resources(plan: AnyDimPlan, written: ReductionLayout | None = None, constexprs=None):
    """The registers, spills and shared memory of one launch of `plan` (its own constexprs, or `constexprs`: one of
    `plan.launches`), compiled for its GPU as the JIT will specialise it; `written`: the other tensor's layout."""
    from softmax_core.hardware.compile import kernel_resources

    pointers = {"slots_ptr": "*i64"} if plan.n_slots else None
    return kernel_resources(any_dim_compile_job(plan.layout, written or plan.layout, plan.dtype, plan.gpu,
                                                plan.direction, constexprs or plan.constexprs, plan.num_warps,
                                                plan.kernel, pointers))


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
    l2_bytes = (gpu.l2_mib or 0) * 2**20 * L2_SHARE
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


def runtime_interpreted() -> bool:
    return runtime.INTERPRETED
