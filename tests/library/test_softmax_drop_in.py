"""softmax_core.softmax as a drop-in for torch.softmax: any rank and dim, long rows, autograd, edge cases."""
import dataclasses

import pytest
import torch

import softmax_core as sc
from tests.support.reference import TOLERANCE, assert_like_torch
from softmax_core.launch.api import softmax_backward, softmax_forward
from softmax_core.launch.launches import cached_plan

INF, NAN = float("inf"), float("nan")


@pytest.mark.parametrize("shape, dim", [((2, 3, 50), -1), ((2, 3, 50), 0), ((2, 3, 50), 1), ((4, 7), -2),
                                        ((5,), 0), ((2, 1, 3, 9), 2), ((3, 4, 5, 6), -3)])
def test_any_rank_any_dim(shape, dim, device):
    x = torch.randn(shape, device=device) * 3
    assert_like_torch(sc.softmax(x, dim), x, dim)


def test_scalar_and_non_contiguous_layouts(device):
    assert sc.softmax(torch.tensor(2.5, device=device)).item() == 1.0
    x = torch.randn(6, 40, 3, device=device).transpose(0, 1)      # last dim strided
    assert_like_torch(sc.softmax(x, -1), x)
    assert_like_torch(sc.softmax(x, 0), x, 0)


@pytest.mark.parametrize("dtype", [torch.float32, torch.float16, torch.bfloat16, torch.float64])
def test_dtypes_keep_their_type(dtype, device):
    x = (torch.randn(9, 300) * 4).to(dtype).to(device)
    y = sc.softmax(x)
    assert y.dtype == dtype
    assert_like_torch(y, x)


@pytest.mark.parametrize("n_cols, dtype, path", [(70_000, torch.float32, "split"), (20_000, torch.float32, "tiled"),
                                                  (12_001, torch.bfloat16, "tiled"), (50_001, torch.bfloat16, "split"),
                                                  (70_001, torch.bfloat16, "split")])
def test_long_rows_take_the_planned_path_and_match(n_cols, dtype, path, device):
    plan = cached_plan(3, n_cols, dtype, "forward", False)
    assert plan.path == path
    if path == "split":
        assert plan.split > 1 and plan.split * plan.block_n >= n_cols > (plan.split - 1) * plan.block_n
        assert plan.num_programs % plan.split == 0 and plan.reason.code == sc.ReasonCode.SPLIT
    x = (torch.randn(3, n_cols) * 5).to(dtype).to(device)
    assert_like_torch(sc.softmax(x), x)


def test_float64_long_rows_take_the_tiled_path():
    plan = cached_plan(3, 70_000, torch.float64, "forward", False)
    assert plan.path == "tiled" and plan.reason.code == sc.ReasonCode.TILED


def tiled_plan(n_rows, n_cols, direction="forward", safe=False):
    """The tiled path forced for a float32 matrix (the plan picks it for float64, or when a row needs more
    programs than run at once), so the two long-row paths are both tested on the same inputs."""
    return sc.plan_softmax(n_rows, n_cols, torch.float32, sc.default_gpu(), direction, safe, path="tiled")


def long_row_paths(x, safe=False):
    """softmax of a long-row float32 matrix by the split path (the plan's) and by the tiled path."""
    return {"split": sc.softmax(x, safe=safe), "tiled": softmax_forward(x, tiled_plan(*x.shape, safe=safe), safe)}


def test_split_path_with_more_rows_than_groups(device):
    x = torch.randn(40, 20_000, device=device) * 3
    plan = cached_plan(40, 20_000, torch.float32, "forward", False)
    plan = dataclasses.replace(plan, path="split", split=4, block_n=8192, num_programs=3 * 4)  # 3 groups, 40 rows
    assert_like_torch(softmax_forward(x, plan, False), x)
    dy = torch.randn_like(x)
    y = torch.softmax(x, -1)
    torch.testing.assert_close(softmax_backward(y, dy, dataclasses.replace(plan, direction="backward")),
                               torch._softmax_backward_data(dy, y, -1, x.dtype), atol=1e-6, rtol=1e-4)


