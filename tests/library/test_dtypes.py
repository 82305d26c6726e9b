"""softmax_core.hardware.dtypes: one table of element types, consistent with torch and with the kernels."""
import pytest
import torch

from softmax_core.hardware import dtypes
from softmax_core.launch import api as launchers
from softmax_teaching import tutorial_trace as trace


@pytest.mark.parametrize("name", list(dtypes.DTYPES))
def test_each_dtype_agrees_with_torch(name):
    d = dtypes.DTYPES[name]
    assert d.name == name == dtypes.name(d.torch) == dtypes.name_of_any(d.torch)
    assert d.size == torch.empty((), dtype=d.torch).element_size() == dtypes.element_size(name)
    assert dtypes.of(name) is dtypes.of(d.torch) is d and dtypes.torch_dtype(name) is d.torch
    assert d.triton_pointer == "*" + {"float32": "fp32", "float16": "fp16", "bfloat16": "bf16",
                                      "float64": "fp64"}[name]


def test_tutorial_dtypes_are_the_benchmarked_ones_and_the_tuned_add_float64():
    assert dtypes.TUTORIAL_DTYPES == ("float32", "float16", "bfloat16")
    assert dtypes.TUNED_DTYPES == dtypes.TUTORIAL_DTYPES + ("float64",)
    assert all(dtypes.DTYPES[n].tolerance > 0 for n in dtypes.TUTORIAL_DTYPES)
    assert launchers.SOFTMAX_DTYPES == tuple(dtypes.DTYPES[n].torch for n in dtypes.TUNED_DTYPES)


def test_tolerance_follows_precision():
    tol = [dtypes.DTYPES[n].tolerance for n in ("float32", "float16", "bfloat16")]
    assert tol == sorted(tol)


@pytest.mark.parametrize("bad", [torch.int32, "int8", "float", None])
def test_unknown_dtypes_are_refused_by_name(bad):
    with pytest.raises(TypeError, match="float32, float16, bfloat16"):
        dtypes.of(bad)


def test_float64_is_refused_where_only_the_tutorial_kernel_runs():
    with pytest.raises(TypeError, match="got float64"):
        dtypes.of(torch.float64, dtypes.TUTORIAL_DTYPES)
    with pytest.raises(TypeError, match="float64"):
        trace.trace_rows(2, 8, dtype="float64")
