"""The any-dim kernels' words (kernels/any_dim.py, load_tile and store_tile with PACK > 1): a lane loads 2 or 4
neighbouring inner values as one 32- or 64-bit word and splits it in registers. Which tensors may (the layout's
strides and the data's address) and which plans do (plans/any_dim.py's word_packs), and float64 references for
every dtype, output dtype, pass and direction with the words forced on. Small shapes: the interpreter runs every
program."""
import dataclasses

import pytest
import torch

import softmax_core as sc
from softmax_core.hardware import dtypes
from softmax_core.hardware.gpu import catalog_gpu
from softmax_core.launch import any_dim
from softmax_core.plans.any_dim import WORD_MAX_ELEMENT_BYTES, plan_any_dim, word_packs, word_values
from softmax_core.plans.strided import ReductionLayout, contiguous_strides, dim_groups, layout_in
from tests.support.reference import TOLERANCE


def _layout(shape, dim):
    strides = contiguous_strides(shape)
    return layout_in(dim_groups(shape, dim, strides, strides), shape, strides)


def test_a_word_holds_the_neighbours_its_strides_and_address_allow():
    four = _layout((10, 7, 4), 1)                                # (outer 10, reduce 7, inner 4)
    assert word_values(four, 2) == 4                             # 4 float16: one 64-bit word
    assert word_values(four, 4) == 2                             # 2 float32: a word holds 8 bytes at most
    assert word_values(four, 8) == 1
    assert word_values(_layout((10, 7, 6), 1), 2) == 2           # 6 = 3 pairs
    assert word_values(_layout((10, 7, 5), 1), 2) == 1           # an odd run: each value alone
    assert word_values(four, 2, address=4) == 2                  # 4-byte aligned: pairs, not quads
    assert word_values(four, 2, address=2) == 1
    gaps = dataclasses.replace(four, inner_stride=2)
    assert word_values(gaps, 2) == 1                             # the run is not unit-stride
    # a transposed (30, 7) view: the reduced axis steps 7 values, so a word would straddle two lines of it
    assert word_values(ReductionLayout(1, 30, 8, 0, 7), 2) == 1
    assert word_values(ReductionLayout(1, 30, 8, 0, 12), 2) == 4
    # a single outer slice: its stride is never taken, whatever it is
    assert word_values(ReductionLayout(1, 8, 4, 33, 4), 2) == 4


@pytest.mark.parametrize("direction", ["forward", "backward"])
@pytest.mark.parametrize("shape", [(64, 30, 6), (4, 30, 512), (64, 30, 5)])
def test_the_rule_packs_two_byte_values_only(shape, direction):
    layout = _layout(shape, 1)
    h200 = catalog_gpu("h200")
    for elt, name in ((2, "float16"), (4, "float32")):
        words = word_values(layout, elt)
        packs = word_packs(layout, layout, elt, direction)
        assert packs == ((words, words) if elt <= WORD_MAX_ELEMENT_BYTES else (1, 1))
        plan = plan_any_dim(layout, elt, name, h200, direction, compile=False)
        assert (plan.pack, plan.pack_written) == tuple(min(p, plan.block_i) for p in packs)
        assert dict(plan.constexprs)["PACK_X" if direction == "forward" else "PACK_Y"] == plan.pack
    assert word_values(layout, 2) == (1 if shape[-1] % 2 else 2 if shape[-1] % 4 else 4)


def _forced(x_or_y, dim, direction, packs, **kw):
    layout = _layout(tuple(x_or_y.shape), dim)
    elt = dtypes.element_size(x_or_y.dtype)
    return plan_any_dim(layout, elt, dtypes.name(x_or_y.dtype), catalog_gpu("h200"), direction, compile=False,
                        packs=packs, **kw)


@pytest.mark.parametrize("dtype, out_dtype", [(torch.float16, torch.float16), (torch.bfloat16, torch.bfloat16),
                                              (torch.float32, torch.float32), (torch.float16, torch.float32),
                                              (torch.float32, torch.float16)])
@pytest.mark.parametrize("shape", [(6, 9, 4), (5, 300, 8), (3, 1500, 12)])      # one pass, two passes
def test_words_match_float64_forward_and_backward(dtype, out_dtype, shape, device):
    base = torch.randn(*shape, device=device, dtype=torch.float64) * 4
    base[0, :, 1] = float("-inf")                                   # a column of only -inf
    base[1, : shape[1] // 2, 2] = float("-inf")                     # -inf in the first half
    x = base.to(dtype)
    pack = word_values(_layout(shape, 1), dtypes.element_size(dtype))
    assert pack > 1
    plan = _forced(x, 1, "forward", (pack, pack), block_r=256 if shape[1] > 256 else None)
    assert plan.pack > 1 and plan.pack_written > 1
    y = any_dim.any_dim_forward(x, 1, True, out_dtype, plan)
    expected = torch.softmax(x.double(), 1)
    expected[0, :, 1] = 0.0                                         # safe: the -inf column gives zeros
    torch.testing.assert_close(y.double(), expected, **TOLERANCE[out_dtype])
    dy = torch.randn(y.shape, device=device, dtype=out_dtype)
    bplan = _forced(y, 1, "backward", (pack, pack), block_r=128 if shape[1] > 128 else None)
    dx = any_dim.any_dim_backward(y, dy, 1, dtype, bplan)
    yd, dyd = y.double(), dy.double()
    torch.testing.assert_close(dx.double(), yd * (dyd - (yd * dyd).sum(1, keepdim=True)),
                               **TOLERANCE[dtype if dtype != torch.float32 else out_dtype])
    assert dx.dtype == dtype


def test_a_view_that_starts_mid_word_loads_values_and_its_aligned_twin_words(device):
    shape = (6, 7, 4)
    flat = torch.randn(1 + 6 * 7 * 4, device=device).to(torch.float16)
    ragged = flat[1:].view(shape)                                    # 2 bytes into its allocation
    aligned = flat[:-1].view(shape)
    for x, pack in ((ragged, 1), (aligned, 4)):
        ready = any_dim.ready_for(x, 1, False, x.dtype)
        assert dict(ready.constexprs)["PACK_X"] == pack
        torch.testing.assert_close(sc.softmax(x, 1), torch.softmax(x.double(), 1).half(),
                                   **TOLERANCE[torch.float16])


def test_a_transposed_view_is_read_in_words_only_where_the_rule_says(device):
    x = torch.randn(8, 40, device=device).to(torch.bfloat16).t()     # (40, 8) view, softmax over its last dim
    ready = any_dim.ready_for(x, 1, False, x.dtype)
    constexprs = dict(ready.constexprs)
    assert constexprs["PACK_Y"] == 1                                 # y steps down the reduced axis: no words
    torch.testing.assert_close(sc.softmax(x, 1), torch.softmax(x.double(), 1).to(torch.bfloat16),
                               **TOLERANCE[torch.bfloat16])