def test_short_rows_take_the_rows_path():
    plan = cached_plan(4096, 781, torch.float32, "forward", False)
    assert plan.path == "rows" and plan.block_n == 1024


@pytest.mark.parametrize("n_cols, dtype, rows, warps", [
    (256, torch.float32, 2, 1), (512, torch.float32, 1, 1), (1024, torch.float32, 1, 2),
    (256, torch.bfloat16, 4, 1), (512, torch.bfloat16, 2, 1), (2048, torch.bfloat16, 1, 2)])
def test_short_forward_rows_get_small_programs(n_cols, dtype, rows, warps):
    """Forward rows of at most 4 KB: programs of about 2 KB, one warp per 2 KB (the CUDA-graph sweep's winners).
    The backward and longer rows keep 16 KB programs of at least 4 warps."""
    plan = cached_plan(4096, n_cols, dtype, "forward", False)
    assert (plan.path, plan.rows_per_program, plan.num_warps) == ("rows", rows, warps)
    backward = cached_plan(4096, n_cols, dtype, "backward", False)
    assert backward.num_warps >= 4 and backward.rows_per_program * n_cols * dtype.itemsize >= 4096
    longer = cached_plan(4096, 4096, torch.bfloat16, "forward", False)
    assert longer.rows_per_program * longer.block_n * 2 == 16 * 1024 and longer.num_warps >= 4


def test_an_all_neg_inf_tile_inside_a_valid_row_is_harmless(device):
    n = 70_000
    x = torch.randn(2, n, device=device)
    x[:, : n - 100] = -INF            # the first tiles see only -inf; the real values come last
    x[1, 5] = 3.0                     # and here one finite value sits in the first tile
    for path, y in long_row_paths(x).items():
        assert not y.isnan().any(), path
        assert_like_torch(y, x)


@pytest.mark.parametrize("safe", [False, True])
def test_whole_neg_inf_chunks_beside_values_far_below_zero(safe, device):
    """Chunks of only -inf must not lift the row's max: real values below about -88 would underflow to 0 / 0."""
    n = 70_000
    x = torch.full((3, n), -1000.0, device=device)
    x[:, : n - 100] = -INF                   # the first chunks see only -inf
    x[:, -100:] += torch.randn(3, 100, device=device)
    x[1, 5] = -95.0                          # one value in an otherwise empty first chunk
    x[2] = -INF                              # and a row of nothing but -inf
    for path, y in long_row_paths(x, safe).items():
        if safe:
            assert torch.equal(y[2], torch.zeros(n, device=device)), path
        assert_like_torch(y[:2], x[:2])


def test_split_path_honours_the_row_stride(device):
    big = torch.randn(3, 80_000, device=device) * 3
    x = big[:, :70_000]                      # rows 80,000 apart, 70,000 long
    assert cached_plan(3, 70_000, torch.float32, "forward", False).path == "split"
    for y in long_row_paths(x).values():
        assert_like_torch(y, x)
    xg = x.clone().requires_grad_()
    dy = torch.randn(3, 80_000, device=device)[:, :70_000]
    (ours,) = torch.autograd.grad(sc.softmax(x.requires_grad_()), x, dy)
    (theirs,) = torch.autograd.grad(torch.softmax(xg, -1), xg, dy)
    torch.testing.assert_close(ours, theirs, atol=1e-6, rtol=1e-4)


@pytest.mark.parametrize("n_cols", [5, 70_000])   # rows path; split and tiled paths
def test_special_values_like_torch(n_cols, device):
    x = torch.randn(6, n_cols, device=device)
    x[0] = -INF                        # all -inf: NaN row, as torch
    x[1, 3] = NAN                      # NaN anywhere: NaN row
    x[2, 1] = INF                      # +inf: as torch (NaN row)
    x[3, 2] = -INF                     # a single -inf is just a zero
    x[4] *= 1e4                        # large magnitudes
    if n_cols < 1000:
        assert_like_torch(sc.softmax(x), x)
    else:
        x[5, :50_000] = -1e4               # a whole chunk far below the row's max: its share underflows to 0
        for y in long_row_paths(x).values():
            assert_like_torch(y, x)


