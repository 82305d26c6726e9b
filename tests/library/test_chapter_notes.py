"""softmax_teaching.chapter_notes: the chapter's side parts compute what they claim."""
import pytest
import torch

import softmax_core as sc

from softmax_teaching import chapter_notes as ch
from softmax_core.hardware import runtime
from softmax_core.hardware.gpu import catalog_gpu
from softmax_core.plans.tutorial import tutorial_num_warps


def test_strides_are_honoured_and_trusting_the_shape_is_wrong():
    cases = {c.name: c for c in ch.stride_cases(5, 12)}
    assert set(cases) == {"contiguous", "column_slice", "every_other_row", "transposed"}
    assert cases["contiguous"].stride == (12, 1) and cases["contiguous"].contiguous
    # a slice keeps unit-stride rows: no copy, the kernel jumps by the parent's row length
    assert cases["column_slice"].stride == (24, 1) and not cases["column_slice"].copies
    assert cases["column_slice"].kernel_row_stride == 24
    assert cases["every_other_row"].kernel_row_stride == 48
    # a transposed matrix has columns one apart, rows one element apart: the launchers copy it first
    assert cases["transposed"].stride == (1, 5) and cases["transposed"].copies
    assert cases["transposed"].kernel_row_stride == 12
    for c in cases.values():
        assert c.tutorial_error < 1e-6 and c.softmax_error < 1e-6, c
    assert cases["contiguous"].assumed_contiguous_error < 1e-6
    for name in ("column_slice", "every_other_row", "transposed"):
        assert cases[name].assumed_contiguous_error > 1e-2, name


def test_stride_addresses():
    assert ch.stride_addresses(24, 3, 12) == ((0, 11), (24, 35), (48, 59))


def test_each_stage_buffers_one_more_row_in_shared_memory():
    costs = ch.stages_cost(781, gpu=catalog_gpu("h200"))
    assert [c.num_stages for c in costs] == [1, 2, 3, 4]
    row = costs[0].row_bytes
    assert row == 1024 * 4
    steps = [b.shared_bytes - a.shared_bytes for a, b in zip(costs[1:], costs[2:])]
    assert steps == [row, row]
    assert costs[-1].shared_bytes > costs[0].shared_bytes


def test_num_warps_rule_reads_the_plan_table():
    assert ch.num_warps_thresholds()[0] == (4096, 16)
    rows = ch.num_warps_rule((1024, 2048, 4096, 8192))
    assert [r.num_warps for r in rows] == [tutorial_num_warps(b) for b in (1024, 2048, 4096, 8192)]
    # the rule keeps each thread at a bounded share of the row until the warps run out (16)
    assert [r.values_per_thread for r in rows] == [8, 8, 8, 16]


def test_num_warps_cost_puts_the_offline_compile_beside_the_rule(monkeypatch):
    h200 = catalog_gpu("h200")
    costs = ch.num_warps_cost((1024, 4096), torch.float32, h200)
    assert [c.rule for c in costs] == list(ch.num_warps_rule((1024, 4096), h200.warp_size))
    for c in costs:
        res = ch.offline_resources(c.rule.block_size, torch.float32, h200)
        assert (c.n_regs, c.n_spills) == (res.n_regs, res.n_spills) and c.n_regs > 0
    # a BLOCK_SIZE that does not compile for the GPU keeps its rule, with no registers to show

    def too_wide(n_cols, dtype, gpu):
        raise RuntimeError("out of resources")

    monkeypatch.setattr(ch, "offline_resources", too_wide)
    assert [(c.rule.block_size, c.n_regs, c.n_spills) for c in ch.num_warps_cost((1024,), gpu=h200)] == [(1024, None, None)]


def test_chapter_unit_test_passes_and_can_fail():
    ok = ch.chapter_unit_test((37, 781))
    assert ok.passed and ok.message == "" and ok.max_abs_error < 1e-5 and ok.block_size == 1024
    strict = ch.chapter_unit_test((37, 781), atol=0.0, rtol=0.0)
    if strict.max_abs_error > 0:
        assert not strict.passed and "Mismatched elements" in strict.message
    with pytest.raises(ValueError):
        ch.chapter_unit_test((0, 3))


def test_grid_quirk_is_read_from_triton():
    q = ch.grid_quirk()
    assert "def __getitem__" in q.source
    assert "grid[2]" in q.line


def test_exp_error_is_small_but_measured():
    e = ch.exp_error(-20.0, 0.0, 4096)
    # tl.exp is exp2(x · log2 e): the product's rounding grows with |x|, and on a GPU ex2.approx adds its own
    # (measured on the H200 over [-20, 0]: 13.8 ulp; the interpreter, computing in numpy: about 2)
    assert 0 <= e.tl_max_rel < 1e-5 and e.tl_max_ulp < (8 if sc.runtime.INTERPRETED else 32)
    assert -20.0 <= e.worst_x <= 0.0
    assert e.torch_max_ulp < 2          # torch.exp in float32 is correctly rounded or nearly
    with pytest.raises(ValueError):
        ch.exp_error(1.0, 0.0)


def test_exp_instructions_found_in_ptx():
    assert ch.float32_ptx(1.0) == "0f3F800000"
    ptx = "mul.f32 %f2, %f1, 0f3FB8AA3B;\n\tex2.approx.f32 %f3, %f2;\n\tmul.f32 %f4, %f3, %f3;"
    found = ch.exp_instructions(ptx)
    assert found.log2e == "0f3FB8AA3B"
    assert found.multiplies == ("mul.f32 %f2, %f1, 0f3FB8AA3B;",)
    assert found.exponentials == ("ex2.approx.f32 %f3, %f2;",)


def test_the_compiled_tutorial_kernel_uses_ex2_approx():
    from softmax_core.hardware.compile import kernel_resources
    from softmax_core.plans.tutorial import tutorial_compile_job

    job = tutorial_compile_job(1024, 4, 4, torch.float32, catalog_gpu("h200"))
    found = ch.exp_instructions(kernel_resources(job, want_asm=True).asm["ptx"])
    assert found.exponentials and len(found.multiplies) == len(found.exponentials)


def test_offline_resources_match_the_plan():
    from softmax_core import plan_launch

    report = ch.offline_resources(781, gpu=catalog_gpu("h200"))
    plan = plan_launch(1823, 781, torch.float32, catalog_gpu("h200"))
    assert (report.n_regs, report.shared_bytes, report.num_warps) == (plan.n_regs, plan.shared_bytes, plan.num_warps)
    assert report.how.code == "cuobjdump"


def test_warmup_needs_a_gpu():
    if runtime.INTERPRETED:
        with pytest.raises(RuntimeError):
            ch.warmup_resources(4, 781)
    else:
        live = ch.warmup_resources(4, 781)
        offline = ch.offline_resources(781)
        assert (live.n_regs, live.shared_bytes) == (offline.n_regs, offline.shared_bytes)
