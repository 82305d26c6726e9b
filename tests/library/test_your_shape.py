"""A shape as a user types it (softmax_core.plans.shapes): parsed or refused with a code, planned to the route
sc.softmax takes, its floor from the GPU's bandwidth, and the nearest recorded case."""
import pytest
import torch

import softmax_core as sc
from softmax_bench import models
from softmax_core.hardware.gpu import catalog_gpu
from softmax_core.launch.any_dim import any_dim_layout
from softmax_core.plans.shapes import SHAPE_ERRORS, ShapeError, parse_shape, plan_shape, view_strides

H200 = catalog_gpu("h200")


def test_parse_shape_takes_separators_and_refuses_with_a_code():
    assert parse_shape("8192, 50257") == parse_shape("8192x50257") == parse_shape("8192 × 50257") == (8192, 50257)
    for text, code in [("", "no_sizes"), ("64x,a", "not_whole_numbers"), ("3x0", "size_below_one"),
                       ("2 " * 9, "too_many_dims")]:
        with pytest.raises(ShapeError) as err:
            parse_shape(text)
        assert err.value.code == code and code in SHAPE_ERRORS


def test_view_strides_are_the_transposed_tensors():
    t = torch.empty(5, 3, 4).transpose(-1, -2)
    assert view_strides((5, 4, 3), True) == t.stride()
    assert view_strides((5, 4, 3), False) == torch.empty(5, 4, 3).stride()


@pytest.mark.parametrize("shape, dtype, dim, transposed", [((64, 1000, 49), "float32", 1, False),
                                                            ((32, 64, 48), "bfloat16", -1, True),
                                                            ((8192, 50257), "bfloat16", -1, False)])
def test_route_is_the_one_softmax_takes(shape, dtype, dim, transposed):
    plan = plan_shape(shape, dtype, dim, H200, transposed=transposed)
    buffer = torch.empty(shape[:-2] + (shape[-1], shape[-2]) if transposed else shape)
    x = buffer.transpose(-1, -2) if transposed else buffer
    strided = any_dim_layout(x, dim % len(shape)) is not None
    assert (plan.route == "any_dim") == strided
    if not strided:
        assert plan.rows_plan == sc.plan_softmax(shape[0], shape[1], getattr(torch, dtype), H200)
    assert plan.bytes_moved == 2 * x.numel() * torch.empty((), dtype=getattr(torch, dtype)).element_size()
    assert plan.floor_us == pytest.approx(plan.bytes_moved / (H200.memory_bandwidth_gbps * 1e3))


def test_bad_dims_and_dtypes_are_refused():
    cases = [(((4, 5), "float32", 3, False), "dim_out_of_range"), (((4, 5), "int8", -1, False), "unknown_dtype"),
             (((5,), "float32", 0, True), "transposed_needs_two_dims")]
    for (shape, dtype, dim, transposed), code in cases:
        with pytest.raises(ShapeError) as err:
            plan_shape(shape, dtype, dim, H200, transposed=transposed)
        assert err.value.code == code


def test_nearest_recorded_prefers_the_same_dtype_and_layout_then_the_nearest_size():
    runs = models.load_models_runs()
    assert runs, "the models record is in assets/benchmarks/models/"
    near = models.nearest_recorded(runs, "float32", True, 20.0, "forward")
    assert near.row["case"] == "channel-dim1" and near.same_dtype and near.same_layout
    near = models.nearest_recorded(runs, "bfloat16", False, 1600.0, "forward")
    assert near.row["case"] == "gpt2-logits" and not near.same_case      # no case given: not claimed as the same


def test_the_recorded_case_itself_is_called_the_same_and_only_it():
    runs = models.load_models_runs()
    gpt2 = 2 * 8192 * 50257 * 2 / 1e6
    assert models.nearest_recorded(runs, "bfloat16", False, gpt2, "forward", ((8192, 50257), -1, False)).same_case
    assert models.nearest_recorded(runs, "bfloat16", False, gpt2, "forward", ((8192, 50257), 1, False)).same_case
    for other in (((8192, 50256), -1, False), ((8192, 50257), 0, False), ((8192, 50257), -1, True)):
        assert not models.nearest_recorded(runs, "bfloat16", False, gpt2, "forward", other).same_case
    channel = 2 * 64 * 1000 * 49 * 4 / 1e6
    assert models.nearest_recorded(runs, "float32", True, channel, "backward", ((64, 1000, 49), 1, False)).same_case
    assert models.nearest_recorded(runs, "float32", True, channel, "backward", ((64, 1000, 49), -2, False)).same_case
    assert not models.nearest_recorded(runs, "float16", True, channel, "backward", ((64, 1000, 49), 1, False)).same_case
    t = 2 * 32 * 2048 * 2048 * 2 / 1e6
    assert models.nearest_recorded(runs, "bfloat16", True, t, "forward", ((32, 2048, 2048), -1, True)).same_case


@pytest.mark.parametrize("shape, dtype, dim, transposed", [((64, 1000, 49), "float32", 1, False),
                                                            ((32, 2048, 2048), "bfloat16", -1, True),
                                                            ((16, 300, 7, 5), "float16", 2, True),
                                                            ((8, 96, 56, 56), "float32", 1, False)])
def test_plan_is_the_one_the_launch_keeps_in_each_direction(shape, dtype, dim, transposed):
    # The launch's own objects, on CPU tensors of the same layout (their plans are for the catalog's H200 here)
    from softmax_core.launch.any_dim import BackwardLaunch, ready_for, rows_backward
    torch_dtype = getattr(torch, dtype)
    buffer = torch.empty(shape[:-2] + (shape[-1], shape[-2]) if transposed else shape, dtype=torch_dtype)
    x = buffer.transpose(-1, -2) if transposed else buffer
    d = dim % len(shape)
    forward, backward = (plan_shape(shape, dtype, dim, H200, transposed=transposed, direction=direction)
                         for direction in ("forward", "backward"))
    if any_dim_layout(x, d) is None:
        assert forward.route != "any_dim"
    else:
        ready = ready_for(x, d, False, torch_dtype)
        assert forward.route == "any_dim"
        assert (forward.any_dim_plan.grid, forward.any_dim_plan.num_warps) == (ready.grid, ready.num_warps)
        assert dict(ready.constexprs)["BLOCK_I"] == forward.any_dim_plan.block_i
        assert dict(ready.constexprs)["BLOCK_R"] == forward.any_dim_plan.block_r
    y = torch.empty(shape, dtype=torch_dtype)           # y is contiguous whatever x's layout; dy in y's layout
    if rows_backward(shape, d):
        assert backward.route != "any_dim"
        n_reduce = shape[d]
        assert backward.rows_plan == sc.plan_softmax(y.numel() // n_reduce, n_reduce, torch_dtype, H200, "backward")
    else:
        step = BackwardLaunch(y, y, d)
        assert backward.route == "any_dim"
        assert (backward.any_dim_plan.grid, backward.any_dim_plan.num_warps) == (step.grid, step.num_warps)
        assert dict(step.constexprs)["BLOCK_I"] == backward.any_dim_plan.block_i
