"""The GPU page's logic: a GPU's figures as the table shows them, the occupancy calculator's curves, and the
names of the limits a launch plan can hit. Pure functions of softmax_core's GPU specs and plans."""
from __future__ import annotations

from softmax_core.hardware.gpu import GpuSpec
# The tuned softmax's paths for a row (SoftmaxPlan.path), the ones the GPU page's plan can take (a softmax over a
# strided dim, the any-dim path, is the Benchmark page's "Your shape").
from softmax_core.plans.tuned import PATHS as TUNED_PATHS  # noqa: F401  (re-exported)
from softmax_core.hardware.occupancy import LIMITERS as HARDWARE_LIMITERS, Limiter, occupancy  # noqa: F401  (re-exported)

# What can cap the programs per SM by the chapter's formula (the tutorial plan's limiter and its reason);
# the hardware's rules (softmax_core.hardware.occupancy.Occupancy.limiter) name HARDWARE_LIMITERS, slots included.
# A limiter's words are the library's (explorer_ui.i18n.say).
LIMITERS = (Limiter.REGISTERS, Limiter.SHARED_MEMORY, Limiter.ROWS)
# The GpuSpec fields the figures table lists, in order (each with its source).
GPU_FIGURES = ("name", "arch", "multiprocessor_count", "max_num_regs", "max_shared_mem", "warp_size",
               "memory_bandwidth_gbps", "memory_gb", "l2_mib", "infinity_cache_mib", "max_warps_per_sm",
               "max_blocks_per_sm", "shared_mem_per_sm", "reserved_shared_per_block", "register_alloc_unit")
# Figures only some vendors have (AMD's Infinity Cache): listed only for a GPU that has them.
VENDOR_FIGURES = ("infinity_cache_mib",)
# What the occupancy calculator varies: registers per thread, or BLOCK_SIZE (each a real compile).
VARY = ("regs", "block")


def gpu_figures(gpu: GpuSpec, cc_label: str) -> list[tuple[str, str]]:
    """(field, shown value) for each of GPU_FIGURES; `cc_label` names "compute capability" in the page's
    language. A figure the catalog does not know shows as "—"; a vendor's own figure (VENDOR_FIGURES) is left
    out for a GPU that has none."""
    major, minor = gpu.compute_capability
    shown = {"name": gpu.name, "arch": f"{gpu.arch} ({cc_label} {major}.{minor})",
             "multiprocessor_count": f"{gpu.multiprocessor_count:,}", "max_num_regs": f"{gpu.max_num_regs:,}",
             "max_shared_mem": f"{gpu.max_shared_mem:,} B", "warp_size": str(gpu.warp_size),
             "memory_bandwidth_gbps": f"{gpu.memory_bandwidth_gbps:,.0f} GB/s" if gpu.memory_bandwidth_gbps else "—",
             "memory_gb": f"{gpu.memory_gb:,.0f} GB" if gpu.memory_gb else "—",
             "l2_mib": f"{gpu.l2_mib:,.4g} MiB" if gpu.l2_mib else "—",
             "infinity_cache_mib": f"{gpu.infinity_cache_mib:,.4g} MiB" if gpu.infinity_cache_mib else None,
             "max_warps_per_sm": f"{gpu.max_warps_per_sm}" if gpu.max_warps_per_sm else "—",
             "max_blocks_per_sm": f"{gpu.max_blocks_per_sm}" if gpu.max_blocks_per_sm else "—",
             "shared_mem_per_sm": f"{gpu.shared_mem_per_sm:,} B" if gpu.shared_mem_per_sm else "—",
             "reserved_shared_per_block": f"{gpu.reserved_shared_per_block:,} B",
             "register_alloc_unit": f"{gpu.register_alloc_unit}" if gpu.register_alloc_unit else "—"}
    return [(field, shown[field]) for field in GPU_FIGURES if shown[field] is not None]


def max_num_regs_said(gpu: GpuSpec, t) -> str:
    """What the chapter formula's `max_num_regs` is on `gpu` (`t`: the page's words): the figure Triton's driver
    reports (on AMD a CU's whole register file: VGPRs per SIMD x SIMDs x lanes, from the catalog's figures)."""
    if gpu.live:
        return t("gpu_formula_regs_live", regs=gpu.max_num_regs)
    if gpu.vendor == "amd":
        simds = gpu.register_banks or 1
        return t("gpu_formula_regs_amd", regs=gpu.max_num_regs, gpu=gpu.name, simds=simds, lanes=gpu.warp_size,
                 per_simd=gpu.max_num_regs // (simds * gpu.warp_size))
    return t("gpu_formula_regs_nvidia", regs=gpu.max_num_regs, gpu=gpu.name)


def tuned_figures(plan) -> dict:
    """What the GPU page states of a tuned plan besides its path: registers, spills, shared memory, programs
    per SM and the grid (two compiles of the same plan are compared by these)."""
    res = plan.resources
    return {"path_code": plan.path, "regs": res.n_regs, "spills": res.n_spills, "shared": f"{res.shared_bytes:,}",
            "per_sm": plan.occupancy.programs_per_sm, "grid": f"{plan.num_programs:,}"}


def formula_limits(plan) -> tuple[Limiter, ...]:
    """What caps a tutorial plan's grid by the chapter's formula: the rows, or every one of its two terms that
    allows exactly its programs per SM (both, when they tie)."""
    if plan.limiter == Limiter.ROWS or plan.occupancy is None:
        return (plan.limiter,)
    return plan.occupancy.chapter_limiters or (plan.limiter,)


# The lines of the chapter's occupancy code that compute each limit of the formula (the GPU page highlights
# those of the limits that bind).
FORMULA_FOCUS = {Limiter.REGISTERS: "reg_occupancy = gpu.max_num_regs", Limiter.SHARED_MEMORY: "sram_occupancy = gpu.max_shared_mem"}


def numbered_sources(citations: list) -> tuple[list[str], list[str]]:
    """Each row's source as a note number ("[1]", or "—" for none) and the distinct citations in order of first
    use: a table cites each source once, below it, instead of repeating it on every row it covers."""
    order: list[str] = []
    marks = []
    for c in citations:
        if not c:
            marks.append("—")
            continue
        if c not in order:
            order.append(c)
        marks.append(f"[{order.index(c) + 1}]")
    return marks, order


def register_curve(gpu: GpuSpec, shared_bytes: int, num_warps: int, regs: range) -> list[dict]:
    """Programs per SM for each register count in `regs`, per limit: rows of (x, programs, limit) with limit
    "registers", "shared memory" (only when the kernel uses shared memory) and "programs" (the smaller) by the
    chapter's formula, and "hardware" (what the GPU runs, softmax_core.hardware.occupancy)."""
    rows = []
    for r in regs:
        occ = occupancy(gpu, r, shared_bytes, num_warps, 10**9)    # rows to spare: only the SM's limits count
        rows.append({"x": r, "programs": occ.chapter_reg_occupancy, "limit": "registers"})
        if occ.chapter_sram_occupancy is not None:
            rows.append({"x": r, "programs": occ.chapter_sram_occupancy, "limit": "shared memory"})
        rows.append({"x": r, "programs": occ.chapter_programs_per_sm, "limit": "programs"})
        rows.append({"x": r, "programs": occ.programs_per_sm, "limit": "hardware"})
    return rows
