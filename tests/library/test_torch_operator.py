"""softmax_core.softmax where torch.softmax goes: as a PyTorch operator (opcheck, torch.compile, torch.export),
with torch's `dtype=`, PyTorch's own OpInfo samples, and the eager fast path's dictionary of ready calls."""
import warnings

import pytest
import torch

import softmax_core as sc
from tests.support.reference import TOLERANCE
from softmax_core.kernels.row_slots import SPIN_LIMIT
from softmax_core.kernels.shared_rows import softmax_backward_split_kernel, softmax_split_kernel
from softmax_core.launch import fast, launches, operators, ready  # noqa: F401  (operators: registers torch.ops.softmax_core)
from softmax_core.launch.launches import cached_plan

FORWARD = torch.ops.softmax_core.softmax_forward.default
BACKWARD = torch.ops.softmax_core.softmax_backward.default


# ---- the operators -------------------------------------------------------------------------------------

@pytest.mark.parametrize("shape, dtype, out_dtype", [((6, 300), torch.float32, torch.float32),
                                                      ((6, 300), torch.bfloat16, torch.float32),
                                                      ((5, 17), torch.float64, torch.float64),
                                                      ((2, 70_000), torch.float32, torch.float32)])
def test_opcheck_forward_and_backward(shape, dtype, out_dtype, device):
    x = (torch.randn(shape, device=device) * 3).to(dtype).requires_grad_()
    result = torch.library.opcheck(FORWARD, (x, False, out_dtype))
    assert set(result.values()) == {"SUCCESS"}, result
    y = torch.softmax(x.detach().to(out_dtype), -1)
    result = torch.library.opcheck(BACKWARD, (y, torch.randn_like(y), dtype))
    assert set(result.values()) == {"SUCCESS"}, result


def test_operator_matches_torch_and_its_backward(device):
    x = torch.randn(7, 300, device=device, requires_grad=True)
    dy = torch.randn(7, 300, device=device)
    y = FORWARD(x, False, torch.float32)
    torch.testing.assert_close(y, torch.softmax(x, -1))
    (grad,) = torch.autograd.grad(y, x, dy)
    torch.testing.assert_close(grad, torch._softmax_backward_data(dy, y.detach(), -1, x.dtype), atol=1e-6, rtol=1e-5)


def _compiled_matches(device, **compile_kwargs):
    def f(t):
        return sc.softmax(t, 1) * 2 + sc.softmax(t, -1, dtype=torch.float64).float()

    compiled = torch.compile(f, fullgraph=True, **compile_kwargs)
    for _ in range(3):   # reduce-overhead records on a later call than the first
        x = torch.randn(4, 33, 50, device=device, requires_grad=True)
        xr = x.detach().clone().requires_grad_()
        dy = torch.randn(4, 33, 50, device=device)
        y = compiled(x)
        expected = torch.softmax(xr, 1) * 2 + torch.softmax(xr, -1, dtype=torch.float64).float()
        torch.testing.assert_close(y, expected, atol=1e-6, rtol=1e-5)
        (grad,) = torch.autograd.grad(y, x, dy)
        (expected_grad,) = torch.autograd.grad(expected, xr, dy)
        torch.testing.assert_close(grad, expected_grad, atol=1e-5, rtol=1e-4)


@pytest.mark.slow       # inductor compiles forward and backward: ~10 s of the fast subset's budget
def test_torch_compile_fullgraph_forward_and_backward(device):
    torch._dynamo.reset()
    _compiled_matches(device)


def test_torch_export_of_a_module(device):
    class Attention(torch.nn.Module):
        def forward(self, scores):
            return sc.softmax(scores, -1, dtype=torch.float32) + 1

    x = torch.randn(2, 3, 8, device=device).bfloat16()
    program = torch.export.export(Attention(), (x,))
    assert "softmax_core.softmax_forward" in program.graph_module.code
    x2 = torch.randn(2, 3, 8, device=device).bfloat16()
    torch.testing.assert_close(program.module()(x2), torch.softmax(x2, -1, dtype=torch.float32) + 1)


# ---- dtype= as torch.softmax -----------------------------------------------------------------------------

@pytest.mark.parametrize("dtype, out", [(torch.bfloat16, torch.float32), (torch.float16, torch.float32),
                                        (torch.float32, torch.float64), (torch.float32, torch.bfloat16),
                                        (torch.float64, torch.float32)])
