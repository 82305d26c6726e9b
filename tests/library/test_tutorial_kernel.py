import pytest
import torch

import softmax_core as sc
from tests.support.reference import TOLERANCE, reference_softmax
from softmax_teaching.chapter_notes import CHAPTER_TEST_ATOL, CHAPTER_TEST_RTOL, CHAPTER_TEST_SIZE


@pytest.mark.parametrize("shape", [(1, 1), (1, 781), (37, 1), (5, 3), (64, 1000), (13, 2049), (3, 4096)])
def test_random_shapes_match_float64(shape, device):
    gen = torch.Generator().manual_seed(hash(shape) % 2**31)
    x = (torch.randn(shape, generator=gen) * 4).to(device)
    y = sc.softmax(x)
    torch.testing.assert_close(y, reference_softmax(x), **TOLERANCE[torch.float32])
    torch.testing.assert_close(y.sum(dim=-1), torch.ones(shape[0], device=device))


@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16])
def test_half_precision_matches_float64_and_keeps_dtype(dtype, device):
    x = (torch.randn(48, 517) * 3).to(dtype).to(device)
    y = sc.softmax(x)
    assert y.dtype == dtype
    torch.testing.assert_close(y, reference_softmax(x), **TOLERANCE[dtype])


def test_row_stride_of_a_view_is_honoured(device):
    base = torch.randn(40, 1000, device=device)
    view = base[::2, 100:881]                  # every other row, a window of columns: rows are 2000 apart
    assert view.stride(0) == 2000 and not view.is_contiguous()
    torch.testing.assert_close(sc.softmax(view), reference_softmax(view), **TOLERANCE[torch.float32])


def test_column_strided_view(device):
    view = torch.randn(7, 300, device=device)[:, ::3]   # column stride 3
    torch.testing.assert_close(sc.softmax(view), reference_softmax(view), **TOLERANCE[torch.float32])


def test_shift_invariance_and_range(device):
    x = torch.randn(9, 100, device=device)
    y = sc.softmax(x)
    torch.testing.assert_close(sc.softmax(x + 1000.0), y, atol=1e-6, rtol=1e-4)
    assert bool(((y >= 0) & (y <= 1)).all())


@pytest.mark.parametrize("shape", [(0, 5), (5, 0), (0, 0)])
def test_empty_input_gives_empty_output(shape, device):
    x = torch.empty(shape, device=device)
    y = sc.softmax(x)
    assert y.shape == shape and y.dtype == x.dtype


def test_naive_softmax_is_the_five_steps(device):
    x = torch.randn(11, 77, device=device)
    torch.testing.assert_close(sc.naive_softmax(x), reference_softmax(x), **TOLERANCE[torch.float32])


@pytest.mark.parametrize("bad, error, words", [
    ([[1.0, 2.0]], TypeError, "torch.Tensor"),
    (torch.ones(3, 4, dtype=torch.int64), TypeError, "int64"),
    (torch.ones(3, 4, dtype=torch.bool), TypeError, "bool"),
])
def test_bad_input_is_named(bad, error, words):
    """The tutorial's wrapper takes the float dtypes its kernel was written for; anything else is named."""
    with pytest.raises(error, match=words):
        sc.tutorial_softmax(bad)


def test_wrong_device_is_named():
    if sc.runtime.INTERPRETED:
        x = torch.ones(2, 3, device="meta")    # not a CPU tensor: the interpreter cannot read it
    else:
        x = torch.ones(2, 3)                   # a CPU tensor on a GPU machine
    with pytest.raises(ValueError, match="is on"):
        sc.tutorial_softmax(x)
    # the drop-in answers where its kernels do not run, as torch does (a meta tensor, a CPU tensor on a GPU machine)
    y = sc.softmax(x)
    assert y.device == x.device and y.shape == x.shape


# The chapter's unit test on the tuned softmax: on the CPU `python -m softmax_core` runs it
# (tests/library/test_memory_catalog_and_cli.py); here on CUDA.
@pytest.mark.gpu
def test_the_tuned_softmax_passes_the_chapters_unit_test_on_gpu():
    torch.manual_seed(0)
    x = torch.randn(*CHAPTER_TEST_SIZE, device="cuda")
    torch.testing.assert_close(sc.softmax(x), torch.softmax(x, axis=1), atol=CHAPTER_TEST_ATOL, rtol=CHAPTER_TEST_RTOL)
