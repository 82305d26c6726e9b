"""The trace is what the real kernel recorded: check it against torch and against the kernel's own rules."""
import numpy as np
import pytest
import torch

import softmax_core as sc
from softmax_core.kernels.tutorial import TRACE_STAGES
from softmax_teaching.launch_facts import program_placement
from softmax_teaching.pipeline import pipeline_timeline
from softmax_teaching.tutorial_trace import MAX_TRACE_ROWS, VARIANTS, store_footprint, trace_rows

H200 = sc.catalog_gpu("h200")


@pytest.fixture(scope="module")
def correct():
    return trace_rows(6, 781, num_programs=4, gpu=H200, seed=1)


def test_the_correct_kernel_matches_torch_and_writes_only_the_matrix(correct):
    assert correct.block_size == 1024 and correct.output.shape == (6, 781)
    np.testing.assert_allclose(correct.output, correct.reference, atol=1e-6, rtol=1e-5)
    assert correct.wrong_rows().size == 0
    assert correct.written[: correct.guard_start].all() and correct.out_of_bounds_writes.size == 0


def test_padded_lanes_follow_the_chain(correct):
    """-inf after the load and the subtraction, exactly 0 after exp and divide; real lanes are the input."""
    pad = slice(781, 1024)
    assert np.isneginf(correct.stage(2, "loaded")[pad]).all()
    assert np.isneginf(correct.stage(2, "minus_max")[pad]).all()
    assert (correct.stage(2, "exp")[pad] == 0).all() and (correct.stage(2, "output")[pad] == 0).all()
    np.testing.assert_array_equal(correct.stage(2, "loaded")[:781], correct.x[2])
    assert correct.row_max[2] == correct.x[2].max()
    np.testing.assert_allclose(correct.row_sum[2], np.exp(correct.x[2] - correct.x[2].max()).sum(), rtol=1e-5)
    assert correct.stages.shape == (6, len(TRACE_STAGES), 1024)


def test_program_map_is_the_strided_walk(correct):
    # Recorded by the kernel; the rule it must follow is program p handles rows p, p + P, p + 2P, ...
    assert correct.program.tolist() == [0, 1, 2, 3, 0, 1]
    assert correct.iteration.tolist() == [0, 0, 0, 0, 1, 1]
    assert correct.rows_of_program(1).tolist() == [1, 5]
    assert correct.n_iterations == 2


def test_default_grid_comes_from_the_plan():
    tr = trace_rows(3, 40, gpu=H200, keep_stages=False)
    plan = sc.plan_launch(3, 40, torch.float32, H200)
    assert tr.num_programs == plan.num_programs == 3 and tr.num_stages == plan.num_stages
    assert tr.stages is None
    with pytest.raises(ValueError):
        tr.stage(0, "loaded")


def test_pad_zero_pollutes_the_sum():
    tr = trace_rows(2, 781, variant="pad_zero", gpu=H200)
    assert (tr.stage(0, "loaded")[781:] == 0).all()
    # every padded lane contributes exp(0 - max) to the sum, so each stored row sums to less than 1
    extra = (1024 - 781) * np.exp(-tr.row_max[0])
    good = np.exp(tr.x[0] - tr.row_max[0]).sum()
    np.testing.assert_allclose(tr.row_sum[0], good + extra, rtol=1e-5)
    assert (tr.output.sum(axis=1) < 0.99).all() and tr.wrong_rows().tolist() == [0, 1]
    assert not tr.right_elements().any()            # every probability of the row is too small


def test_no_store_mask_writes_past_the_matrix():
    tr = trace_rows(4, 781, variant="no_store_mask", num_programs=2, gpu=H200)
    guard = tr.out_of_bounds_writes
    assert guard.tolist() == list(range(4 * 781, 3 * 781 + 1024))   # the last row's padded lanes
    if sc.runtime.INTERPRETED:
        # the interpreter runs program 0 (rows 0, 2) before program 1 (rows 1, 3): row 1's stray zeros land
        # on the start of row 2 after row 2 was stored, so row 2 is corrupted
        assert tr.wrong_rows().tolist() == [2]
    else:
        # on a GPU both programs run at once, so which stores land last is a race: any row after the first
        # can be hit, and the same launch can come out differently next time (measured on the H200: rows 1, 3)
        assert set(tr.wrong_rows().tolist()) <= {1, 2, 3}
    for row in tr.wrong_rows().tolist():
        assert (tr.output[row, : 1024 - 781] == 0).all()    # corrupted by its neighbour's padded zeros


