"""The one launch path (softmax_core.launch.launches): eager calls kept and repeated for every layout, the
backward kept the same way, and the kept launcher's arguments in the order Triton's C launch function takes."""
import pytest
import torch

import softmax_core as sc
from tests.support.reference import TOLERANCE
from softmax_core.launch import fast, launches, ready
from softmax_core.launch.any_dim import ReadyAnyDim


def _layouts(device):
    base = torch.randn(4, 6, 40, device=device) * 3
    return [(base, -1), (base, 1), (base, 0), (base.transpose(0, 2), -1), (base[:, :, :33], -1),
            (base[0], -1), (base[0, 0], 0), (base.transpose(1, 2)[:, 3], 1)]


def test_every_layout_is_kept_and_repeated_with_the_same_answer(device):
    ready.forget_ready_calls()
    for x, dim in _layouts(device):
        first = sc.softmax(x, dim)
        call = ready.ready_call(x, dim)
        assert call is not None, (tuple(x.shape), x.stride(), dim)
        assert call.go is not None or isinstance(call, ReadyAnyDim), (tuple(x.shape), x.stride(), dim)
        again = sc.softmax(x, dim)
        if isinstance(call, ReadyAnyDim) and not sc.runtime.INTERPRETED:
            assert call.kept is not None              # the second call went through the kept launcher
        torch.testing.assert_close(first, torch.softmax(x, dim), **TOLERANCE[torch.float32])
        assert torch.equal(first, again) and again.shape == x.shape


def test_a_cast_in_front_is_kept_too(device):
    ready.forget_ready_calls()
    x = torch.randint(-3, 4, (5, 9), device=device)
    for _ in range(2):
        torch.testing.assert_close(sc.softmax(x, 1, dtype=torch.float32), torch.softmax(x, 1, dtype=torch.float32))
    assert ready.ready_call(x, 1, torch.float32).cast


@pytest.mark.parametrize("dim", [-1, 1])
def test_backward_is_kept_per_layout_of_dy(dim, device):
    ready.forget_ready_calls()
    x = torch.randn(3, 20, 24, device=device, requires_grad=True)
    xr = x.detach().clone().requires_grad_()
    expected_y = torch.softmax(xr, dim)
    for step in range(3):
        y = sc.softmax(x, dim)
        dy = torch.randn(3, 24, 20, device=device).transpose(1, 2) if step == 2 else torch.randn_like(y)
        (grad,) = torch.autograd.grad(y, x, dy)
        (expected,) = torch.autograd.grad(expected_y, xr, dy, retain_graph=True)
        torch.testing.assert_close(grad, expected, atol=1e-6, rtol=1e-4)
    call = ready.ready_call(x, dim)
    assert call is not None
    # any-dim: dy like y, and the transposed dy of the third step; rows: the transposed dy is copied to rows first
    assert len(call.backward_kept) == (2 if isinstance(call, ReadyAnyDim) else 1)


def test_a_call_kept_without_grad_records_autograd_with_it(device):
    ready.forget_ready_calls()
    for x, dim in _layouts(device):
        sc.softmax(x, dim)
        leaf = x.detach().requires_grad_()
        dy = torch.randn_like(x)
        (grad,) = torch.autograd.grad(sc.softmax(leaf, dim), leaf, dy)
        ref = x.detach().double().requires_grad_()
        (expected,) = torch.autograd.grad(torch.softmax(ref, dim), ref, dy.double())
        torch.testing.assert_close(grad, expected.float(), atol=1e-6, rtol=1e-4)


def test_direct_calls_with_a_plan_keep_their_launch(device):
    x = torch.randn(7, 300, device=device)
    plan = launches.cached_plan(7, 300, torch.float32, "forward", False, x.get_device())
    first = sc.softmax_forward(x, plan)
    launch = launches.forward_launch(plan, False, 300, torch.float32, torch.float32)
    assert launch is launches.forward_launch(plan, False, 300, torch.float32, torch.float32) and launch.kept
    torch.testing.assert_close(sc.softmax_forward(x, plan), first, rtol=0, atol=0)


# -- the kept launcher's arguments, against a stand-in for Triton's CUDA launcher --------------------------------
class _Recorder:
    def __init__(self):
        self.calls = []

    def launch(self, *args):
        self.calls.append(args)