def test_dtype_argument_like_torch(dtype, out, device):
    x = (torch.randn(9, 300, device=device) * 4).to(dtype)
    y = sc.softmax(x, -1, dtype=out)
    assert y.dtype == out
    torch.testing.assert_close(y, torch.softmax(x, -1, dtype=out), **TOLERANCE[out])
    assert sc.softmax(x, 0, out).dtype == out          # positional, as torch.softmax(x, dim, dtype)


def test_half_to_float_is_one_kernel_that_writes_float32(device):
    """bf16 in, float32 out: the kernel reads the bf16 input itself (no float32 copy of x is made first)."""
    x = (torch.randn(8, 256, device=device) * 4).bfloat16()
    ready.forget_ready_calls()
    y = sc.softmax(x, -1, dtype=torch.float32)
    call = ready.ready_call(x, -1, torch.float32)
    assert not call.cast and call.launch.tensor_dtypes == (torch.bfloat16, torch.float32)
    assert y.dtype == torch.float32
    # more exact than rounding to bf16 first: compare with float64 math on the same bf16 values
    torch.testing.assert_close(y, torch.softmax(x.double(), -1).float(), atol=1e-6, rtol=1e-5)


def test_half_to_float_gradient_has_the_input_dtype(device):
    x = (torch.randn(5, 300, device=device) * 3).bfloat16().requires_grad_()
    xr = x.detach().clone().requires_grad_()
    dy = torch.randn(5, 300, device=device)
    (grad,) = torch.autograd.grad(sc.softmax(x, -1, dtype=torch.float32), x, dy)
    (expected,) = torch.autograd.grad(torch.softmax(xr, -1, dtype=torch.float32), xr, dy)
    assert grad.dtype == torch.bfloat16
    torch.testing.assert_close(grad, expected, **TOLERANCE[torch.bfloat16])


def test_integer_input_with_a_float_dtype_is_cast_like_torch(device):
    x = torch.randint(-3, 4, (4, 9), device=device)
    torch.testing.assert_close(sc.softmax(x, 1, dtype=torch.float32), torch.softmax(x, 1, dtype=torch.float32))


@pytest.mark.parametrize("x, kwargs, error, words", [
    (torch.ones(3, 4), {"dtype": "float32"}, TypeError, "torch.dtype"),
    (torch.ones(3, 4), {"safe": 1}, TypeError, "safe"),
])
def test_bad_input_gets_a_clear_error(x, kwargs, error, words):
    if x.device.type == "cpu" and not sc.runtime.INTERPRETED:
        x = x.cuda()
    with pytest.raises(error, match=words):
        sc.softmax(x, -1, **kwargs)


@pytest.mark.parametrize("x, kwargs", [
    (torch.ones(3, 4, dtype=torch.int64), {}),
    (torch.ones(3, 4), {"dtype": torch.int32}),
    (torch.ones(3, 4, dtype=torch.bool), {"dtype": torch.complex64}),
])
def test_what_torch_refuses_is_refused_with_torch_s_error(x, kwargs, device):
    x = x.to(device)
    with pytest.raises(Exception) as theirs:
        torch.softmax(x, -1, **kwargs)
    with pytest.raises(type(theirs.value)):
        sc.softmax(x, -1, **kwargs)


@pytest.mark.parametrize("dim, dtype", [(-1, None), (0, None), (1, torch.float64)])
def test_a_meta_tensor_gets_a_meta_tensor_of_torch_s_shape_and_dtype(dim, dtype):
    x = torch.empty(3, 5, 7, device="meta", dtype=torch.bfloat16)
    ours, theirs = sc.softmax(x, dim, dtype=dtype), torch.softmax(x, dim, dtype=dtype)
    assert ours.device.type == "meta" and (ours.shape, ours.dtype) == (theirs.shape, theirs.dtype)


@pytest.mark.slow          # importing torch's op_db alone takes several seconds; the full suite runs it
def test_pytorch_opinfo_samples():
    """PyTorch's own samples for `softmax` and `softmax` with_dtype (every input dtype it lists)."""
    pytest.importorskip("expecttest")
    from torch.testing._internal.common_methods_invocations import op_db

    device = sc.runtime.KERNEL_DEVICE_TYPE
    failures, count = [], 0
    for op in (o for o in op_db if o.name == "softmax"):
        dtypes = [torch.float32, torch.float64, torch.bfloat16, torch.float16]
        if op.variant_test_name == "with_dtype":
            dtypes += [torch.int64, torch.uint8, torch.bool, torch.complex64]
        for dtype in dtypes:
            for sample in op.sample_inputs(device, dtype):
                count += 1
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")    # complex -> real discards the imaginary part, as torch warns
                    expected = op(sample.input, *sample.args, **sample.kwargs)
                    try:
                        got = sc.softmax(sample.input, *sample.args, **sample.kwargs)
                        torch.testing.assert_close(got, expected, **TOLERANCE[expected.dtype])
                    except Exception as e:   # collect every failure, then report them all
                        failures.append(f"{op.variant_test_name or 'default'} {dtype} "
                                        f"{tuple(sample.input.shape)} {sample.args} {sample.kwargs}: {e!r}"[:300])
    assert count >= 80 and not failures, "\n".join(failures)


