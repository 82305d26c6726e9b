"""Strided softmax whose tiles' reduced axes are cut into parts (kernels/split_dim.py, plans/any_dim.py's
plan_split_dim): the plan's calls, float64 references on fresh random shapes, -inf and NaN columns, SAFE, 2-byte dtypes, transposed
views, the backward, and the kept launcher's two launches with one buffer of words. Small forced chunks make
every tile take several parts, under the interpreter and on a GPU alike."""
import random

import pytest
import torch

from softmax_core.hardware import dtypes, runtime
from softmax_core.hardware.gpu import catalog_gpu, default_gpu
from softmax_core.launch import any_dim
from softmax_core.plans.strided import dim_groups, forward_groups, layout_in, transposes
from softmax_core.plans.any_dim import plan_split_dim
from tests.support.reference import assert_like_torch

H200 = catalog_gpu("h200")


def _gpu():
    return H200 if runtime.INTERPRETED else default_gpu()


def _forward_plan(x, dim, safe=False, **kw):
    _, x_layout, y_layout = forward_groups(tuple(x.shape), tuple(x.stride()), dim)
    x_layout = x_layout or y_layout
    return plan_split_dim(x_layout, x.element_size(), dtypes.name(x.dtype), _gpu(), "forward", written=y_layout,
                          transposing=transposes(x_layout, y_layout), safe=safe, **kw)


def _backward_plan(y, dy, dim, **kw):
    shape = tuple(y.shape)
    groups = dim_groups(shape, dim, y.stride(), y.stride())
    layout = layout_in(groups, shape, tuple(y.stride()))
    return plan_split_dim(layout, y.element_size(), dtypes.name(y.dtype), _gpu(), "backward",
                          written=layout_in(groups, shape, tuple(dy.stride())) or layout, **kw)


def _x(shape, dtype, transposed, device, scale=3.0):
    if transposed:
        return (torch.randn(shape[0], shape[2], shape[1], device=device) * scale).to(dtype).transpose(1, 2)
    return (torch.randn(shape, device=device) * scale).to(dtype)


