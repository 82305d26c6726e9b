"""How many programs of one kernel an SM (a CU on AMD) runs at once: the hardware's rules, and beside them
the chapter's formula.

The chapter divides the SM's registers by what one program uses, and its shared memory likewise:

    reg_occupancy  = max_num_regs // (n_regs * warp_size * num_warps)
    sram_occupancy = max_shared_mem // shared_bytes

The GPU is stricter in four ways, and `occupancy()` applies all of them (checked against the driver's own
answer, `cuOccupancyMaxActiveBlocksPerMultiprocessor`, on the H200: assets/occupancy/):
1. warp slots: an SM holds at most `max_warps_per_sm` warps, whatever they use;
2. block slots: at most `max_blocks_per_sm` programs;
3. registers are handed to a *warp* in whole allocation units (256 on NVIDIA, i.e. a multiple of 8 per
   thread), and each warp lives in one of the SM's sub-partitions, which owns a quarter of the register file:
   leftovers in one quarter cannot be pooled with another's;
4. shared memory: the SM's capacity (not the per-program maximum) is what is divided, and the driver keeps
   `reserved_shared_per_block` bytes (1 KB from sm_80 on) for every resident program.
AMD CDNA follows the same shape with its own numbers: 4 SIMDs per CU, at most 8 waves per SIMD, VGPRs per
wave in granules of 8 per lane, LDS per CU.

Every figure comes from the `GpuSpec` (softmax_core/data/gpus.json, each with its source); this module holds rules only.
"""
from __future__ import annotations

from dataclasses import dataclass

from softmax_core.hardware.gpu import GpuSpec
from softmax_core.words import Code, Coded


class Limiter(Code):
    """A resource that caps programs per SM (or, for ROWS, the grid). A str: it equals (and is recorded as)
    its value. Several can cap at once: a tie is a set of them (Occupancy.limiters), never one picked."""
    REGISTERS = "registers"
    SHARED_MEMORY = "shared memory"
    WARP_SLOTS = "warp slots"
    BLOCK_SLOTS = "block slots"
    ROWS = "rows"


class OccupancyRule(Code):
    """Which arithmetic an Occupancy's `rule` / `chapter_rule` spells out; its figures are the numbers."""
    HARDWARE = "hardware"
    CHAPTER = "chapter"


LIMITERS = tuple(Limiter)
# What can cap programs per SM on the hardware, in the order a set of them is named: the slot limits first
# (no change to the kernel lifts them), then the resources. ROWS caps the grid, not what an SM holds.
SM_LIMITERS = (Limiter.WARP_SLOTS, Limiter.BLOCK_SLOTS, Limiter.REGISTERS, Limiter.SHARED_MEMORY)
CHAPTER_LIMITERS = (Limiter.REGISTERS, Limiter.SHARED_MEMORY)     # the two terms of the chapter's formula


def binding(allowed: dict, programs: int) -> tuple[Limiter, ...]:
    """Every limit whose allowance is `programs`, in SM_LIMITERS order: one name where one resource runs out
    first, all of them where several allow the same count (a tie). `allowed`: {Limiter: programs per SM it
    alone allows, or None where it sets no limit}."""
    return tuple(name for name in SM_LIMITERS if allowed.get(name) is not None and allowed[name] == programs)