# ---- the eager fast path -------------------------------------------------------------------------------

def test_second_call_is_replayed_and_keys_tell_layouts_apart(device):
    ready.forget_ready_calls()
    base = torch.randn(6, 65, device=device) * 3
    x = base[:, :64]                     # rows 65 apart
    y1 = sc.softmax(x)
    assert len(ready.READY) == 1
    y2 = sc.softmax(x)                   # replayed
    torch.testing.assert_close(y2, torch.softmax(x, -1))
    torch.testing.assert_close(y1, y2)
    shifted = base[:, 1:]                # same shape, an address 4 bytes further: not 16-byte aligned
    torch.testing.assert_close(sc.softmax(shifted), torch.softmax(shifted, -1))
    contiguous = x.contiguous()          # same shape, other strides
    torch.testing.assert_close(sc.softmax(contiguous), torch.softmax(x, -1))
    assert len(ready.READY) == 3
    for t in (x, shifted, contiguous):   # and each again, from the dictionary
        torch.testing.assert_close(sc.softmax(t), torch.softmax(t, -1))


def test_replayed_call_of_any_rank(device):
    x = torch.randn(2, 3, 5, 40, device=device)
    for _ in range(2):
        y = sc.softmax(x, 3)
        assert y.shape == x.shape
        torch.testing.assert_close(y, torch.softmax(x, -1))


# ---- never hang: the split path's bounded wait ---------------------------------------------------------

def _split_plan(n_rows, n_cols, direction):
    plan = sc.plan_softmax(n_rows, n_cols, torch.float32, sc.default_gpu(), direction, path="split")
    assert plan.split > 1
    return plan


@pytest.mark.slow       # every program polls, then reads 70,000 columns itself, in the interpreter: ~10 s
def test_split_one_launch_finishes_when_peers_never_run_at_once(device):
    """The one-launch split form, whose programs wait for each other, in a place where they cannot all run at
    once (the interpreter runs programs one after another; on a GPU: see test_split_never_hangs_...). Each
    program stops waiting after SPIN polls and reads the missing chunks itself: the answer is still right."""
    if not sc.runtime.INTERPRETED:
        pytest.skip("the GPU form of this test is test_split_never_hangs_beside_a_kernel_holding_the_sms")
    n_rows, n_cols = 3, 70_000
    x = torch.randn(n_rows, n_cols) * 4
    x[1, :40_000] = -float("inf")          # whole chunks of -inf in a row
    plan = _split_plan(n_rows, n_cols, "forward")
    y = torch.empty_like(x)
    slots = torch.full((n_rows * plan.split,), -1, dtype=torch.int64)
    softmax_split_kernel[plan.grid](x, y, x.stride(0), y.stride(0), n_rows, n_cols, slots, SPLIT=plan.split,
                                    PEERS=plan.peers, CHUNK=plan.block_n, SAFE=False, PHASE=0, SPIN=2)
    # Against float64: a row of 70,000 values summed in chunks, each rescaled to the row's max, is within 1e-4 of
    # the exact answer, not always within torch's float32 rtol of torch's own float32 rounding (one value in
    # 210,000 was 2e-5 apart in a CI run).
    torch.testing.assert_close(y.double(), torch.softmax(x.double(), -1), atol=1e-5, rtol=1e-4)
    dy = torch.randn_like(x)
    bplan = _split_plan(n_rows, n_cols, "backward")
    dx = torch.empty_like(x)
    slots = torch.full((n_rows * bplan.split,), -1, dtype=torch.int64)
    softmax_backward_split_kernel[bplan.grid](y, dy, dx, y.stride(0), dy.stride(0), dx.stride(0), n_rows, n_cols,
                                              slots, SPLIT=bplan.split, PEERS=bplan.peers, CHUNK=bplan.block_n,
                                              PHASE=0, SPIN=2)
    torch.testing.assert_close(dx, torch._softmax_backward_data(dy, y, -1, x.dtype), atol=1e-6, rtol=1e-4)
    assert SPIN_LIMIT >= 1000   # on a GPU the wait is long enough that peers which do run always arrive first


