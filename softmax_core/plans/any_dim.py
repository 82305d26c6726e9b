"""Plans for a softmax over a non-contiguous axis (kernels/any_dim.py): how the tensor's dims fold into the
kernel's index space, the tile of inner columns each program owns, and whether the reduced axis is held whole
or walked twice.

The kernel's index space is (outer, outer2, reduce, inner): `reduce` is the softmax dim, `inner` the dims a
program's tile spans (BLOCK_I neighbouring columns), `outer` and `outer2` the rest, one program per tile per
outer index. Each group folds dims that step evenly in every tensor of the call, so one stride per group per
tensor says where an element is: x's strides and y's may differ (y is contiguous, as torch.softmax returns
it; x may be a transposed or channels-last view). `inner` is chosen to be unit-stride in x when x has a
unit-stride dim besides the softmax dim (the loads coalesce), else unit-stride in y (the stores do).

Pure functions of shapes, strides and a `GpuSpec`: nothing here touches a tensor or a device.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, replace
from functools import lru_cache

import triton

from softmax_core.hardware.gpu import GpuSpec
from softmax_core.hardware import runtime
from softmax_core.plans.kernel_jobs import any_dim_compile_job
from softmax_core.plans.reasons import PlanReason, ReasonCode

# The tile a program owns is [BLOCK_O outer slices, BLOCK_R down the reduced axis, BLOCK_I inner columns], sized
# by values and bytes, then compiled for the GPU: a tile that spills registers is halved (plan_any_dim). Fitted on
# the class sweep's seed-1 draw on the H200 (`python -m bench_tools.class_sweep --seed 1`, classes dim_inner_wide,
# dim_inner_narrow, transposed; in assets/benchmarks/classes/: ...seed1-20261201T2358, this planner's first form
# with 16,384-value slabs on up to 16 warps, and ...seed1-20261202T0030, these constants; history/...T2357 is the
# planner before both), and checked on the seed-2 draw (...seed2-20261202T0027), measured once, after:
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
# - where a side of the call steps down the reduced axis with unit stride (a transposed view in, a contiguous y
#   out), a chunk spans at least REDUCE_MIN_BYTES of it, so those stores are whole sectors too.
REDUCE_MIN_BYTES = 128
# The any-dim kernels, by direction (module:function, as a CompileJob names them).
ANY_DIM_KERNEL = {"forward": "softmax_core.kernels.any_dim:softmax_any_dim_kernel",
                  "backward": "softmax_core.kernels.any_dim:softmax_backward_any_dim_kernel"}
SHARED_DIM_KERNEL = {"forward": "softmax_core.kernels.shared_dim:softmax_shared_dim_kernel",
                     "backward": "softmax_core.kernels.shared_dim:softmax_backward_shared_dim_kernel"}
SPLIT_DIM_KERNEL = {"forward": "softmax_core.kernels.split_dim:softmax_split_dim_kernel",
                    "backward": "softmax_core.kernels.split_dim:softmax_backward_split_dim_kernel"}


@dataclass(frozen=True)
class ReductionLayout:
    """One tensor in the kernel's index space: element (o, r, i), o = o1 * n_outer2 + o2, lies at
    o1 * outer_stride + o2 * outer2_stride + r * reduce_stride + i * inner_stride."""
    n_outer: int                    # o1 and o2 together
    n_reduce: int
    n_inner: int
    outer_stride: int
    reduce_stride: int
    inner_stride: int = 1
    n_outer2: int = 1
    outer2_stride: int = 0

    @property
    def strides(self) -> tuple[int, int, int, int]:
        """(outer, outer2, reduce, inner): the order the kernels take them in."""
        return (self.outer_stride, self.outer2_stride, self.reduce_stride, self.inner_stride)


@dataclass(frozen=True)
class DimGroups:
    """Which of a tensor's dims fold into each axis of the index space (each group outermost first)."""
    outer: tuple[tuple[int, ...], ...]     # at most two groups
    reduce: int
    inner: tuple[int, ...]


def contiguous_strides(shape: tuple[int, ...]) -> tuple[int, ...]:
    strides, step = [], 1
    for size in reversed(shape):
        strides.append(step)
        step *= max(size, 1)
    return tuple(reversed(strides))


def _folds(shape, strides_of, outer_dim: int, inner_dim: int) -> bool:
    """Whether `outer_dim` steps exactly over `inner_dim` in every tensor (the two fold into one axis)."""
    return all(s[outer_dim] == s[inner_dim] * shape[inner_dim] for s in strides_of)


