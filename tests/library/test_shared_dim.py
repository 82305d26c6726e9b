"""Strided softmax whose programs share a tile (kernels/shared_dim.py, plans/shared_dim.py's plan_shared_dim): the
plan's calls, float64 references, -inf and NaN columns, SAFE, 2-byte dtypes, a transposed view, the backward.
Under the interpreter the kernel runs in its two-launch form (publish, then finish); small pieces make several
programs share every tile."""
import pytest
import torch

from softmax_core.hardware import dtypes, runtime
from softmax_core.hardware.gpu import catalog_gpu
from softmax_core.launch import any_dim
from softmax_core.plans.any_dim import plan_any_dim
from softmax_core.plans.strided import dim_groups, forward_groups, layout_in
from softmax_core.plans.shared_dim import plan_shared_dim
from tests.support.reference import TOLERANCE, assert_like_torch

H200 = catalog_gpu("h200")

pytestmark = pytest.mark.skipif(not runtime.INTERPRETED, reason="small forced pieces: the interpreter's form")


def _forward_plan(x, dim, values=64, nbytes=16, safe=False):
    _, x_layout, y_layout = forward_groups(tuple(x.shape), tuple(x.stride()), dim)
    return plan_shared_dim(x_layout or y_layout, x.element_size(), dtypes.name(x.dtype), H200, "forward",
                           written=y_layout, safe=safe, values=values, nbytes=nbytes)


def _x(shape, dtype, transposed, device):
    if transposed:
        return torch.randn(shape[0], shape[2], shape[1], device=device).to(dtype).transpose(1, 2)
    return torch.randn(shape, device=device).to(dtype)


def test_the_plan_shares_each_tile_and_says_so():
    x = torch.empty(3, 300, 20)
    plan = _forward_plan(x, 1)
    assert plan.shares and plan.split == -(-300 // plan.block_r) and plan.one_pass
    assert plan.kernel.endswith(":softmax_shared_dim_kernel")
    assert plan.reason.why == "slab_shared" and plan.reason.values["split"] == plan.split
    # the interpreter runs programs one after another: publish, then finish
    assert [dict(c)["PHASE"] for c in plan.launches] == [1, 2]
    assert plan.n_slots == 3 * -(-20 // plan.block_i) * plan.block_i * plan.split
    # never the fitted plan's choice, and not for float64 (its words hold float32)
    assert not plan_any_dim(plan.layout, 4, "float32", H200).shares
    assert plan_shared_dim(plan.layout, 8, "float64", H200, "forward") is None


# The 300-long reduced axis takes many programs' pieces (tens of seconds interpreted): the full suite runs it,
# the fast subset runs the small shapes, which share their tiles too.
@pytest.mark.parametrize("shape,dtype,transposed", [pytest.param((3, 300, 20), torch.float32, False,
                                                                 marks=pytest.mark.slow),
                                                    ((2, 37, 5), torch.bfloat16, False),
                                                    ((2, 9, 70), torch.float16, True)])
def test_forward_matches_float64_with_inf_and_nan_columns(shape, dtype, transposed, device):
    torch.manual_seed(0)
    x = _x(shape, dtype, transposed, device)
    dim = 2 if transposed else 1
    if transposed:
        x[0, 0, :] = float("-inf")               # one softmax of only -inf, and one with a NaN
        x[1, 2, 3] = float("nan")
    else:
        x[0, :, 0] = float("-inf")
        x[1, 4, 1] = float("nan")
        x[0, 1:, 2] = float("-inf")               # one finite value down a column
    y = any_dim.any_dim_forward(x, dim, False, dtype, _forward_plan(x, dim))
    assert_like_torch(y, x, dim, "shared tiles")
    safe = any_dim.any_dim_forward(x, dim, True, dtype, _forward_plan(x, dim, safe=True))
    all_inf = torch.isneginf(x).all(dim=dim, keepdim=True).expand_as(x)
    assert (safe[all_inf] == 0).all()
    assert torch.equal(safe[~all_inf].isnan(), y[~all_inf].isnan())


@pytest.mark.parametrize("shape,dtype", [pytest.param((3, 300, 20), torch.float32, marks=pytest.mark.slow),
                                         ((2, 37, 5), torch.bfloat16)])
def test_backward_matches_float64(shape, dtype, device):
    torch.manual_seed(1)
    y = torch.softmax(torch.randn(shape, device=device), 1).to(dtype)
    dy = torch.randn(shape, device=device).to(dtype)
    layout = layout_in(dim_groups(shape, 1, y.stride(), y.stride()), shape, tuple(y.stride()))
    plan = plan_shared_dim(layout, y.element_size(), dtypes.name(dtype), H200, "backward", written=layout,
                           values=32, nbytes=16)
    assert plan.shares and plan.split > 2
    dx = any_dim.any_dim_backward(y, dy, 1, dtype, plan)
    y64, dy64 = y.double(), dy.double()
    expected = (y64 * (dy64 - (y64 * dy64).sum(1, keepdim=True))).to(dtype)
    torch.testing.assert_close(dx, expected, **TOLERANCE[dtype])
