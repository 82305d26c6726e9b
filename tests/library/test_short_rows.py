"""Short rows of any width (kernels/short_rows.py): which plans take the lane and span kernels, and their answers
against float64 on odd widths, the three dtypes, -inf / NaN rows, `safe`, padded views, a partial last block and
the backward's packed and unpacked paths."""
import pytest
import torch

import softmax_core as sc
from softmax_core.hardware.gpu import catalog_gpu
from softmax_core.plans.any_width import LANE_MAX_COLS, SHORT_MAX_COLS, SHORT_BLOCK_VALUES
from tests.support.reference import TOLERANCE, reference_softmax

H200 = catalog_gpu("h200")


def test_the_short_rows_class_takes_the_short_kernels_and_its_neighbours_do_not():
    for n in (2, 3, 17, 27, LANE_MAX_COLS):
        for dtype in (torch.float32, torch.bfloat16, torch.float16):
            plan = sc.plan_softmax(100_000, n, dtype, H200)
            tiny = n * dtype.itemsize <= 64 and n & (n - 1) == 0
            assert plan.short_rows != tiny and plan.tiny == tiny, (n, dtype)
    assert not sc.plan_softmax(100_000, LANE_MAX_COLS + 1, torch.bfloat16, H200).short_rows
    # rows the rows kernel loads in vectors keep it: even 2-byte widths, float32 widths of a multiple of 4
    for n, dtype in ((6, torch.float16), (18, torch.bfloat16), (28, torch.float16), (12, torch.float32)):
        plan = sc.plan_softmax(100_000, n, dtype, H200)
        assert not plan.short_rows and plan.kernel.endswith("softmax_rows_kernel") and plan.vec > 1, (n, dtype)
    assert sc.plan_softmax(100_000, 14, torch.float32, H200).short_rows          # float32 pairs: no vector
    for n in (2, 5, 53, 129, SHORT_MAX_COLS):             # float32 backward: the span (2-byte rows: test_word_rows.py)
        plan = sc.plan_softmax(100_000, n, torch.float32, H200, "backward")
        assert plan.short_rows and plan.rows_per_program * plan.block_n == SHORT_BLOCK_VALUES
        assert plan.resources.n_spills == 0 and plan.occupancy.programs_per_sm > 0
    assert not sc.plan_softmax(100_000, SHORT_MAX_COLS + 1, torch.float32, H200, "backward").short_rows
    assert not sc.plan_softmax(100_000, 27, torch.float64, H200).short_rows
    assert not sc.plan_softmax(100_000, 27, torch.float32, catalog_gpu("mi300x")).short_rows
    assert not sc.plan_softmax(100_000, 27, torch.float32, H200, path="rows").short_rows     # a forced path


@pytest.mark.parametrize("n, dtype", [(3, torch.float16), (19, torch.bfloat16), (27, torch.float32), (31, torch.float16)])
@pytest.mark.parametrize("safe", [False, True])
def test_lane_rows_forward(n, dtype, safe, device):
    rows = 2 * SHORT_BLOCK_VALUES // 4 + 5          # several programs and a partial last block at every width
    x = (torch.randn(rows, n, device=device) * 3).to(dtype)
    x[1] = float("-inf")
    x[2, 0] = float("nan")
    y = sc.softmax(x, safe=safe)
    assert torch.isnan(y[2]).all()
    assert (y[1] == 0).all() if safe else torch.isnan(y[1]).all()
    keep = [i for i in range(rows) if i not in (1, 2)]
    torch.testing.assert_close(y[keep], reference_softmax(x[keep]), **TOLERANCE[dtype])
    padded = (torch.randn(37, n + 5, device=device) * 3).to(dtype)[:, 1:n + 1]        # rows not packed, offset
    torch.testing.assert_close(sc.softmax(padded), reference_softmax(padded), **TOLERANCE[dtype])


def _expected_grad(x, dy):
    xr = x.detach().double().requires_grad_()
    (expected,) = torch.autograd.grad(torch.softmax(xr, -1), xr, dy.double())
    return expected


@pytest.mark.parametrize("n, dtype", [(2, torch.bfloat16), (7, torch.float16), (53, torch.float32),
                                      (129, torch.bfloat16)])
def test_span_backward_packed_and_unpacked(n, dtype, device):
    rows = 3 * max(1, SHORT_BLOCK_VALUES // 256) + 1
    x = torch.randn(rows, n, device=device).to(dtype).requires_grad_()
    tol = dict(atol=1e-5, rtol=1e-5) if dtype == torch.float32 else dict(atol=2e-2, rtol=2e-2)
    dy = torch.randn(rows, n, device=device).to(dtype)
    (grad,) = torch.autograd.grad(sc.softmax(x), x, dy)     # packed: the span (float32), words or rows (2-byte)
    torch.testing.assert_close(grad.double(), _expected_grad(x, dy), **tol)
    dy_spaced = torch.randn(rows, n + 3, device=device).to(dtype)[:, 2:n + 2]   # dy rows n + 3 apart
    (grad,) = torch.autograd.grad(sc.softmax(x), x, dy_spaced)
    torch.testing.assert_close(grad.double(), _expected_grad(x, dy_spaced), **tol)
