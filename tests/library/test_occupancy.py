"""The hardware's occupancy rules (softmax_core.hardware.occupancy) against the CUDA driver's own answers, recorded on
the H200 by bench_tools.record.driver_occupancy (assets/occupancy/), and the chapter's formula beside them."""
import csv
import dataclasses
import json
from pathlib import Path

import pytest
import torch

import softmax_core as sc
from softmax_core.hardware.compile import KernelResources
from softmax_core.hardware.occupancy import LIMITERS, chapter_occupancy, occupancy
from softmax_core.plans.choose import plan_softmax

RECORD = Path(__file__).resolve().parents[2] / "assets" / "occupancy" / "h200-driver-occupancy"
H200 = sc.catalog_gpu("h200")


def recorded_rows():
    with open(RECORD.with_suffix(".csv")) as fh:
        return [r for r in csv.DictReader(fh) if r["n_regs"] and r["driver_blocks_per_sm"] != ""]


def rule(row, gpu=H200, n_rows=10**9):
    return occupancy(gpu, int(row["n_regs"]), int(row["shared_bytes"]), int(row["num_warps"]), n_rows)


def test_the_record_is_large_and_says_where_it_came_from():
    provenance = json.loads(RECORD.with_suffix(".json").read_text())
    for field in ("gpu", "device_attributes", "versions", "date", "command"):
        assert provenance[field], field
    assert "H200" in provenance["gpu"] and provenance["versions"]["triton"] and provenance["versions"]["ptxas"]
    rows = recorded_rows()
    assert len(rows) == provenance["configurations"]
    sweep = [r for r in rows if r["source"] == "tutorial sweep"]
    assert len({(r["dtype"], r["n_cols"], r["num_warps"], r["num_stages"]) for r in sweep}) >= 150
    assert {r["plan_path"] for r in rows if r["source"].startswith("tuned")} >= {"rows", "tiled", "split"}
    assert {r["dtype"] for r in rows if r["source"].startswith("tuned")} >= {"float32", "bfloat16"}


def test_catalog_h200_has_the_limits_the_driver_reported():
    """The rules run on the catalog's figures: they must be the ones the device itself reported."""
    attrs = json.loads(RECORD.with_suffix(".json").read_text())["device_attributes"]
    assert H200.max_warps_per_sm == attrs["max_threads_per_multiprocessor"] // attrs["warp_size"]
    assert H200.max_blocks_per_sm == attrs["max_blocks_per_multiprocessor"]
    assert H200.shared_mem_per_sm == attrs["max_shared_memory_per_multiprocessor"]
    assert H200.max_shared_mem == attrs["max_shared_memory_per_block_optin"]
    assert H200.reserved_shared_per_block == attrs["reserved_shared_memory_per_block"]
    assert H200.max_num_regs == attrs["max_registers_per_multiprocessor"]
    assert H200.multiprocessor_count == attrs["multiprocessor_count"]
    assert H200.l2_mib == attrs["l2_cache_size"] / 2**20


def test_the_rules_reproduce_every_recorded_driver_answer():
    rows = recorded_rows()
    wrong = [(r["kernel"], r["constexprs"], r["num_warps"], r["n_regs"], r["shared_bytes"],
              r["driver_blocks_per_sm"], rule(r).programs_per_sm)
             for r in rows if rule(r).programs_per_sm != int(r["driver_blocks_per_sm"])]
    assert not wrong, wrong


def test_each_rule_is_needed_to_reproduce_the_record():
    """Leave one rule out (make its limit generous) and some recorded answer comes out wrong: no rule is
    decoration, and the record exercises all of them."""
    rows = recorded_rows()
    loosened = {
        "warp slots": dataclasses.replace(H200, max_warps_per_sm=10**6),
        "block slots": dataclasses.replace(H200, max_blocks_per_sm=10**6),
        "register units": dataclasses.replace(H200, register_alloc_unit=1, register_banks=1),
        "shared memory reserve": dataclasses.replace(H200, reserved_shared_per_block=0),
    }
    for name, gpu in loosened.items():
        assert any(rule(r, gpu).programs_per_sm != int(r["driver_blocks_per_sm"]) for r in rows), name


def test_the_chapter_formula_is_never_low_and_its_errors_have_named_causes():
    rows = recorded_rows()
    disagree = [r for r in rows if not rule(r).agrees]
    assert 0 < len(disagree) < len(rows)
    causes = set()
    for r in rows:
        occ = rule(r)
        assert occ.chapter_programs_per_sm >= occ.programs_per_sm      # too high, never too low
        if not occ.agrees:
            assert occ.differences and occ.limiter in occ.differences
            causes.update(occ.differences)
    assert causes == {"warp slots", "block slots", "registers", "shared memory"}


def test_short_rows_with_4_warps_hit_the_warp_slots():
    """The reference's example: N = 128 ... 1024 with 4 warps, the chapter says 17-21, the driver 16 (= 64 // 4)."""
    cases = [r for r in recorded_rows() if r["source"] == "tutorial sweep" and r["num_warps"] == "4"
             and int(r["n_cols"]) <= 1024 and rule(r).chapter_programs_per_sm > 16]
    assert cases
    for r in cases:
        assert int(r["driver_blocks_per_sm"]) == 16 and rule(r).limiter == "warp slots"


def test_tuned_split_grids_never_exceed_what_the_driver_keeps_resident():
    """A split-path program waits for its peers: the grid must be no larger than the resident programs."""
    split = [r for r in recorded_rows() if r["plan_path"] == "split"]
    assert split
    for r in split:
        assert int(r["plan_num_programs"]) <= int(r["driver_blocks_per_sm"]) * H200.multiprocessor_count


