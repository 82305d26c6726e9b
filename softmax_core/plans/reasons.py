"""Why a plan launches what it launches, as data: a reason code and the figures behind it.

Plans never build sentences: softmax_core.words says a `PlanReason` in any language from its code and
figures (the words: softmax_core/words/plans.<lang>.toml), for the app, the command line and exceptions alike. `FIGURES` lists the figures
each code carries, in order; `PlanReason.of` refuses any other set, so a renderer can rely on them.

Tutorial launch plan (`tutorial_plan.LaunchPlan.reason`):

- ``tutorial_fits``: programs fit on an SM. Figures: ``reg_occupancy`` (programs per SM the registers
  allow), ``sram_occupancy`` (programs per SM shared memory allows; None when the kernel uses none),
  ``shared_bytes`` (one program's shared memory), ``max_shared_mem`` (one SM's), ``programs_per_sm``,
  ``sms`` (SMs on the GPU), ``limiter`` ("registers" | "shared memory" | "rows"), ``num_programs``.
- ``tutorial_over_shared_memory``: not one program fits, for shared memory. Figures: ``shared_bytes``,
  ``block_size`` (the padded row), ``gpu`` (its name), ``max_shared_mem``.
- ``tutorial_over_registers``: not one program fits, for registers. Figures: ``n_regs`` (per thread),
  ``threads`` (per program), ``max_num_regs`` (one SM's register file).

Tuned plan (`tuned_plan.SoftmaxPlan.reason`): the code names the path, its figure ``why`` names (as the
value of another code) why that path was taken, and the figures of that second code come along.

- ``rows``: whole rows held in registers. Figures: ``why``, ``rows`` (rows per program), ``block_n``
  (padded row), ``block_bytes`` (its bytes), ``n_regs``, ``n_spills``, ``programs_per_sm``.
- ``tiled``: two passes over tiles, one program per row or a row's tiles shared by programs that run at
  once. Figures: ``why``, ``split_declined`` (True: the split path was wanted but cannot run here), ``tile``
  (values per tile), ``n_tiles`` (per row), ``programs_per_sm``, ``shared_by`` (programs per row: 1, or more
  for the bf16/fp16 backward's longest rows).
- ``split``: programs that run at once share each row. Figures: ``why``, ``direction`` ("forward": they
  exchange (max, sum); "backward": sum(y * dy)), ``split`` (programs per row), ``chunk`` (values each),
  ``n_regs``, ``programs_per_sm`` (resident for sure), ``groups`` (rows in flight), ``num_programs``.

Why codes (the value of ``why``):

- ``fits_in_registers``: a whole row fits, nothing spilled. No figures.
- ``most_in_flight``: of ``shapes`` shapes of whole rows compiled (rows a program x warps; the backward's rows of
  256-1024 values, plans/whole_rows.py), this one's resident programs hold the most bytes of y and dy per SM,
  ``in_flight_bytes``. Figures: ``shapes``, ``in_flight_bytes``.
- ``read_twice_faster``: rows this long (float32 from 16 KB, 2-byte types padded to 16-32 KB) run faster read
  twice (the second time from L2) than held in registers (measured, docs/performance.md). Figures: ``row_bytes``.
- ``too_many_values_per_thread``: even the widest program would hold too many values per thread.
  Figures: ``threads``, ``values_per_thread``, ``block_n``, ``max_values_per_thread``.
- ``row_over_shared_memory``: the whole-row kernel needs more shared memory than an SM has. Figures:
  ``row_shared_bytes``, ``max_shared_mem``.
- ``row_over_registers``: one whole-row program needs more registers than an SM has. Figures:
  ``row_n_regs``, ``threads``, ``max_num_regs``.
- ``row_spills``: the compiler spilled registers of the whole-row kernel. Figures: ``block_n``,
  ``row_n_spills``.
- ``row_past_l2``: rows this long (float32 forward, and 2-byte rows in both directions) no longer stay in L2
  between the tiled path's two passes, with two rows in flight on every SM. Figures: ``row_bytes``.
- ``unaligned_long_row``: a row of a width Triton cannot prove 16-byte aligned, too long for one program (and,
  forward, from 128 KB), runs faster shared by programs that each read their part of an aligned body (part 0 the
  two masked edges too) than walked in tiles (measured, docs/performance.md). Figures: ``row_bytes``.
- ``forced``: the caller chose the path (`plan_softmax(..., path=...)`). No figures.

Any-dim plan (`plans.any_dim.AnyDimPlan.reason`):

- ``any_dim``: each program owns neighbouring inner columns and walks the softmax dim down them. Figures:
  ``why``, ``block_o`` (outer slices per program), ``block_i`` (columns a program reads), ``block_r`` (values down the softmax dim per step), ``n_chunks``
  (steps), ``num_warps``, ``num_programs``, ``word_values`` (values a thread loads as one word: 1, 2 or 4).
- ``slab_fits`` (a why): the whole [softmax dim, columns] slab fits in one program: one read, one write.
  Figures: ``slab_values``, ``max_values``.
- ``slab_held`` (a why, forward): the slab at the narrowest tile is more than ``max_values``, but at columns of
  ``column_bytes`` it is ``held_values``, which one program holds on more warps (measured faster than two passes): one
  read, one write. Figures: ``slab_values``, ``max_values``, ``held_values``, ``column_bytes``.
- ``slab_over_limit`` (a why): the slab is more than one program holds: two passes. Figures: ``slab_values``,
  ``max_values``.
- ``slab_shared`` (a why): the slab is more than one program holds, and ``split`` programs that run at once
  share it (kernels/shared_dim.py): one read, one write. Figures: ``slab_values``, ``max_values``, ``split``.
- ``slab_cut`` (a why): the slab is more than one program holds and the inner run, ``inner_bytes``, is shorter than
  ``cut_bytes``, where parts ran faster than two passes: each tile's reduced axis is cut into
  ``parts`` parts, one program each, in two launches (kernels/split_dim.py). Figures: ``slab_values``,
  ``max_values``, ``inner_bytes``, ``cut_bytes``, ``parts``.
- ``slab_waits`` (a why, forward): the slab is more than one program holds and the call transposes (a strided view
  in, a contiguous output): each tile's reduced axis is cut into ``parts`` parts, one program each, in one launch whose programs wait for
  their tile's other parts and read their part again at once, from L2 (kernels/split_dim.py, PHASE 0). Figures:
  ``slab_values``, ``max_values``, ``parts``.
"""
from __future__ import annotations

