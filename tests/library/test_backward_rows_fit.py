"""The backward's whole rows of more than 1024 values (plans/tuned.py, BACKWARD_BYTES_PER_THREAD): the plan compiles
the kernel that runs (the edge kernel where the width is not a multiple of 16), picks between two warp counts by the
programs resident per SM, shares rows that would hold too few bytes in flight, and every such plan matches float64."""
import pytest
import torch

import softmax_core as sc
from softmax_core.hardware.gpu import catalog_gpu
from softmax_core.plans import tuned
from softmax_core.plans.any_width import edge_plan
from softmax_core.plans.choose import plan_softmax
from softmax_core.plans.reasons import ReasonCode
from tests.support.reference import TOLERANCE

H200 = catalog_gpu("h200")


def test_the_warps_hold_128_bytes_of_each_tensor_a_thread():
    # one row a program: 32 float32 or 64 two-byte values of y and as many of dy per thread, at least 2 warps
    assert tuned.rows_config(5222, 4, H200, 1, "backward")[2] == 8          # 8192 padded float32 values
    assert tuned.rows_config(3914, 2, H200, 1, "backward")[2] == 2          # 4096 bf16
    assert tuned.rows_config(1548, 2, H200, 1, "backward")[2] == 2          # 2048 fp16: 32 values, the floor
    assert tuned.rows_config(10735, 4, H200, 1, "backward")[2] == 16        # 16384 float32
    # rows of at most 1024 values and the forward keep their own rule
    assert tuned.rows_config(1000, 4, H200, 1, "backward")[2] == tuned.MIN_WARPS    # 64 bytes a thread, 4 warps
    assert tuned.rows_config(5222, 4, H200, 1, "forward")[2] == 16
    assert tuned.max_values_per_thread(3914, 2, "backward") == 64
    assert tuned.max_values_per_thread(3914, 2, "forward") == tuned.MAX_VALUES_PER_THREAD


@pytest.mark.parametrize("M, N, dtype", [(3635, 5222, torch.float32), (8751, 3914, torch.bfloat16),
                                         (20315, 1548, torch.float16), (2190, 10735, torch.float32)])
def test_unaligned_rows_plan_the_edge_kernel_they_launch(M, N, dtype):
    plan = tuned.plan_rows_tiled_split(M, N, dtype, H200, "backward")
    if plan.path != "rows":      # shared instead: too few bytes in flight with this toolchain's registers
        assert plan.path == "split" and plan.edges
        return
    assert plan.edges and plan.rows_per_program == 1
    w0 = tuned.rows_config(N, dtype.itemsize, H200, 1, "backward")[2]
    assert plan.num_warps in (w0, 2 * w0)
    assert plan.resources == edge_plan(plan, dtype).resources       # the registers are the launched kernel's
    assert plan_softmax(M, N, dtype, H200, "backward") == edge_plan(plan, dtype)    # refine keeps it
    in_flight = plan.occupancy.programs_per_sm * 2 * N * dtype.itemsize
    shareable = tuned.split_config(N, H200, "backward", element_bytes=dtype.itemsize)[0] > 1
    assert in_flight >= tuned.BACKWARD_ROWS_MIN_IN_FLIGHT or not shareable


def test_rows_with_too_few_bytes_in_flight_are_shared(monkeypatch):
    # with every row of this class below the bound, a shareable row takes the split path with edges; a row of
    # one chunk stays whole, and a forced path keeps its rows
    monkeypatch.setattr(tuned, "BACKWARD_ROWS_MIN_IN_FLIGHT", 10**12)
    shared = tuned.plan_rows_tiled_split(1941, 10670, torch.float16, H200, "backward")
    assert shared.path == "split" and shared.edges and shared.split > 1
    assert tuned.plan_rows_tiled_split(1941, 3001, torch.float16, H200, "backward").path == "rows"
    assert tuned.plan_rows_tiled_split(1941, 10670, torch.float16, H200, "backward", path="rows").path == "rows"


@pytest.mark.parametrize("M, N, dtype", [(2, 5222, torch.float32), (3, 2630, torch.bfloat16),
                                         (3, 1548, torch.float16), (2, 10735, torch.float32)])
def test_fitted_backward_rows_match_float64(M, N, dtype, device):
    x = (torch.randn(M, N, device=device, dtype=torch.float64) * 3).to(dtype)
    x[0, :5] = float("-inf")
    dy = torch.randn(M, N, device=device).to(dtype)
    xg = x.clone().requires_grad_()
    (grad,) = torch.autograd.grad(sc.softmax(xg), xg, dy)
    y64 = torch.softmax(x.double(), -1)
    want = y64 * (dy.double() - (y64 * dy.double()).sum(-1, keepdim=True))
    torch.testing.assert_close(grad.double(), want, **TOLERANCE[dtype])


