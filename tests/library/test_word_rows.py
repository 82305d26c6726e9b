"""The backward of short packed 2-byte rows read in words across their boundaries (kernels/word_rows.py): which
plans take the word-rows kernel, and its answers against float64 at odd and even widths, both 2-byte dtypes, both
word sizes, a float32 dx, a partial last block, and sc.softmax's gradient on packed, padded and offset inputs."""
import pytest
import torch

import softmax_core as sc
from softmax_core.hardware.gpu import catalog_gpu
from softmax_core.launch.api import softmax_backward
from softmax_core.plans.any_width import (SHORT_MAX_COLS, SHORT_VECTOR_ROWS_VALUES, SHORT_VECTOR_ROWS_WARPS,
                                          WORD_ROWS_MAX_COLS, WORD_ROWS_PACK, WORD_ROWS_VALUES, word_rows_plan)
from tests.support.reference import TOLERANCE, reference_softmax

H200 = catalog_gpu("h200")


def test_short_2_byte_backward_rows_take_the_word_kernel_where_the_rows_kernel_reads_at_most_a_word():
    for n in (2, 3, 6, 37, 130, WORD_ROWS_MAX_COLS):            # odd widths, and widths of 2 mod 4: <= 4 bytes a load
        for dtype in (torch.float16, torch.bfloat16):
            plan = sc.plan_softmax(100_000, n, dtype, H200, "backward")
            assert plan.row_words == WORD_ROWS_PACK and plan.kernel.endswith("softmax_backward_word_rows_kernel"), n
            assert plan.rows_per_program * plan.block_n >= WORD_ROWS_VALUES // 2 and plan.occupancy.programs_per_sm > 0
            assert plan.resources.n_spills == 0, n
            assert sc.plan_softmax(100_000, n, dtype, H200).row_words == 1           # the forward keeps its kernels
    for n in (4, 20, 64, 136, 248):                               # 8- or 16-byte loads: the rows kernel, 8 values a thread
        plan = sc.plan_softmax(100_000, n, torch.bfloat16, H200, "backward")
        assert plan.row_words == 1 and plan.kernel.endswith("softmax_backward_rows_kernel"), n
        assert plan.rows_per_program * plan.block_n == SHORT_VECTOR_ROWS_VALUES, n
        assert plan.num_warps == SHORT_VECTOR_ROWS_WARPS and plan.resources.n_spills == 0, n
    for n, dtype in ((37, torch.float32), (37, torch.float64), (WORD_ROWS_MAX_COLS + 1, torch.float16)):
        assert sc.plan_softmax(100_000, n, dtype, H200, "backward").row_words == 1, (n, dtype)
    assert sc.plan_softmax(100_000, SHORT_MAX_COLS, torch.float32, H200, "backward").short_rows   # the span
    assert sc.plan_softmax(100_000, 37, torch.float16, H200, "backward", aligned=False).row_words == 1
    assert sc.plan_softmax(100_000, 37, torch.float16, H200, "backward", packed=False).row_words == 1
    assert sc.plan_softmax(100_000, 37, torch.float16, catalog_gpu("mi300x"), "backward").row_words == 1
    assert sc.plan_softmax(100_000, 37, torch.float16, H200, "backward", path="rows").row_words == 1


def _words_plan(rows, n, dtype, pack):
    rows_plan = sc.plan_softmax(rows, n, dtype, H200, "backward", path="rows")
    return word_rows_plan(rows_plan, dtype, pack, 256)


@pytest.mark.parametrize("n, dtype", [(2, torch.float16), (5, torch.bfloat16), (37, torch.float16), (64, torch.bfloat16),
                                      (255, torch.float16)])
@pytest.mark.parametrize("pack", [2, 4])
def test_word_rows_backward_against_float64(n, dtype, pack, device):
    rows = 2 * _words_plan(1, n, dtype, pack).rows_per_program + 1
    plan = _words_plan(rows, n, dtype, pack)
    y = torch.softmax(torch.randn(rows, n, device=device), -1).to(dtype)
    dy = torch.randn(rows, n, device=device).to(dtype)
    yd, dyd = y.double(), dy.double()
    expected = yd * (dyd - (yd * dyd).sum(-1, keepdim=True))
    torch.testing.assert_close(softmax_backward(y, dy, plan).double(), expected, atol=2e-2, rtol=2e-2)
    wide = softmax_backward(y, dy, plan, torch.float32)
    torch.testing.assert_close(wide.double(), expected, atol=1e-5, rtol=1e-5)


@pytest.mark.parametrize("n, dtype", [(21, torch.float16), (61, torch.bfloat16)])
def test_softmax_and_its_gradient_through_the_library(n, dtype, device):
    """sc.softmax's gradient on packed rows (the word kernel), and the softmax of a padded view and of an input that
    starts 2 bytes into its allocation."""
    x = (torch.randn(301, n, device=device) * 2).to(dtype).requires_grad_()
    y = sc.softmax(x)
    torch.testing.assert_close(y, reference_softmax(x.detach()), **TOLERANCE[dtype])
    dy = torch.randn(301, n, device=device).to(dtype)
    (grad,) = torch.autograd.grad(y, x, dy)
    xr = x.detach().double().requires_grad_()
    (expected,) = torch.autograd.grad(torch.softmax(xr, -1), xr, dy.double())
    torch.testing.assert_close(grad.double(), expected, atol=2e-2, rtol=2e-2)
    padded = (torch.randn(53, n + 3, device=device) * 3).to(dtype)[:, 1:n + 1]
    torch.testing.assert_close(sc.softmax(padded), reference_softmax(padded), **TOLERANCE[dtype])
    offset = (torch.randn(53 * n + 1, device=device) * 3).to(dtype)[1:].view(53, n)
    torch.testing.assert_close(sc.softmax(offset), reference_softmax(offset), **TOLERANCE[dtype])