from dataclasses import dataclass

from softmax_core.words import Code, Figure


class ReasonCode(Code):
    TUTORIAL_FITS = "tutorial_fits"
    TUTORIAL_OVER_SHARED_MEMORY = "tutorial_over_shared_memory"
    TUTORIAL_OVER_REGISTERS = "tutorial_over_registers"
    ROWS = "rows"
    TILED = "tiled"
    SPLIT = "split"
    FITS_IN_REGISTERS = "fits_in_registers"
    MOST_IN_FLIGHT = "most_in_flight"
    READ_TWICE_FASTER = "read_twice_faster"
    TOO_MANY_VALUES_PER_THREAD = "too_many_values_per_thread"
    ROW_OVER_SHARED_MEMORY = "row_over_shared_memory"
    ROW_OVER_REGISTERS = "row_over_registers"
    ROW_SPILLS = "row_spills"
    ROW_PAST_L2 = "row_past_l2"
    UNALIGNED_LONG_ROW = "unaligned_long_row"
    FORCED = "forced"
    ANY_DIM = "any_dim"
    SLAB_FITS = "slab_fits"
    SLAB_HELD = "slab_held"
    SLAB_OVER_LIMIT = "slab_over_limit"
    SLAB_SHARED = "slab_shared"
    SLAB_CUT = "slab_cut"
    SLAB_WAITS = "slab_waits"