def dim_groups(shape: tuple[int, ...], dim: int, *strides_of: tuple[int, ...]) -> DimGroups | None:
    """The index space for tensors of `shape` with these strides (the first is the one read, the last the one
    written), softmax over `dim`; None when the softmax dim is unit-stride in both (the row kernels' case).
    More than two outer groups can come back (the dims do not fold): `layout_in` then gives None."""
    read, write = strides_of[0], strides_of[-1]
    rest = [d for d in range(len(shape)) if d != dim and shape[d] != 1]
    unit_read = [d for d in rest if read[d] == 1]
    unit_write = [d for d in rest if write[d] == 1]
    if unit_read:
        first = unit_read[0]
    elif unit_write and write[dim] != 1:
        first = unit_write[0]
    else:
        return None                    # the softmax dim is the contiguous one: rows
    inner = [first]
    rest.remove(first)
    grown = True
    while grown:
        grown = False
        for d in rest:
            if _folds(shape, strides_of, d, inner[0]):
                inner.insert(0, d)
                rest.remove(d)
                grown = True
                break
    rest.sort(key=lambda d: read[d], reverse=True)
    outer: list[list[int]] = []
    for d in rest:
        if outer and _folds(shape, strides_of, outer[-1][-1], d):
            outer[-1].append(d)
        else:
            outer.append([d])
    return DimGroups(tuple(tuple(g) for g in outer), dim, tuple(inner))


def layout_in(groups: DimGroups, shape: tuple[int, ...], strides: tuple[int, ...]) -> ReductionLayout | None:
    """A tensor of `shape` and `strides` in `groups`' index space, or None when its dims do not fold as the
    groups do (it must be copied into a layout that does)."""
    def axis(group: tuple[int, ...]) -> tuple[int, int]:
        for outer_dim, inner_dim in zip(group, group[1:]):
            if strides[outer_dim] != strides[inner_dim] * shape[inner_dim]:
                raise ValueError
        return math.prod(shape[d] for d in group), (strides[group[-1]] if group else 0)

    if len(groups.outer) > 2:
        return None
    try:
        outer = [axis(g) for g in groups.outer] + [(1, 0)] * (2 - len(groups.outer))
        (n1, s1), (n2, s2) = outer
        n_inner, inner_stride = axis(groups.inner)
    except ValueError:
        return None
    return ReductionLayout(n1 * n2, shape[groups.reduce], n_inner, s1, strides[groups.reduce], inner_stride, n2, s2)


def reduction_layout(shape: tuple[int, ...], strides: tuple[int, ...], dim: int) -> ReductionLayout | None:
    """x's layout in the index space of a softmax over `dim` whose output is contiguous (torch's strides); None
    when x's dims do not fold (it is copied first). Where x's softmax dim is unit-stride and so is the
    output's (the row kernels' case) the layout is (rows, n_reduce, 1): n_inner = 1 tells it apart."""
    shape, strides = tuple(shape), tuple(strides)
    groups = dim_groups(shape, dim, strides, contiguous_strides(shape))
    if groups is None:
        n_reduce = shape[dim] if shape else 1
        return ReductionLayout(math.prod(shape) // max(n_reduce, 1) if n_reduce else 0, n_reduce, 1,
                               n_reduce, strides[dim] if shape else 1)
    return layout_in(groups, shape, strides)


def transposes(*layouts: ReductionLayout) -> bool:
    """Whether a tensor of the call steps down the reduced axis with unit stride (so a chunk must span it)."""
    return any(l.reduce_stride == 1 and l.n_reduce > 1 for l in layouts)


@lru_cache(maxsize=4096)
def forward_groups(shape: tuple, strides: tuple, dim: int) -> tuple[DimGroups, ReductionLayout | None,
                                                                    ReductionLayout] | None:
    """(the index space, x's layout in it or None when x must be copied to fold, the contiguous y's layout) for a
    softmax over `dim` of a tensor with this shape and these strides; None for the row kernels' case."""
    out = contiguous_strides(shape)
    groups = dim_groups(shape, dim, strides, out)
    if groups is None:
        return None
    x_layout = layout_in(groups, shape, strides)
    if x_layout is None:                       # x's dims do not fold: it is read from a contiguous copy
        groups = dim_groups(shape, dim, out, out)
        if groups is None:
            return None
    return groups, x_layout, layout_in(groups, shape, out)


