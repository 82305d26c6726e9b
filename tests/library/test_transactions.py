"""The transactions page's facts: the addresses a program's loads touch are the kernel's real ones (recorded in
the interpreter, checked against the offsets the tensor's strides give, for every view, dtype and direction),
lanes come from the compiled layout, and requests are counted as Nsight Compute counts them: 16 sectors, every
byte used, for contiguous fp32 rows read in 16-byte vectors; one useful 4-byte value per 32-byte sector for a
column walk down a transposed fp32 view."""
from __future__ import annotations

import math

import numpy as np
import pytest
import torch

import softmax_core as sc
from softmax_core.hardware import runtime
from softmax_teaching import load_record, recorded_loads
from softmax_teaching import transactions as tx
from softmax_teaching.compiled_loads import amd_width, ptx_width, read_loads
from softmax_teaching.layout_case import DIRECTIONS, VIEWS, Case, ViewStrides, case_strides, view_strides
from softmax_teaching.layout_trace import kernel_trace, kernel_traces
from softmax_teaching.load_record import record
from softmax_teaching.ncu_record import read_record

H200, T4, MI300X = (sc.catalog_gpu(key) for key in ("h200", "t4", "mi300x"))
DTYPES = ("float32", "bfloat16", "float16", "float64")
# one of each class: rows (the softmax dim contiguous), a strided dim with an inner run, a dim with inner run 1
SHAPES = (((8, 40), 1), ((3, 12, 5), 1), ((40, 6), 0))


# ---------------------------------------------------------------------------------------- pure counting

@pytest.mark.parametrize("layout, shape, vector", [
    (tx.BlockedLayout((4,), (32,), (4,), (0,)), (1024,), 4),
    (tx.BlockedLayout((1, 4), (8, 4), (8, 1), (1, 0)), (64, 16), 4),
    (tx.BlockedLayout((1, 8), (8, 4), (4, 1), (1, 0)), (256, 32), 2),
    (tx.BlockedLayout((2, 1), (4, 8), (1, 2), (0, 1)), (16, 32), 1),
])
def test_every_element_of_a_tile_the_layout_covers_has_one_lane(layout, shape, vector):
    elements = tx.lane_elements(layout, shape, vector)
    counts = np.bincount(elements.reshape(-1), minlength=int(np.prod(shape)))
    assert (counts == 1).all()
    # one instruction moves `vector` neighbours along order[0]: consecutive flat indices when that is the last dim
    if layout.order[0] == len(shape) - 1:
        assert (np.diff(elements, axis=-1) == 1).all()


def test_a_tile_smaller_than_the_layout_wraps_round():
    elements = tx.lane_elements(tx.BlockedLayout((4,), (32,), (4,), (0,)), (64,), 4)
    assert set(elements.reshape(-1)) == set(range(64))
    assert elements.size == 512                            # 4 warps x 32 lanes x 4: each element held 8 times


def test_contiguous_fp32_in_16_byte_vectors_is_the_ideal_request():
    layout = tx.BlockedLayout((4,), (32,), (1,), (0,))
    req = tx.group_requests(np.arange(128), np.ones(128, bool), 4, layout, 4)
    assert req.n_requests == 1
    assert req.sectors[0] == tx.ideal_sectors(32, 16) == 16 and req.lines[0] == 4
    assert req.used_fraction == 1.0


def test_a_column_walk_uses_one_value_per_sector():
    layout = tx.BlockedLayout((1,), (32,), (1,), (0,))
    req = tx.group_requests(np.arange(32) * 1000, np.ones(32, bool), 4, layout, 1)
    assert req.sectors[0] == 32 and req.lines[0] == 32
    assert req.used_fraction == 4 / 32


def test_masked_lanes_fetch_nothing_and_an_all_masked_request_is_not_issued():
    layout = tx.BlockedLayout((1,), (32,), (2,), (0,))
    mask = np.arange(64) < 20                              # the second warp's lanes are all off
    req = tx.group_requests(np.arange(64), mask, 4, layout, 1)
    assert req.n_requests == 1 and req.lane_count[0] == 20
    assert req.sectors[0] == 3 and req.useful_bytes[0] == 80
    none = tx.group_requests(np.arange(64), np.zeros(64, bool), 4, layout, 1)   # a program past the tensor's end
    assert none.n_requests == 0 and none.fetched_bytes == 0 and none.sectors_per_request is None


def test_cost_over_fetch_and_floor():
    c = tx.cost(1_000_000, 4, 1, 1, 0.125, 4800.0)
    assert c.over_fetch == 8.0
    assert c.floor_us == pytest.approx((32e6 + 4e6) / 4.8e12 * 1e6)
    assert tx.cost(1000, 4, 1, 1, 1.0, None).floor_us is None


