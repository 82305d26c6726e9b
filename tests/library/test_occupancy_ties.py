"""Limits as a set: every limit that allows exactly the programs per SM is named, a tie as a tie, on every
catalog GPU; and the tutorial plan's sentence says "runs out first" only where one term is strictly smaller."""
import random

import pytest
import torch

import softmax_core as sc
from softmax_core.hardware.occupancy import CHAPTER_LIMITERS, SM_LIMITERS, Limiter, occupancy
from softmax_core.plans.tutorial import plan_launch
from softmax_core.words import describe, piece


def allowances(occ):
    return {Limiter.WARP_SLOTS: occ.by_warp_slots, Limiter.BLOCK_SLOTS: occ.by_block_slots,
            Limiter.REGISTERS: occ.by_registers, Limiter.SHARED_MEMORY: occ.by_shared}


def test_the_issues_tie_h200_n16384_is_a_tie():
    plan = plan_launch(4096, 16384, torch.float32, sc.catalog_gpu("h200"))
    occ = plan.occupancy
    assert occ.by_registers == occ.by_shared == occ.programs_per_sm
    assert occ.limiters == (Limiter.REGISTERS, Limiter.SHARED_MEMORY) and occ.tied
    assert occ.chapter_limiters == CHAPTER_LIMITERS and occ.chapter_tied
    for lang in ("en", "zh"):
        text = describe(plan.reason, lang=lang)
        assert piece("plan_pieces", "limiter_tie", lang, programs_per_sm=occ.chapter_programs_per_sm) in text
        assert piece("plan_pieces", "limiter_registers", lang) not in text


@pytest.mark.parametrize("gpu", sc.gpu_catalog(), ids=lambda g: g.key)
def test_limiters_are_exactly_the_limits_at_the_answer(gpu):
    rng = random.Random(gpu.key)
    kinds = set()
    for _ in range(300):
        n_regs = rng.choice([8, 16, 24, 32, 40, 48, 64, 96, 128, 168, 255, rng.randint(1, 255)])
        warps = rng.choice([1, 2, 4, 8, 16, 32])
        shared = rng.choice([0, 16, 1024, gpu.max_shared_mem // rng.randint(1, 24), gpu.max_shared_mem])
        occ = occupancy(gpu, n_regs, shared, warps, 10**9)
        at_answer = tuple(k for k in SM_LIMITERS if allowances(occ)[k] == occ.programs_per_sm)
        assert occ.limiters == at_answer and occ.limiters, (n_regs, warps, shared)
        assert occ.limiter == occ.limiters[0]
        kinds.add(occ.tied)
        chapter = {Limiter.REGISTERS: occ.chapter_reg_occupancy, Limiter.SHARED_MEMORY: occ.chapter_sram_occupancy}
        assert occ.chapter_limiters == tuple(k for k in CHAPTER_LIMITERS if chapter[k] == occ.chapter_programs_per_sm)
        if occ.tied and occ.programs_per_sm > 0 and Limiter.REGISTERS in occ.limiters and n_regs > 8:
            # a tie: lifting the registers alone (half of them) gives no more programs per SM
            assert occupancy(gpu, n_regs // 2, shared, warps, 10**9).programs_per_sm == occ.programs_per_sm
    assert kinds == {True, False}       # the draw meets ties and single limits alike


@pytest.mark.parametrize("gpu", sc.gpu_catalog(), ids=lambda g: g.key)
def test_the_plans_sentence_names_a_first_limit_only_where_one_is_smaller(gpu):
    for n in (781, 4096, 16384):
        plan = plan_launch(1 << 20, n, torch.float32, gpu)       # rows to spare: the SM's limits decide
        if not plan.fits:
            continue
        text = describe(plan.reason, lang="en")
        reg, sram = plan.reg_occupancy, plan.sram_occupancy
        if sram is not None and reg == sram:
            assert "tie" in text and "first" not in text
        elif sram is not None and sram < reg:
            assert piece("plan_pieces", "limiter_shared_memory", "en") in text
        else:
            assert piece("plan_pieces", "limiter_registers", "en") in text
