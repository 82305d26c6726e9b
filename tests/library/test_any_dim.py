"""softmax over an axis that is not the contiguous one (kernels/any_dim.py): layouts, float64 references,
-inf / NaN columns, both passes, dtypes, autograd. Small shapes: the interpreter runs every program."""
import pytest
import dataclasses

import torch

import softmax_core as sc
from tests.support.reference import TOLERANCE, reference_softmax
from softmax_core.launch import any_dim
from softmax_core.launch.any_dim import takes_any_dim
from softmax_core.plans.any_dim import plan_any_dim
from softmax_core.plans.strided import (ReductionLayout, contiguous_strides, dim_groups, layout_in, reduction_layout,
                                        slices_span_32_bits)
from softmax_core.hardware import dtypes
from softmax_core.hardware.gpu import catalog_gpu


def test_layout_of_dim_1_and_of_a_transposed_last_dim():
    assert reduction_layout((64, 1000, 49), (49000, 49, 1), 1) == ReductionLayout(64, 1000, 49, 49000, 49)
    # (32, 2048, 2048) transposed: the last dim steps 2048 elements; its neighbours along dim 1 are adjacent
    assert reduction_layout((32, 2048, 2048), (2048 * 2048, 1, 2048), 2) == ReductionLayout(32, 2048, 2048,
                                                                                           2048 * 2048, 2048)
    assert reduction_layout((5, 7), (7, 1), 1).n_inner == 1                      # the row kernels' case
    assert reduction_layout((4, 1, 6), (6, 99, 1), 0) == ReductionLayout(1, 4, 6, 0, 6)    # size-1 dims: any stride
    # gaps: the columns step 2 in x (the contiguous output's stores still coalesce)
    assert reduction_layout((4, 6), (12, 2), 0) == ReductionLayout(1, 4, 6, 0, 12, inner_stride=2)
    # channels-last, softmax over C: unit-stride in x, but torch's output is contiguous NCHW, so the kernel reads
    # down C and writes across H * W (the inner axis: stride C in x)
    nchw_last = torch.empty(2, 3, 4, 5).to(memory_format=torch.channels_last)
    assert reduction_layout(tuple(nchw_last.shape), nchw_last.stride(), 1) == ReductionLayout(2, 3, 20, 60, 1, 3)
    # channels-last over H: outer folds into two groups (N, and W) that step differently in x and y
    assert reduction_layout(tuple(nchw_last.shape), nchw_last.stride(), 2) == ReductionLayout(
        10, 4, 3, 60, 15, 1, n_outer2=5, outer2_stride=3)


def test_dims_that_fold_in_one_tensor_but_not_the_other_are_kept_apart(device):
    shape, x_strides = (5, 3, 6, 4), (6, 120, 1, 30)            # a permuted view
    groups = dim_groups(shape, 1, x_strides, contiguous_strides(shape))
    assert groups.inner == (2,) and len(groups.outer) == 2
    # outer groups in x's order (dim 3, stride 30, then dim 0): in y they step 1 and 72
    assert layout_in(groups, shape, contiguous_strides(shape)) == ReductionLayout(20, 3, 6, 1, 24, 4, 5, 72)
    # five dims, the last two swapped, softmax over dim 1: three outer groups, so x is copied first
    shape, x_strides = (2, 3, 4, 6, 5), (360, 120, 30, 1, 6)
    groups = dim_groups(shape, 1, x_strides, contiguous_strides(shape))
    assert len(groups.outer) == 3 and layout_in(groups, shape, x_strides) is None
    x = torch.randn(2, 3, 4, 5, 6, device=device).transpose(-1, -2)
    torch.testing.assert_close(sc.softmax(x, 1), reference_softmax(x, 1), **TOLERANCE[torch.float32])


