"""A softmax over a strided axis, as the kernels see it: the index space a tensor's dims fold into (outer, outer2,
reduce, inner: `ReductionLayout`, one stride per axis per tensor) and the plan of a launch over it (`AnyDimPlan`:
its kernel and the constexprs of each of its launches, here and nowhere else). plans/any_dim.py chooses the plan.

The kernel's index space is (outer, outer2, reduce, inner): `reduce` is the softmax dim, `inner` the dims a
program's tile spans (BLOCK_I neighbouring columns), `outer` and `outer2` the rest, one program per tile per
outer index. Each group folds dims that step evenly in every tensor of the call, so one stride per group per
tensor says where an element is: x's strides and y's may differ (y is contiguous, as torch.softmax returns
it; x may be a transposed or channels-last view). `inner` is chosen to be unit-stride in x when x has a
unit-stride dim besides the softmax dim (the loads coalesce), else unit-stride in y (the stores do).

Pure functions of shapes and strides: nothing here touches a tensor or a device.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from functools import lru_cache

import triton

from softmax_core.hardware import runtime
from softmax_core.hardware.gpu import GpuSpec
from softmax_core.plans.reasons import PlanReason

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
    pack: int = 1                   # values a lane loads as one word from `layout`'s tensor (x forward; y and dx
                                    # backward): 2 or 4 where its inner run is unit-stride and word-aligned
    pack_written: int = 1           # the same for the other tensor (y forward, dy backward)
    offsets_32: bool = False        # the kernel's element offsets within an outer slice are 32-bit
    waits: bool = False             # parts: one launch, each program waiting for its tile's other parts (PHASE 0)

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
        slots of two launches are all written by the first before the second reads any."""
        return not self.cut or self.waits

    @property
    def kernel(self) -> str:
        """The kernel every launch of this plan runs (module:function)."""
        return (SPLIT_DIM_KERNEL if self.cut else SHARED_DIM_KERNEL if self.shares else ANY_DIM_KERNEL)[self.direction]

    @property
    def launches(self) -> tuple[tuple[tuple[str, object], ...], ...]:
        """The constexprs of each launch, in order: one launch; for parts, a launch that writes each part's words
        and one that reads them (PHASE 1, 2), or one whose programs wait for each other (PHASE 0); for shared tiles
        and waiting parts under the interpreter (which runs programs one after another) a publishing launch and a
        finishing one."""
        if not (self.shares or self.cut):
            return (self.constexprs,)
        phases = (1, 2) if self.cut and not self.waits else runtime.launch_phases()
        return tuple(self.constexprs[:-2] + (("PHASE", p), self.constexprs[-1]) for p in phases)

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
                                        self.safe, self.waits, self.offsets_32)
        if self.shares:
            return shared_dim_constexprs(self.direction, self.block_r, self.block_i, self.split, self.safe)
        return any_dim_constexprs(self.direction, self.block_o, self.block_r, self.block_i, self.one_pass,
                                  self.safe, self.dtype == "float64", self.pack, self.pack_written, self.offsets_32)


def shared_dim_constexprs(direction: str, block_r: int, block_i: int, split: int,
                          safe: bool) -> tuple[tuple[str, object], ...]:
    """kernels/shared_dim.py's constexprs in its one-launch form (PHASE 0: wait for the peers)."""
    from softmax_core.kernels.row_slots import SPIN_LIMIT

    head = (("BLOCK_R", block_r), ("BLOCK_I", block_i), ("SPLIT", split), ("PEERS", triton.next_power_of_2(split)))
    return head + ((("SAFE", safe),) if direction == "forward" else ()) + (("PHASE", 0), ("SPIN", SPIN_LIMIT))


def split_dim_constexprs(direction: str, block_r: int, block_i: int, part_r: int, parts: int,
                         safe: bool, waits: bool = False, offsets_32: bool = False) -> tuple[tuple[str, object], ...]:
    """kernels/split_dim.py's constexprs: PHASE 2's (the launch that gathers the parts' words), or with `waits`
    PHASE 0's (one launch whose programs wait for their tile's other parts)."""
    from softmax_core.kernels.row_slots import SPIN_LIMIT

    head = (("BLOCK_R", block_r), ("BLOCK_I", block_i), ("PART_R", part_r), ("PEERS", triton.next_power_of_2(parts)))
    return (head + ((("SAFE", safe),) if direction == "forward" else ())
            + (("OFFSETS_32", offsets_32), ("PHASE", 0 if waits else 2), ("SPIN", SPIN_LIMIT)))


def any_dim_constexprs(direction: str, block_o: int, block_r: int, block_i: int, one_pass: bool, safe: bool,
                       fp64: bool, pack: int = 1, pack_written: int = 1,
                       offsets_32: bool = False) -> tuple[tuple[str, object], ...]:
    tile = (("BLOCK_O", block_o), ("BLOCK_R", block_r), ("BLOCK_I", block_i), ("ONE_PASS", one_pass))
    packs = (("PACK_X", pack), ("PACK_Y", pack_written)) if direction == "forward" else (("PACK_Y", pack),
                                                                                        ("PACK_DY", pack_written))
    return (tile + ((("SAFE", safe),) if direction == "forward" else ()) + (("FP64", fp64),) + packs
            + (("OFFSETS_32", offsets_32),))


def takes_32_bit_offsets(direction: str, one_pass: bool, *layouts: ReductionLayout) -> bool:
    """Whether the any-dim kernel addresses its tile by 32-bit offsets within an outer slice (OFFSETS_32): for a
    one-pass forward, where every outer slice of each layout spans under 2**31 elements. A one-pass tile holds a
    pointer per value, two registers each, more than the values themselves. Compiled offline for sm_90 with Triton
    3.6 (the H200's; it gave the device's counts) on the strided classes' draws of seeds 2727, 3838 and 5555
    (tuning/offline-sm90-triton36-offsets32-2727-3838-5555-20261207.csv): of 37 forwards' one-pass tiles, 19 took
    fewer registers with 32-bit offsets (up to 47 fewer), 9 took more (up to 6), 14 gained programs an SM and one
    lost one; a tile that spilled with 64-bit pointers held in one pass. With Triton 3.9, 7 of the backward's 12
    took more registers (up to 24) and 5 lost a program an SM, so the backward keeps 64-bit pointers. Not yet
    timed on a GPU (docs/performance.md, "32-bit offsets in the one-pass forward")."""
    return direction == "forward" and one_pass and slices_span_32_bits(*layouts)


def slices_span_32_bits(*layouts: ReductionLayout) -> bool:
    """Whether every outer slice of each layout spans under 2**31 elements (from its first element to its last), so
    offsets within a slice fit a signed 32-bit integer."""
    return all((lay.n_reduce - 1) * abs(lay.reduce_stride) + (lay.n_inner - 1) * abs(lay.inner_stride) < 2**31
               for lay in layouts)