# ---- on a GPU only -------------------------------------------------------------------------------------

@pytest.mark.gpu
@pytest.mark.parametrize("mode", [None, "reduce-overhead"])
def test_torch_compile_on_gpu(mode):
    torch._dynamo.reset()
    _compiled_matches("cuda", mode=mode)


@pytest.mark.gpu
def test_inductor_launches_our_triton_kernels_itself():
    """With triton_op + wrap_triton, Inductor's generated code contains our kernels (not an opaque call)."""
    from torch._inductor.utils import run_and_get_code

    torch._dynamo.reset()
    compiled = torch.compile(lambda t: sc.softmax(t, -1) + 1, fullgraph=True)
    x = torch.randn(512, 781, device="cuda")
    y, codes = run_and_get_code(compiled, x)
    torch.testing.assert_close(y, torch.softmax(x, -1) + 1)
    kernel_name = cached_plan(512, 781, x.dtype, "forward", False).kernel.split(":")[1]
    assert any(kernel_name in code for code in codes), codes[-1][:3000]   # the kernel the plan names


@pytest.mark.gpu
def test_kept_launch_matches_the_jit_launch():
    import triton

    ready.forget_ready_calls()
    for n in (256, 781, 4096, 20_000, 70_000):
        x = torch.randn(300, n, device="cuda") * 3
        first = sc.softmax(x)           # through the JIT, which keeps the compiled kernel
        again = sc.softmax(x)           # the kept launcher
        assert torch.equal(first, again), n
        torch.testing.assert_close(again, torch.softmax(x, -1))
        xg = x.clone().requires_grad_()
        y = sc.softmax(xg)
        dy = torch.randn_like(x)
        grads = [torch.autograd.grad(y, xg, dy, retain_graph=True)[0] for _ in range(3)]   # JIT, then kept
        assert torch.equal(grads[0], grads[2]), n
        torch.testing.assert_close(grads[2], torch._softmax_backward_data(dy, y.detach(), -1, x.dtype),
                                   atol=1e-6, rtol=1e-4)
        call = ready.ready_call(x)
        kept = [call.go, *ready.ready_call(xg).backward_kept.values()]
        assert all(not hasattr(go, "__self__") for go in kept), n     # kept launches, not SoftmaxLaunch.run
    # On the Triton versions whose launcher we know, every kept launch calls the C launch function directly.
    expected = {"3.6": "3.6", "3.9": "3.9"}.get(triton.__version__[:3])
    if expected:
        launch = ready.ready_call(x).launch
        compiled = launch.run(x, torch.empty_like(x))
        assert fast.KeptLaunch(compiled, launch.plan.grid, 0).form == expected


@pytest.mark.gpu
def test_split_never_hangs_beside_a_kernel_holding_the_sms():
    """Another stream's kernel holds all but a few warp slots of the GPU while a split-path softmax runs, so
    the programs of one row cannot all run at once. Without the bounded wait they would wait for each other
    forever, and the holder (which waits for the softmax to finish) would give up after its poll limit."""
    import time

    import triton
    import triton.language as tl

    @triton.jit
    def hold(flag_ptr, polls_ptr, LIMIT: tl.constexpr):
        done = tl.load(flag_ptr, volatile=True)
        polls = 0
        while (done == 0) & (polls < LIMIT):
            done = tl.load(flag_ptr, volatile=True)
            polls += 1
        tl.store(polls_ptr + tl.program_id(0), polls)

    gpu = sc.default_gpu()
    plan = cached_plan(2, 262_144, torch.float32, "forward", False, 0)
    assert plan.path == "split"
    warps = plan.num_warps                       # the holder's programs are the size of ours
    warp_slots = gpu.max_warps_per_sm // warps
    free = 2                                     # programs of ours that still fit beside the holder
    assert plan.split > free
    limit = 20_000_000
    flag = torch.zeros(1, dtype=torch.int32, device="cuda")
    polls = torch.zeros(gpu.multiprocessor_count * warp_slots, dtype=torch.int32, device="cuda")
    x = torch.randn(2, 262_144, device="cuda") * 3
    expected = torch.softmax(x, -1)
    sc.softmax(x)                                # compiled before the holder starts
    holder_stream, work_stream = torch.cuda.Stream(), torch.cuda.Stream()
    torch.cuda.synchronize()
    with torch.cuda.stream(holder_stream):
        hold[(polls.numel() - free,)](flag, polls, LIMIT=limit, num_warps=warps)
    time.sleep(0.2)                              # every holder program is resident by now
    with torch.cuda.stream(work_stream):
        y = sc.softmax(x)
        flag.fill_(1)
    torch.cuda.synchronize()
    held = polls[: polls.numel() - free]
    assert int(held.max()) < limit, "the softmax did not finish while the holder held the GPU"
    torch.testing.assert_close(y, expected)


