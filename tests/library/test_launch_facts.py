"""softmax_teaching.launch_facts: one answer per fact of a launch (the GPU's programs per SM, its limiter,
slots, waves, who waits), the chapter formula's figure kept apart (tests/app/test_one_number_per_fact.py checks
that every page states them)."""
from __future__ import annotations

import pytest
import torch

import softmax_core as sc
from softmax_core.hardware.occupancy import occupancy
from softmax_teaching.launch_facts import SM_LIMITERS, facts_of_plan, launch_facts, program_placement

M, N = 4096, 781           # the chapter's matrix


@pytest.mark.parametrize("key", ["t4", "h200", "mi300x", "a100-80gb", "rtx4060ti"])
def test_facts_are_the_hardware_rules_and_the_formula_apart(key):
    gpu = sc.catalog_gpu(key)
    plan = sc.plan_launch(M, N, torch.float32, gpu)
    facts = facts_of_plan(plan)
    occ = occupancy(gpu, plan.n_regs, plan.shared_bytes, plan.num_warps, 10**9)
    assert facts.programs_per_sm == occ.programs_per_sm == plan.hardware_programs_per_sm
    assert facts.chapter_programs_per_sm == plan.programs_per_sm == occ.chapter_programs_per_sm
    assert facts.limiter in SM_LIMITERS
    by = {"warp slots": occ.by_warp_slots, "block slots": occ.by_block_slots, "registers": occ.by_registers,
          "shared memory": occ.by_shared}
    assert by[facts.limiter] == facts.programs_per_sm
    assert facts.slots == gpu.multiprocessor_count * facts.programs_per_sm
    assert facts.num_programs == plan.num_programs                     # the wrapper's grid is the formula's
    assert facts.waves == -(-facts.num_programs // facts.slots)
    assert facts.any_waits == (facts.num_programs > facts.slots) == (facts.waves > 1)
    placed = program_placement(facts.num_programs, gpu.multiprocessor_count, facts.programs_per_sm)
    assert max(p.wave for p in placed) + 1 == facts.waves
    assert sum(p.wave > 0 for p in placed) == facts.waiting


def test_t4_and_mi300x_run_fewer_than_the_formula_and_their_grid_waits():
    """The issue's figures: T4 17 (formula) vs 8 (warp slots), 680 programs on 320 slots; MI300X 11 vs 8."""
    t4 = launch_facts(sc.catalog_gpu("t4"), "float32", M, N)
    assert (t4.chapter_programs_per_sm, t4.programs_per_sm, t4.limiter) == (17, 8, "warp slots")
    assert (t4.num_programs, t4.slots, t4.waves, t4.waiting) == (680, 320, 3, 360) and t4.any_waits
    mi = launch_facts(sc.catalog_gpu("mi300x"), torch.float32, M, N)
    assert (mi.chapter_programs_per_sm, mi.programs_per_sm) == (11, 8) and mi.any_waits
    h200 = launch_facts(sc.catalog_gpu("h200"), "float32", M, N)
    assert h200.formula_agrees and not h200.any_waits and h200.waves == 1


def test_a_grid_set_by_hand_is_told_apart_and_small_grids_never_wait():
    gpu = sc.catalog_gpu("t4")
    plan = sc.plan_launch(100, N, torch.float32, gpu)
    assert facts_of_plan(plan).grid_from_plan and facts_of_plan(plan).num_programs == 100
    hand = facts_of_plan(plan, num_programs=7)
    assert not hand.grid_from_plan and hand.waves == 1 and not hand.any_waits
    assert facts_of_plan(plan, num_programs=321).waiting == 1
    with pytest.raises(ValueError):
        facts_of_plan(plan, num_programs=-1)