def test_large_half_precision_magnitudes(device):
    x = torch.tensor([[60000.0, -60000.0, 59990.0, 0.0]], dtype=torch.float16, device=device)
    assert_like_torch(sc.softmax(x), x)


def test_single_column_gives_one(device):
    assert torch.equal(sc.softmax(torch.randn(7, 1, device=device)), torch.ones(7, 1, device=device))


@pytest.mark.parametrize("shape", [(0, 4), (4, 0), (2, 0, 3)])
def test_empty_dims(shape, device):
    x = torch.empty(shape, device=device)
    assert sc.softmax(x, -1).shape == shape and sc.softmax(x, 0).shape == shape


@pytest.mark.parametrize("n_cols", [5, 70_000])
def test_safe_option_gives_zeros_for_fully_masked_rows(n_cols, device):
    x = torch.randn(3, n_cols, device=device)
    x[1] = -INF
    ys = long_row_paths(x, safe=True) if n_cols > 1000 else {"rows": sc.softmax(x, safe=True)}
    for y in ys.values():
        assert torch.equal(y[1], torch.zeros(n_cols, device=device))
        assert_like_torch(y[[0, 2]], x[[0, 2]])
    assert sc.softmax(x)[1].isnan().all()          # off by default


@pytest.mark.parametrize("shape, dim", [((3, 7), -1), ((2, 5, 4), 1)])
def test_gradcheck_float64(shape, dim, device):
    x = torch.randn(shape, dtype=torch.float64, device=device, requires_grad=True)
    assert torch.autograd.gradcheck(lambda t: sc.softmax(t, dim), (x,))


def test_gradcheck_float64_tiled_path(device):
    x = torch.randn(2, 66_000, dtype=torch.float64, device=device, requires_grad=True)
    assert cached_plan(2, 66_000, torch.float64, "backward", False).path == "tiled"
    dy = torch.randn_like(x)
    (grad,) = torch.autograd.grad(sc.softmax(x), x, dy)
    (expected,) = torch.autograd.grad(torch.softmax(x, -1), x, dy)
    torch.testing.assert_close(grad, expected, atol=1e-12, rtol=1e-9)


@pytest.mark.parametrize("shape", [(8, 300), (3, 70_000)])
def test_gradients_match_torch_float32(shape, device):
    x = torch.randn(shape, device=device, requires_grad=True)
    dy = torch.randn(shape, device=device)
    (ours,) = torch.autograd.grad(sc.softmax(x), x, dy)
    (theirs,) = torch.autograd.grad(torch.softmax(x, -1), x, dy)
    torch.testing.assert_close(ours, theirs, atol=1e-6, rtol=1e-4)
    if shape[1] > 1000:   # the same by the tiled backward
        y = torch.softmax(x.detach(), -1)
        tiled = softmax_backward(y, dy, tiled_plan(*shape, "backward"))
        torch.testing.assert_close(tiled, theirs, atol=1e-6, rtol=1e-4)


@pytest.mark.parametrize("dtype", [torch.int32, torch.int64, torch.bool, torch.complex64, torch.uint8])
def test_non_float_input_is_refused_as_torch_refuses_it(dtype, device):
    """No floating dtype= given: torch's own error, of torch's own type (the drop-in promise)."""
    x = torch.ones(4, 3, dtype=dtype, device=device)
    with pytest.raises(Exception) as theirs:
        torch.softmax(x, -1)
    with pytest.raises(type(theirs.value)):
        sc.softmax(x)


@pytest.mark.parametrize("dtype", [torch.int32, torch.bool, torch.complex64])
def test_non_float_input_with_a_floating_dtype_is_torch_s_answer(dtype, device):
    x = (torch.arange(12, device=device) % 3).reshape(4, 3).to(dtype)
    torch.testing.assert_close(sc.softmax(x, 0, dtype=torch.float32), torch.softmax(x, 0, dtype=torch.float32))


@pytest.mark.parametrize("bad, error, words", [
    ("not a tensor", TypeError, "torch.Tensor"),
    (torch.ones(2, 3).to_sparse(), TypeError, "dense tensor; got a sparse_coo one"),
    (torch.nested.nested_tensor([torch.ones(3), torch.ones(4)]), TypeError, "to_padded_tensor"),
])
def test_errors_name_the_problem(bad, error, words):
    with pytest.raises(error, match=words):
        sc.softmax(bad)


