"""Long rows in softmax_teaching: the tiled kernel's trace (online max and sum), the split kernel's published
words, the FlashAttention walk and the tiled path's L2 traffic."""

import numpy as np
import pytest
import torch

import softmax_core as sc
from softmax_teaching import long_row_trace as lrt
from softmax_teaching.tutorial_trace import trace_online, trace_split
from softmax_core.kernels.row_slots import NOT_PUBLISHED, read_published

D_RTOL = 2e-5        # d is a float32 sum of up to 2^20 terms, accumulated tile by tile


def _rows(seed: int, n_rows: int, n_cols: int, scale: float = 3.0) -> torch.Tensor:
    return torch.randn(n_rows, n_cols, generator=torch.Generator().manual_seed(seed)) * scale


def assert_pairs_match_torch(x: np.ndarray, m: np.ndarray, d: np.ndarray) -> None:
    """m equals torch's max exactly (a max rounds nothing); d equals sum(exp(x - max)) in float64."""
    xt = torch.as_tensor(x, dtype=torch.float64)
    m_ref = xt.max(dim=-1).values
    np.testing.assert_array_equal(m, m_ref.numpy().astype(np.float32))
    finite = torch.isfinite(m_ref)
    d_ref = torch.where(finite, torch.exp(xt - torch.where(finite, m_ref, 0.0)[:, None]).sum(-1), 0.0)
    np.testing.assert_allclose(d, d_ref.numpy(), rtol=D_RTOL, atol=0)


