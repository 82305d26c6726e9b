"""The GPU catalog (softmax_core/data/gpus.json): complete, sourced, in the right units, and every GPU's plans compile."""
import dataclasses
import json
import re
from pathlib import Path

import pytest
import torch
import triton

import softmax_core as sc
from softmax_core.hardware import compile as kc
from softmax_core.hardware.gpu import CATALOG_PATH, GpuSpec
from softmax_teaching.gpu_compare import compare_gpus
from softmax_core.traffic import bytes_moved
from softmax_core.plans.tutorial import tutorial_compile_job

ROOT = Path(__file__).resolve().parents[2]
RULE_FIGURES = ("max_warps_per_sm", "shared_mem_per_sm", "register_alloc_unit", "register_banks",
                "max_regs_per_thread", "reserved_shared_per_block", "shared_alloc_unit")
FIGURES = ("multiprocessor_count", "max_num_regs", "max_shared_mem", "warp_size", "memory_bandwidth_gbps",
           "memory_gb", "l2_mib") + RULE_FIGURES


def test_at_least_16_gpus_including_the_new_architectures():
    catalog = sc.gpu_catalog()
    assert len(catalog) >= 16 and len({g.key for g in catalog}) == len(catalog)
    keys = {g.key for g in catalog}
    assert {"b200", "rtx5090", "l40s", "a10", "h20", "h100-pcie", "a100-40gb", "mi325x", "mi355x"} <= keys
    archs = {g.arch for g in catalog}
    assert {"sm_75", "sm_80", "sm_86", "sm_89", "sm_90", "sm_100", "sm_120", "gfx942", "gfx950"} <= archs
    for g in catalog:
        major, minor = g.compute_capability
        assert g.vendor == "amd" or g.arch == f"sm_{major}{minor}"


def test_every_figure_has_a_source():
    document = json.loads(CATALOG_PATH.read_text())
    for g in sc.gpu_catalog():
        for figure in FIGURES:
            assert getattr(g, figure) is not None, (g.key, figure)
            assert g.source.get(figure) in document["sources"].values(), (g.key, figure)
    for arch, entry in document["architectures"].items():
        figures = set(entry) - {"source"}
        assert set(entry["source"]) == figures, arch
        assert set(entry["source"].values()) <= set(document["sources"]), arch


def test_units_are_decimal_for_memory_and_binary_for_l2():
    fields = {f.name for f in dataclasses.fields(GpuSpec)}
    assert "memory_gb" in fields and "memory_gib" not in fields
    for folder in ("softmax_core", "explorer_ui", "pages"):
        for path in (ROOT / folder).rglob("*.py"):
            assert "memory_gib" not in path.read_text(), path
    assert sc.catalog_gpu("h200").memory_gb == 141          # the datasheet's 141 GB (= 131 GiB)


def test_h200_l2_is_the_measured_figure():
    record = json.loads((ROOT / "assets/occupancy/h200-driver-occupancy.json").read_text())
    h200 = sc.catalog_gpu("h200")
    assert h200.l2_mib * 2**20 == record["device_attributes"]["l2_cache_size"]
    assert "Measured" in h200.source["l2_mib"]


def test_per_architecture_limits():
    def arch(name):
        return next(g for g in sc.gpu_catalog() if g.arch == name)
    assert arch("sm_75").max_warps_per_sm * 32 == 1024
    assert arch("sm_86").max_warps_per_sm * 32 == arch("sm_89").max_warps_per_sm * 32 == 1536
    assert arch("sm_120").max_warps_per_sm * 32 == 1536
    assert arch("sm_80").max_warps_per_sm == arch("sm_90").max_warps_per_sm == arch("sm_100").max_warps_per_sm == 64
    assert arch("sm_90").shared_mem_per_sm - arch("sm_90").max_shared_mem == 1024
    assert arch("gfx950").shared_mem_per_sm == 160 * 1024 and arch("gfx942").shared_mem_per_sm == 64 * 1024