def test_worked_examples():
    # 96 registers, 1 warp: 3,072 per warp, 5 per sub-partition -> 20 (the chapter: 65536 // 3072 = 21).
    occ = occupancy(H200, 96, 0, 1, 10**6)
    assert (occ.programs_per_sm, occ.chapter_programs_per_sm, occ.limiter) == (20, 21, "registers")
    assert occ.registers_per_warp == 3072 and occ.differences == ("registers",)
    # 30 registers round up to 32 per thread: 1,024 per warp.
    assert occupancy(H200, 30, 0, 1, 10**6).registers_per_warp == 1024
    # Shared memory: the SM's 233,472 B, with 1 KB kept per program; one program may use at most 232,448 B.
    occ = occupancy(H200, 16, 49152, 4, 10**6)
    assert occ.by_shared == 233472 // (49152 + 1024) == 4 and occ.chapter_sram_occupancy == 232448 // 49152
    assert occupancy(H200, 16, 232448, 4, 10**6).by_shared == 1
    assert occupancy(H200, 16, 232449, 4, 10**6).programs_per_sm == 0
    assert occupancy(H200, 16, 0, 4, 10**6).by_shared is None
    # 255 registers per thread at most.
    assert occupancy(H200, 256, 0, 1, 10**6).by_registers == 0


def test_grid_and_rows_limiter():
    occ = occupancy(H200, 32, 0, 4, 100)
    assert occ.limiter == "rows" and occ.num_programs == 100 and occ.full_grid == 132 * 16
    assert occ.limiter in LIMITERS
    zero = occupancy(H200, 16, 300_000, 4, 100)
    assert zero.programs_per_sm == 0 and zero.num_programs == 0 and zero.limiter == "shared memory"


def test_t4_never_holds_more_than_1024_threads_per_sm():
    """The issue's case: the chapter's formula put 17 programs of 128 threads (2,176 threads) on a T4's SM."""
    t4 = sc.catalog_gpu("t4")
    plan = sc.plan_launch(4096, 781, torch.float32, t4, resources=KernelResources(30, 0, 16, "given"))
    assert plan.programs_per_sm == 17 and plan.programs_per_sm * 32 * plan.num_warps > 1024   # the chapter
    assert plan.hardware_programs_per_sm == 8 and plan.occupancy.limiter == "warp slots"
    for regs in (16, 24, 30, 40, 64, 128):
        for warps in (1, 2, 4, 8, 16, 32):
            occ = occupancy(t4, regs, 16, warps, 10**6)
            assert occ.programs_per_sm * warps * 32 <= 1024 and occ.programs_per_sm <= 16


def test_every_catalog_gpu_obeys_its_own_slots():
    for gpu in sc.gpu_catalog():
        for regs in (16, 32, 64, 128, 255):
            for warps in (1, 4, 16):
                occ = occupancy(gpu, regs, 1024, warps, 10**6)
                assert occ.programs_per_sm * warps <= gpu.max_warps_per_sm
                assert occ.programs_per_sm * occ.registers_per_warp * warps <= gpu.max_num_regs
                assert gpu.max_blocks_per_sm is None or occ.programs_per_sm <= gpu.max_blocks_per_sm
                assert occ.programs_per_sm <= occ.chapter_programs_per_sm


def test_amd_cdna_rule():
    mi355x = sc.catalog_gpu("mi355x")
    # 43 VGPRs round up to 48 (granules of 8): 48 x 64 lanes = 3,072 a wave; 32,768 per SIMD hold 10, but a
    # SIMD runs at most 8 waves: 4 SIMDs x 8 = 32 waves = 8 programs of 4 (the chapter's formula: 11).
    occ = occupancy(mi355x, 43, 16, 4, 10**6)
    assert occ.registers_per_warp == 48 * 64 and occ.by_registers == 4 * 10 // 4
    assert (occ.programs_per_sm, occ.limiter, occ.chapter_programs_per_sm) == (8, "warp slots", 11)
    assert occupancy(mi355x, 16, 163840, 1, 10**6).by_shared == 1       # 160 KB LDS on gfx950
    assert occupancy(sc.catalog_gpu("mi300x"), 16, 65537, 1, 10**6).by_shared == 0


def test_chapter_formula_is_the_chapter_s():
    assert chapter_occupancy(H200, 32, 0, 8) == (8, None, 8)        # 65536 // (32 x 32 x 8)
    assert chapter_occupancy(H200, 32, 116224, 8) == (8, 2, 2)


def test_bad_input_is_a_clear_error():
    with pytest.raises(ValueError, match="n_regs"):
        occupancy(H200, 0, 0, 4, 1)
    with pytest.raises(ValueError, match="num_warps"):
        occupancy(H200, 32, 0, 0, 1)
    with pytest.raises(ValueError, match="negative"):
        occupancy(H200, 32, -1, 4, 1)
    bare = dataclasses.replace(H200, max_warps_per_sm=None)
    with pytest.raises(ValueError, match="max_warps_per_sm"):
        occupancy(bare, 32, 0, 4, 1)


def test_tuned_plans_use_the_hardware_rule():
    plan = plan_softmax(4096, 781, torch.float32, H200)
    res = plan.resources
    assert plan.occupancy == occupancy(H200, res.n_regs, res.shared_bytes, plan.num_warps, plan.num_programs)
    split = plan_softmax(64, 262144, torch.float32, H200)
    assert split.path == "split"
    per_sm = occupancy(H200, split.resources.n_regs, split.resources.shared_bytes, split.num_warps, 1).programs_per_sm
    assert split.num_programs <= per_sm * H200.multiprocessor_count
