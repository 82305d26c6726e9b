"""What the pages say of a GPU's own hardware, from the catalog: the last cache before DRAM named as that GPU
names it (the Infinity Cache on AMD CDNA 3/4, the L2 elsewhere) in every plan's words, in both languages, and
the chapter formula's `max_num_regs` as the figure Triton's driver reports (on AMD: hipDeviceProp_t.regsPerBlock,
one CU's whole register file)."""
from __future__ import annotations

import dataclasses
import functools

import pytest
import torch

import softmax_core as sc
from explorer_ui import cache_model, gpu_figures
from explorer_ui.i18n import text_in
from softmax_core.hardware.gpu import CACHE_KINDS, CacheKind, last_cache
from softmax_core.words import describe

AMD = [g for g in sc.gpu_catalog() if g.vendor == "amd"]


def test_every_catalog_gpu_names_its_last_level_cache_and_has_its_size():
    for gpu in sc.gpu_catalog():
        assert gpu.last_level_cache in CACHE_KINDS, gpu.key
        assert gpu.source["last_level_cache"], gpu.key
        size = gpu.infinity_cache_mib if gpu.last_level_cache == "infinity_cache" else gpu.l2_mib
        assert last_cache(gpu).mib == size
        # AMD CDNA: each XCD's L2 serves only its own CUs, so the cache every CU shares is the Infinity Cache
        assert (gpu.last_level_cache == "infinity_cache") == (gpu.vendor == "amd")


@pytest.fixture(scope="module")
def tiled_reason():
    """A tiled plan's reason ('last tile first so it is still in the ...'), planned once on the H200."""
    return sc.plan_softmax(4096, 8192, torch.float32, sc.catalog_gpu("h200")).reason


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_plan_words_name_the_plan_gpus_last_level_cache(tiled_reason, lang):
    for gpu in sc.gpu_catalog():
        said = describe(tiled_reason, {"cache": CacheKind(gpu.last_level_cache)}, lang)
        if gpu.vendor == "amd":
            assert "Infinity Cache" in said and "L2" not in said, (gpu.key, said)
        else:
            assert "L2" in said and "Infinity Cache" not in said, (gpu.key, said)
    # without a GPU the words name no cache wrongly
    general = describe(tiled_reason, None, lang)
    assert "L2" not in general and "Infinity Cache" not in general


def test_the_pages_say_a_plan_with_its_own_gpus_cache(tiled_reason, monkeypatch):
    from explorer_ui import i18n

    monkeypatch.setattr(i18n, "language", lambda: "en")
    plan = sc.plan_softmax(4096, 8192, torch.float32, sc.catalog_gpu("h200"))
    assert "still in the L2" in i18n.plan_said(plan)
    on_amd = dataclasses.replace(plan, gpu=sc.catalog_gpu("mi300x"))
    assert "still in the Infinity Cache" in i18n.plan_said(on_amd)
    assert cache_model.cache_words(sc.catalog_gpu("mi300x"))["cache"] == "Infinity Cache"


@pytest.mark.parametrize("gpu", AMD, ids=[g.key for g in AMD])
def test_amd_max_num_regs_is_what_tritons_hip_driver_reports(gpu):
    """Triton's HIP driver reports hipDeviceProp_t.regsPerBlock, which ROCm sets to VGPRs per SIMD x SIMDs per
    CU x wavefront width: one CU's whole VGPR file (512 KB on CDNA 3/4, 4 bytes a register)."""
    assert "third_party/amd/backend/driver.c" in gpu.source["max_num_regs"]
    assert "regsPerBlock" in gpu.source["max_num_regs"]
    assert gpu.max_num_regs == 512 * gpu.register_banks * gpu.warp_size == 512 * 1024 // 4


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_the_gpu_page_says_what_max_num_regs_is(lang):
    t = functools.partial(text_in, lang)
    amd = gpu_figures.max_num_regs_said(sc.catalog_gpu("mi300x"), t)
    assert "131,072" in amd and "regsPerBlock" in amd and "512" in amd and "× 4 " in amd and "64" in amd
    nvidia = gpu_figures.max_num_regs_said(sc.catalog_gpu("t4"), t)
    assert "65,536" in nvidia and "regsPerBlock" not in nvidia


@pytest.mark.parametrize("lang, word", [("en", "recorded"), ("zh", "上记录")])
def test_a_recorded_figures_toolchain_is_said_in_the_readers_language(lang, word, monkeypatch):
    from explorer_ui import data, i18n

    monkeypatch.setattr(i18n, "language", lambda: lang)
    said = i18n.toolchain_said(data.toolchain_label("h200"))
    assert said.startswith("triton 3.6") and word in said and "NVIDIA H200" in said
    assert (" on NVIDIA" in said) == (lang == "en")
    local = data.toolchain_label("t4")
    assert i18n.toolchain_said(local) == local          # a local toolchain: names and versions as they are
