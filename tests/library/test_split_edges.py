"""The split kernels' EDGES variant (kernels/shared_rows.py): a row shared by SPLIT programs, read as an aligned
body between masked edges. Chunks are forced small (CHUNK 64) so that the interpreter shares rows of a few
hundred values among 3-4 programs; rows start at every residue mod VEC; float64 references, -inf and NaN rows,
the max in a head or a tail, the tiled path taking tensors whose rows are spaced unlike the input's, and the
fallback (a peer's word read from memory) against the published words."""
import dataclasses

import pytest
import torch
import triton
import triton.language as tl

import softmax_core as sc
from softmax_core.hardware.gpu import catalog_gpu
from softmax_core.kernels.any_width import row_pieces
from softmax_core.kernels.row_slots import NOT_PUBLISHED, peer_words, read_published
from softmax_core.kernels.shared_rows import (edge_dot, edge_pair, softmax_backward_split_kernel,
                                              softmax_split_kernel)
from softmax_core.launch.api import softmax_backward, softmax_forward
from softmax_core.launch.launches import backward_launch, cached_plan, forward_launch
from softmax_core.plans import tuned
from softmax_core.plans.reasons import ReasonCode
from softmax_core.plans.choose import plan_softmax
from tests.support.reference import TOLERANCE, reference_softmax

H200 = catalog_gpu("h200")
CHUNK, GROUPS = 64, 2
DTYPES = (torch.float32, torch.bfloat16, torch.float16)
GRAD_TOLERANCE = {torch.float32: dict(atol=1e-6, rtol=1e-5), torch.bfloat16: dict(atol=2e-2, rtol=2e-2),
                  torch.float16: dict(atol=5e-3, rtol=5e-3)}


def vec_of(dtype):
    return 16 // dtype.itemsize


def small_split_plan(n_rows, n_cols, dtype, direction):
    """A split plan with EDGES and CHUNK-wide chunks (a row of n_cols shared by cdiv(n_cols, CHUNK) programs),
    GROUPS rows in flight: the plan's own launch path, shaped for the interpreter."""
    base = plan_softmax(n_rows, n_cols, dtype, H200, direction)
    split = triton.cdiv(n_cols, CHUNK)
    return dataclasses.replace(base, path="split", split=split, block_n=CHUNK, num_programs=GROUPS * split,
                               edges=True, tiny=False, short_rows=False, row_words=1, rows_per_program=1)


def rows_at_every_residue(n_rows, n_cols, dtype):
    """A contiguous n_rows x n_cols matrix of an odd width, so its rows start at every residue mod VEC."""
    assert n_cols % 2 == 1
    return (torch.randn(n_rows, n_cols) * 3).to(dtype)