def test_kept_launch_takes_every_parameter_the_jit_binds():
    """A kept launch passes the launcher every kernel parameter in signature order, defaults included (the
    tiled kernel's trace switch has one), exactly as JITFunction.run binds them."""
    import inspect

    plan = sc.plan_softmax(3, 70_000, torch.float64, sc.default_gpu(), "forward", False)
    assert plan.path == "tiled"
    (constexprs,) = plan.launches
    kernel = launches.resolve_kernel(plan.kernel)
    assert dict(constexprs)["FP64"] is True
    params = list(inspect.signature(kernel.fn).parameters)
    values = fast.trailing_values(kernel, 6, constexprs)
    assert len(values) == len(params) - 6
    named = dict(zip(params[6:], values))
    assert named["TILE"] == plan.block_n and named["TRACE"] is False and named["trace_ptr"] is None
    with pytest.raises(TypeError, match="no value"):
        fast.trailing_values(kernel, 6, ())


# gradgradcheck perturbs every element and launches the forward again each time (in Triton's interpreter on a
# CPU): small shapes whose rows are still padded (7 -> 8, 5 -> 8) keep it to seconds.
@pytest.mark.slow
@pytest.mark.parametrize("shape, dim", [((2, 7), -1), ((2, 5, 3), 1)])
def test_second_derivatives_eager(shape, dim, device):
    x = torch.randn(shape, device=device, dtype=torch.float64, requires_grad=True)
    assert torch.autograd.gradgradcheck(lambda t: sc.softmax(t, dim), (x,))


@pytest.mark.slow
def test_second_derivatives_through_the_operator(device):
    x = torch.randn(2, 7, device=device, dtype=torch.float64, requires_grad=True)
    assert torch.autograd.gradgradcheck(lambda t: FORWARD(t, False, torch.float64), (x,))


def test_ready_calls_know_when_a_plain_empty_like_is_the_output():
    """The replayed call allocates y with a bare empty_like(x) only when that is y's layout and dtype."""
    dense = torch.randn(8, 40)
    assert ready.ReadyCall(dense, 1, False, torch.float32, False).plain
    assert not ready.ReadyCall(dense.to(torch.bfloat16), 1, False, torch.float32, False).plain   # a wider y
    padded = torch.randn(8, 48)[:, :40]                                                             # rows 48 apart
    call = ready.ReadyCall(padded, 1, False, torch.float32, False)
    assert call.direct and not call.plain and call.launch.scalars[0] == 48
    moved = ready.ReadyCall(torch.randn(4, 5, 6), 1, False, torch.float32, False)
    assert not moved.direct and (moved.n_rows, moved.n_cols) == (24, 5)


@pytest.mark.gpu
def test_the_kept_fast_path_gives_the_first_calls_answer():
    """After the first call of a key, calls go through the kept launcher with raw addresses: same answers,
    bit for bit, for a new tensor at another address, a padded-row view and a bf16 -> float32 call."""
    def fresh(kind):     # a new tensor at a new address each time, same values, same key
        g = torch.Generator(device="cuda").manual_seed(1)
        if kind == "dense":
            return torch.randn(4096, 256, device="cuda", generator=g)
        if kind == "padded":
            return torch.randn(64, 1000, device="cuda", generator=g)[:, :781]
        return torch.randn(300, 512, device="cuda", generator=g).to(torch.bfloat16)

    for kind, dtype in [("dense", None), ("padded", None), ("bf16", torch.float32)]:
        x = fresh(kind)
        first = sc.softmax(x, -1, dtype)
        assert ready.ready_call(x, -1, dtype).go is not None, "the second call would not take the kept path"
        keep = [x]
        for _ in range(3):
            keep.append(fresh(kind))
            again = sc.softmax(keep[-1], -1, dtype)
            assert again.is_contiguous() and again.dtype == first.dtype
            torch.testing.assert_close(again, first, rtol=0, atol=0)