def test_the_plan_cuts_each_tile_and_says_so():
    x = torch.empty(3, 300, 20)
    plan = _forward_plan(x, 1, column_bytes=32, values=64, per_sm=8)
    assert plan.cut and plan.parts == -(-300 // plan.part_r) and plan.parts >= 2 and not plan.one_pass
    assert plan.kernel.endswith(":softmax_split_dim_kernel") and plan.part_r % plan.block_r == 0
    assert [dict(c)["PHASE"] for c in plan.launches] == [1, 2]         # on a GPU too: no program waits
    assert plan.num_programs == plan.n_tiles * plan.parts
    assert plan.n_slots == plan.n_tiles * plan.block_i * (1 << (plan.parts - 1).bit_length())
    assert not plan.slots_filled
    assert plan.reason.why == "forced"
    default = _forward_plan(torch.empty(2, 4000, 6), 1)
    assert default.reason.why == "slab_cut" and default.reason.values["parts"] == default.parts
    assert default.reason.values["inner_bytes"] == 6 * 4
    assert _forward_plan(torch.empty(2, 4000, 300), 1) is None          # a wide inner run: two passes are as fast
    assert plan_split_dim(plan.layout, 8, "float64", H200, "forward") is None     # the words hold float32
    short = forward_groups((3, 20, 20), (400, 20, 1), 1)[1]
    assert plan_split_dim(short, 4, "float32", H200, "forward", values=2048) is None    # one chunk: not cut


def _draws(seed, n, device):
    """Random strided layouts small enough for the interpreter: (x, dim) with the softmax dim not contiguous."""
    rng = random.Random(seed)
    out = []
    for i in range(n):
        dtype = rng.choice((torch.float32, torch.bfloat16, torch.float16))
        reduce, inner, outer = rng.randint(40, 300), rng.randint(1, 40), rng.randint(1, 3)
        transposed = i % 2 == 1
        out.append((_x((outer, inner, reduce) if transposed else (outer, reduce, inner), dtype, transposed, device),
                    2 if transposed else 1, rng.choice((16, 32, 64)), rng.choice((32, 64, 128))))
    return out


@pytest.mark.parametrize("seed", [pytest.param(11, marks=pytest.mark.slow), 12])
def test_forward_matches_float64_on_random_strided_layouts(seed, device):
    for x, dim, column_bytes, values in _draws(seed, 3, device):
        plan = _forward_plan(x, dim, column_bytes=column_bytes, values=values, per_sm=64)
        if plan is None:
            continue
        assert plan.parts >= 2
        y = any_dim.any_dim_forward(x, dim, False, x.dtype, plan)
        assert_like_torch(y, x, dim, f"parts {tuple(x.shape)} {x.dtype} {plan.parts}")


def test_inf_and_nan_columns_and_safe(device):
    torch.manual_seed(2)
    x = _x((2, 150, 6), torch.float32, False, device)
    x[0, :, 0] = float("-inf")                 # a softmax of only -inf
    x[1, 4, 1] = float("nan")                  # one with a NaN
    x[0, 1:, 2] = float("-inf")                # one finite value down a column, in the first part
    x[1, :-1, 3] = float("-inf")               # ... in the last part
    x[1, 40:90, 4] = float("-inf")             # a whole middle part of -inf
    plan = _forward_plan(x, 1, column_bytes=16, values=32, per_sm=64)
    assert plan.parts >= 3
    y = any_dim.any_dim_forward(x, 1, False, x.dtype, plan)
    assert_like_torch(y, x, 1, "parts with -inf and NaN")
    safe = any_dim.any_dim_forward(x, 1, True, x.dtype, _forward_plan(x, 1, safe=True, column_bytes=16, values=32,
                                                                      per_sm=64))
    all_inf = torch.isneginf(x).all(dim=1, keepdim=True).expand_as(x)
    assert (safe[all_inf] == 0).all()
    assert torch.equal(safe[~all_inf].isnan(), y[~all_inf].isnan())


@pytest.mark.parametrize("shape,dtype", [((3, 170, 20), torch.float32), ((2, 97, 9), torch.bfloat16)])
def test_backward_matches_float64(shape, dtype, device):
    torch.manual_seed(1)
    y = torch.softmax(torch.randn(shape, device=device), 1).to(dtype)
    dy = torch.randn(shape, device=device).to(dtype)
    plan = _backward_plan(y, dy, 1, column_bytes=32, values=32, per_sm=64)
    assert plan.cut and plan.parts >= 2
    dx = any_dim.any_dim_backward(y, dy, 1, dtype, plan)
    y64, dy64 = y.double(), dy.double()
    ref = y64 * (dy64 - (y64 * dy64).sum(1, keepdim=True))
    tol = 2e-6 if dtype == torch.float32 else 1e-2
    torch.testing.assert_close(dx.double(), ref, atol=tol, rtol=tol)


@pytest.mark.gpu
def test_kept_launches_share_one_buffer_of_words_per_call():
    """The kept launcher runs both launches with one fresh buffer per call: calls on new inputs give new
    answers, equal to the JIT's."""
    torch.manual_seed(3)
    x = _x((2, 3000, 700), torch.bfloat16, True, "cuda")
    plan = _forward_plan(x, 2, per_sm=16)
    assert plan is not None and plan.cut
    ready = any_dim.ready_for(x, 2, False, x.dtype)
    ready.calls = any_dim.PlanCalls(plan)
    ready(x)
    assert ready.kept is not None and ready.kept is not ready.run
    for _ in range(3):
        x = _x((2, 3000, 700), torch.bfloat16, True, "cuda")
        assert_like_torch(ready(x), x, 2, "kept parts")


def test_waiting_parts_take_one_launch_on_a_gpu_and_fit_their_second_reads_in_l2():
    """The one-launch form (PHASE 0): slots start NOT_PUBLISHED; one launch on a GPU, two under the interpreter;
    and where the L2 rule cuts the parts, the parts of the programs resident at once fit L2's share."""
    from softmax_core.plans.any_dim import L2_SHARE

    x = _x((6, 4096, 4000), torch.float16, True, "meta")
    plan = _forward_plan(x, 2, column_bytes=128, values=2048, per_sm=8, waits=True, compile=False)
    two = _forward_plan(x, 2, column_bytes=128, values=2048, per_sm=8, compile=False)
    assert plan.waits and plan.slots_filled and not two.waits and not two.slots_filled
    assert plan.offsets_32 and not two.offsets_32          # the waiting form's slices are addressed in 32 bits
    assert dict(plan.constexprs)["PHASE"] == 0 and dict(two.constexprs)["PHASE"] == 2
    assert [dict(c)["PHASE"] for c in plan.launches] == list(runtime.launch_phases())
    assert [dict(c)["PHASE"] for c in two.launches] == [1, 2]
    resident = 8 * H200.multiprocessor_count
    part_bytes = plan.part_r * plan.block_i * 2
    assert resident * part_bytes <= L2_SHARE * H200.l2_mib * 2**20 < resident * 2 * part_bytes
    assert plan.parts > two.parts >= 2                     # smaller parts than filling the GPU alone asks for


def _waiting_launch(plan, spin):
    """The plan's calls in their one-launch form with the wait cut to `spin` polls: under the interpreter, which
    runs programs one after another, every program but a tile's last finds parts missing and computes them from
    memory; on a GPU some may."""
    calls = any_dim.PlanCalls(plan)
    calls.launches = (tuple((k, 0 if k == "PHASE" else spin if k == "SPIN" else v) for k, v in plan.constexprs),)
    return calls


@pytest.mark.parametrize("transposed", [False, True])
def test_parts_that_stop_waiting_compute_the_missing_words_themselves(transposed, device):
    torch.manual_seed(5)
    shape = (2, 11, 230) if transposed else (2, 230, 11)
    dim = 2 if transposed else 1
    x = _x(shape, torch.float32, transposed, device)
    x[0, 3, 2 if transposed else 3] = float("-inf") if transposed else float("nan")
    plan = _forward_plan(x, dim, column_bytes=32, values=64, per_sm=64, waits=True)
    assert plan.parts >= 3
    ready = any_dim.ready_for(x, dim, False, x.dtype)
    ready.calls = _waiting_launch(plan, spin=1)
    assert_like_torch(ready(x), x, dim, f"waiting parts {shape}")
    if transposed:                  # y is contiguous: its backward is the row kernels'
        return
    y = torch.softmax(torch.randn(shape, device=device), dim).contiguous()
    dy = torch.randn(shape, device=device)
    back = _backward_plan(y, dy, dim, column_bytes=32, values=32, per_sm=64, waits=True)
    made = any_dim.BackwardLaunch(y, dy, dim, back)
    made.calls = _waiting_launch(back, spin=1)
    dx = torch.empty_like(y)
    made.run(y, dy, dx)
    y64, dy64 = y.double(), dy.double()
    torch.testing.assert_close(dx.double(), y64 * (dy64 - (y64 * dy64).sum(dim, keepdim=True)), atol=2e-6, rtol=2e-6)


@pytest.mark.parametrize("seed", [13])
def test_waiting_parts_match_float64_on_random_strided_layouts(seed, device):
    """As the two-launch form: under the interpreter the same two launches; on a GPU one launch whose programs
    wait for each other."""
    for x, dim, column_bytes, values in _draws(seed, 3, device):
        plan = _forward_plan(x, dim, column_bytes=column_bytes, values=values, per_sm=64, waits=True)
        if plan is None:
            continue
        assert plan.waits and plan.parts >= 2
        y = any_dim.any_dim_forward(x, dim, False, x.dtype, plan)
        assert_like_torch(y, x, dim, f"waiting parts {tuple(x.shape)} {x.dtype} {plan.parts}")


def test_the_planner_takes_waiting_parts_where_a_forward_transposes_and_walks_twice():
    from softmax_core.plans.any_dim import WAIT_SHAPE, plan_any_dim, plan_strided

    def planned(x, dim, direction="forward"):
        _, x_layout, y_layout = forward_groups(tuple(x.shape), tuple(x.stride()), dim)
        x_layout = x_layout or y_layout
        kw = dict(transposing=transposes(x_layout, y_layout), written=y_layout, compile=False)
        return (plan_strided(x_layout, 2, "float16", H200, direction, **kw),
                plan_any_dim(x_layout, 2, "float16", H200, direction, **kw))
    plan, two = planned(_x((3, 1058, 8452), torch.float16, True, "meta"), 2)
    assert not two.one_pass and plan.cut and plan.waits and plan.reason.why == "slab_waits"
    assert plan.block_i * 2 == WAIT_SHAPE[0] and plan.reason.values["parts"] == plan.parts >= 2
    held, _ = planned(_x((3, 300, 40), torch.float16, True, "meta"), 2)
    assert held.one_pass and not held.cut                          # a slab held in one pass stays so
    channel, channel_two = planned(_x((64, 9000, 200), torch.float16, False, "meta"), 1)
    assert not channel_two.one_pass and not channel.cut            # a channel softmax walked twice: two passes


def test_the_planner_cuts_only_the_forward_over_a_short_inner_run():
    from softmax_core.plans.any_dim import plan_strided
    from softmax_core.plans.any_dim import CUT_INNER_BYTES

    def planned(shape, direction, elt=4):
        layout = forward_groups(shape, tuple(torch.empty(shape).stride()), 1)[1]
        return plan_strided(layout, elt, {4: "float32", 2: "bfloat16"}[elt], H200, direction)
    narrow = planned((100, 3000, 6), "forward")
    assert narrow.cut and narrow.reason.why == "slab_cut" and 6 * 4 < CUT_INNER_BYTES
    assert not planned((100, 3000, 6), "backward").cut            # two passes ran as fast backward
    assert not planned((4, 3000, 300), "forward").cut             # a wide run: two passes
    assert planned((100, 20, 6), "forward").one_pass              # a slab that fits: one pass
    assert planned((100, 3000, 31), "forward", 2).cut and not planned((100, 3000, 32), "forward", 2).cut
    assert 31 * 2 < CUT_INNER_BYTES <= 32 * 2


def test_softmax_takes_the_cut_plan_eagerly_with_grad_and_compiled(device):
    """sc.softmax over a narrow strided dim long enough for two passes: the cut plan, eagerly, through autograd
    and under torch.compile(fullgraph=True), against float64."""
    import softmax_core as sc
    from softmax_core.launch.any_dim import ready_for
    from tests.support.reference import TOLERANCE, reference_softmax

    torch.manual_seed(4)
    x = (torch.randn(2, 1500, 5, device=device) * 3).requires_grad_()
    assert ready_for(x, 1, False, x.dtype).calls.n_slots         # the cut plan's words: two launches
    dy = torch.randn(2, 1500, 5, device=device)
    xr = x.detach().double().requires_grad_()
    (expected,) = torch.autograd.grad(torch.softmax(xr, 1), xr, dy.double())
    torch._dynamo.reset()
    compiled = torch.compile(lambda t: sc.softmax(t, 1), fullgraph=True, dynamic=False)
    for fn in (lambda t: sc.softmax(t, 1), compiled):
        y = fn(x)
        torch.testing.assert_close(y, reference_softmax(x.detach(), 1), **TOLERANCE[torch.float32])
        (grad,) = torch.autograd.grad(y, x, dy)
        torch.testing.assert_close(grad.double(), expected, atol=1e-6, rtol=1e-5)