def padded_rows(n_rows, n_cols, dtype, offset, device):
    """A view of n_rows x n_cols on `device` whose rows are further apart than n_cols (a row stride of 1 mod 16),
    sliced there: moving a view to a GPU would copy it into packed rows."""
    stride = ((n_cols + offset) // 16 + 1) * 16 + 1
    return (torch.randn(n_rows, stride) * 3).to(dtype).to(device)[:, offset:offset + n_cols]


def test_which_unaligned_rows_take_the_split_edges_path():
    for direction in ("forward", "backward"):
        forced = plan_softmax(8192, 50257, torch.bfloat16, H200, direction, path="split")
        assert forced.path == "split" and forced.edges and forced.resources.n_spills == 0
        assert all(dict(c)["EDGES"] and dict(c)["VEC"] == 8 for c in forced.launches)
        assert not plan_softmax(4096, 131072, torch.bfloat16, H200, direction, path="split").edges   # aligned rows
        plain = sc.plan_softmax(4096, 131072, torch.bfloat16, H200, direction, path="split")
        assert "EDGES" not in dict(plain.launches[0])
        # the planner's own choice for GPT-2's rows (8192 of them): the split path with edges backward (measured
        # faster than edge tiles there), edge tiles forward
        auto = plan_softmax(8192, 50257, torch.bfloat16, H200, direction)
        if direction == "backward":
            assert auto.path == "split" and auto.edges and auto.reason.why is ReasonCode.UNALIGNED_LONG_ROW
        else:
            assert auto.path == "tiled" and auto.edges
    few = tuned.EDGE_SPLIT_FORWARD_FEW_ROWS
    # forward, the split path from 128 KB rows: 65537 bf16 values (128 KB + 2 B) and float32 50257 take it
    for n_rows, n_cols, dtype in ((8192, 65537, torch.bfloat16), (8192, 50257, torch.float32),
                                  (few, 16385, torch.bfloat16), (few, 50257, torch.float16)):
        auto = plan_softmax(n_rows, n_cols, dtype, H200)
        assert auto.path == "split" and auto.edges and auto.reason.why is ReasonCode.UNALIGNED_LONG_ROW
    # ... and 2-byte rows of a tensor of at most EDGE_SPLIT_FORWARD_FEW_ROWS rows from 32 KB (16385 values: 32 KB + 2 B)
    assert plan_softmax(few, 16383, torch.bfloat16, H200).path == "tiled"                   # 2 B short of 32 KB
    assert plan_softmax(few + 1, 16385, torch.bfloat16, H200).path == "tiled"               # more rows: 128 KB
    assert plan_softmax(few, 32767, torch.float32, H200).path == "tiled"                    # float32: 4 B short of 128 KB
    assert plan_softmax(8192, 65535, torch.bfloat16, H200).path == "tiled"                  # 2 B short of 128 KB
    assert plan_softmax(few, 65536, torch.bfloat16, H200).path == "tiled"                  # aligned: as before
    assert plan_softmax(8192, 50264, torch.bfloat16, H200, "backward").path == "split"      # a multiple of 8, not 16
    assert plan_softmax(8192, 50256, torch.bfloat16, H200, "backward").path != "split"      # aligned: tiles
    assert plan_softmax(8192, 50257, torch.bfloat16, H200, "backward", aligned=False).path != "split"
    from softmax_core.plans.tuned import plan_split
    assert plan_split(4096, 131072, torch.bfloat16, H200, "forward", aligned=False).edges
    assert not plan_split(4096, 131072, torch.bfloat16, H200, "forward").edges
    # rows spaced unlike the input's (a padded x, a dy broadcast down the rows): never the edges
    assert not plan_split(4096, 50257, torch.bfloat16, H200, "forward", packed=False).edges
    with pytest.raises(ValueError, match="n_cols"):
        plan_split(4096, 50257, torch.bfloat16, H200, "forward", edges=True, packed=False)
    for direction in ("forward", "backward"):
        unpacked = plan_softmax(8192, 50257, torch.bfloat16, H200, direction, packed=False)
        assert not unpacked.needs_packed_rows and unpacked.edges == (unpacked.path != "split")


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("n_cols", [205, 251, 3 * CHUNK + 1])
def test_forward_and_backward_match_float64(n_cols, dtype, device):
    n_rows = 9                                   # more rows than groups, every residue mod VEC
    x = rows_at_every_residue(n_rows, n_cols, dtype).to(device)
    plan = small_split_plan(n_rows, n_cols, dtype, "forward")
    assert plan.split >= 3
    x[1, 0] = 40.0                               # the max in a head (row 1 starts mid-vector)
    x[2, -1] = 40.0                              # the max in a tail
    x[3, :-1] = float("-inf")                    # one value, in the tail
    y = softmax_forward(x, plan)
    torch.testing.assert_close(y, reference_softmax(x), **TOLERANCE[dtype])
    assert forward_launch(plan, False, n_cols, dtype, dtype).plan is plan
    yr = reference_softmax(x)
    dy = rows_at_every_residue(n_rows, n_cols, dtype).to(device)
    back = small_split_plan(n_rows, n_cols, dtype, "backward")
    assert backward_launch(back, n_cols, n_cols, (dtype,) * 3).plan is back
    dx = softmax_backward(yr, dy, back)
    expected = torch._softmax_backward_data(dy.double(), yr.double(), -1, torch.float64)
    torch.testing.assert_close(dx.double(), expected, **GRAD_TOLERANCE[dtype])


@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16])
def test_rows_spaced_unlike_the_input_are_planned_so(dtype, device):
    """The split kernels' edges need every tensor's rows as far apart as the input's: a padded x (y is
    contiguous) or a dy spaced unlike y is planned with packed=False, on a plan that places each tensor's rows
    by its own stride, and is right; a plan that needs packed rows refuses such tensors rather than re-plan."""
    n_rows, n_cols = 9, 205
    x = padded_rows(n_rows, n_cols, dtype, offset=3, device=device)
    assert x.stride(0) != n_cols
    plan = small_split_plan(n_rows, n_cols, dtype, "forward")
    with pytest.raises(ValueError, match="packed=False"):
        forward_launch(plan, False, x.stride(0), dtype, dtype)
    torch.testing.assert_close(sc.softmax(x), reference_softmax(x), **TOLERANCE[dtype])
    yr = reference_softmax(x)
    dy = padded_rows(n_rows, n_cols, dtype, offset=5, device=device)
    back = small_split_plan(n_rows, n_cols, dtype, "backward")
    with pytest.raises(ValueError, match="packed=False"):
        backward_launch(back, n_cols, dy.stride(0), (dtype,) * 3)
    unpacked = cached_plan(n_rows, n_cols, dtype, "backward", False, 0, True, False)
    assert not unpacked.needs_packed_rows
    expected = torch._softmax_backward_data(dy.double(), yr.double(), -1, torch.float64)
    torch.testing.assert_close(softmax_backward(yr, dy, unpacked).double(), expected, **GRAD_TOLERANCE[dtype])


