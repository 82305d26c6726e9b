"""The H200's compile record (assets/device_compiles/): what it holds, with its provenance, and that the
pages' figures for the H200 are its figures, with its toolchain named; the local compile stays for the GPUs
it was not made on and for a pasted kernel."""
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
