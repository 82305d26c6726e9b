import pytest
import torch

import softmax_core as sc
from softmax_core.words import describe
from softmax_core.hardware import compile as kc
from softmax_core.plans.tutorial import tutorial_compile_job


@pytest.fixture
def empty_cache(tmp_path, monkeypatch):
    """Force a real compile: no disk or memory cache hit."""
    monkeypatch.setenv("SOFTMAX_EXPLORER_CACHE", str(tmp_path))
    kc.forget_in_memory()
    return tmp_path


@pytest.mark.parametrize("gpu_key", ["a100-80gb", "h200"])   # sm_80 and sm_90
def test_offline_compile_reports_real_registers(gpu_key, empty_cache):
    gpu = sc.catalog_gpu(gpu_key)
    job = tutorial_compile_job(1024, 4, 4, torch.float32, gpu)
    res = kc.kernel_resources(job)
    assert res.n_regs > 0 and res.shared_bytes > 0
    assert res.source is kc.RegisterSource.CUOBJDUMP and res.target == f"sm_{gpu.compile_target[1]}"
    assert res.how.values["target"] in describe(res.how)
    assert list((empty_cache / "compile").glob("*.json")), "result was not cached on disk"


def test_wider_rows_cost_more_shared_memory(empty_cache):
    gpu = sc.catalog_gpu("h200")
    small = kc.kernel_resources(tutorial_compile_job(1024, 4, 4, torch.float32, gpu))
    large = kc.kernel_resources(tutorial_compile_job(4096, 16, 4, torch.float32, gpu))
    assert large.shared_bytes > small.shared_bytes


def test_assembly_on_request():
    res = kc.kernel_resources(tutorial_compile_job(1024, 4, 4, torch.float32, sc.catalog_gpu("h200")), want_asm=True)
    assert ".target sm_90" in res.asm["ptx"] and "tutorial_softmax_kernel" in res.asm["ptx"]
    assert "EXIT" in res.asm["sass"]


def test_compile_errors_are_reported(empty_cache):
    job = tutorial_compile_job(1024, 4, 4, torch.float32, sc.catalog_gpu("h200"))
    broken = kc.CompileJob("softmax_core.kernels.tutorial:no_such_kernel", job.signature, job.constexprs, 4, 4,
                           job.target)
    with pytest.raises((RuntimeError, AttributeError), match="no_such_kernel"):
        kc.kernel_resources(broken)