@pytest.mark.parametrize("safe", [False, True])
def test_neg_inf_and_nan_rows(safe, device):
    n_rows, n_cols = 4, 205
    x = rows_at_every_residue(n_rows, n_cols, torch.float32).to(device)
    x[1] = float("-inf")
    x[2, 2] = float("nan")           # in row 2's head or body
    x[3, -1] = float("nan")          # in a tail
    y = softmax_forward(x, small_split_plan(n_rows, n_cols, torch.float32, "forward"), safe)
    assert (y[1] == 0).all() if safe else y[1].isnan().all()
    assert y[2].isnan().all() and y[3].isnan().all()
    torch.testing.assert_close(y[0], reference_softmax(x[:1])[0], **TOLERANCE[torch.float32])


def launch_forward(x, y, split, phases, spin=2, safe=False):
    n_rows, n_cols = x.shape
    slots = torch.full((n_rows * split,), NOT_PUBLISHED, dtype=torch.int64)
    for phase in phases:
        softmax_split_kernel[(GROUPS * split,)](x, y, x.stride(0), y.stride(0), n_rows, n_cols, slots, SPLIT=split,
                                                PEERS=triton.next_power_of_2(split), CHUNK=CHUNK, SAFE=safe,
                                                PHASE=phase, SPIN=spin, EDGES=True, VEC=vec_of(x.dtype))
    return slots


def launch_backward(y, dy, dx, split, phases, spin=2):
    n_rows, n_cols = y.shape
    slots = torch.full((n_rows * split,), NOT_PUBLISHED, dtype=torch.int64)
    for phase in phases:
        softmax_backward_split_kernel[(GROUPS * split,)](y, dy, dx, y.stride(0), dy.stride(0), dx.stride(0), n_rows,
                                                         n_cols, slots, SPLIT=split,
                                                         PEERS=triton.next_power_of_2(split), CHUNK=CHUNK, PHASE=phase,
                                                         SPIN=spin, EDGES=True, VEC=vec_of(y.dtype))
    return slots


@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16])
def test_the_waiting_form_reads_missing_peers_and_agrees(dtype):
    """PHASE 0 under the interpreter: programs run one after another, so each stops waiting after SPIN polls and
    reads its later peers' chunks itself. The answer matches the two-launch form's."""
    if not sc.runtime.INTERPRETED:
        pytest.skip("the interpreter runs programs one at a time; a GPU would not wait here")
    n_rows, n_cols = 5, 3 * CHUNK + 11
    split = triton.cdiv(n_cols, CHUNK)
    x = rows_at_every_residue(n_rows, n_cols, dtype)
    x[0, 0] = 30.0
    x[4, -1] = 30.0
    two = torch.empty(n_rows, n_cols, dtype=dtype)
    launch_forward(x, two, split, (1, 2))
    waited = torch.empty(n_rows, n_cols, dtype=dtype)
    launch_forward(x, waited, split, (0,))
    torch.testing.assert_close(waited, two, **TOLERANCE[dtype])
    torch.testing.assert_close(two, reference_softmax(x), **TOLERANCE[dtype])
    yr = reference_softmax(x)
    dy = rows_at_every_residue(n_rows, n_cols, dtype)
    dx_two = torch.empty(n_rows, n_cols, dtype=dtype)
    launch_backward(yr, dy, dx_two, split, (1, 2))
    dx_waited = torch.empty(n_rows, n_cols, dtype=dtype)
    launch_backward(yr, dy, dx_waited, split, (0,))
    torch.testing.assert_close(dx_waited, dx_two, **GRAD_TOLERANCE[dtype])