def test_plan_sizes_the_tile_by_bytes_and_values():
    from softmax_core.plans import any_dim as plans

    h200 = catalog_gpu("h200")
    fill = plans.FILL_PROGRAMS_PER_SM * h200.multiprocessor_count
    # a long reduced axis, forward: one pass over a slab of sector-wide columns, about SLAB_TARGET_VALUES
    slab = plan_any_dim(ReductionLayout(64, 1000, 49, 49000, 49), 4, "float32", h200)
    assert slab.one_pass and slab.block_r == 1024 and slab.block_i * 4 == plans.SLAB_MIN_BYTES
    assert slab.block_r * slab.block_i == plans.SLAB_TARGET_VALUES and slab.num_warps == plans.MAX_WARPS // 2
    # ... backward: two passes, columns narrow enough that the slabs in flight stay in L2 for pass 2
    channel = plan_any_dim(ReductionLayout(64, 1000, 49, 49000, 49), 4, "float32", h200, "backward")
    assert not channel.one_pass and channel.block_o == 1 and channel.block_i * 4 >= plans.INNER_MIN_BYTES
    in_flight = plans.RESIDENT_PER_SM * h200.multiprocessor_count * 1000 * channel.block_i * 4
    assert in_flight <= h200.l2_mib * 2**20 * plans.L2_SHARE and channel.num_programs >= fill
    # a slab past SLAB_MAX_VALUES even at 32-byte columns: two passes, forward too
    assert not plan_any_dim(ReductionLayout(64, 9000, 49, 9000 * 49, 49), 4, "float32", h200).one_pass
    # a wide run (rows a separate run of memory apart): the slab needs lines, which do not fit; two passes on lines,
    # each chunk padded past the reduced axis by at most CHUNK_PAD of it, both directions
    for direction in ("forward", "backward"):
        lines = plan_any_dim(ReductionLayout(1, 1607, 27298, 0, 27298), 4, "float32", h200, direction)
        assert not lines.one_pass and lines.block_i * 4 == plans.LINE_BYTES
        assert -(-1607 // lines.block_r) * lines.block_r <= plans.CHUNK_PAD * 1607
    short = plan_any_dim(ReductionLayout(1409, 41, 1025, 41 * 1025, 1025), 2, "bfloat16", h200, "backward")
    assert not short.one_pass and short.block_i * 2 == plans.LINE_BYTES and short.block_r == 16   # 48 rows, not 64
    # ... and a slab of lines where it fits; a narrow run's slab is of sectors, a transposed view's too
    assert plan_any_dim(ReductionLayout(179, 94, 1774, 94 * 1774, 1774), 2, "bfloat16", h200).block_i * 2 == 128
    assert plans.slab_columns(ReductionLayout(1844, 315, 54, 315 * 54, 54), 2, False) * 2 == plans.SLAB_MIN_BYTES
    assert plans.slab_columns(ReductionLayout(2, 803, 13362, 803 * 13362, 13362), 2, True) * 2 == 32
    # no slab where the inner run is narrower than a sector, nor past SLAB_MAX_VALUES
    assert plans.slab_columns(ReductionLayout(3889, 2437, 2, 2437 * 2, 2), 2, False) is None
    assert plans.slab_columns(ReductionLayout(1, 10103, 9513, 0, 9513), 4, True) is None
    # a short reduced axis over a wide inner run: one pass, each reduced index read in wide contiguous runs
    wide = plan_any_dim(ReductionLayout(3945, 2, 7359, 2 * 7359, 7359), 2, "float16", h200)
    assert wide.one_pass and wide.block_i * 2 >= 512 and wide.block_r == 2
    # a short inner run: several outer slices per program, the tile within its values
    narrow = plan_any_dim(ReductionLayout(89919, 14, 8, 112, 8), 4, "float32", h200)
    assert narrow.one_pass and narrow.block_i == 8 and narrow.block_o > 1
    assert narrow.block_o * narrow.block_r * narrow.block_i <= plans.TILE_VALUES["forward"]
    assert narrow.num_programs == -(-89919 // narrow.block_o) >= fill
    # the backward holds y and dy: half the values
    backward = plan_any_dim(ReductionLayout(89919, 14, 8, 112, 8), 4, "float32", h200, "backward")
    assert backward.block_o * backward.block_r * backward.block_i <= plans.TILE_VALUES["backward"]
    assert backward.block_o < narrow.block_o
    # a transposed view: the stores step down the reduced axis, so a chunk spans whole sectors of it
    transposed = plan_any_dim(ReductionLayout(32, 4096, 2048, 4096 * 2048, 2048), 2, "bfloat16", h200,
                              transposing=True)
    assert not transposed.one_pass and transposed.block_r * 2 >= plans.REDUCE_MIN_BYTES
    assert transposed.n_chunks == 4096 // transposed.block_r
    # a held slab says so, with the figures of its tile
    assert slab.reason.why == "slab_held" and slab.reason.values["held_values"] == 8192
    assert slab.reason.values["column_bytes"] == 32 and slab.reason.values["slab_values"] > 4096
    # every tile is what its constexprs say, the ones the launch passes
    for plan in (slab, channel, wide, narrow, backward, transposed, lines, short):
        got = dict(plan.constexprs)
        assert (got["BLOCK_O"], got["BLOCK_R"], got["BLOCK_I"], got["ONE_PASS"]) == (
            plan.block_o, plan.block_r, plan.block_i, plan.one_pass)
        assert ("SAFE" in got) == (plan.direction == "forward")


def test_the_launch_passes_the_plans_constexprs_safe_included(device):
    x = torch.randn(6, 14, 8, device=device)
    for safe in (False, True):
        ready = any_dim.ready_for(x, 1, safe, x.dtype)
        plan = any_dim.cached_any_dim_plan(any_dim.any_dim_layout(x, 1), x.dtype, "forward", x.get_device(), False,
                                           reduction_layout(tuple(x.shape), x.stride(), 1), safe)
        assert ready.constexprs == plan.constexprs and dict(ready.constexprs)["SAFE"] is safe


@pytest.mark.parametrize("shape, dim, layout", [
    ((4, 37, 5), 1, "contiguous"), ((3, 5, 6, 7), 1, "contiguous"), ((6, 9, 11), 0, "contiguous"),
    ((5, 50, 20), -1, "transposed"), ((3, 4, 5, 6), 2, "channels_last"), ((2, 2100, 8), 1, "contiguous")])
def test_matches_float64(shape, dim, layout, device):
    x = torch.randn(*shape, device=device) * 4
    if layout == "transposed":
        x = x.transpose(-1, -2)
    elif layout == "channels_last":
        x = x.to(memory_format=torch.channels_last)
    assert any_dim.any_dim_layout(x, dim % x.ndim) is not None            # the any-dim kernel is the one that runs
    y = sc.softmax(x, dim)
    torch.testing.assert_close(y, reference_softmax(x, dim), **TOLERANCE[torch.float32])
    assert y.is_contiguous() and y.stride() == torch.softmax(x, dim).stride()      # torch's strides


def test_two_passes_are_taken_for_a_long_axis():
    layout = reduction_layout((2, 2100, 8), (2100 * 8, 8, 1), 1)
    assert not plan_any_dim(layout, 4, "float32", catalog_gpu("h200"), "backward").one_pass
    layout = reduction_layout((2, 4500, 8), (4500 * 8, 8, 1), 1)           # 8,192 x 8 values: past the slab
    assert not plan_any_dim(layout, 4, "float32", catalog_gpu("h200")).one_pass


# one pass, one pass over a larger slab (forward), two passes
PASSES = [(30, True), (2100, True), (4500, False)]


@pytest.mark.parametrize("n_reduce, one_pass", PASSES)
@pytest.mark.parametrize("safe", [False, True])
def test_minus_inf_and_nan_columns(n_reduce, one_pass, safe, device):
    x = torch.randn(2, n_reduce, 16, device=device)         # a 64-byte run: one the cut plan leaves to a slab
    layout = reduction_layout(tuple(x.shape), x.stride(), 1)
    assert plan_any_dim(layout, 4, "float32", catalog_gpu("h200"), compile=False).one_pass == one_pass
    x[0, :, 1] = float("-inf")                 # a whole softmax of -inf
    x[1, : n_reduce // 2, 2] = float("-inf")   # -inf in the first chunk only
    x[1, 3, 5] = float("nan")
    y = sc.softmax(x, 1, safe=safe)
    expected = torch.softmax(x.double(), 1).float()
    if safe:
        expected[0, :, 1] = 0.0
    torch.testing.assert_close(y, expected, equal_nan=True, **TOLERANCE[torch.float32])
    assert torch.isnan(y[1, :, 5]).all()


@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16, torch.float64])
def test_dtypes_and_dtype_argument(dtype, device):
    x = (torch.randn(3, 40, 6, device=device) * 3).to(dtype)
    y = sc.softmax(x, 1)
    assert y.dtype == dtype
    torch.testing.assert_close(y, reference_softmax(x, 1), **TOLERANCE[dtype])
    if dtype != torch.float64:
        wide = sc.softmax(x, 1, dtype=torch.float32)
        assert wide.dtype == torch.float32
        torch.testing.assert_close(wide, torch.softmax(x.double(), 1).float(), **TOLERANCE[torch.float32])


@pytest.mark.parametrize("n_reduce", [30, 2100])
def test_backward_matches_float64_with_a_dy_of_another_layout(n_reduce, device):
    x = torch.randn(2, 8, n_reduce, device=device).transpose(1, 2).requires_grad_()   # dim 1 strided
    dy = torch.randn(2, n_reduce, 8, device=device)                                   # contiguous: not y's layout
    (grad,) = torch.autograd.grad(sc.softmax(x, 1), x, dy)
    xr = x.detach().double().requires_grad_()
    (expected,) = torch.autograd.grad(torch.softmax(xr, 1), xr, dy.double())
    torch.testing.assert_close(grad.double(), expected, atol=1e-6, rtol=1e-5)


def test_gradcheck(device):
    x = torch.randn(2, 3, 2, device=device, dtype=torch.float64, requires_grad=True)
    assert torch.autograd.gradcheck(lambda t: sc.softmax(t, 1), (x,))


@pytest.mark.slow
def test_second_derivatives(device):
    x = torch.randn(2, 5, 3, device=device, dtype=torch.float64, requires_grad=True)
    assert torch.autograd.gradgradcheck(lambda t: sc.softmax(t, 1), (x,))


def test_half_in_float_out_gradient_has_the_input_dtype(device):
    x = torch.randn(2, 20, 6, device=device).to(torch.bfloat16).requires_grad_()
    y = sc.softmax(x, 1, dtype=torch.float32)
    (grad,) = torch.autograd.grad(y, x, torch.randn_like(y))
    assert y.dtype == torch.float32 and grad.dtype == torch.bfloat16


@pytest.mark.gpu
@pytest.mark.parametrize("shape, dim, transpose, dtype", [
    ((64, 1000, 49), 1, False, torch.float32), ((8, 512, 512), -1, True, torch.bfloat16),
    ((16, 3, 224, 224), 1, False, torch.float16), ((4, 8192, 96), 1, False, torch.float32)])
def test_real_shapes_on_gpu(shape, dim, transpose, dtype):
    x = (torch.randn(shape, device="cuda") * 3).to(dtype)
    if transpose:
        x = x.transpose(-1, -2)
    x.requires_grad_()
    y = sc.softmax(x, dim)
    torch.testing.assert_close(y, reference_softmax(x.detach(), dim), **TOLERANCE[dtype])
    dy = torch.randn_like(y)
    (grad,) = torch.autograd.grad(y, x, dy)
    xr = x.detach().double().requires_grad_()
    (expected,) = torch.autograd.grad(torch.softmax(xr, dim), xr, dy.double())
    torch.testing.assert_close(grad.double(), expected, atol=2e-2 if dtype != torch.float32 else 1e-5, rtol=2e-2)


def test_second_call_is_replayed_with_its_own_data(device):
    first = torch.randn(3, 20, 7, device=device)
    second = torch.randn(3, 20, 7, device=device) * 5
    sc.softmax(first, 1)
    torch.testing.assert_close(sc.softmax(second, 1), reference_softmax(second, 1), **TOLERANCE[torch.float32])
    torch.testing.assert_close(sc.softmax(first, 1, safe=True), reference_softmax(first, 1),
                               **TOLERANCE[torch.float32])


def _layouts(rank: int, device):
    """(name, x) for fresh random tensors of this rank in several layouts, odd sizes."""
    sizes = (5, 3, 7, 4)[:rank]
    base = torch.randn(*sizes, device=device) * 3
    out = [("contiguous", base)]
    if rank >= 2:
        out.append(("transposed", torch.randn(*sizes[:-2], sizes[-1], sizes[-2], device=device).transpose(-1, -2)))
        out.append(("reversed", torch.randn(*reversed(sizes), device=device).permute(*reversed(range(rank)))))
        out.append(("sliced", torch.randn(*sizes[:-1], 2 * sizes[-1], device=device)[..., ::2]))
    if rank == 4:
        out.append(("channels_last", base.to(memory_format=torch.channels_last)))
    return out


@pytest.mark.parametrize("rank", [1, 2, 3, 4])
def test_every_dim_of_every_layout_matches_float64_with_torchs_strides(rank, device):
    for name, x in _layouts(rank, device):
        for dim in range(rank):
            y = sc.softmax(x, dim)
            torch.testing.assert_close(y, reference_softmax(x, dim), **TOLERANCE[torch.float32], msg=name)
            assert y.stride() == torch.softmax(x, dim).stride(), (name, dim)
            groups = any_dim.forward_groups(tuple(x.shape), tuple(x.stride()), dim)
            assert takes_any_dim(x.shape, x.stride(), dim) == (rank >= 2 and groups is not None), (name, dim)


@pytest.mark.parametrize("n_reduce, one_pass", PASSES)
def test_minus_inf_and_nan_down_a_transposed_view(n_reduce, one_pass, device):
    x = torch.randn(2, 8, n_reduce, device=device)
    layout = reduction_layout((2, n_reduce, 8), x.transpose(1, 2).stride(), 1)
    assert plan_any_dim(layout, 4, "float32", catalog_gpu("h200"), transposing=True, compile=False).one_pass == one_pass
    x[0, 1, :] = float("-inf")
    x[1, 2, : n_reduce // 2] = float("-inf")
    x[1, 5, 3] = float("nan")
    view = x.transpose(1, 2)                                   # (2, n_reduce, 8): softmax over dim 1 is unit-stride
    for safe in (False, True):
        y = sc.softmax(view, 1, safe=safe)
        expected = torch.softmax(view.double(), 1).float()
        if safe:
            expected[0, :, 1] = 0.0
        torch.testing.assert_close(y, expected, equal_nan=True, **TOLERANCE[torch.float32])
        assert y.is_contiguous() and torch.isnan(y[1, :, 5]).all()


@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16])
def test_half_precision_views_and_a_float32_output(dtype, device):
    x = (torch.randn(3, 6, 40, device=device) * 3).to(dtype).transpose(-1, -2)
    cl = (torch.randn(2, 12, 3, 5, device=device) * 3).to(dtype).to(memory_format=torch.channels_last)
    for t, dim in ((x, -1), (x, 1), (cl, 1), (cl, 2)):
        torch.testing.assert_close(sc.softmax(t, dim), reference_softmax(t, dim), **TOLERANCE[dtype])
        wide = sc.softmax(t, dim, dtype=torch.float32)
        assert wide.dtype == torch.float32 and wide.is_contiguous()
        torch.testing.assert_close(wide, torch.softmax(t.double(), dim).float(), **TOLERANCE[torch.float32])


