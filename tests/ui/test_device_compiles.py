"""The H200's compile record (assets/device_compiles/): what it holds, with its provenance, and that the
pages' figures for the H200 are its figures, with its toolchain named; the local compile stays for the GPUs
it was not made on and for a pasted kernel."""
import math

import pytest
import torch

import softmax_core as sc
from explorer_ui import data, defaults, device_compiles
from softmax_core.hardware import dtypes
from softmax_core.hardware.compile import RegisterSource, job_identity
from softmax_core.plans.tutorial import tutorial_compile_job, tutorial_num_warps

H200 = sc.catalog_gpu("h200")


def test_the_record_says_where_when_and_how_it_was_made():
    rec = device_compiles.record("h200")
    assert rec.gpu_name == "NVIDIA H200" and rec.toolchain.startswith("triton 3.6")
    assert rec.command.startswith("python -m explorer_ui.record_compiles") and rec.date[:4] == "2026"
    assert rec.label in {r.toolchain for r in rec.results.values()}
    assert device_compiles.record("t4") is None


def test_every_tutorial_configuration_the_pages_offer_is_recorded():
    """BLOCK_SIZE 1 ... the GPU page's longest row, the chapter's num_warps for it, num_stages 1-4, every dtype:
    a change to the tutorial kernel without a new record fails here (its compile identity changes)."""
    rec = device_compiles.record("h200")
    top = 1 << (defaults.GPU_PAGE_MAX_N - 1).bit_length()
    blocks = [1 << k for k in range(top.bit_length())]
    missing = [(b, s, d) for d in dtypes.TUTORIAL_DTYPES for b in blocks for s in (1, 2, 3, 4)
               if job_identity(tutorial_compile_job(b, tutorial_num_warps(b), s, dtypes.torch_dtype(d), H200))
               not in rec.results]
    assert not missing


def test_the_issues_figures_h200_n781_are_the_h200s_own():
    plan = data.launch_plan(4096, 781, "float32", "h200")
    local = data.local_launch_plan(4096, 781, "float32", "h200")
    assert plan.resources_how.code == RegisterSource.RECORDED and plan.toolchain.startswith("triton 3.6")
    assert (plan.n_regs, plan.programs_per_sm, plan.num_programs) == (48, 10, 1320)
    assert local.toolchain != plan.toolchain and local.resources_how.code != RegisterSource.RECORDED
    # another GPU of the same architecture is compiled here, and says so
    h100 = data.launch_plan(4096, 781, "float32", "h100-sxm")
    assert h100.resources_how.code != RegisterSource.RECORDED


def test_no_spill_at_8192_or_16384_on_the_h200():
    for n in (8192, 16384):
        assert data.launch_plan(1, n, "float32", "h200").n_spills == 0


def test_the_chapter_notes_tables_read_the_record_for_the_h200():
    stages = data.stages_cost(781, "float32", "h200")
    job = tutorial_compile_job(1024, 4, 1, torch.float32, H200)
    assert stages[0].n_regs == device_compiles.recorded_resources(job, "h200").n_regs
    assert "triton 3.6" in data.toolchain_label("h200") and "triton 3.6" not in data.toolchain_label("t4")


# -- the tuned kernels' plans --------------------------------------------------------------------------------
class NotRecorded(Exception):
    pass


def planned_from_the_record(config):
    """The plan of `config` on the H200 with every compile answered by the record alone (NotRecorded names the
    first compile it lacks)."""
    from softmax_core.hardware.compile import answered_first
    from explorer_ui import tuned_configs

    def only_recorded(job):
        found = device_compiles.recorded_resources(job, "h200")
        if found is None:
            raise NotRecorded(f"{config}: {job.kernel} {dict(job.constexprs)} warps={job.num_warps} "
                              f"divisible={job.divisible}")
        return found
    with answered_first(only_recorded):
        return tuned_configs.plan(config, H200)


def box_sample(seed: int, n: int):
    """`n` configurations drawn from the GPU page's boxes (M, N log-uniform, any dtype it offers)."""
    import random
    from explorer_ui import tuned_configs

    rng = random.Random(seed)
    draw = lambda top: max(1, min(top, round(math.exp(rng.uniform(0, math.log(top))))))   # noqa: E731
    return [tuned_configs.TunedConfig(draw(tuned_configs.GPU_PAGE_MAX_M), draw(tuned_configs.GPU_PAGE_MAX_N),
                                      rng.choice(tuned_configs.page_dtypes())) for _ in range(n)]


def test_every_tuned_plan_the_pages_offer_is_planned_from_the_record_alone():
    """The long-rows pages' plans, and a seeded sample of the GPU page's boxes (with the boxes' ends): each is
    planned on the H200 with no compile but the record's. A new box value, a new page configuration or a kernel
    edited without a new record fails here; `--list-jobs` and `--jobs` (explorer_ui.record_compiles) make it."""
    from explorer_ui import tuned_configs

    top_m, top_n = tuned_configs.GPU_PAGE_MAX_M, tuned_configs.GPU_PAGE_MAX_N
    ends = [tuned_configs.TunedConfig(m, n, d) for d in tuned_configs.page_dtypes()
            for m in (1, top_m) for n in (1, top_n)]
    for config in list(tuned_configs.fixed_configs()) + ends + box_sample(seed=32, n=150):
        plan = planned_from_the_record(config)
        assert plan.resources.source == RegisterSource.RECORDED and "triton 3.6" in plan.resources.toolchain


@pytest.mark.slow
def test_every_configuration_class_of_the_gpu_page_is_planned_from_the_record_alone():
    from explorer_ui import tuned_configs

    missing = []
    for config in tuned_configs.class_configs(H200) + tuple(box_sample(seed=33, n=2000)):
        try:
            planned_from_the_record(config)
        except NotRecorded as gap:
            missing.append(str(gap))
    assert not missing, missing[:5]


def test_the_check_sees_a_configuration_the_record_lacks():
    from explorer_ui import tuned_configs

    with pytest.raises(NotRecorded):
        planned_from_the_record(tuned_configs.TunedConfig(4096, 781, "float64"))     # a dtype no page offers


def test_the_pages_tuned_plans_on_the_h200_are_the_h200s_own():
    plan = data.softmax_plan(4096, 781, "float32", "h200")
    assert plan.resources.source == RegisterSource.RECORDED and plan.resources.toolchain.startswith("triton 3.6")
    maps = data.path_plans("h200", "bfloat16")
    assert all(p.resources.source == RegisterSource.RECORDED for p in maps)
    # another GPU is compiled here and names this machine's toolchain
    t4 = data.softmax_plan(4096, 781, "float32", "t4")
    assert t4.resources.source != RegisterSource.RECORDED and "sm_75" in t4.resources.toolchain


def test_your_shapes_row_plan_on_the_h200_is_the_h200s_own():
    from explorer_ui import your_shape

    plan = your_shape.cached_plan((8192, 50257), "bfloat16", -1, "h200", False, "forward")
    assert plan.rows_plan.resources.source == RegisterSource.RECORDED