def _toolchain_ok(text: str, gpu) -> None:
    assert f"triton {triton.__version__}" in text
    if gpu.vendor == "nvidia":
        assert re.search(r"ptxas \d+\.\d+", text), text


@pytest.mark.parametrize("key", [g.key for g in sc.gpu_catalog()])
def test_every_catalog_gpu_plans_compile_offline(key):
    """Tutorial and tuned plans for each GPU come from a real compile for its architecture, and say which
    toolchain produced the register count."""
    gpu = sc.catalog_gpu(key)
    plan = sc.plan_launch(1024, 781, torch.float32, gpu)
    assert plan.n_regs > 0 and plan.fits and plan.occupancy.programs_per_sm > 0
    _toolchain_ok(plan.toolchain, gpu)
    tuned = sc.plan_softmax(1024, 781, torch.bfloat16, gpu)
    assert tuned.resources.n_regs > 0 and tuned.occupancy.programs_per_sm > 0
    _toolchain_ok(tuned.resources.toolchain, gpu)


def test_the_compile_cache_key_includes_the_toolchain(monkeypatch):
    job = tutorial_compile_job(1024, 4, 4, torch.float32, sc.catalog_gpu("h200"))
    before = job.key()
    kc.job_key.cache_clear()
    monkeypatch.setattr(kc, "toolchain", lambda target: "triton 0.0, ptxas 0.0")
    try:
        assert job.key() != before
    finally:
        kc.job_key.cache_clear()


def test_toolchain_names_the_ptxas_for_the_architecture():
    assert "ptxas" in kc.toolchain(("cuda", 90, 32)) and "sm_90" in kc.toolchain(("cuda", 90, 32))
    assert "gfx950" in kc.toolchain(("hip", "gfx950", 64)) and "ptxas" not in kc.toolchain(("hip", "gfx950", 64))


def test_compare_gpus_covers_the_catalog():
    rows = compare_gpus("tutorial", 4096, 781)
    assert [r.gpu.key for r in rows] == [g.key for g in sc.gpu_catalog()]
    moved = bytes_moved(4096, 781, 4)
    for r in rows:
        assert r.bytes_moved == moved
        assert r.time_floor_us == pytest.approx(moved / (r.gpu.memory_bandwidth_gbps * 1e9) * 1e6)
        assert r.resident_programs == r.gpu.multiprocessor_count * r.programs_per_sm
        assert r.programs_per_sm <= r.chapter_programs_per_sm and r.n_regs > 0
        plan = sc.plan_launch(4096, 781, torch.float32, r.gpu)
        assert (r.grid, r.chapter_programs_per_sm, r.n_regs) == (plan.num_programs, plan.programs_per_sm, plan.n_regs)
    t4 = next(r for r in rows if r.gpu.key == "t4")
    assert t4.programs_per_sm * 32 * t4.num_warps <= 1024 and not t4.agrees
    tuned = compare_gpus("tuned", 4096, 781, gpus=(sc.catalog_gpu("h200"),))
    assert tuned[0].path == "rows" and tuned[0].grid == sc.plan_softmax(4096, 781).num_programs
    with pytest.raises(ValueError, match="kernel"):
        compare_gpus("mystery", 4, 4)
    with pytest.raises(ValueError, match="n_cols"):
        compare_gpus("tuned", 4, 0)


def test_the_compile_cache_key_follows_the_helpers_a_kernel_calls():
    """A kernel compiles from its helpers too: a change inside one (here: any @triton.jit function the split
    kernel reaches, two calls deep) must give its compile results a new name, or cached registers go stale."""
    import inspect

    from softmax_core.kernels import any_width, row_slots, tuned

    text = kc.kernel_source("softmax_core.kernels.shared_rows:softmax_split_kernel")
    for helper in (any_width.row_pieces, row_slots.peer_words, row_slots.span_pair, tuned.fast_exp):
        assert inspect.getsource(helper.fn) in text, helper.fn.__name__
    assert repr(row_slots.FALLBACK_TILE.value) in text
    assert "def softmax_backward_split_kernel" not in text     # only what this kernel reaches