def test_gradcheck_of_views(device):
    t = torch.randn(2, 4, 3, device=device, dtype=torch.float64).transpose(-1, -2).requires_grad_()
    assert any_dim.rows_backward((2, 3, 4), 2) and not any_dim.rows_backward((2, 3, 4), 1)
    for dim in (-1, 1):        # the transposed view's last dim (rows backward), its unit-stride dim (any-dim)
        assert torch.autograd.gradcheck(lambda v: sc.softmax(v, dim), (t,))
    cl = torch.randn(2, 3, 2, 2, device=device, dtype=torch.float64).to(memory_format=torch.channels_last)
    assert torch.autograd.gradcheck(lambda v: sc.softmax(v, 1), (cl.requires_grad_(),))


def test_backward_of_views_with_dy_in_other_layouts(device):
    x = torch.randn(3, 9, 20, device=device).transpose(-1, -2).requires_grad_()       # (3, 20, 9)
    for dim in (-1, 1, 0):
        y = sc.softmax(x, dim)
        xr = x.detach().double().requires_grad_()
        expected_y = torch.softmax(xr, dim)
        for dy in (torch.randn(3, 20, 9, device=device), torch.randn(3, 9, 20, device=device).transpose(-1, -2),
                   torch.randn(3, 20, 18, device=device)[..., ::2]):
            (grad,) = torch.autograd.grad(y, x, dy, retain_graph=True)
            (expected,) = torch.autograd.grad(expected_y, xr, dy.double(), retain_graph=True)
            torch.testing.assert_close(grad.double(), expected, atol=1e-6, rtol=1e-5)
            assert grad.is_contiguous()