@dataclass(frozen=True)
class Occupancy:
    """Programs per SM for one kernel on one GPU: what the hardware runs, and what the chapter's formula says."""

    programs_per_sm: int             # the hardware's answer (0: not even one program fits)
    limiter: Limiter                 # the first resource to run out
    by_registers: int                # programs per SM each resource alone allows
    by_shared: int | None            # None: the kernel uses no shared memory, so it sets no limit
    by_warp_slots: int
    by_block_slots: int | None       # None: no per-SM program limit known for this GPU (AMD)
    num_programs: int                # the persistent grid on the hardware's rule: min(SMs x per SM, n_rows)
    full_grid: int                   # SMs x programs_per_sm
    registers_per_warp: int          # what one warp (wavefront) is really given, after rounding
    shared_per_program: int          # shared memory one program really takes from the SM (with the reserve)
    rule: Coded                      # the hardware's rule with these numbers (OccupancyRule.HARDWARE)
    chapter_programs_per_sm: int     # the chapter's formula: min(reg_occupancy, sram_occupancy)
    chapter_reg_occupancy: int
    chapter_sram_occupancy: int | None
    chapter_num_programs: int        # the grid the chapter's wrapper launches
    chapter_limiter: Limiter         # REGISTERS, SHARED_MEMORY or ROWS (on a tie: REGISTERS; see chapter_limiters)
    chapter_rule: Coded              # the formula with these numbers (OccupancyRule.CHAPTER)
    # Every limit that allows exactly programs_per_sm (SM_LIMITERS order): two or more are a tie, and then no
    # single one "runs out first"; lifting one of them alone changes nothing. Never ROWS.
    limiters: tuple[Limiter, ...] = ()
    chapter_limiters: tuple[Limiter, ...] = ()   # the formula's terms equal to chapter_programs_per_sm

    @property
    def tied(self) -> bool:
        return len(self.limiters) > 1

    @property
    def chapter_tied(self) -> bool:
        return len(self.chapter_limiters) > 1

    @property
    def agrees(self) -> bool:
        return self.programs_per_sm == self.chapter_programs_per_sm

    @property
    def differences(self) -> tuple[Limiter, ...]:
        """The hardware rules that make its answer smaller than the chapter's, most binding first: empty when
        both agree. Each entry names a limiter from LIMITERS (never "rows")."""
        if self.agrees:
            return ()
        limits = {Limiter.REGISTERS: self.by_registers, Limiter.SHARED_MEMORY: self.by_shared,
                  Limiter.WARP_SLOTS: self.by_warp_slots, Limiter.BLOCK_SLOTS: self.by_block_slots}
        below = [(v, name) for name, v in limits.items()
                 if v is not None and v < self.chapter_programs_per_sm]
        return tuple(name for _, name in sorted(below, key=lambda item: item[0]))