def test_instruction_widths():
    assert ptx_width("@%p2 ld.global.L1::evict_first.L2::cache_hint.v4.b32 { %r1, %r2, %r3, %r4 }, [ %rd8 + 0 ];") \
        == (16, "ld.global.L1::evict_first.L2::cache_hint.v4.b32")
    assert ptx_width("ld.global.b16 { %rs1 }, [ %rd1 + 0 ];")[0] == 2
    assert ptx_width("st.global.v4.b32 [ %rd1 + 0 ], { %r1 };") is None
    assert amd_width("buffer_load_dwordx4 v[6:9], v1, s[16:19], 0 offen")[0] == 16
    assert amd_width("global_load_ushort v3, v[1:2], off")[0] == 2


TTGIR = '''#blocked = #ttg.blocked<{sizePerThread = [1, 4], threadsPerWarp = [1, 32], warpsPerCTA = [1, 2], order = [1, 0]}>
    %a = tt.load %p, %m, %c : tensor<1x1024x!tt.ptr<f32>, #blocked> loc(#loc9)
    %b = tt.load %q, %m, %c : tensor<1x1024x!tt.ptr<f32>, #blocked> loc(#loc10)
#loc1 = loc("/x/kern.py":69:20)
#loc2 = loc("/x/kern.py":104:13)
#loc3 = loc("/x/kern.py":107:13)
#loc9 = loc(callsite(#loc1 at #loc2))
#loc10 = loc(callsite(#loc1 at #loc3))
'''
PTX = '''\t.loc\t1 69 20, function_name $L__info_string0, inlined_at 1 104 13
\t@%p1 ld.global.v4.b32 { %r1, %r2, %r3, %r4 }, [ %rd1 + 0 ];
\t.loc\t1 69 20, function_name $L__info_string0, inlined_at 1 107 13
\t@%p2 ld.global.b32 { %r5 }, [ %rd2 + 0 ];
\t.file\t1 "/x/kern.py"
'''


def test_a_helper_called_twice_keeps_each_calls_layout_and_width():
    loads = read_loads(TTGIR, PTX, "ptx", "kern.py")
    assert [(l.line, l.caller, l.width_bytes) for l in loads] == [(69, (104,), 16), (69, (107,), 4)]
    assert tx.parse_blocked(loads[0].layout) == tx.BlockedLayout((1, 4), (1, 32), (1, 2), (1, 0))


# ------------------------------------------------------------------------- the real kernel's addresses

def _strides_of(launch, name) -> ViewStrides:
    arg = launch.tensor(name)
    return ViewStrides(arg.strides, arg.storage_offset, 0)


def _check_addresses(case: Case, kernel: str = "planned"):
    launch = record(case, kernel, program=None, max_loads=None)
    assert launch.loads and launch.complete
    read = {}
    for load in launch.loads:
        expected = set(_strides_of(launch, load.tensor).offsets(launch.tensor(load.tensor).shape).reshape(-1).tolist())
        got = load.value_offsets[load.value_mask].tolist()
        assert set(got) <= expected, (case, load.tensor, load.line)
        read.setdefault(load.tensor, set()).update(got)
    for name, seen in read.items():
        arg = launch.tensor(name)
        assert seen == set(_strides_of(launch, name).offsets(arg.shape).reshape(-1).tolist()), (case, name)
    if case.direction == "forward" and kernel == "planned":
        x = launch.tensor(next(iter(read)))
        assert (x.strides, x.storage_offset) == (case_strides(case).strides, case_strides(case).storage_offset)


@pytest.mark.parametrize("view", VIEWS)
@pytest.mark.parametrize("direction", DIRECTIONS)
@pytest.mark.parametrize("shape, dim", SHAPES)
def test_recorded_addresses_are_the_strides_offsets_float32(view, direction, shape, dim):
    _check_addresses(Case(shape, "float32", dim, view, direction))


@pytest.mark.slow
@pytest.mark.parametrize("dtype", DTYPES[1:])
@pytest.mark.parametrize("view", VIEWS)
@pytest.mark.parametrize("direction", DIRECTIONS)
@pytest.mark.parametrize("shape, dim", SHAPES)
def test_recorded_addresses_are_the_strides_offsets_every_dtype(dtype, view, direction, shape, dim):
    _check_addresses(Case(shape, dtype, dim, view, direction))


@pytest.mark.parametrize("view", VIEWS)
def test_the_row_walk_reads_every_element_where_the_strides_say(view):
    _check_addresses(Case((40, 6), "float32", 0, view), "row_walk")