def _stand_in(form: str):
    """A launcher object shaped like Triton's CudaLauncher of that version (its `__call__` signature is what
    fast.launcher_form reads), whose C launch function records its arguments."""
    recorder = _Recorder()
    if form == "3.6":
        def __call__(self, gridX, gridY, gridZ, stream, function, *args):
            raise AssertionError("the kept launch skips the Python launcher")
    else:
        def __call__(self, gridX, gridY, gridZ, stream, function, kernel_metadata, launch_metadata,
                     launch_enter_hook, launch_exit_hook, *args):
            raise AssertionError("the kept launch skips the Python launcher")
    launcher = type("CudaLauncher", (), {"__call__": __call__})()
    launcher.launch, launcher.launch_cooperative_grid, launcher.launch_pdl = recorder.launch, False, False
    launcher.global_scratch_size = launcher.profile_scratch_size = 0
    launcher.arg_annotations, launcher.kernel_signature = "annotations", "signature"
    compiled = type("Compiled", (), {})()
    compiled.run, compiled.function, compiled.packed_metadata = launcher, "function", "metadata"
    return compiled, recorder


@pytest.mark.parametrize("form", ["3.6", "3.9"])
@pytest.mark.parametrize("n_tensors, slots", [(2, False), (3, False), (2, True)])
def test_kept_launch_passes_every_argument_in_signature_order(form, n_tensors, slots, monkeypatch):
    monkeypatch.setattr(torch._C, "_cuda_getCurrentRawStream", lambda device: 1234, raising=False)
    compiled, recorder = _stand_in(form)
    kept = fast.KeptLaunch(compiled, (96,), 0)
    assert kept.form == form
    tensors = tuple(torch.empty(4) for _ in range(n_tensors))
    slot_buffer = torch.empty(8, dtype=torch.int64)
    ran = []
    go = kept.bind(n_tensors, (40, 40, 3, 40), ("TAIL", 7), (lambda device: slot_buffer) if slots else None,
                   lambda *t: ran.append(t))
    go(*tensors)
    (args,) = recorder.calls
    expected = tuple(t.data_ptr() for t in tensors) + (40, 40, 3, 40)
    expected += (slot_buffer.data_ptr(),) if slots else ()
    expected += ("TAIL", 7)
    assert args[:7] == (96, 1, 1, 1234, "function", False, False)
    if form == "3.9":
        assert args[7] == "metadata" and args[13:15] == ("annotations", "signature") and args[15] == expected
    else:
        assert args[9] == "metadata" and args[13:] == expected
    assert not ran
    monkeypatch.setattr(fast, "hooks_installed", lambda: True)     # a profiler's hooks: the JIT launches
    go = kept.bind(n_tensors, (40,), (), None, lambda *t: ran.append(t))
    go(*tensors)
    assert ran == [tensors] and len(recorder.calls) == 1


def test_an_unknown_launcher_goes_through_the_jit():
    compiled, _ = _stand_in("3.6")
    compiled.run = object()
    kept = fast.KeptLaunch(compiled, (1,), 0)
    assert kept.form == "unknown" and kept.bind(2, (), (), None, print) is None


def test_autograd_calls_our_backward_functions_directly(device):
    from softmax_core.launch.any_dim import AnyDimSoftmax
    from softmax_core.launch.autograd import SoftmaxFunction
    for function in (SoftmaxFunction, AnyDimSoftmax):
        assert function._backward_cls.apply is function.backward      # no BackwardCFunction.apply in between
    x = torch.randn(6, 10, device=device, requires_grad=True)
    (grad,) = torch.autograd.grad(sc.softmax(x, 0), x, torch.arange(60.0, device=device).view(6, 10))
    xr = x.detach().double().requires_grad_()
    (expected,) = torch.autograd.grad(torch.softmax(xr, 0), xr, torch.arange(60.0, device=device).view(6, 10).double())
    torch.testing.assert_close(grad.double(), expected, atol=1e-6, rtol=1e-5)


def test_a_plan_given_another_matrix_is_refused(device):
    # A plan's launch carries its own n_rows and n_cols; run on a smaller matrix it would read past its end.
    from softmax_core.launch.api import softmax_backward, softmax_forward
    from softmax_core.plans.choose import plan_softmax

    plan = plan_softmax(64, 100, torch.float32)
    x = torch.randn(16, 100, device=device)
    with pytest.raises(ValueError, match="64 x 100 matrix, the input is 16 x 100"):
        softmax_forward(x, plan)
    back = plan_softmax(16, 100, torch.float32, direction="backward")
    y = torch.softmax(x, -1)
    with pytest.raises(ValueError, match="dy has shape"):
        softmax_backward(y, torch.randn(16, 101, device=device), back)
    with pytest.raises(ValueError, match="16 x 100 matrix, the input is 16 x 99"):
        softmax_backward(y[:, :99], torch.randn(16, 99, device=device), back)
    torch.testing.assert_close(softmax_forward(torch.randn(64, 100, device=device), plan).sum(-1),
                               torch.ones(64, device=device))