def test_bad_dim(device):
    with pytest.raises(IndexError, match="out of range"):
        sc.softmax(torch.ones(2, 3, device=device), 2)
    with pytest.raises(TypeError, match="dim"):
        sc.softmax(torch.ones(2, 3, device=device), 1.0)


# ---- on a GPU only -------------------------------------------------------------------------------------

@pytest.mark.gpu
@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16])
@pytest.mark.parametrize("n_cols", [32768, 65536, 131072, 262144, 1048576])
def test_long_rows_on_gpu(n_cols, dtype):
    x = torch.randn(64, n_cols, device="cuda", dtype=dtype) * 4
    assert_like_torch(sc.softmax(x), x)


@pytest.mark.gpu
def test_int64_offsets_beyond_2_to_the_31_elements():
    x = torch.randn(8192, 262144, device="cuda", dtype=torch.bfloat16)
    assert x.numel() >= 2**31
    y = sc.softmax(x)
    last = x[-3:].float()
    torch.testing.assert_close(y[-3:].float(), torch.softmax(last, -1), atol=1e-2, rtol=1e-2)
    del x, y
    torch.cuda.empty_cache()


@pytest.mark.gpu
@pytest.mark.parametrize("n_rows, n_cols, dtype", [(1, 262144, torch.float32), (5000, 65536, torch.float32),
                                                    (3000, 100_003, torch.float32), (1, 262144, torch.bfloat16),
                                                    (3000, 200_000, torch.bfloat16)])
def test_split_path_on_gpu_one_launch(n_rows, n_cols, dtype):
    """The one-launch split path: one row over many programs, more rows than groups, an odd width."""
    plan = cached_plan(n_rows, n_cols, dtype, "forward", False)
    assert plan.path == "split"
    x = (torch.randn(n_rows, n_cols, device="cuda") * 4).to(dtype)
    x[0, : n_cols // 2] = -INF
    for _ in range(3):   # the slots start from "not published" every call
        assert_like_torch(sc.softmax(x), x)


@pytest.mark.parametrize("dtype", [torch.bfloat16, torch.float16])
def test_2_byte_split_path_forward_and_backward(dtype, device):
    """The 2-byte split path (rows of 256 KB and more) in the plan's own shape: a last chunk only partly
    filled, a row whose first half is -inf. The interpreter runs it in two launches, a GPU in one. (A width
    that is not a multiple of 16 loads no 16-byte vectors; its chunks spill, and the plan tiles it instead.)"""
    n_rows, n_cols = 3, 200_000
    plan = cached_plan(n_rows, n_cols, dtype, "forward", False)
    assert plan.path == "split"
    x = (torch.randn(n_rows, n_cols, device=device) * 4).to(dtype)
    x[1, : n_cols // 2] = -INF
    assert_like_torch(sc.softmax(x), x)
    y = torch.softmax(x.float(), -1).to(dtype)
    dy = torch.randn_like(y)
    backward = cached_plan(n_rows, n_cols, dtype, "backward", False)
    assert backward.path == "split"
    torch.testing.assert_close(softmax_backward(y, dy, backward).float(),
                               torch._softmax_backward_data(dy.float(), y.float(), -1, torch.float32),
                               **TOLERANCE[dtype])


@pytest.mark.gpu
@pytest.mark.parametrize("n_cols", [781, 4096, 65536, 100_003])
def test_gpu_gradients_match_torch(n_cols):
    x = torch.randn(256, n_cols, device="cuda", requires_grad=True)
    dy = torch.randn_like(x)
    (ours,) = torch.autograd.grad(sc.softmax(x), x, dy)
    (theirs,) = torch.autograd.grad(torch.softmax(x, -1), x, dy)
    torch.testing.assert_close(ours, theirs, atol=1e-6, rtol=1e-4)


@pytest.mark.parametrize("split", [2, 3, 4])
@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16])
def test_tiled_rows_shared_by_programs(split, dtype, device):
    """A tiled backward row shared by `split` programs (each a span of whole tiles, meeting through published
    slots) gives torch's answer: a ragged last span, and rows whose values all sit far below zero. The
    forward's tiled rows are never shared: asked for, the plan is one program per row."""
    from softmax_core.plans.tuned import plan_tiled
    n = 5 * 1024 + 77
    x = (torch.randn(3, n) * 4).to(dtype)
    x[1] = -1000.0
    x[1, -5:] = -999.0
    x = x.to(device)
    forward = plan_tiled(3, n, dtype, sc.default_gpu(), "forward", tile=1024, split=split)
    assert not forward.shares_rows
    y = softmax_forward(x, forward)
    assert_like_torch(y, x)
    dy = torch.randn(y.shape).to(dtype).to(device)
    plan = plan_tiled(3, n, dtype, sc.default_gpu(), "backward", tile=1024, split=split)
    assert plan.shares_rows and plan.split == split and plan.num_programs % split == 0
    expected = torch._softmax_backward_data(dy.double(), y.double(), -1, torch.float64)
    torch.testing.assert_close(softmax_backward(y, dy, plan).double(), expected,
                               **({"atol": 1e-6, "rtol": 1e-4} if dtype == torch.float32 else {"atol": 2e-2, "rtol": 2e-2}))