@dataclass(frozen=True)
class AnyDimPlan:
    gpu: GpuSpec
    direction: str                  # "forward" | "backward"
    layout: ReductionLayout
    dtype: str
    block_i: int                    # inner columns per program
    block_r: int                    # one pass: the reduced axis padded; two passes: values per chunk down it
    one_pass: bool
    num_warps: int
    num_programs: int
    reason: PlanReason | None       # why (None only in a draft the planner is compiling)
    block_o: int = 1                # outer slices per program (more than 1 only when block_i covers the inner run)
    safe: bool = False              # forward: a column of only -inf gives zeros (else NaN, as torch)
    n_regs: int | None = None       # the compiled kernel's registers per thread (None: not compiled)
    n_spills: int = 0
    n_shared: int = 0               # the compiled kernel's shared memory per program, bytes (0: not compiled)
    split: int = 1                  # programs that share a column tile's reduced axis (kernels/shared_dim.py)
    part_r: int = 0                 # reduced indices per part where the reduced axis is cut into parts, one
                                    # program each, in two launches (kernels/split_dim.py); 0 where it is not

    @property
    def grid(self) -> tuple[int]:
        return (self.num_programs,)

    @property
    def shares(self) -> bool:     # programs share a tile: the launch then takes a buffer of `n_slots` slots
        return self.split > 1

    @property
    def cut(self) -> bool:        # the reduced axis is cut into parts: two launches and a buffer of slots
        return self.part_r > 0

    @property
    def parts(self) -> int:
        """Programs per column tile: the parts of its reduced axis (1 where it is not cut)."""
        return triton.cdiv(self.layout.n_reduce, self.part_r) if self.cut else 1

    @property
    def n_tiles(self) -> int:
        return triton.cdiv(self.layout.n_outer, self.block_o) * triton.cdiv(self.layout.n_inner, self.block_i)

    @property
    def n_slots(self) -> int:
        """One 64-bit slot per column of every tile per program sharing it or per part (0 for the others)."""
        if self.cut:
            return self.n_tiles * triton.next_power_of_2(self.parts) * self.block_i
        return self.n_tiles * self.block_i * self.split if self.shares else 0

    @property
    def slots_filled(self) -> bool:
        """Whether the slots start as NOT_PUBLISHED (programs that wait for their peers read them); the parts'
        slots are all written by the first launch before the second reads any."""
        return not self.cut

    @property
    def kernel(self) -> str:
        """The kernel every launch of this plan runs (module:function)."""
        return (SPLIT_DIM_KERNEL if self.cut else SHARED_DIM_KERNEL if self.shares else ANY_DIM_KERNEL)[self.direction]

    @property
    def launches(self) -> tuple[tuple[tuple[str, object], ...], ...]:
        """The constexprs of each launch, in order: one launch; for parts, a launch that writes each part's words
        and one that reads them (PHASE 1, 2); for shared tiles under the interpreter (which runs programs one
        after another) a publishing launch and a finishing one."""
        if self.cut:
            return tuple(self.constexprs[:-1] + (("PHASE", p),) for p in (1, 2))
        if not self.shares:
            return (self.constexprs,)
        return tuple(self.constexprs[:-2] + (("PHASE", p), self.constexprs[-1]) for p in runtime.launch_phases())

    @property
    def n_chunks(self) -> int:
        return 1 if self.one_pass else triton.cdiv(self.layout.n_reduce, self.block_r)

    @property
    def constexprs(self) -> tuple[tuple[str, object], ...]:
        """The kernel's constexprs for this plan, in one place: the planner compiles these (for parts, those of
        the launch that reads the words, PHASE 2) and the launch (launch/any_dim.py) passes these, so the
        registers the plan read are those of the kernel that runs."""
        if self.cut:
            return split_dim_constexprs(self.direction, self.block_r, self.block_i, self.part_r, self.parts,
                                        self.safe)
        if self.shares:
            return shared_dim_constexprs(self.direction, self.block_r, self.block_i, self.split, self.safe)
        return any_dim_constexprs(self.direction, self.block_o, self.block_r, self.block_i, self.one_pass,
                                  self.safe, self.dtype == "float64")


def shared_dim_constexprs(direction: str, block_r: int, block_i: int, split: int,
                          safe: bool) -> tuple[tuple[str, object], ...]:
    """kernels/shared_dim.py's constexprs in its one-launch form (PHASE 0: wait for the peers)."""
    from softmax_core.kernels.row_slots import SPIN_LIMIT

    head = (("BLOCK_R", block_r), ("BLOCK_I", block_i), ("SPLIT", split), ("PEERS", triton.next_power_of_2(split)))
    return head + ((("SAFE", safe),) if direction == "forward" else ()) + (("PHASE", 0), ("SPIN", SPIN_LIMIT))


def split_dim_constexprs(direction: str, block_r: int, block_i: int, part_r: int, parts: int,
                         safe: bool) -> tuple[tuple[str, object], ...]:
    """kernels/split_dim.py's constexprs, PHASE 2's (the launch that gathers the parts' words)."""
    head = (("BLOCK_R", block_r), ("BLOCK_I", block_i), ("PART_R", part_r), ("PEERS", triton.next_power_of_2(parts)))
    return head + ((("SAFE", safe),) if direction == "forward" else ()) + (("PHASE", 2),)


