"""Rows of widths Triton cannot prove vector-aligned (kernels/any_width.py: an aligned body between masked
edges) and tiny packed rows: float64 references, -inf / NaN rows, padded and offset views, both directions."""
import pytest
import torch

import softmax_core as sc
from tests.support.reference import TOLERANCE, reference_softmax
from softmax_core.hardware.gpu import catalog_gpu
from softmax_core.plans.choose import plan_softmax

H200 = catalog_gpu("h200")


def test_plans_take_the_edge_kernel_where_widths_are_not_multiples_of_16():
    assert plan_softmax(8192, 50257, torch.bfloat16, H200).edges                     # GPT-2's vocabulary
    assert plan_softmax(8192, 50257, torch.bfloat16, H200, "backward").edges
    odd = plan_softmax(10000, 3000, torch.float16, H200)          # 375 whole vectors a row: the hinted rows kernel
    assert not odd.edges and odd.vec == 8 and odd.rows_per_program == 2 and odd.reason.values["rows"] == 2
    assert plan_softmax(10000, 3000, torch.float16, H200, "backward").vec == 8
    assert plan_softmax(10000, 3001, torch.float16, H200).edges                      # not whole vectors
    assert plan_softmax(8192, 50257, torch.float32, H200, "backward").edges          # long: tiles, not split
    assert not plan_softmax(8192, 32000, torch.bfloat16, H200).edges                 # a multiple of 16
    gpt2 = plan_softmax(8192, 50257, torch.bfloat16, H200)        # many rows under 128 KB: edge tiles
    assert (gpt2.path, gpt2.block_n, gpt2.num_warps, gpt2.reason.values["n_tiles"]) == ("tiled", 8192, 4, 7)
    few = plan_softmax(1000, 50257, torch.bfloat16, H200)          # few 2-byte rows from 32 KB: shared by programs
    assert (few.path, few.edges) == ("split", True) and few.split > 1
    assert not plan_softmax(8192, 50257, torch.bfloat16, H200, aligned=False).edges  # no aligned start to use
    assert not plan_softmax(4096, 781, torch.float64, H200).edges
    assert not plan_softmax(4096, 781, torch.float32, H200).edges          # short fp32 rows: the rows kernel was faster
    assert plan_softmax(4096, 781, torch.float32, H200, "backward").edges
    assert plan_softmax(4096, 781, torch.bfloat16, H200).edges


def test_tiny_rows_plan():
    router = plan_softmax(65536, 8, torch.bfloat16, H200)
    assert router.tiny and router.rows_per_program >= 64
    assert not plan_softmax(65536, 12, torch.bfloat16, H200).tiny      # not a power of two: masked columns
    assert not plan_softmax(65536, 64, torch.float32, H200).tiny       # 256 B rows: the rows kernel is as fast
    assert not plan_softmax(65536, 8, torch.bfloat16, H200, "backward").tiny


@pytest.mark.parametrize("M, N, dtype", [(5, 1300, torch.float32), (3, 3001, torch.float16),
                                         (2, 20011, torch.bfloat16), (4, 1037, torch.bfloat16)])
def test_forward_and_backward_match_float64(M, N, dtype, device):
    x = (torch.randn(M, N, device=device) * 3).to(dtype)
    x[0, :7] = float("-inf")                       # -inf in the head, the body's first vector
    assert sc.plan_softmax(M, N, dtype, H200).edges
    torch.testing.assert_close(sc.softmax(x), reference_softmax(x), **TOLERANCE[dtype])
    xg = x.clone().requires_grad_()
    dy = torch.randn(M, N, device=device).to(dtype)
    (grad,) = torch.autograd.grad(sc.softmax(xg), xg, dy)
    xr = x.double().requires_grad_()
    (expected,) = torch.autograd.grad(torch.softmax(xr, -1), xr, dy.double())
    torch.testing.assert_close(grad.double(), expected, atol=2e-2 if dtype != torch.float32 else 1e-6, rtol=1e-2)


@pytest.mark.parametrize("safe", [False, True])
def test_minus_inf_and_nan_rows(safe, device):
    x = torch.randn(4, 1037, device=device)
    x[1] = float("-inf")
    x[2, 500] = float("nan")
    y = sc.softmax(x, safe=safe)
    assert torch.isnan(y[2]).all()
    assert (y[1] == 0).all() if safe else torch.isnan(y[1]).all()
    torch.testing.assert_close(y[[0, 3]], reference_softmax(x[[0, 3]]), **TOLERANCE[torch.float32])


def test_padded_rows_and_a_dy_of_other_spacing(device):
    base = torch.randn(6, 1100, device=device)
    x = base[:, 3:1040]                             # rows 1100 apart, starting 3 values in: other spacing than y
    torch.testing.assert_close(sc.softmax(x), reference_softmax(x), **TOLERANCE[torch.float32])
    xg = torch.randn(6, 1037, device=device, requires_grad=True)
    dy = torch.randn(6, 1200, device=device)[:, 5:1042]
    (grad,) = torch.autograd.grad(sc.softmax(xg), xg, dy)
    xr = xg.detach().double().requires_grad_()
    (expected,) = torch.autograd.grad(torch.softmax(xr, -1), xr, dy.double())
    torch.testing.assert_close(grad.double(), expected, atol=1e-6, rtol=1e-5)


@pytest.mark.parametrize("N, dtype", [(8, torch.bfloat16), (16, torch.float32), (2, torch.float16)])
def test_tiny_rows(N, dtype, device):
    assert sc.plan_softmax(37, N, dtype, H200).tiny
    x = (torch.randn(37, N, device=device) * 3).to(dtype)
    x[1] = float("-inf")
    x[2, 0] = float("nan")
    y = sc.softmax(x)
    assert torch.isnan(y[1]).all() and torch.isnan(y[2]).all()
    keep = [i for i in range(37) if i not in (1, 2)]
    torch.testing.assert_close(y[keep], reference_softmax(x[keep]), **TOLERANCE[dtype])
    strided = (torch.randn(9, 2 * N, device=device) * 3).to(dtype)[:, :N]      # rows not packed
    torch.testing.assert_close(sc.softmax(strided), reference_softmax(strided), **TOLERANCE[dtype])


@pytest.mark.gpu
@pytest.mark.parametrize("M, N, dtype", [(512, 50257, torch.bfloat16), (1000, 3000, torch.float16),
                                         (256, 50257, torch.float32), (65536, 8, torch.bfloat16),
                                         (64, 151937, torch.bfloat16)])
def test_real_widths_on_gpu(M, N, dtype):
    x = (torch.randn(M, N, device="cuda") * 3).to(dtype)
    torch.testing.assert_close(sc.softmax(x), reference_softmax(x), **TOLERANCE[dtype])
    xg = x.clone().requires_grad_()
    dy = torch.randn_like(x)
    (grad,) = torch.autograd.grad(sc.softmax(xg), xg, dy)
    xr = x.double().requires_grad_()
    (expected,) = torch.autograd.grad(torch.softmax(xr, -1), xr, dy.double())
    torch.testing.assert_close(grad.double(), expected, atol=2e-2 if dtype != torch.float32 else 1e-5, rtol=2e-2)
