import dataclasses

import pytest
import torch

import softmax_core as sc
from softmax_core.launch import api as launch_api
from softmax_core.hardware.compile import KernelResources
from softmax_core.words import describe
from softmax_core.hardware.occupancy import occupancy
from softmax_core.plans.tutorial import tutorial_num_stages, tutorial_num_warps


def fake(n_regs, shared, spills=0):
    return KernelResources(n_regs, spills, shared, "given")


@pytest.fixture
def gpu():
    return sc.catalog_gpu("rtx4060ti")


def test_tutorial_worked_example():
    """65536 // (32 * 32 * 8) = 8 programs per SM, as the tutorial computes."""
    tutorial_card = dataclasses.replace(sc.catalog_gpu("rtx4060ti"), max_num_regs=65536, warp_size=32)
    occ = occupancy(tutorial_card, n_regs=32, shared_bytes=1, num_warps=8, n_rows=10**6)
    assert occ.chapter_reg_occupancy == 8


@pytest.mark.parametrize("n_rows, n_cols, regs, shared", [
    (4096, 1024, 40, 12304), (1823, 781, 32, 8192), (100, 3000, 64, 50000), (10**6, 300, 20, 2000)])
def test_every_plan_field_follows_the_formulas(gpu, n_rows, n_cols, regs, shared):
    plan = sc.plan_launch(n_rows, n_cols, torch.float32, gpu, resources=fake(regs, shared))
    block = 1 << (n_cols - 1).bit_length()
    assert plan.block_size == block >= n_cols
    assert plan.num_warps == (16 if block >= 4096 else 8 if block >= 2048 else 4)
    assert plan.num_stages == (4 if gpu.max_shared_mem > 200_000 else 2)
    assert (plan.n_regs, plan.shared_bytes) == (regs, shared)
    assert plan.reg_occupancy == gpu.max_num_regs // (regs * gpu.warp_size * plan.num_warps)
    assert plan.sram_occupancy == gpu.max_shared_mem // shared
    assert plan.programs_per_sm == min(plan.reg_occupancy, plan.sram_occupancy)
    assert plan.num_programs == min(gpu.multiprocessor_count * plan.programs_per_sm, n_rows)
    assert plan.grid == (plan.num_programs, 1, 1)
    assert plan.gpu == gpu and plan.fits


def test_limiter_names_the_scarcer_resource(gpu):
    by_regs = sc.plan_launch(10**6, 1024, torch.float32, gpu, resources=fake(128, 1000))
    by_sram = sc.plan_launch(10**6, 1024, torch.float32, gpu, resources=fake(16, 50000))
    by_rows = sc.plan_launch(10, 1024, torch.float32, gpu, resources=fake(16, 1000))
    assert (by_regs.limiter, by_sram.limiter, by_rows.limiter) == ("registers", "shared memory", "rows")
    assert by_rows.num_programs == 10


def test_no_shared_memory_is_not_a_division_by_zero(gpu):
    plan = sc.plan_launch(4096, 128, torch.float32, gpu, resources=fake(32, 0))
    assert plan.sram_occupancy is None and plan.programs_per_sm == plan.reg_occupancy > 0
    assert plan.reason.code == sc.ReasonCode.TUTORIAL_FITS and plan.reason.values["sram_occupancy"] is None
    assert "no shared memory" in describe(plan.reason)


def test_a_program_that_does_not_fit_is_explained(gpu):
    plan = sc.plan_launch(4096, 32768, torch.float32, gpu, resources=fake(128, 393280))
    assert not plan.fits and plan.programs_per_sm == 0
    assert plan.reason.code == sc.ReasonCode.TUTORIAL_OVER_SHARED_MEMORY
    assert plan.reason.values["shared_bytes"] == 393280
    assert "393,280" in describe(plan.reason) and "OutOfResources" in describe(plan.reason)
    with pytest.raises(sc.KernelDoesNotFit, match="393,280"):
        launch_api.launch_tutorial_kernel(torch.ones(1, 1), torch.ones(1, 1), plan)


def test_amd_rule_uses_wavefronts_of_64():
    mi300x = sc.catalog_gpu("mi300x")
    assert mi300x.warp_size == 64
    occ = occupancy(mi300x, n_regs=64, shared_bytes=0, num_warps=4, n_rows=10**6)
    # 64 VGPRs x 64 lanes per wave; a SIMD's 32,768 hold 8 of them, 4 SIMDs hold 32 waves: 8 programs of 4.
    assert occ.registers_per_warp == 64 * 64 and occ.by_registers == 4 * 8 // 4 and "SIMDs" in describe(occ.rule)


def test_heuristic_tables():
    assert [tutorial_num_warps(b) for b in (1, 1024, 2048, 4096, 65536)] == [4, 4, 8, 16, 16]
    assert tutorial_num_stages(sc.catalog_gpu("h200")) == 4 and tutorial_num_stages(sc.catalog_gpu("l4")) == 2


@pytest.mark.parametrize("rows, cols", [(0, 5), (5, 0), (-1, 3), (2.5, 3)])
def test_plan_rejects_bad_shapes(rows, cols):
    with pytest.raises(ValueError, match="positive integer"):
        sc.plan_launch(rows, cols, resources=fake(32, 1))


def test_plan_rejects_integer_dtype():
    with pytest.raises(TypeError, match="float"):
        sc.plan_launch(4, 4, torch.int32, resources=fake(32, 1))


def test_real_plan_for_the_h200_uses_the_compiled_kernel():
    """The tutorial's own measurement: a 32768-wide fp32 row needs 393,280 B, more than the H200 has."""
    h200 = sc.catalog_gpu("h200")
    small = sc.plan_launch(4096, 1024, torch.float32, h200)
    assert small.n_regs > 0 and small.shared_bytes > 0 and small.fits
    too_big = sc.plan_launch(4096, 32768, torch.float32, h200)
    assert too_big.shared_bytes == 393280 and not too_big.fits


@pytest.mark.parametrize("gpu_key", ["a100-40gb", "rtx4090"])
def test_a_tiled_plan_cuts_its_tile_rather_than_spill(gpu_key):
    """float64 backward tiles on 32 warps spill on sm_80 and sm_89 at the fitted 16384 values (their 1024
    threads get at most 64 registers each); the plan halves the tile until they do not, and says so."""
    from softmax_core.plans.tuned import TILE_VALUES

    plan = sc.plan_softmax(1000, 196_783, torch.float64, sc.catalog_gpu(gpu_key), "backward")
    assert plan.path == "tiled" and plan.resources.n_spills == 0
    assert plan.block_n < TILE_VALUES and plan.reason.values["tile"] == plan.block_n
    assert plan.reason.values["n_tiles"] == -(-196_783 // plan.block_n)