def any_dim_constexprs(direction: str, block_o: int, block_r: int, block_i: int, one_pass: bool, safe: bool,
                       fp64: bool) -> tuple[tuple[str, object], ...]:
    tile = (("BLOCK_O", block_o), ("BLOCK_R", block_r), ("BLOCK_I", block_i), ("ONE_PASS", one_pass))
    return tile + ((("SAFE", safe),) if direction == "forward" else ()) + (("FP64", fp64),)


def pow2_floor(n: int) -> int:
    return 1 << (max(1, n).bit_length() - 1)


def plan_any_dim(layout: ReductionLayout, element_bytes: int, dtype_name: str, gpu: GpuSpec,
                 direction: str = "forward", *, block_i: int | None = None, block_r: int | None = None,
                 num_warps: int | None = None, block_o: int | None = None, transposing: bool = False,
                 written: ReductionLayout | None = None, safe: bool = False, compile: bool = True) -> AnyDimPlan:
    """The plan for a softmax down `layout`'s reduced axis (two passes where the slab is more than one program
    holds; plans/shared_dim.py's tiles shared by programs are a tuning sweep's opt-in). `transposing`: one side
    of the call steps down the reduced axis with unit stride (a transposed view in, a contiguous output), so a
    chunk spans at least REDUCE_MIN_BYTES of it. `block_i`, `block_r`, `block_o` and `num_warps` override the
    fitted shape (tuning sweeps); a `block_r` below the padded reduced axis means two passes. With `compile`, the
    fitted tile is compiled for `gpu` (with `written`, the other tensor's layout: y forward, dy backward; default
    `layout`'s) and halved while the compiler spills registers. `safe`: the forward's -inf columns give zeros.
    """
    forced = any(v is not None for v in (block_i, block_r, num_warps, block_o))
    inner_pow2 = triton.next_power_of_2(layout.n_inner)
    reduce_pow2 = triton.next_power_of_2(layout.n_reduce)

    def columns(nbytes: float) -> int:
        return min(inner_pow2, max(1, pow2_floor(int(nbytes) // element_bytes)))
    narrowest = columns(INNER_MIN_BYTES)
    wanted = FILL_PROGRAMS_PER_SM * gpu.multiprocessor_count
    l2_bytes = (gpu.l2_mib or 0) * 2**20 * L2_SHARE
    in_flight = RESIDENT_PER_SM * gpu.multiprocessor_count

    def programs(o: int, i: int) -> int:
        return triton.cdiv(layout.n_outer, o) * triton.cdiv(layout.n_inner, i)

    def fitted(values: int) -> tuple[int, int, int]:
        if reduce_pow2 * columns(ONE_PASS_MIN_BYTES) <= values:    # one pass: the widest columns that fit
            bi = min(columns(INNER_BYTES), max(1, values // reduce_pow2))
            br, bo = reduce_pow2, 1
            if bi >= inner_pow2:                                   # the whole inner run: several outer slices
                bo = min(max(1, values // (reduce_pow2 * bi)), triton.next_power_of_2(layout.n_outer))
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
        warps = num_warps or warps_for(bo * br * bi)
        # the plan as it will launch, its reason to come: what is compiled is its own kernel and constexprs
        draft = AnyDimPlan(gpu, direction, layout, dtype_name, bi, br, one_pass, warps, programs(bo, bi), None, bo,
                           safe and direction == "forward")
        if not compile or runtime_interpreted():
            break
        from softmax_core.hardware.compile import kernel_resources

        job = any_dim_compile_job(layout, written or layout, dtype_name, gpu, direction, draft.constexprs, warps,
                                  draft.kernel)
        res = kernel_resources(job)
        if forced or res.n_spills == 0 or limit <= 1024:
            break
        limit //= 2                                                # spilled: a smaller tile
    n_chunks = 1 if one_pass else triton.cdiv(layout.n_reduce, br)
    if forced:
        why = dict(why=ReasonCode.FORCED)
    else:
        why = dict(why=ReasonCode.SLAB_FITS if one_pass else ReasonCode.SLAB_OVER_LIMIT,
                   slab_values=reduce_pow2 * columns(ONE_PASS_MIN_BYTES), max_values=limit)
    # the columns a program reads: its tile's, or the inner run where the tile is padded past it
    reason = PlanReason.of(ReasonCode.ANY_DIM, block_o=bo, block_i=min(bi, layout.n_inner), block_r=br,
                           n_chunks=n_chunks, num_warps=warps,
                           num_programs=programs(bo, bi), **why)
    return replace(draft, reason=reason, n_regs=res.n_regs if res else None, n_spills=res.n_spills if res else 0,
                   n_shared=res.shared_bytes if res else 0)


def runtime_interpreted() -> bool:
    return runtime.INTERPRETED
