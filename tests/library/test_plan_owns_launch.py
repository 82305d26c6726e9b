"""A plan owns its launch (plans/plan.py): the kernel and constexprs a plan's launch passes are the plan's own,
the very ones the planner compiled for the registers it reports; the launch binds tensors to them and never
plans again. Drawn over every kind of plan the row planner makes, safe and not, aligned and not."""
import random

import pytest
import torch

import softmax_core as sc
from softmax_core.hardware import dtypes
from softmax_core.hardware.compile import kernel_resources
from softmax_core.hardware.gpu import catalog_gpu
from softmax_core.launch import launches
from softmax_core.plans.choose import plan_softmax
from softmax_core.plans.kernel_jobs import compile_job

H200 = catalog_gpu("h200")
DTYPES = (torch.float32, torch.bfloat16, torch.float16, torch.float64)


def _drawn_plans(seed: int, count: int):
    """(plan, its arguments) for random widths 2-256K, rows to 2**24 values, every dtype, both directions, a
    quarter of them unaligned, a third of the forwards safe."""
    rng = random.Random(seed)
    for _ in range(count):
        n_cols = int(round(2 ** rng.uniform(1, 18)))
        n_rows = max(1, min(100_000, int(2 ** rng.uniform(4, 24)) // n_cols))
        dtype, direction = rng.choice(DTYPES), rng.choice(("forward", "backward"))
        aligned, safe = rng.random() > 0.25, direction == "forward" and rng.random() < 0.33
        yield plan_softmax(n_rows, n_cols, dtype, H200, direction, safe, aligned=aligned), (dtype, safe, aligned)


def test_every_plan_reports_the_registers_of_the_kernel_it_launches():
    """Compile what the launch will pass (kernel, first launch's constexprs but PHASE, warps, the tensors'
    alignment): the registers and shared memory are the plan's. Before plans owned their launch, the any-width
    plans compiled with SAFE off while a safe launch passed it on."""
    kinds = set()
    for plan, (dtype, safe, aligned) in _drawn_plans(seed=41, count=60):
        constexprs = dict(plan.launches[-1])
        if "PHASE" in constexprs:
            constexprs["PHASE"] = 0                  # the one-launch form a GPU runs (two under the interpreter)
        assert constexprs.get("SAFE", safe) == safe
        job = compile_job(plan.kernel, dtype, constexprs, plan.num_warps, H200, plan.n_cols, aligned)
        res = kernel_resources(job)
        if plan.shares_rows:      # the grid fits the larger of the i32 and i64 forms: never fewer registers
            assert plan.resources.n_regs >= res.n_regs, plan
        else:
            assert (res.n_regs, res.n_spills, res.shared_bytes) == (
                plan.resources.n_regs, plan.resources.n_spills, plan.resources.shared_bytes), plan
        kinds.add((plan.kernel, plan.path))
    assert len(kinds) >= 6, kinds         # the draw reached most kinds of plan


def test_the_launch_is_the_plans_and_never_plans_again():
    for plan, (dtype, safe, _) in _drawn_plans(seed=43, count=40):
        packed_stride = plan.n_cols
        if plan.direction == "forward":
            made = launches.forward_launch(plan, safe, packed_stride, dtype, dtype)
        else:
            made = launches.backward_launch(plan, packed_stride, packed_stride, (dtype,) * 3)
        assert made.plan is plan
        assert made.kernel is launches.resolve_kernel(plan.kernel)
        if plan.needs_packed_rows and plan.direction == "forward":
            with pytest.raises(ValueError, match="packed=False"):
                launches.forward_launch(plan, safe, plan.n_cols + 16, dtype, dtype)


def test_a_plan_launched_with_safe_sets_its_own_flag():
    plan = plan_softmax(64, 27, torch.bfloat16, H200)
    assert plan.short_rows and dict(plan.launches[0])["SAFE"] is False
    made = launches.forward_launch(plan, True, 27, torch.bfloat16, torch.bfloat16)
    assert dict(made.plan.launches[0])["SAFE"] is True and made.plan.kernel == plan.kernel


@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16])
def test_padded_short_rows_are_planned_as_such(dtype, device):
    """Rows 27 wide stored 40 apart: the short-rows kernels need packed rows, so the call plans with packed=False
    (the rows kernel, each tensor's rows by its stride) and gives torch's answer, forward and backward."""
    base = (torch.randn(33, 40, dtype=torch.float64) * 4)
    x = base[:, :27].to(dtype).to(device).requires_grad_()
    y = sc.softmax(x)
    expected = torch.softmax(base[:, :27], -1)
    torch.testing.assert_close(y.double().cpu(), expected, atol=2e-2 if dtype != torch.float32 else 1e-6, rtol=0)
    dy = torch.randn(33, 40, dtype=torch.float64)[:, :27]
    (dx,) = torch.autograd.grad(y, x, dy.to(dtype).to(device))
    exact = torch._softmax_backward_data(dy, expected, -1, torch.float64)
    torch.testing.assert_close(dx.double().cpu(), exact, atol=3e-2 if dtype != torch.float32 else 1e-5, rtol=0)
    unpacked = launches.cached_plan(33, 27, dtype, "forward", False, x.get_device(), True, False)
    assert not unpacked.short_rows and unpacked.path == "rows"
    assert dtypes.name(dtype) == unpacked.dtype