# -- rows of 256-1024 values on the rows kernel (plans/whole_rows.py, most_in_flight) ---------------------------
def _grid_in_flight(plan):
    """The bytes in flight per SM of every (rows, warps) most_in_flight may choose for `plan`, compiled here (the
    edge kernel: one row a program)."""
    import dataclasses

    import triton
    from softmax_core.plans import whole_rows
    from softmax_core.plans.kernel_jobs import judged
    fill = max(1, plan.n_rows // (whole_rows.PROGRAMS_PER_SM_TO_FILL * H200.multiprocessor_count))
    found = []
    for rows in (r for r in ((1,) if plan.edges else whole_rows.IN_FLIGHT_ROWS) if r <= 1 << (fill.bit_length() - 1)):
        for warps in whole_rows.IN_FLIGHT_WARPS:
            per_thread = whole_rows.values_per_thread(rows, plan.block_n, warps)
            if not whole_rows.IN_FLIGHT_VALUES[0] <= per_thread <= whole_rows.IN_FLIGHT_VALUES[1]:
                continue
            shaped = dataclasses.replace(plan, rows_per_program=rows, num_warps=warps,
                                         num_programs=triton.cdiv(plan.n_rows, rows))
            res, occ = judged(shaped)
            if occ.programs_per_sm and not res.n_spills:
                found.append(whole_rows.in_flight_bytes(shaped, occ))
    return found


def test_short_backward_rows_hold_the_most_bytes_in_flight():
    """Random backward rows of 256-1024 values, three dtypes: an edge-kernel plan, or a rows-kernel plan that held
    less than BACKWARD_ROWS_MIN_IN_FLIGHT before, is reshaped to hold at least as much as every candidate shape;
    rows-kernel plans holding enough already keep their shape."""
    import random

    from softmax_core.plans import whole_rows
    from softmax_core.plans.any_width import refine
    rng = random.Random(77)
    reshaped = 0
    for _ in range(24):
        n_cols = rng.randint(256, 1024)
        n_rows = int(2 ** rng.uniform(14, 18))
        dtype = rng.choice((torch.float32, torch.bfloat16, torch.float16))
        before = refine(tuned.plan_rows_tiled_split(n_rows, n_cols, dtype, H200, "backward"), dtype)
        plan = plan_softmax(n_rows, n_cols, dtype, H200, "backward")
        held = whole_rows.in_flight_bytes(plan, plan.occupancy)
        if not whole_rows.takes_most_in_flight(before, None, None):
            assert plan == before
            continue
        reshaped += 1
        assert held >= max(_grid_in_flight(before)), (n_rows, n_cols, dtype)
        assert held >= whole_rows.in_flight_bytes(before, before.occupancy)
        if held == whole_rows.in_flight_bytes(before, before.occupancy):
            continue                                          # its own shape held the most already
        assert plan.resources.n_spills == 0 and plan.reason.values["rows"] == plan.rows_per_program
        assert plan.edges == before.edges and (plan.rows_per_program == 1 or not plan.edges)
        assert plan.reason.why is ReasonCode.MOST_IN_FLIGHT and plan.reason.values["in_flight_bytes"] == held
    assert reshaped >= 4


@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16, torch.float16])
@pytest.mark.parametrize("rows, warps", [(2, 1), (4, 2), (1, 1)])
def test_reshaped_rows_match_float64(rows, warps, dtype, device):
    import dataclasses

    from softmax_core.launch.api import softmax_backward
    M, N = 7, 437
    plan = plan_softmax(M, N, dtype, H200, "backward", path="rows")
    plan = dataclasses.replace(plan, rows_per_program=rows, num_warps=warps, num_programs=(M + rows - 1) // rows)
    y = torch.softmax(torch.randn(M, N, dtype=torch.float64) * 3, -1)
    dy = torch.randn(M, N, dtype=torch.float64)
    dx = softmax_backward(y.to(dtype).to(device), dy.to(dtype).to(device), plan)
    expected = torch._softmax_backward_data(dy, y, -1, torch.float64)
    torch.testing.assert_close(dx.double().cpu(), expected, atol=1e-5 if dtype == torch.float32 else 2e-2, rtol=0)
