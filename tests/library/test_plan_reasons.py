"""Plan reasons: every code is reachable from some plan, and carries exactly the figures it documents."""
import dataclasses

import pytest
import torch

import softmax_core as sc
from softmax_core.plans import kernel_jobs, reasons, tuned as tuned_plan
from softmax_core.hardware.compile import KernelResources
from softmax_core.words import describe
from softmax_core.plans.any_dim import plan_any_dim
from softmax_core.plans.strided import ReductionLayout
from softmax_core.plans.shared_dim import plan_shared_dim
from softmax_core.plans.any_dim import plan_split_dim
from softmax_core.plans.reasons import FIGURES, WHY_CODES, PlanReason, ReasonCode

H200 = sc.catalog_gpu("h200")


def fake(n_regs, shared, spills=0):
    return KernelResources(n_regs, spills, shared, "given")


def assert_documented(reason: PlanReason):
    expected = list(FIGURES[reason.code]) + (list(FIGURES[reason.why]) if reason.why else [])
    assert [name for name, _ in reason.figures] == expected
    assert all(value is None or isinstance(value, (int, float, str)) for value in reason.values.values())
    assert describe(reason) and describe(reason, lang="zh")  # both languages say every code


def tutorial_reasons():
    gpu = sc.catalog_gpu("rtx4060ti")
    return [sc.plan_launch(4096, 1024, torch.float32, gpu, resources=fake(40, 12304)).reason,
            sc.plan_launch(4096, 32768, torch.float32, gpu, resources=fake(128, 393280)).reason,
            sc.plan_launch(4096, 1024, torch.float32, gpu, resources=fake(1000, 0)).reason]


def tuned_reasons(monkeypatch):
    """One tuned plan per why code; the whole-row kernel's failures come from faked compile results."""
    found = [sc.plan_softmax(4096, 781, torch.float32, H200).reason,                         # rows
             sc.plan_softmax(4, 20_000, torch.float32, H200).reason,                         # read twice
             sc.plan_softmax(3, 70_000, torch.float32, H200).reason,                         # split, past L2
             sc.plan_softmax(3, 70_000, torch.bfloat16, H200).reason,                        # too many values
             sc.plan_softmax(64, 50_257, torch.bfloat16, H200, direction="backward").reason,  # unaligned, shared
             sc.plan_softmax(60180, 442, torch.float16, H200, direction="backward").reason,   # most in flight
             sc.plan_softmax(4096, 781, torch.float32, H200, path="rows").reason,
             sc.plan_softmax(4096, 781, torch.float32, H200, path="tiled").reason,
             sc.plan_softmax(4096, 781, torch.float32, H200, path="split").reason]
    real = kernel_jobs.kernel_resources           # every plan compiles through kernel_jobs.judged
    for rows_kernel in ((1000, 0, 0), (32, 10**7, 0), (32, 0, 8)):
        def faked(job, rows_kernel=rows_kernel):
            return fake(*rows_kernel) if job.kernel in tuned_plan.ROWS_KERNEL.values() else real(job)
        monkeypatch.setattr(kernel_jobs, "kernel_resources", faked)
        found.append(sc.plan_softmax(4096, 2048, torch.float16, H200).reason)
        found.append(sc.plan_softmax(4096, 2048, torch.float32, H200, direction="backward").reason)
    monkeypatch.setattr(kernel_jobs, "kernel_resources", real)
    amd = sc.catalog_gpu("mi300x")
    found.append(sc.plan_softmax(2, 70_000, torch.float32, amd).reason)           # split wanted, not on AMD
    channel = ReductionLayout(64, 1000, 49, 49000, 49)                              # any-dim: one pass, two, forced
    short = ReductionLayout(64, 30, 49, 1470, 49)
    found += [plan_any_dim(short, 4, "float32", H200).reason,
              plan_any_dim(channel, 4, "float32", H200).reason,
              plan_any_dim(channel, 4, "float32", H200, "backward").reason,
              plan_any_dim(channel, 4, "float32", H200, block_i=8).reason,
              plan_shared_dim(channel, 4, "float32", H200, "forward").reason,
              plan_split_dim(ReductionLayout(2, 4000, 6, 24_000, 6), 4, "float32", H200, "forward").reason,
              plan_split_dim(ReductionLayout(3, 8000, 1000, 8_000_000, 1000), 4, "float32", H200, "forward",
                             written=ReductionLayout(3, 8000, 1000, 8_000_000, 1, 8000), transposing=True,
                             waits=True).reason]                       # a transposed view's waiting parts
    return found


def test_every_code_is_reachable_and_carries_its_documented_figures(monkeypatch):
    found = tutorial_reasons() + tuned_reasons(monkeypatch)
    for reason in found:
        assert_documented(reason)
    reached = {r.code for r in found} | {r.why for r in found if r.why}
    assert reached == set(ReasonCode)


def test_each_path_takes_the_whys_it_documents(monkeypatch):
    for reason in tuned_reasons(monkeypatch):
        assert reason.why in WHY_CODES[reason.code]


def test_a_declined_split_says_so():
    """A split that cannot run (here: more programs per row than fit at once) falls back to tiles."""
    tiny = dataclasses.replace(H200, multiprocessor_count=1)
    plan = sc.plan_softmax(2, 2**20, torch.float32, tiny)
    assert plan.path == "tiled" and plan.reason.values["split_declined"] is True
    assert "cannot take it here either" in describe(plan.reason)


def test_the_module_docstring_documents_every_code_and_figure():
    for code, names in FIGURES.items():
        assert f"``{code.value}``" in reasons.__doc__
        assert all(f"``{name}``" in reasons.__doc__ for name in names)


def test_a_reason_refuses_undocumented_figures():
    with pytest.raises(ValueError, match="carries the figures"):
        PlanReason.of(ReasonCode.TUTORIAL_OVER_REGISTERS, n_regs=1, threads=32)
    with pytest.raises(ValueError, match="cannot be explained"):
        PlanReason.of(ReasonCode.ROWS, why=ReasonCode.ROW_SPILLS, rows=1, block_n=1, block_bytes=4, n_regs=1,
                      n_spills=0, programs_per_sm=1, row_n_spills=1)


@pytest.mark.parametrize("path", tuned_plan.PATHS)
def test_path_override_forces_the_path(path):
    plan = sc.plan_softmax(4096, 781, torch.float32, H200, path=path)
    assert plan.path == path and plan.reason.why is ReasonCode.FORCED
    assert plan.reason.values == sc.plan_softmax(4096, 781, torch.float32, H200, path=path).reason.values


def test_path_override_matches_the_chosen_plan():
    chosen = sc.plan_softmax(3, 70_000, torch.float32, H200)
    forced = sc.plan_softmax(3, 70_000, torch.float32, H200, path=chosen.path)
    assert (forced.block_n, forced.num_warps, forced.num_programs, forced.split) == (
        chosen.block_n, chosen.num_warps, chosen.num_programs, chosen.split)


def test_path_override_rejects_what_cannot_run():
    with pytest.raises(ValueError, match="path must be one of"):
        sc.plan_softmax(4, 781, torch.float32, H200, path="whole")
    with pytest.raises(ValueError, match="path='split'"):
        sc.plan_softmax(4, 2**20, torch.float32, dataclasses.replace(H200, multiprocessor_count=1), path="split")
