"""Flattened columns (kernels/any_dim.py with FLAT, plans/any_dim.py `flat`): a program's columns are neighbouring
(outer, inner) pairs, so no tile pads a short inner run. Each plan is forced, launched as sc.softmax launches it,
and held to float64: odd inner runs, a second outer axis, a transposed view, one pass and two passes, -inf and NaN
columns, half precision, and the backward with a dy of another layout."""
import pytest
import torch
import triton

from tests.support.reference import TOLERANCE, assert_like_torch
from softmax_core.hardware.gpu import catalog_gpu
from softmax_core.launch import any_dim
from softmax_core.plans.any_dim import FLAT_MIN_COLUMNS, flat_tile, plan_any_dim
from softmax_core.plans.strided import forward_groups, transposes

H200 = catalog_gpu("h200")


def _layouts(x, dim):
    _, x_layout, y_layout = forward_groups(tuple(x.shape), tuple(x.stride()), dim)
    return x_layout or y_layout, y_layout


def flat_forward(x, dim, values, safe=False):
    """y by a flat plan of tiles of at most `values` values, launched through the any-dim launch."""
    x_layout, y_layout = _layouts(x, dim)
    block_r, block_i = flat_tile(x_layout, x.element_size(), values)
    plan = plan_any_dim(x_layout, x.element_size(), str(x.dtype).split(".")[-1], H200, transposing=transposes(
        x_layout, y_layout), written=y_layout, safe=safe, compile=False, flat=True, block_r=block_r,
        block_i=block_i, num_warps=4)
    assert plan.flat and plan.block_o == 1 and ("FLAT", True) in plan.constexprs
    ready = any_dim.ready_for(x, dim, safe, x.dtype)
    ready.calls = any_dim.PlanCalls(plan)
    return ready(x), plan


# (shape, dim, transposed view): inner runs of 2, 7 and 67 (a second tile of 3 columns where tiles are 64 wide);
# two outer axes that do not fold; the last dim of a transposed view
LAYOUTS = [((5, 22, 2), 1, False), ((3, 37, 7), 1, False), ((2, 63, 67), 1, False), ((3, 4, 19, 5), 2, False),
           ((3, 40, 70), 2, True)]


@pytest.mark.parametrize("shape, dim, transposed", LAYOUTS)
@pytest.mark.parametrize("values", [4096, 16])          # one pass; chunks of a few values down the reduced axis
def test_flat_columns_match_float64(shape, dim, transposed, values, device):
    torch.manual_seed(sum(shape) + values)
    x = torch.randn(shape, device=device) * 3
    if transposed:
        x = torch.randn(shape[:-2] + (shape[-1], shape[-2]), device=device).transpose(-1, -2) * 3
    y, plan = flat_forward(x, dim, values)
    assert plan.one_pass == (triton.next_power_of_2(x.shape[dim]) * FLAT_MIN_COLUMNS <= values)
    assert_like_torch(y, x, dim, f"{tuple(x.shape)} dim {dim} values {values}")


@pytest.mark.parametrize("values", [4096, 16])
@pytest.mark.parametrize("safe", [False, True])
def test_flat_columns_of_minus_inf_and_nan(values, safe, device):
    x = torch.randn(3, 30, 5, device=device)
    x[0, :, 1] = float("-inf")                 # a whole softmax of -inf
    x[1, :15, 2] = float("-inf")               # -inf in the first chunks only
    x[2, 3, 4] = float("nan")
    y, _ = flat_forward(x, 1, values, safe)
    expected = torch.softmax(x.double(), 1).float()
    if safe:
        expected[0, :, 1] = 0.0
    torch.testing.assert_close(y, expected, equal_nan=True, **TOLERANCE[torch.float32])
    assert torch.isnan(y[2, :, 4]).all() and not torch.isnan(y[1]).any()


@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16])
def test_flat_columns_in_half_precision(dtype, device):
    x = (torch.randn(4, 45, 9, device=device) * 4).to(dtype)
    y, _ = flat_forward(x, 1, 4096)
    assert y.dtype == dtype
    assert_like_torch(y, x, 1)


@pytest.mark.parametrize("values", [2048, 16])
def test_flat_backward_matches_float64_with_a_dy_of_another_layout(values, device):
    y = torch.softmax(torch.randn(3, 33, 7, device=device) * 2, 1)
    dy = torch.randn(3, 7, 33, device=device).transpose(1, 2)                     # not y's layout
    y_layout, dy_layout = _layouts(y, 1)[0], _layouts(dy, 1)[0]
    block_r, block_i = flat_tile(y_layout, 4, values)
    plan = plan_any_dim(y_layout, 4, "float32", H200, "backward", written=dy_layout, compile=False, flat=True,
                        block_r=block_r, block_i=block_i, num_warps=4)
    dx = torch.empty_like(y)
    any_dim.BackwardLaunch(y, dy, 1, plan).run(y, dy, dx)
    yd = y.double()
    expected = yd * (dy.double() - (yd * dy.double()).sum(1, keepdim=True))
    torch.testing.assert_close(dx.double(), expected, atol=1e-6, rtol=1e-5)


def test_flat_tile_holds_the_reduced_axis_where_enough_columns_fit():
    layout = _layouts(torch.empty(100, 22, 2, device="meta"), 1)[0]
    assert flat_tile(layout, 4, 4096) == (32, 128)                          # one pass: 4096 / 32 columns
    block_r, block_i = flat_tile(_layouts(torch.empty(10, 3000, 5, device="meta"), 1)[0], 4, 4096)
    assert block_r < 3000 and block_i == 32 and block_r * block_i <= 4096    # two passes down a line's columns
    plan = plan_any_dim(layout, 4, "float32", H200, compile=False, flat=True)
    assert plan.num_programs == triton.cdiv(100 * 2, plan.block_i) and plan.pack == 1