def test_the_tiled_backward_shares_rows_of_2_byte_types_past_the_threshold():
    """tiled_config: the forward never shares a row; the backward of bf16/fp16 rows whose y and dy pass
    TILED_SHARED_FROM_BYTES does, with about TILED_SPAN_BYTES of them per program (at most MAX_TILED_SPLIT);
    below it one program per row, with more warps from TILED_WIDE_FROM_BYTES."""
    from softmax_core.plans import tuned as tp
    h200 = sc.catalog_gpu("h200")
    for n_cols in (32768, 65536, 131072, 262144, 1 << 20):
        assert tp.tiled_config(n_cols, 2, "forward", h200)[2] == 1
        assert tp.tiled_config(n_cols, 4, "backward", h200)[2] == 1              # float32 rows: the split path's
        tile, warps, split = tp.tiled_config(n_cols, 2, "backward", h200)
        pair = 2 * n_cols * 2
        if pair > tp.TILED_SHARED_FROM_BYTES:
            assert split == min(tp.MAX_TILED_SPLIT, -(-pair // tp.TILED_SPAN_BYTES)) > 1
            assert (tile, warps) == (tp.TILED_SHARED_TILE, tp.TILED_SHARED_WARPS)
        else:
            assert split == 1 and warps == (tp.TILED_WIDE_WARPS if pair >= tp.TILED_WIDE_FROM_BYTES else tp.TILED_WARPS)
    amd = next(g for g in sc.gpu_catalog() if g.warp_size == 64)
    assert tp.tiled_config(65536, 2, "backward", amd) == (tp.TILE_VALUES, tp.MAX_THREADS_PER_PROGRAM // 64, 1)
    plan = sc.plan_softmax(4096, 131072, torch.bfloat16, h200, "backward", path="tiled")
    assert plan.path == "tiled" and plan.split == 8 and plan.num_programs % 8 == 0
    assert plan.num_programs <= h200.multiprocessor_count * plan.occupancy.programs_per_sm   # all at once
    groups = plan.num_programs // plan.split                                     # rows in flight, two programs an SM
    assert groups == h200.multiprocessor_count * tp.TILED_SHARED_PROGRAMS_PER_SM // plan.split
    assert groups * 2 * 131072 * 2 <= tp.TILED_SHARED_L2_FRACTION * h200.l2_mib * 2**20    # x (y + dy bytes)
    assert sc.plan_softmax(4096, 131072, torch.bfloat16, h200, "forward", path="tiled").split == 1


def test_the_plan_compiles_the_specialisation_the_jit_launches():
    """Triton's JIT compiles 16-byte aligned pointers and widths, strides that are multiples of 16, as such,
    and then loads 16-byte vectors, which needs fewer registers. The plan compiles the same specialisation,
    so the registers and programs per SM it shows are those of the kernel that runs."""
    from softmax_core.plans import tuned as tp
    h200 = sc.catalog_gpu("h200")
    aligned = sc.plan_softmax(4096, 131072, torch.bfloat16, h200)
    unaligned = sc.plan_softmax(4096, 131072, torch.bfloat16, h200, aligned=False)
    assert aligned.resources.n_regs < unaligned.resources.n_regs
    assert aligned.occupancy.programs_per_sm > unaligned.occupancy.programs_per_sm
    signature = (("x_ptr", "*bf16"), ("y_ptr", "*bf16"), ("x_row_stride", "i64"), ("n_rows", "i32"),
                 ("n_cols", "i32"), ("slots_ptr", "*i64"), ("TILE", "constexpr"))
    assert tp.launch_divisible(signature, 4096, True) == ("x_ptr", "y_ptr", "x_row_stride", "n_cols", "slots_ptr")
    # an unaligned input: the output and the slots are fresh allocations, still aligned
    assert tp.launch_divisible(signature, 4096, False) == ("y_ptr", "x_row_stride", "n_cols", "slots_ptr")
    assert tp.launch_divisible(signature, 781, True) == ("x_ptr", "y_ptr", "slots_ptr")
    backward = (("y_ptr", "*bf16"), ("dy_ptr", "*bf16"), ("dx_ptr", "*bf16"), ("y_row_stride", "i32"))
    assert tp.launch_divisible(backward, 4096, False) == ("dx_ptr", "y_row_stride")


def test_programs_that_wait_for_each_other_fit_either_stride_width():
    """The JIT types a row stride as i32 (i64 only past 2**31 elements), and the two forms can need different
    registers. A grid whose programs wait for each other is sized from the form that needs more, and the
    plan shows that form's resources."""
    from softmax_core.plans import tuned as tp
    from softmax_core.hardware.compile import kernel_resources
    from softmax_core.hardware.occupancy import occupancy
    h200 = sc.catalog_gpu("h200")
    plan = sc.plan_softmax(4096, 262144, torch.float32, h200)
    assert plan.path == "split"
    constexprs = {"CHUNK": plan.block_n, "SPLIT": plan.split, "PEERS": plan.peers, "SAFE": False, "PHASE": 0,
                  "SPIN": tp.SPIN_LIMIT}
    forms = [kernel_resources(tp.compile_job(tp.SPLIT_KERNEL["forward"], torch.float32, constexprs, plan.num_warps, h200,
                                      262144, True, stride)) for stride in ("i32", "i64")]
    assert plan.resources.n_regs == max(r.n_regs for r in forms)
    assert plan.num_programs <= h200.multiprocessor_count * min(
        occupancy(h200, r.n_regs, r.shared_bytes, plan.num_warps, 1).programs_per_sm for r in forms)


@pytest.mark.parametrize("dtype", [torch.bfloat16, torch.float16])
def test_2_byte_rows_past_l2_take_the_split_path(dtype):
    """From SPLIT_FROM_ROW_BYTES a 2-byte row is shared by programs of SPLIT_WARPS_2_BYTE warps that run at
    once, in both directions; shorter rows stay on the rows or tiled path."""
    from softmax_core.plans import tuned as tp
    h200 = sc.catalog_gpu("h200")
    for direction in ("forward", "backward"):
        long_plan = sc.plan_softmax(4096, tp.SPLIT_FROM_ROW_BYTES // 2, dtype, h200, direction)
        assert (long_plan.path, long_plan.num_warps) == ("split", tp.SPLIT_WARPS_2_BYTE)
        assert long_plan.num_programs <= h200.multiprocessor_count * long_plan.occupancy.programs_per_sm
        assert dict(long_plan.reason.figures)["why"] == "row_past_l2"
        assert sc.plan_softmax(4096, tp.SPLIT_FROM_ROW_BYTES // 4, dtype, h200, direction).path == "tiled"


def test_which_tensors_launch_aligned():
    from softmax_core.launch.launches import launch_aligned
    base = torch.empty(8, 784)
    assert launch_aligned(base)
    assert not launch_aligned(base[:, 1:])                      # starts 4 bytes in
    assert not launch_aligned(torch.empty(8, 781)[:, :768])     # width 768, but rows 781 apart
    assert launch_aligned(torch.empty(8, 781)[:, :13])          # a width of 13 is never specialised anyway
