"""The rows kernels' vector hint (kernels/tuned.py, VEC): widths that are multiples of a 16-byte vector but not
of 16 load vectors when the strides allow it, and fall back to the same block unhinted when a stride does not.
Float64 references, -inf / NaN rows, rows spaced wider than their width, both directions."""
import pytest
import torch

from softmax_core.hardware.gpu import catalog_gpu
from softmax_core.launch.api import softmax_backward, softmax_forward
from softmax_core.plans.choose import plan_softmax
from softmax_core.plans.tuned import row_vector

H200 = catalog_gpu("h200")


def test_the_hint_is_given_only_where_it_can_help():
    assert row_vector(3000, torch.float16) == 8          # 6000 B rows: a multiple of 16 B, not of 16 values
    assert row_vector(1000, torch.float32) == 4
    assert row_vector(3000, torch.bfloat16) == 8
    assert row_vector(4096, torch.float16) == 1          # a multiple of 16: Triton's JIT sees it by itself
    assert row_vector(3001, torch.float16) == 1          # not a whole number of vectors
    assert row_vector(1002, torch.float32) == 1          # float32 pairs were not faster: whole vectors only
    assert row_vector(24, torch.float64) == 1
    # 2-byte widths a multiple of 2 or 4 values only: 4 or 8 bytes a load where Triton saw 2
    assert row_vector(62, torch.float16) == 2
    assert row_vector(236, torch.bfloat16) == 4
    assert row_vector(36, torch.float16) == 4
    assert row_vector(37, torch.float16) == 1
    assert plan_softmax(4096, 1000, torch.bfloat16, H200, path="rows", edges=False).vec == 8


@pytest.mark.parametrize("N, dtype, spacing", [(24, torch.float16, 24), (40, torch.float32, 44),
                                               (24, torch.bfloat16, 27), (12, torch.float32, 13),
                                               (1000, torch.bfloat16, 1000), (62, torch.float16, 62),
                                               (36, torch.bfloat16, 38), (42, torch.bfloat16, 43),
                                               (20, torch.float16, 20)])
def test_hinted_rows_match_float64(N, dtype, spacing, device):
    """Rows `spacing` apart: a multiple of the vector takes the hinted loads, any other spacing the plain ones;
    both must give the float64 answer, -inf and NaN rows included."""
    M = 6
    base = torch.randn(M, spacing, device=device, dtype=torch.float64) * 3
    base[1] = float("-inf")
    base[2, 3] = float("nan")
    x = base[:, :N].to(dtype)
    forward = plan_softmax(M, N, dtype, H200, path="rows", edges=False)
    assert forward.vec > 1
    y = softmax_forward(x, forward)
    expected = torch.softmax(x.double(), -1)
    assert torch.isnan(y[1]).all() and torch.isnan(y[2]).all()
    keep = [0, 3, 4, 5]
    torch.testing.assert_close(y[keep].double(), expected[keep], atol=2e-3 if dtype != torch.float32 else 1e-6,
                               rtol=1e-2)
    dy = (torch.randn(M, spacing, device=device, dtype=torch.float64)[:, :N]).to(dtype)
    y_in = torch.softmax(torch.randn(M, spacing, device=device, dtype=torch.float64), -1)[:, :N].to(dtype)
    backward = plan_softmax(M, N, dtype, H200, "backward", path="rows", edges=False)
    dx = softmax_backward(y_in, dy, backward)
    yd, dyd = y_in.double(), dy.double()
    torch.testing.assert_close(dx.double(), yd * (dyd - (yd * dyd).sum(-1, keepdim=True)),
                               atol=2e-3 if dtype != torch.float32 else 1e-6, rtol=1e-2)


@pytest.mark.gpu
@pytest.mark.parametrize("M, N, dtype", [(10000, 3000, torch.float16), (8192, 5000, torch.float16),
                                         (4096, 1000, torch.bfloat16), (4096, 3000, torch.float32),
                                         (100000, 62, torch.float16), (20000, 236, torch.bfloat16)])
def test_hinted_rows_on_gpu(M, N, dtype):
    import softmax_core as sc

    x = (torch.randn(M, N, device="cuda") * 3).to(dtype)
    x[5] = float("-inf")
    xg = x.clone().requires_grad_()
    y = sc.softmax(xg)
    expected = torch.softmax(x.double(), -1)
    assert torch.isnan(y[5]).all()
    keep = torch.arange(M, device="cuda") != 5
    torch.testing.assert_close(y[keep].double(), expected[keep], atol=2e-3 if dtype != torch.float32 else 1e-6,
                               rtol=1e-2)
    dy = torch.randn_like(x)
    (dx,) = torch.autograd.grad(y, xg, dy)
    xr = x.double().requires_grad_()
    (dx_ref,) = torch.autograd.grad(torch.softmax(xr, -1), xr, dy.double())
    torch.testing.assert_close(dx[keep].double(), dx_ref[keep], atol=2e-2 if dtype != torch.float32 else 1e-5,
                               rtol=1e-2)


def test_plans_for_real_2_byte_widths():
    """The plan's choices for the widths real models use (their measurements: plans/tuned.py, plans/any_width.py)."""
    from softmax_core.plans import tuned as tp
    mlp = plan_softmax(8192, 11008, torch.bfloat16, H200)                     # 32 KB padded: tiles, read twice
    assert (mlp.path, mlp.block_n, mlp.num_warps) == ("tiled", tp.MID_TILE, tp.MID_TILE_WARPS)
    assert mlp.reason.values["why"] == "read_twice_faster"
    assert plan_softmax(8192, 5000, torch.float16, H200).edges                # the same, on edge tiles
    head = plan_softmax(16384, 1000, torch.bfloat16, H200, "backward")        # whole vectors: hinted rows
    assert (head.path, head.edges, head.vec, head.num_warps) == ("rows", False, 8, 4)
    assert plan_softmax(16384, 1000, torch.bfloat16, H200).edges              # its forward keeps the edge kernel
    for direction in ("forward", "backward"):                                 # 256,512 B rows: past 2 a SM in L2
        assert plan_softmax(4096, 128256, torch.bfloat16, H200, direction).path == "split"
    assert tp.split_from_row_bytes(2, H200) == int(H200.l2_mib * 2**20) // (2 * H200.multiprocessor_count)
    assert tp.split_from_row_bytes(4, H200) == tp.SPLIT_FROM_ROW_BYTES
    llama2 = plan_softmax(8192, 32000, torch.bfloat16, H200)                  # 64 KB rows in flight fit the L2
    assert (llama2.path, llama2.num_warps) == ("tiled", tp.TILED_L2_FIT_WARPS)
    assert plan_softmax(4096, 65536, torch.bfloat16, H200).num_warps == tp.TILED_WARPS   # 128 KB rows do not