def test_views_lie_where_their_names_say():
    assert view_strides((4, 6), "transposed").strides == (1, 4)
    padded = view_strides((4, 1000), "padded", 4)
    assert padded.strides == (1056, 1) and padded.storage_elements == 3 * 1056 + 1000
    assert view_strides((4, 1000), "offset").storage_offset == 1
    with pytest.raises(ValueError):
        view_strides((5,), "transposed")


def test_a_big_tensor_is_sampled_not_walked():
    launch = record(Case((8192, 50257), "float32", 1, "contiguous"))
    assert not launch.complete and len(launch.loads) <= 8


# ------------------------------------------------------------------- requests of the compiled kernel

def test_contiguous_fp32_rows_are_read_in_ideal_requests():
    kt = kernel_trace(Case((8, 1024), "float32", 1, "contiguous"), "planned", H200)
    load = kt.loads[0]
    assert load.compiled.width_bytes == 16 and load.vector == 4
    assert (load.requests.sectors == 16).all() and load.requests.used_fraction == 1.0
    assert kt.totals.sectors_per_request == tx.ideal_sectors(32, 16)


def test_a_transposed_fp32_column_walk_uses_4_bytes_of_each_sector():
    kt = kernel_trace(Case((64, 48), "float32", 1, "transposed"), "row_walk", H200)
    for load in kt.loads:
        assert (load.requests.sectors == load.requests.lane_count).all()
        assert load.requests.used_fraction == 4 / 32
    planned = kernel_trace(Case((64, 48), "float32", 1, "transposed"), "planned", H200)
    assert planned.totals.used_fraction == 1.0               # the planner's tiles read the same view whole


# ------------------------------------------------------------ the lesson's GPU, and a server with a GPU

# Each GPU's lanes per warp and the load the compiler writes for 16-byte aligned fp32 rows: a 4-wide vector.
LESSON_GPUS = [(T4, 32, 16, "ld.global"), (MI300X, 64, 16, "_load_dwordx4")]


@pytest.mark.parametrize("gpu, lanes, width, opcode", LESSON_GPUS, ids=lambda v: getattr(v, "key", None))
def test_the_lesson_gpus_lanes_and_load_width(gpu, lanes, width, opcode):
    kt = kernel_trace(Case((8, 1024), "float32", 1, "contiguous"), "planned", gpu)
    load = kt.loads[0]
    assert kt.compiled.target == gpu.compile_target
    assert load.layout.warp_size == lanes and load.requests.addresses.shape[1] == lanes
    assert load.compiled.width_bytes == width and opcode in load.compiled.instruction
    assert kt.totals.sectors_per_request == tx.ideal_sectors(lanes, width) and kt.totals.used_fraction == 1.0


@pytest.mark.slow
def test_the_recorded_launch_is_the_lesson_gpus_plan():
    """Long fp32 rows: the H200 and the T4 split each row over programs on grids of their own sizes, the MI300X
    tiles it (the planner's choices for them, softmax_core.plans): the recorded launch is each GPU's."""
    case = Case((4096, 50257), "float32", 1, "contiguous")
    kernels = set()
    for gpu in (H200, T4, MI300X):
        plan = sc.plan_softmax(4096, 50257, torch.float32, gpu)
        launch = kernel_trace(case, "planned", gpu).launch
        assert launch.grid[0] == math.prod(plan.grid) and launch.num_warps == plan.num_warps, gpu.key
        kernels.add(launch.kernel)
    assert len(kernels) == 2


def test_records_come_back_from_the_disk_cache(tmp_path, monkeypatch):
    monkeypatch.setenv("SOFTMAX_EXPLORER_CACHE", str(tmp_path))
    case = Case((6, 40), "float32", 1, "offset")
    first = recorded_loads.recorded([(case, "planned")], H200)[0]
    saved = recorded_loads.record_path(case, "planned", H200)
    assert saved.exists()
    again = recorded_loads.load_saved(saved)
    assert again.arguments == first.arguments and again.grid == first.grid and again.complete == first.complete
    for a, b in zip(first.loads, again.loads):
        assert (a.line, a.tensor, a.caller) == (b.line, b.tensor, b.caller)
        assert np.array_equal(a.offsets, b.offsets) and np.array_equal(a.mask, b.mask)
    saved.write_bytes(b"torn")
    assert recorded_loads.load_saved(saved) is None


