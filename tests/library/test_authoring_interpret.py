"""A pasted kernel run once in Triton's interpreter, in the limited child: the examples' outputs checked
against float64 references, what a kernel writes summarised (NaN counted), sizes beyond the interpreter's
limits refused before anything runs, an endless kernel stopped at its time limit, nothing left behind."""
import pytest
import torch

from kernel_inspector import argspec, examples, gate, interpret, sandbox

from tests.support.temp_dirs import leftovers, private_temp_dir  # noqa: F401  (the fixture)

pytestmark = pytest.mark.usefixtures("private_temp_dir")   # leftovers() counts in it

HEAD = "import triton\nimport triton.language as tl\n\n\n"


def run(source: str, args, sizes, grid, reference=None, limits=interpret.INTERPRETER_LIMITS):
    kf = gate.check_source(source)
    info = kf.kernel(None)
    specs = argspec.merge(argspec.prefill(info), [argspec.parse_arg(a) for a in args])
    return interpret.run(kf, info.name, specs, sizes, grid, reference=reference, limits=limits)


@pytest.mark.parametrize("name", ["softmax"] + [pytest.param(n, marks=pytest.mark.slow)
                                                for n in ("vector_add", "layer_norm", "matmul")])
def test_an_example_runs_and_matches_its_float64_reference(name):
    before = leftovers()
    small = examples.SMALL[name]
    result = run(examples.EXAMPLES[name], small["args"], small["sizes"], small["grid"], reference=name)
    assert result.ok, (result.code, result.detail)
    assert result.wall_seconds > 0
    by_name = {s.name: s for s in result.tensors}
    assert set(by_name) == set(small["sizes"])
    outputs = [s for s in result.tensors if s.reference_error is not None]
    assert outputs and all(s.written and s.matches_reference for s in outputs), outputs
    assert all(not s.written for s in result.tensors if s.reference_error is None)   # inputs untouched
    assert all(s.shape == small["sizes"][s.name] for s in result.tensors)
    assert leftovers() <= before


def test_what_a_kernel_writes_is_summarised_nan_included():
    source = HEAD + """@triton.jit
def half_nan(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs, mask=offs < n)
    y = tl.where(offs % 2 == 0, x * 0.0 + 2.0, float("nan"))
    tl.store(out_ptr + offs, y, mask=offs < n)
"""
    result = run(source, ["x_ptr=*fp32", "out_ptr=*fp32", "n=i32:50", "BLOCK=64"], {"x_ptr": (50,), "out_ptr": (50,)},
                 (1,))
    assert result.ok, result.detail
    out = {s.name: s for s in result.tensors}["out_ptr"]
    assert (out.nan, out.inf, out.minimum, out.maximum, out.written) == (25, 0, 2.0, 2.0, True)
    assert out.reference_error is None                      # not an example: nothing to compare with


@pytest.mark.slow
def test_an_example_changed_by_the_student_is_not_held_to_the_reference():
    small = examples.SMALL["vector_add"]
    wrong = examples.EXAMPLES["vector_add"].replace("x + y", "x - y")
    assert examples.example_named(wrong) is None
    result = run(wrong, small["args"], small["sizes"], small["grid"], reference=examples.example_named(wrong))
    assert result.ok and all(s.reference_error is None for s in result.tensors)


def test_the_reference_error_sees_a_wrong_answer():
    expected = torch.linspace(-3, 3, 100, dtype=torch.float64)
    assert examples.reference_error(expected.float(), expected) <= examples.reference_tolerance("fp32")
    wrong = expected.clone()
    wrong[17] += 0.01
    assert examples.reference_error(wrong, expected) > examples.reference_tolerance("fp32")
    assert examples.reference_error(expected * 1000 * (1 + 1e-3), expected * 1000) == pytest.approx(1e-3, rel=1e-6)


def test_sizes_beyond_the_interpreter_are_refused_before_anything_runs():
    big = examples.SIZES["layer_norm"]
    result = run(examples.EXAMPLES["layer_norm"], examples.ARGUMENTS["layer_norm"], big["sizes"], big["grid"])
    assert (result.ok, result.code, result.detail) == (False, "too_large", "elements")
    assert result.value == 2 * 4096 * 4096 + 2 * 4096 and result.limit == interpret.INTERPRETER_LIMITS.elements
    refused = interpret.check_size({"x_ptr": (10,)}, (64, 65))
    assert (refused.detail, refused.value) == ("programs", 64 * 65)
    assert interpret.check_size({"x_ptr": (10,)}, (64, 64)) is None


def test_a_missing_scalar_value_is_named():
    small = examples.SMALL["vector_add"]
    args = [a for a in small["args"] if not a.startswith("n_elements")]
    result = run(examples.EXAMPLES["vector_add"], args, small["sizes"], small["grid"])
    assert (result.ok, result.code, result.detail) == (False, "missing_value", "n_elements")


@pytest.mark.slow
def test_an_endless_kernel_is_stopped_at_its_time_limit():
    before = leftovers()
    source = HEAD + """@triton.jit
def forever(out_ptr, n):
    i = 0
    while i < n:
        i = i * 1
    tl.store(out_ptr, i)
"""
    # the limit counts the child's start (importing torch and triton, a few seconds) and then the endless loop
    limits = interpret.InterpreterLimits(sandbox=sandbox.SandboxLimits(seconds=6))
    result = run(source, ["out_ptr=*i32", "n=i32:5"], {"out_ptr": (1,)}, (1,), limits=limits)
    assert (result.ok, result.code) == (False, "time_limit")
    assert leftovers() <= before