# -- the tiled kernel's trace ---------------------------------------------------------------------------------
@pytest.mark.parametrize("n_cols, tile", [(1, 16), (1000, 64), (4096, 1024), (5000, 1024), (70_000, 16384)])
def test_online_trace_final_pairs_equal_torch_for_random_rows(n_cols, tile):
    x = _rows(n_cols, 3, n_cols)
    tr = trace_online(x, tile=tile)
    assert tr.n_tiles == -(-n_cols // tile)
    assert_pairs_match_torch(tr.x, tr.m_final, tr.d_final)
    np.testing.assert_allclose(tr.y, torch.softmax(x.double(), -1).numpy(), rtol=1e-5, atol=1e-7)


def test_online_trace_rows_with_neg_inf_tiles_and_all_neg_inf_rows():
    x = _rows(7, 4, 5000)
    x[0, :2048] = float("-inf")                  # two whole tiles first: the guard's case
    x[1, 1024:3072] = float("-inf")              # -inf tiles in the middle
    x[2, 4096:] = float("-inf")                  # the last (short) tile all -inf
    x[3] = float("-inf")
    tr = trace_online(x, tile=1024)
    assert_pairs_match_torch(tr.x, tr.m_final, tr.d_final)
    assert tr.guarded[0].tolist() == [True, True, False, False, False]
    assert tr.guarded[3].all() and tr.d_final[3] == 0 and np.isneginf(tr.m_final[3])
    assert not np.isnan(tr.tiles[:3]).any()      # no NaN anywhere in a row with real values
    np.testing.assert_allclose(tr.y[:3], torch.softmax(x[:3].double(), -1).numpy(), rtol=1e-5, atol=1e-7)
    assert np.isnan(tr.y[3]).all()               # like torch.softmax: -inf - (-inf)
    assert np.isnan(torch.softmax(x[3], -1).numpy()).all()
    safe = trace_online(x[3:], tile=1024, safe=True)
    assert (safe.y == 0).all()


def test_online_trace_records_each_tiles_update():
    x = torch.as_tensor(np.linspace(-4, 4, 4096, dtype=np.float32))[None] + _rows(3, 1, 4096, 0.5)
    tr = trace_online(x, tile=256)
    f = {name: tr.field(name)[0].astype(np.float64) for name in ("m_before", "d_before", "tile_max", "m_after",
                                                                 "rescale", "tile_sum", "d_after")}
    np.testing.assert_array_equal(f["m_before"][1:], f["m_after"][:-1])      # each tile starts where the last ended
    np.testing.assert_array_equal(f["d_before"][1:], f["d_after"][:-1])
    np.testing.assert_array_equal(f["m_after"], np.maximum(f["m_before"], f["tile_max"]))
    np.testing.assert_allclose(f["rescale"][1:], np.exp(f["m_before"][1:] - f["m_after"][1:]), rtol=1e-6)
    np.testing.assert_allclose(f["d_after"], f["d_before"] * f["rescale"] + f["tile_sum"], rtol=1e-6)
    assert f["rescale"][0] == 0 and f["d_before"][0] == 0 and np.isneginf(f["m_before"][0])
    assert tr.grew[0].sum() > tr.n_tiles // 2     # a rising row: the max grows most of the time
    assert (tr.field("program") == 0).all()
    for t in range(tr.n_tiles):
        a, b = tr.tile_columns(t)
        assert f["tile_max"][t] == tr.x[0, a:b].max()


def test_online_trace_half_precision_input_is_upcast():
    x = _rows(5, 2, 3000).to(torch.bfloat16)
    tr = trace_online(x, tile=512)
    assert tr.dtype == "bfloat16"
    assert_pairs_match_torch(tr.x, tr.m_final, tr.d_final)


@pytest.mark.parametrize("bad, error, words", [
    (dict(x=torch.zeros(2, 2, 2)), ValueError, "shape"),
    (dict(x=torch.zeros(2, 8, dtype=torch.int32)), TypeError, "float32"),
    (dict(x=torch.zeros(2, 8), tile=100), ValueError, "power of two"),
    (dict(x=torch.zeros(1, 100_000), tile=64), ValueError, "choose a wider tile"),
    (dict(x=torch.zeros(65, 8)), ValueError, "rows"),
])
def test_online_trace_rejects_bad_input_with_a_clear_message(bad, error, words):
    with pytest.raises(error, match=words):
        trace_online(**bad)


def test_the_plans_tiled_compile_has_the_trace_switched_off():
    from softmax_core.hardware.signatures import kernel_signature
    from softmax_core.plans.tuned import TILED_KERNEL

    signature, values = kernel_signature(TILED_KERNEL["forward"], "*fp32", "i64", {"TILE": 1024, "SAFE": False,
                                                                                    "FP64": False})
    assert dict(signature)["trace_ptr"] == "constexpr" and dict(values) == {
        "TILE": 1024, "SAFE": False, "FP64": False, "trace_ptr": None, "TRACE": False}
    plan = sc.plan_softmax(4096, 65536, torch.float32, sc.catalog_gpu("h200"), path="tiled")
    assert plan.path == "tiled" and plan.resources.n_regs > 0     # the offline compile accepts the signature


# -- the split kernel's words ----------------------------------------------------------------------------------
def test_read_published_inverts_the_packing():
    high = torch.tensor([1.5, float("-inf"), -3.25])
    low = torch.tensor([2.0, 0.0, 1e-30])
    words = (high.view(torch.int32).to(torch.int64) << 32) | (low.view(torch.int32).to(torch.int64) & 0xFFFFFFFF)
    got_high, got_low = read_published(words)
    assert torch.equal(got_high, high) and torch.equal(got_low, low)
    assert lrt.word_hex(NOT_PUBLISHED) == "F" * 16
    assert torch.isnan(torch.stack(read_published(torch.tensor([NOT_PUBLISHED])))).all()


@pytest.mark.parametrize("n_cols, split", [(100, 2), (5000, 3), (16384, 4), (65536, 16)])
def test_split_trace_published_pairs_combine_to_torch(n_cols, split):
    x = _rows(n_cols, 3, n_cols)
    tr = trace_split(x, split=split)
    used, chunk = lrt.split_shape(n_cols, split)
    assert (tr.split, tr.chunk) == (used, chunk) and used * chunk >= n_cols > (used - 1) * chunk
    assert (tr.before == NOT_PUBLISHED).all() and (tr.words != NOT_PUBLISHED).all()
    for r in range(3):
        for p in range(tr.split):
            a, b = tr.chunk_columns(p)
            assert tr.maxes[r, p] == tr.x[r, a:b].max()
            np.testing.assert_allclose(tr.sums[r, p], np.exp(tr.x[r, a:b].astype(np.float64) - tr.maxes[r, p]).sum(),
                                       rtol=D_RTOL)
    merged = np.array([tr.merged(r) for r in range(3)])
    assert_pairs_match_torch(tr.x, merged[:, 0].astype(np.float32), merged[:, 1])
    np.testing.assert_allclose(tr.y, torch.softmax(x.double(), -1).numpy(), rtol=1e-5, atol=1e-7)


def test_split_trace_chunks_of_neg_inf_and_all_neg_inf_rows():
    x = _rows(11, 3, 8192) - 100                  # real values far below 0: a published max of 0 would lose them
    x[0, :4096] = float("-inf")                   # whole chunks of -inf
    x[1, 2048:6144] = float("-inf")
    x[2] = float("-inf")
    tr = trace_split(x, split=4)
    assert np.isneginf(tr.maxes[0, :2]).all() and (tr.sums[0, :2] == 0).all()
    merged = np.array([tr.merged(r) for r in range(3)])
    assert_pairs_match_torch(tr.x, merged[:, 0].astype(np.float32), merged[:, 1])
    np.testing.assert_allclose(tr.y[:2], torch.softmax(x[:2].double(), -1).numpy(), rtol=1e-5, atol=1e-7)
    assert np.isnan(tr.y[2]).all()


def test_merge_pairs_and_split_shape_edges():
    assert lrt.merge_pairs([float("-inf")] * 3, [0, 0, 0]) == (float("-inf"), 0.0)
    m, d = lrt.merge_pairs([1.0, 3.0, float("-inf")], [2.0, 1.0, 0.0])
    assert m == 3.0 and d == pytest.approx(2 * np.exp(-2.0) + 1.0)
    assert lrt.split_shape(5000, 4) == (3, 2048) and lrt.split_shape(16, 8) == (1, 16)
    with pytest.raises(ValueError, match="split"):
        lrt.split_shape(100, 0)
    with pytest.raises(TypeError, match="float32, float16, bfloat16 rows"):
        trace_split(torch.zeros(1, 64, dtype=torch.float64))


def test_a_bfloat16_split_trace_matches_torch():
    """2-byte rows take the split path too (from 256 KB): the same kernel, its chunks held in their own dtype."""
    x = (torch.randn(2, 3000) * 3).to(torch.bfloat16)
    tr = trace_split(x, split=3)
    expected = torch.softmax(x.double(), -1).numpy()
    np.testing.assert_allclose(np.asarray(tr.y, dtype=np.float64), expected, atol=8e-3, rtol=1e-2)


# -- FlashAttention and L2 ---------------------------------------------------------------------------------------
def test_attention_walk_ends_at_softmax_times_v():
    x = _rows(2, 1, 3000)
    tr = trace_online(x, tile=512)
    v = np.random.default_rng(0).uniform(-1, 1, 3000)
    walk = lrt.attention_walk(tr, 0, v)
    expected = float((torch.softmax(x[0].double(), -1) * torch.as_tensor(v)).sum())
    assert len(walk) == tr.n_tiles and walk[-1].output == pytest.approx(expected, rel=1e-5)
    assert all(s.o_after == pytest.approx(s.o_before * s.rescale + s.tile_o) for s in walk)
    with pytest.raises(ValueError, match="one number per column"):
        lrt.attention_walk(tr, 0, v[:10])


def test_tiled_traffic_counts_three_reads_nominal_and_rows_in_flight():
    gpu = sc.catalog_gpu("h200")
    t = lrt.tiled_traffic(4096, 65536, torch.float32, gpu)
    assert t.nominal_bytes == 3 * 4096 * 65536 * 4 and t.dram_bytes_if_cache_hits == sc.bytes_moved(4096, 65536, 4)
    assert t.rows_in_flight == t.programs_per_sm * gpu.multiprocessor_count
    assert t.fits_cache == (t.rows_in_flight * 65536 * 4 <= gpu.l2_mib * 2**20)
    assert lrt.tiled_traffic(4, 65536, torch.float32, gpu).rows_in_flight == 4


def test_on_amd_pass_two_is_served_by_the_infinity_cache_all_cus_share():
    # MI300X: 4 MiB of L2 per XCD (its CUs only) but 256 MiB of Infinity Cache in front of HBM for all 304 CUs
    from softmax_core.hardware.gpu import last_cache
    gpu = sc.catalog_gpu("mi300x")
    cache = last_cache(gpu)
    assert cache.kind == "infinity_cache" and cache.bytes == gpu.infinity_cache_mib * 2**20 > 50 * gpu.l2_mib * 2**20
    t = lrt.tiled_traffic(4096, 16384, torch.float32, gpu)
    assert t.cache_bytes == cache.bytes
    assert t.fits_cache == (t.bytes_in_flight <= cache.bytes) and t.bytes_in_flight > gpu.l2_mib * 2**20
    assert last_cache(sc.catalog_gpu("h200")).kind == "l2"