def test_store_footprint_measures_each_rows_reach():
    masked = store_footprint(4, 781, 1, store_masked=True, gpu=H200)
    assert masked.addresses.tolist() == list(range(781, 2 * 781)) and masked.stray.size == 0
    loose = store_footprint(4, 781, 1, store_masked=False, gpu=H200)
    assert loose.stray.tolist() == list(range(2 * 781, 781 + 1024)) and loose.rows_hit() == [2]
    last = store_footprint(4, 781, 3, store_masked=False, gpu=H200)
    assert last.rows_hit() == [] and last.past_matrix.size == 1024 - 781


def test_all_neg_inf_row_is_nan_like_torch():
    tr = trace_rows(3, 100, variant="all_neg_inf", poisoned_row=1, gpu=H200)
    assert tr.poisoned_row == 1 and np.isneginf(tr.row_max[1])
    assert np.isnan(tr.stage(1, "minus_max")).all() and np.isnan(tr.output[1]).all()
    assert np.isnan(tr.reference[1]).all() and tr.wrong_rows().size == 0
    assert np.isfinite(tr.output[[0, 2]]).all()


@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
def test_half_precision_inputs(dtype):
    tr = trace_rows(2, 33, dtype=dtype, gpu=H200)
    assert tr.plan.dtype == dtype and tr.wrong_rows(rtol=2e-2, atol=1e-4).size == 0


def test_bad_arguments_are_named():
    with pytest.raises(ValueError, match="variant"):
        trace_rows(2, 8, variant="wrong")
    with pytest.raises(ValueError, match="rows"):
        trace_rows(MAX_TRACE_ROWS + 1, 8)
    with pytest.raises(ValueError, match="num_programs"):
        trace_rows(2, 8, num_programs=0)
    with pytest.raises(TypeError):
        trace_rows(2, 8, dtype="int32")
    assert set(VARIANTS) == {"correct", "pad_zero", "no_store_mask", "all_neg_inf"}


def test_placement_deals_programs_round_robin_then_waves():
    placed = program_placement(7, multiprocessor_count=3, programs_per_sm=2)
    assert [(p.sm, p.slot, p.wave) for p in placed] == [
        (0, 0, 0), (1, 0, 0), (2, 0, 0), (0, 1, 0), (1, 1, 0), (2, 1, 0), (0, 0, 1)]
    assert program_placement(2, 4, 0)[1].sm == 1   # a plan that does not fit still draws


def test_pipeline_overlaps_loads_only_with_stages():
    serial = pipeline_timeline(4, num_stages=1, load_time=3)
    piped = pipeline_timeline(4, num_stages=3, load_time=3)
    end = lambda spans: max(s.end for s in spans if s.phase == "compute")
    assert end(serial) == 4 * (3 + 1)
    assert end(piped) < end(serial)
    for spans in (serial, piped):  # math never starts before its own row has arrived
        by = {(s.iteration, s.phase): s for s in spans}
        assert all(by[(j, "compute")].start >= by[(j, "load")].end for j in range(4))
    with pytest.raises(ValueError):
        pipeline_timeline(2, 0, 1)


def test_traces_from_several_threads_at_once_agree():
    """App sessions are threads of one process; interpreted launches must not trip over each other."""
    from concurrent.futures import ThreadPoolExecutor

    with ThreadPoolExecutor(4) as pool:
        traces = list(pool.map(lambda seed: trace_rows(3, 100, gpu=H200, seed=seed % 2), range(8)))
    for tr in traces:
        assert tr.wrong_rows().size == 0
    np.testing.assert_array_equal(traces[0].output, traces[2].output)