def test_a_server_running_kernels_on_its_gpu_records_in_an_interpreting_child(tmp_path, monkeypatch):
    """A server whose kernels are compiled for its GPU cannot interpret: its records come from a child process
    that does (here: this interpreting process pretends to be such a server once the compile is on disk)."""
    monkeypatch.setenv("SOFTMAX_EXPLORER_CACHE", str(tmp_path))
    cases = [(Case((64, 48), "float32", 1, "transposed"), kernel) for kernel in ("planned", "row_walk")]
    here = kernel_traces(cases, H200)
    for case, kernel in cases:
        recorded_loads.record_path(case, kernel, H200).unlink()
    made = []
    monkeypatch.setattr(runtime, "INTERPRETED", False)
    monkeypatch.setattr(load_record, "record", lambda *a, **k: made.append(a))     # never in this process
    there = kernel_traces(cases, H200)
    assert made == []
    for a, b in zip(here, there):
        assert a.launch.kernel == b.launch.kernel and a.totals == b.totals
        assert all(np.array_equal(x.recorded.offsets, y.recorded.offsets) for x, y in zip(a.loads, b.loads))


# -------------------------------------------------------------------------------- against the counters

def test_the_ncu_record_reads_back():
    rec = read_record()
    assert rec is not None and rec.machine["gpu"].startswith("NVIDIA H200")
    by = {l.name: l for l in rec.launches}
    assert by["rows_fp32"].sectors_per_request == 16.0 and all(l.correct for l in rec.launches)
    assert by["transposed_fp32_row_walk"].sectors_per_request == 32.0


@pytest.mark.slow
def test_the_pages_figure_is_ncus_where_programs_are_alike():
    """For the same launch (programs and threads per program as ncu counted them), program 0's sectors per
    request is ncu's where every program's tile lies alike in its sectors: every layout but the 49-value rows."""
    rec = read_record()
    compared = 0
    for launch in rec.launches:
        case = Case(launch.shape, launch.dtype, launch.dim, launch.view)
        kt = kernel_trace(case, launch.kernel, H200)
        if (math.prod(kt.launch.grid), kt.launch.num_warps * H200.warp_size) != launch.launch_shape:
            continue                                  # the planner's launch is no longer the one counted
        page = kt.totals.sectors_per_request
        if launch.name == "nchw_dim1_fp32":           # programs' tiles start at different places in their sectors
            assert page != pytest.approx(launch.sectors_per_request, abs=0.01)
        else:
            assert page == pytest.approx(launch.sectors_per_request, abs=0.01), launch.name
        compared += 1
    assert compared >= 4


def test_a_live_gpu_is_recorded_as_planned_for_it(tmp_path, monkeypatch):
    """A server's own GPU (live, read from its driver) is not in the catalog: the child plans for its figures."""
    import dataclasses

    monkeypatch.setenv("SOFTMAX_EXPLORER_CACHE", str(tmp_path))
    live = dataclasses.replace(T4, key="live-0", name="Pretend T4", live=True)
    launch = recorded_loads.recorded([(Case((4096, 50257), "float32", 1, "contiguous"), "planned")], live)[0]
    plan = sc.plan_softmax(4096, 50257, torch.float32, T4)
    assert launch.grid[0] == math.prod(plan.grid) != math.prod(sc.plan_softmax(4096, 50257, torch.float32, H200).grid)


# ------------------------------------------------------------------------- words of 2-byte values

def test_a_word_load_is_recorded_as_words_and_covers_each_words_values():
    """A float16 reduction over dim 1 with an inner run of 8 reads its values 4 to a 64-bit word (kernels/words.py):
    the recorder keeps the word (8 bytes an item, offsets in words) and the values it covers, so the sectors the
    layout lab counts are those the words touch, and every value of the tensor is still read once."""
    case = Case((3, 12, 8), "float16", 1, "contiguous")
    launch = record(case, program=None, max_loads=None)
    words = [load for load in launch.loads if load.values_per_item > 1]
    assert words, "the plan reads this tensor in words"
    for load in words:
        assert load.element_bytes == 2 * load.values_per_item
        assert load.value_offsets.shape == load.tile_shape + (load.values_per_item,)
    _check_addresses(case)
    same_values_float32 = record(Case((3, 12, 8), "float32", 1, "contiguous"), program=None, max_loads=None)
    assert all(load.values_per_item == 1 and load.element_bytes == 4 for load in same_values_float32.loads)


def test_contiguous_words_use_every_byte_of_their_sectors():
    kt = kernel_trace(Case((64, 40, 8), "float16", 1, "contiguous"), "planned", H200)
    word_loads = [l for l in kt.loads if l.recorded.values_per_item > 1 and l.requests is not None]
    assert word_loads
    for load in word_loads:
        assert load.requests.used_fraction == 1.0