def test_torch_compile_fullgraph_reads_views_in_place(device):
    torch._dynamo.reset()
    compiled = torch.compile(lambda t, d: sc.softmax(t, d), fullgraph=True, dynamic=False)
    views = (torch.randn(3, 9, 20, device=device).transpose(-1, -2),
             torch.randn(2, 6, 3, 5, device=device).to(memory_format=torch.channels_last))
    for x, dim in ((views[0], -1), (views[0], 1), (views[1], 1)):
        x = x.detach().requires_grad_()
        y = compiled(x, dim)
        torch.testing.assert_close(y, reference_softmax(x.detach(), dim), **TOLERANCE[torch.float32])
        assert y.stride() == torch.softmax(x, dim).stride()
        dy = torch.randn_like(y)
        (grad,) = torch.autograd.grad(y, x, dy)
        xr = x.detach().double().requires_grad_()
        (expected,) = torch.autograd.grad(torch.softmax(xr, dim), xr, dy.double())
        torch.testing.assert_close(grad.double(), expected, atol=1e-6, rtol=1e-5)


@pytest.mark.slow
def test_the_any_dim_operator_has_first_and_second_derivatives(device):
    from softmax_core.launch import operators
    x = torch.randn(2, 2, 3, device=device, dtype=torch.float64).transpose(1, 2).requires_grad_()
    for dim in (1, 2):         # the any-dim backward operator, and the rows' one for the view's last dim
        assert torch.autograd.gradcheck(lambda t: operators.softmax_any_dim(t, dim, False, torch.float64), (x,))
        assert torch.autograd.gradgradcheck(lambda t: operators.softmax_any_dim(t, dim, False, torch.float64), (x,))


