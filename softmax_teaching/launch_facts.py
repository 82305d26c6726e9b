"""What a launch of the chapter's kernel really does on a GPU, one fact each, for every page that states one.

The chapter's wrapper sizes its grid by its own formula (softmax_core.hardware.occupancy.chapter_occupancy);
the GPU runs as many programs at once as its rules allow (softmax_core.hardware.occupancy.occupancy). Where the
two differ, the grid is larger than what is resident, and the programs beyond the GPU's slots wait for a
later wave. `launch_facts` answers, for one (GPU, dtype, M, N), the hardware's programs per SM and what
limits them, the slots, the grid, the waves and whether any program waits — and, apart and named as such, the
chapter formula's figures. `program_placement` draws the same slots, program by program.
"""
from __future__ import annotations

from dataclasses import dataclass

import torch

from softmax_core.hardware import dtypes
from softmax_core.hardware.gpu import GpuSpec
from softmax_core.hardware.occupancy import SM_LIMITERS, Limiter, binding  # noqa: F401  (SM_LIMITERS: re-exported)
from softmax_core.plans.tutorial import plan_launch


@dataclass(frozen=True)
class LaunchFacts:
    """One launch of the chapter's kernel (its wrapper's grid) on one GPU."""

    gpu_name: str
    n_rows: int
    n_cols: int
    dtype: str
    multiprocessor_count: int
    programs_per_sm: int              # the GPU's answer: programs one SM runs at once (0: none fits)
    limiter: Limiter                  # the first of `limiters` (one of SM_LIMITERS): say `limiters` when tied
    slots: int                        # SMs x programs_per_sm: programs resident at once
    num_programs: int                 # the grid launched (the chapter's wrapper, unless set by hand)
    grid_from_plan: bool              # False: num_programs was set by hand, not by the wrapper
    waves: int                        # ceil(num_programs / slots): 1 when every program starts at once
    chapter_programs_per_sm: int      # the chapter's formula (what its wrapper believes)
    chapter_limiter: Limiter          # REGISTERS | SHARED_MEMORY (the formula's smaller term)
    chapter_grid: int                 # the wrapper's grid for these rows: min(SMs x formula, rows)
    chapter_full_grid: int            # SMs x formula: the grid for a matrix with rows to spare
    limiters: tuple[Limiter, ...] = ()          # every limit allowing exactly programs_per_sm: 2+ is a tie
    chapter_limiters: tuple[Limiter, ...] = ()  # the formula's terms equal to its answer: 2 is a tie

    @property
    def tied(self) -> bool:
        return len(self.limiters) > 1

    @property
    def fits(self) -> bool:
        return self.programs_per_sm > 0

    @property
    def waiting(self) -> int:
        """Programs that cannot start at launch: they wait for a slot to free up."""
        return max(self.num_programs - self.slots, 0)

    @property
    def any_waits(self) -> bool:
        return self.waiting > 0

    @property
    def formula_agrees(self) -> bool:
        return self.programs_per_sm == self.chapter_programs_per_sm


def facts_of_plan(plan, num_programs: int | None = None) -> LaunchFacts:
    """The facts of a tutorial launch plan (softmax_core.plans.tutorial.LaunchPlan, with its occupancy), for
    its own grid or for `num_programs` programs set by hand. Pure: no compile."""
    occ = plan.occupancy
    if occ is None:
        raise ValueError("the plan carries no occupancy (softmax_core.plans.tutorial.plan_launch gives one)")
    per_sm = occ.programs_per_sm
    limits = {Limiter.WARP_SLOTS: occ.by_warp_slots, Limiter.BLOCK_SLOTS: occ.by_block_slots,
              Limiter.REGISTERS: occ.by_registers, Limiter.SHARED_MEMORY: occ.by_shared}
    limiters = binding(limits, per_sm)
    limiter = limiters[0]
    sms = plan.gpu.multiprocessor_count
    slots = sms * per_sm
    grid = plan.num_programs if num_programs is None else int(num_programs)
    if grid < 0:
        raise ValueError(f"num_programs must not be negative, got {grid}")
    waves = 0 if grid == 0 else (-(-grid // slots) if slots else 0)
    chapter_limiter = (Limiter.SHARED_MEMORY if occ.chapter_sram_occupancy is not None
                       and occ.chapter_sram_occupancy < occ.chapter_reg_occupancy else Limiter.REGISTERS)
    return LaunchFacts(plan.gpu.name, plan.n_rows, plan.n_cols, plan.dtype, sms, per_sm, limiter, slots, grid,
                       num_programs is None or grid == plan.num_programs, waves, occ.chapter_programs_per_sm,
                       chapter_limiter, occ.chapter_num_programs, sms * occ.chapter_programs_per_sm, limiters,
                       occ.chapter_limiters)


def launch_facts(gpu: GpuSpec, dtype: torch.dtype | str, n_rows: int, n_cols: int,
                 num_programs: int | None = None) -> LaunchFacts:
    """The facts of the chapter's kernel launched on `gpu` for an M x N matrix of `dtype` (its registers and
    shared memory from the real compiled kernel: softmax_core.plan_launch)."""
    return facts_of_plan(plan_launch(n_rows, n_cols, dtypes.torch_dtype(dtype), gpu), num_programs)


@dataclass(frozen=True)
class Placement:
    program: int
    sm: int
    slot: int          # which of the SM's program slots it occupies
    wave: int          # 0: starts at launch; 1, 2, ...: waits for a slot to free up


def program_placement(num_programs: int, multiprocessor_count: int, programs_per_sm: int) -> tuple[Placement, ...]:
    """Where each program of the grid runs, assuming the block scheduler deals programs out to SMs in
    order, one per SM per round, until every SM holds programs_per_sm of them; programs beyond that wait
    for a later wave. Pass the GPU's programs per SM (LaunchFacts.programs_per_sm), not the chapter's
    formula: the waves are the hardware's. (Real schedulers promise no order; this is the usual picture.)"""
    if num_programs < 0 or multiprocessor_count < 1:
        raise ValueError("need num_programs >= 0 and at least one SM")
    per_sm = max(programs_per_sm, 1)
    slots = multiprocessor_count * per_sm
    placements = []
    for p in range(num_programs):
        wave, within = divmod(p, slots)
        slot, sm = divmod(within, multiprocessor_count)
        placements.append(Placement(p, sm, slot, wave))
    return tuple(placements)