@triton.jit
def _fallback_words_kernel(a_ptr, b_ptr, a_row_stride, n_cols, slots_ptr, out_ptr,
                           SPLIT: tl.constexpr, PEERS: tl.constexpr, CHUNK: tl.constexpr, VEC: tl.constexpr,
                           BACKWARD: tl.constexpr, EDGES: tl.constexpr):
    """Every word of row program_id(0) as peer_words computes it from memory (no slot published, PHASE 0,
    one poll): with EDGES the partition the split kernels use, without it a plain one from the row's start.
    b's rows are as far apart as a's."""
    row = tl.program_id(0)
    peers = tl.arange(0, PEERS)
    edge = tl.arange(0, VEC)
    s, b, head, body, tail = row_pieces(row, a_row_stride, n_cols, VEC)
    if BACKWARD:
        _, _, _, _, edge_word = edge_dot(a_ptr, b_ptr, s, b, head, body, tail, edge)
    else:
        _, _, edge_word = edge_pair(a_ptr, s, b, head, body, tail, edge)
    if EDGES:
        words = peer_words(slots_ptr + row * SPLIT, peers, a_ptr + b, b_ptr + b, CHUNK, body, SPLIT, 0, 1,
                            BACKWARD, True, edge_word)
    else:
        words = peer_words(slots_ptr + row * SPLIT, peers, a_ptr + s, b_ptr + s, CHUNK, n_cols, SPLIT, 0, 1,
                            BACKWARD, False, edge_word)
    tl.store(out_ptr + row * PEERS + peers, words)


def fallback_words(a, b, split, backward, edges):
    n_rows, n_cols = a.shape
    peers = triton.next_power_of_2(split)
    slots = torch.full((n_rows * split,), NOT_PUBLISHED, dtype=torch.int64)
    out = torch.empty(n_rows * peers, dtype=torch.int64)
    assert a.stride(0) == b.stride(0)
    _fallback_words_kernel[(n_rows,)](a, b, a.stride(0), n_cols, slots, out, SPLIT=split, PEERS=peers,
                                      CHUNK=CHUNK, VEC=vec_of(a.dtype), BACKWARD=backward, EDGES=edges)
    return out.view(n_rows, peers)[:, :split].reshape(-1)


def assert_words_close(found, published, backward):
    high, low = read_published(found)
    want_high, want_low = read_published(published)
    if not backward:
        assert torch.equal(high, want_high), "the fallback's chunk maxima differ from the published ones"
    torch.testing.assert_close(low, want_low, atol=1e-6, rtol=1e-5)


@pytest.mark.parametrize("backward", [False, True])
@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16])
def test_the_fallback_computes_the_words_the_peers_publish(backward, dtype):
    """Every word peer_words computes from memory (part 0's with the edges) equals the word that part
    publishes; the same comparison tells a plain partition from the edges' one (so it can fail)."""
    if not sc.runtime.INTERPRETED:
        pytest.skip("compares published slots after a publishing launch (PHASE 1)")
    n_rows, n_cols = 8, 3 * CHUNK + 13
    split = triton.cdiv(n_cols, CHUNK)
    x = rows_at_every_residue(n_rows, n_cols, dtype)
    x[1, 0] = 30.0                        # a head's value decides part 0's max
    if backward:
        y = reference_softmax(x)
        dy = rows_at_every_residue(n_rows, n_cols, dtype)
        published = launch_backward(y, dy, torch.empty(n_rows, n_cols, dtype=dtype), split, (1,))
        a, b = y, dy
    else:
        published = launch_forward(x, torch.empty(n_rows, n_cols, dtype=dtype), split, (1,))
        a, b = x, x
    assert_words_close(fallback_words(a, b, split, backward, edges=True), published, backward)
    with pytest.raises(AssertionError):
        assert_words_close(fallback_words(a, b, split, backward, edges=False), published, backward)


def test_the_edges_variant_loads_16_byte_vectors_on_sm_90():
    """Offline compile for the H200 of the forced split plan at GPT-2's width (bf16 50257: odd width, odd row
    stride): its chunk loads and stores are 16-byte vectors (ld.global...v4.b32), with no spills; the plain
    variant at the same width loads value by value."""
    from softmax_core.hardware.compile import kernel_resources
    from softmax_core.plans.tuned import compile_job
    for direction in ("forward", "backward"):
        plan = plan_softmax(8192, 50257, torch.bfloat16, H200, direction, path="split")
        found = {}
        for edges in (True, False):
            variant = dataclasses.replace(plan, edges=edges)
            job = compile_job(variant.kernel, torch.bfloat16, dict(variant.constexprs), plan.num_warps, H200, 50257,
                              True)
            res = kernel_resources(job, want_asm=True)
            ptx = res.asm["ptx"]
            found[edges] = (sum(".v4.b32" in line and "ld.global" in line for line in ptx.splitlines()), res)
        vectors, res = found[True]
        # y's (forward) or y's and dy's (backward) chunk, once before the row loop and once in it, in 16-byte
        # pieces: CHUNK values over num_warps * 32 threads
        per_load = plan.block_n * 2 // (plan.num_warps * 32 * 16)
        assert vectors >= 2 * per_load * (1 if direction == "forward" else 2)
        assert res.n_spills == 0 and res.n_regs <= plan.resources.n_regs      # the plan's: the larger of i32 / i64
        assert found[False][0] == 0