FIGURES: dict[ReasonCode, tuple[str, ...]] = {
    ReasonCode.TUTORIAL_FITS: ("reg_occupancy", "sram_occupancy", "shared_bytes", "max_shared_mem",
                               "programs_per_sm", "sms", "limiter", "num_programs"),
    ReasonCode.TUTORIAL_OVER_SHARED_MEMORY: ("shared_bytes", "block_size", "gpu", "max_shared_mem"),
    ReasonCode.TUTORIAL_OVER_REGISTERS: ("n_regs", "threads", "max_num_regs"),
    ReasonCode.ROWS: ("why", "rows", "block_n", "block_bytes", "n_regs", "n_spills", "programs_per_sm"),
    ReasonCode.TILED: ("why", "split_declined", "tile", "n_tiles", "programs_per_sm", "shared_by"),
    ReasonCode.SPLIT: ("why", "direction", "split", "chunk", "n_regs", "programs_per_sm", "groups",
                       "num_programs"),
    ReasonCode.FITS_IN_REGISTERS: (),
    ReasonCode.MOST_IN_FLIGHT: ("shapes", "in_flight_bytes"),
    ReasonCode.READ_TWICE_FASTER: ("row_bytes",),
    ReasonCode.TOO_MANY_VALUES_PER_THREAD: ("threads", "values_per_thread", "block_n", "max_values_per_thread"),
    ReasonCode.ROW_OVER_SHARED_MEMORY: ("row_shared_bytes", "max_shared_mem"),
    ReasonCode.ROW_OVER_REGISTERS: ("row_n_regs", "threads", "max_num_regs"),
    ReasonCode.ROW_SPILLS: ("block_n", "row_n_spills"),
    ReasonCode.ROW_PAST_L2: ("row_bytes",),
    ReasonCode.UNALIGNED_LONG_ROW: ("row_bytes",),
    ReasonCode.FORCED: (),
    ReasonCode.ANY_DIM: ("why", "block_o", "block_i", "block_r", "n_chunks", "num_warps", "num_programs",
                         "word_values"),
    ReasonCode.SLAB_FITS: ("slab_values", "max_values"),
    ReasonCode.SLAB_HELD: ("slab_values", "max_values", "held_values", "column_bytes"),
    ReasonCode.SLAB_OVER_LIMIT: ("slab_values", "max_values"),
    ReasonCode.SLAB_SHARED: ("slab_values", "max_values", "split"),
    ReasonCode.SLAB_CUT: ("slab_values", "max_values", "inner_bytes", "cut_bytes", "parts"),
    ReasonCode.SLAB_WAITS: ("slab_values", "max_values", "parts"),
}

# Which `why` each path can carry.
WHY_CODES: dict[ReasonCode, tuple[ReasonCode, ...]] = {
    ReasonCode.ROWS: (ReasonCode.FITS_IN_REGISTERS, ReasonCode.MOST_IN_FLIGHT, ReasonCode.FORCED),
    ReasonCode.TILED: (ReasonCode.READ_TWICE_FASTER, ReasonCode.TOO_MANY_VALUES_PER_THREAD,
                       ReasonCode.ROW_OVER_SHARED_MEMORY, ReasonCode.ROW_OVER_REGISTERS, ReasonCode.ROW_SPILLS,
                       ReasonCode.ROW_PAST_L2, ReasonCode.FORCED),
    ReasonCode.SPLIT: (ReasonCode.TOO_MANY_VALUES_PER_THREAD, ReasonCode.ROW_OVER_SHARED_MEMORY,
                       ReasonCode.ROW_OVER_REGISTERS, ReasonCode.ROW_SPILLS, ReasonCode.ROW_PAST_L2,
                       ReasonCode.UNALIGNED_LONG_ROW, ReasonCode.FORCED),
    ReasonCode.ANY_DIM: (ReasonCode.SLAB_FITS, ReasonCode.SLAB_HELD, ReasonCode.SLAB_OVER_LIMIT, ReasonCode.SLAB_SHARED,
                         ReasonCode.SLAB_CUT, ReasonCode.SLAB_WAITS, ReasonCode.FORCED),
}


@dataclass(frozen=True)
class PlanReason:
    code: ReasonCode
    figures: tuple[tuple[str, Figure], ...]

    @classmethod
    def of(cls, code: ReasonCode, **figures: Figure) -> PlanReason:
        """A reason whose figures are exactly those `FIGURES` documents for `code` (and for its `why`)."""
        expected = list(FIGURES[code])
        if "why" in figures:
            why = ReasonCode(figures["why"])
            if why not in WHY_CODES[code]:
                raise ValueError(f"{code.value} cannot be explained by {why.value}")
            figures["why"] = why.value
            expected += FIGURES[why]
        if sorted(figures) != sorted(expected):
            raise ValueError(f"{code.value} carries the figures {expected}, got {sorted(figures)}")
        return cls(code, tuple((name, figures[name]) for name in expected))

    @property
    def values(self) -> dict[str, Figure]:
        return dict(self.figures)

    @property
    def why(self) -> ReasonCode | None:
        """The second code of a tuned plan's reason (why this path), None for the tutorial plan's."""
        why = self.values.get("why")
        return None if why is None else ReasonCode(why)