def _round_up(value: int, unit: int) -> int:
    return -(-value // unit) * unit


def chapter_occupancy(gpu: GpuSpec, n_regs: int, shared_bytes: int, num_warps: int) -> tuple[int, int | None, int]:
    """The chapter's formula, literally: (reg_occupancy, sram_occupancy, programs_per_sm).
    `sram_occupancy` is None for a kernel with no shared memory (the chapter would divide by zero)."""
    reg_occupancy = gpu.max_num_regs // (n_regs * gpu.warp_size * num_warps)
    sram_occupancy = gpu.max_shared_mem // shared_bytes if shared_bytes > 0 else None
    programs_per_sm = reg_occupancy if sram_occupancy is None else min(reg_occupancy, sram_occupancy)
    return reg_occupancy, sram_occupancy, programs_per_sm


def occupancy(gpu: GpuSpec, n_regs: int, shared_bytes: int, num_warps: int, n_rows: int) -> Occupancy:
    """Programs of a kernel using `n_regs` registers per thread, `shared_bytes` of shared memory per program
    and `num_warps` warps that one SM of `gpu` runs at once, with the grid for `n_rows` rows."""
    for name, value in (("n_regs", n_regs), ("num_warps", num_warps)):
        if value <= 0:
            raise ValueError(f"{name} must be positive, got {value}")
    if shared_bytes < 0 or n_rows < 0:
        raise ValueError(f"shared_bytes and n_rows must not be negative, got {shared_bytes}, {n_rows}")
    missing = [f for f in ("max_warps_per_sm", "shared_mem_per_sm", "register_alloc_unit", "register_banks")
               if getattr(gpu, f) is None]
    if missing:
        raise ValueError(f"{gpu.name}: the occupancy rules need {', '.join(missing)} (see softmax_core/data/gpus.json)")
    sms = gpu.multiprocessor_count

    # Registers: each warp gets a whole number of allocation units from one bank (a sub-partition on
    # NVIDIA, a SIMD on AMD); a warp cannot straddle two banks, so each bank is counted on its own.
    registers_per_warp = _round_up(n_regs * gpu.warp_size, gpu.register_alloc_unit)
    regs_per_bank = gpu.max_num_regs // gpu.register_banks
    too_many = gpu.max_regs_per_thread is not None and n_regs > gpu.max_regs_per_thread
    warps_by_registers = 0 if too_many else gpu.register_banks * (regs_per_bank // registers_per_warp)
    by_registers = warps_by_registers // num_warps
    by_warp_slots = gpu.max_warps_per_sm // num_warps
    by_block_slots = gpu.max_blocks_per_sm
    # Shared memory: the SM's whole capacity is shared out, each program taking its bytes plus the reserve;
    # one program may not take more than the per-program maximum (max_shared_mem).
    shared_per_program = _round_up(shared_bytes + gpu.reserved_shared_per_block, gpu.shared_alloc_unit)
    if shared_bytes == 0:
        by_shared = None
    elif shared_bytes > gpu.max_shared_mem:
        by_shared = 0
    else:
        by_shared = gpu.shared_mem_per_sm // shared_per_program

    limits = {Limiter.REGISTERS: by_registers, Limiter.SHARED_MEMORY: by_shared, Limiter.WARP_SLOTS: by_warp_slots,
              Limiter.BLOCK_SLOTS: by_block_slots}
    programs_per_sm = min(v for v in limits.values() if v is not None)
    full_grid = sms * programs_per_sm
    num_programs = min(full_grid, n_rows)
    if 0 < n_rows < full_grid:
        limiter = Limiter.ROWS
    else:  # a tie is kept whole in `limiters`; this one name is its first in SM_LIMITERS order
        limiter = binding(limits, programs_per_sm)[0]

    rule = Coded.of(OccupancyRule.HARDWARE, vendor=gpu.vendor, n_regs=n_regs, warp_size=gpu.warp_size,
                    register_alloc_unit=gpu.register_alloc_unit, alloc_per_lane=gpu.register_alloc_unit // gpu.warp_size,
                    registers_per_warp=registers_per_warp, register_banks=gpu.register_banks,
                    regs_per_bank=regs_per_bank, warps_by_registers=warps_by_registers, num_warps=num_warps,
                    by_registers=by_registers, max_warps_per_sm=gpu.max_warps_per_sm, by_warp_slots=by_warp_slots,
                    by_block_slots=by_block_slots, by_shared=by_shared, shared_mem_per_sm=gpu.shared_mem_per_sm,
                    shared_bytes=shared_bytes, reserved_shared_per_block=gpu.reserved_shared_per_block,
                    shared_alloc_unit=gpu.shared_alloc_unit, shared_per_program=shared_per_program,
                    programs_per_sm=programs_per_sm)

    chapter_reg, chapter_sram, chapter_per_sm = chapter_occupancy(gpu, n_regs, shared_bytes, num_warps)
    chapter_full = sms * chapter_per_sm
    chapter_num_programs = min(chapter_full, n_rows)
    if 0 < n_rows < chapter_full:
        chapter_limiter = Limiter.ROWS
    elif chapter_sram is not None and chapter_sram < chapter_reg:
        chapter_limiter = Limiter.SHARED_MEMORY
    else:
        chapter_limiter = Limiter.REGISTERS
    chapter_rule = Coded.of(OccupancyRule.CHAPTER, max_num_regs=gpu.max_num_regs, n_regs=n_regs,
                            warp_size=gpu.warp_size, num_warps=num_warps, reg_occupancy=chapter_reg,
                            max_shared_mem=gpu.max_shared_mem, shared_bytes=shared_bytes, sram_occupancy=chapter_sram)
    chapter_limiters = binding({Limiter.REGISTERS: chapter_reg, Limiter.SHARED_MEMORY: chapter_sram}, chapter_per_sm)
    return Occupancy(programs_per_sm, limiter, by_registers, by_shared, by_warp_slots, by_block_slots,
                     num_programs, full_grid, registers_per_warp, shared_per_program if shared_bytes else 0, rule,
                     chapter_per_sm, chapter_reg, chapter_sram, chapter_num_programs, chapter_limiter, chapter_rule,
                     binding(limits, programs_per_sm), chapter_limiters)