def test_the_plan_description_names_the_fold_the_family_and_the_reason():
    from softmax_core.plans.reasons import ReasonCode
    from softmax_core.plans.shapes import FAMILIES, plan_shape

    h200 = catalog_gpu("h200")
    cases = {((64, 9000, 49), 1, False): ("strided_two_pass", (64, 9000, 49)),
             ((64, 1000, 49), 1, False): ("strided_one_pass", (64, 1000, 49)),         # a slab held
             ((89919, 14, 8), 1, False): ("strided_one_pass", (89919, 14, 8)),
             ((8, 1808, 5000), 2, True): ("strided_parts", (8, 5000, 1808)),         # parts that wait
             ((4096, 1024), 1, False): ("whole_rows", (4096, 1024, 1))}
    for (shape, dim, transposed), (family, fold) in cases.items():
        plan = plan_shape(shape, "float32", dim, h200, transposed=transposed)
        assert plan.family == family and plan.family in FAMILIES, shape
        assert (plan.layout.n_outer, plan.layout.n_reduce, plan.layout.n_inner) == fold, shape
        assert plan.reason.code in (ReasonCode.ANY_DIM, ReasonCode.ROWS), shape
    with pytest.raises(dataclasses.FrozenInstanceError):
        plan.family = "x"


@pytest.mark.parametrize("shape, dim, transpose, dtype", [
    ((3, 37, 10), 1, False, torch.float16),      # one pass, 2-byte values one at a time
    ((4, 24, 8), 1, False, torch.bfloat16),      # one pass, 2-byte values in words
    ((2, 2100, 8), 1, False, torch.float32),     # one pass over a larger slab
    ((2, 4500, 8), 1, False, torch.float32),     # two passes
    ((5, 50, 20), -1, True, torch.float32)])     # a transposed view: y steps down the reduced axis
def test_32_bit_offsets_within_a_slice_give_the_64_bit_results(shape, dim, transpose, dtype, device):
    x = torch.randn(*shape, device=device).to(dtype)
    if transpose:
        x = x.transpose(-1, -2)
    dim = dim % x.ndim
    x_layout = any_dim.any_dim_layout(x, dim)
    y_layout = reduction_layout(tuple(x.shape), contiguous_strides(tuple(x.shape)), dim)
    gpu, name = catalog_gpu("h200"), dtypes.name(dtype)
    plan = plan_any_dim(x_layout, x.element_size(), name, gpu, written=y_layout, compile=False,
                        transposing=transpose)
    ys = [any_dim.any_dim_forward(x, dim, False, x.dtype, dataclasses.replace(plan, offsets_32=wide))
          for wide in (False, True)]
    assert dict(dataclasses.replace(plan, offsets_32=True).constexprs)["OFFSETS_32"] is True
    assert torch.equal(ys[0], ys[1])
    torch.testing.assert_close(ys[1].double(), reference_softmax(x, dim).double(), **TOLERANCE[dtype])
    if transpose:
        return                                   # y is contiguous: its backward is the row kernels'
    y, dy = ys[1], torch.randn_like(ys[1])
    back = plan_any_dim(y_layout, y.element_size(), name, gpu, "backward", compile=False)
    dxs = [any_dim.any_dim_backward(y, dy, dim, y.dtype, dataclasses.replace(back, offsets_32=wide))
           for wide in (False, True)]
    assert torch.equal(dxs[0], dxs[1])


def test_one_pass_forwards_take_32_bit_offsets_only_where_every_slice_spans_under_2_31_elements():
    gpu = catalog_gpu("h200")
    small = reduction_layout((8, 200, 300), contiguous_strides((8, 200, 300)), 1)
    assert plan_any_dim(small, 2, "float16", gpu, compile=False).offsets_32
    assert not plan_any_dim(small, 2, "float16", gpu, "backward", compile=False).offsets_32
    assert slices_span_32_bits(small)
    # one slice of 3 x 2**30 elements (a 6 GiB float16 tensor): its last element lies 3 * 2**30 - 1 past its first
    huge = reduction_layout((1, 3, 2**30), contiguous_strides((1, 3, 2**30)), 1)
    assert not slices_span_32_bits(huge) and not plan_any_dim(huge, 2, "float16", gpu, compile=False).offsets_32
    edge = reduction_layout((1, 2, 2**30), contiguous_strides((1, 2, 2**30)), 1)
    assert slices_span_32_bits(edge)          # its last element at 2**31 - 1 past the first: int32's largest
    two_pass = reduction_layout((2, 9000, 8), contiguous_strides((2, 9000, 8)), 1)
    assert not plan_any_dim(two_pass, 4, "float32", gpu, compile=False).offsets_32
