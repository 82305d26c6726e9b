"""explorer_ui.quiz: questions come from computed values, and guesses are graded fairly."""
import torch

import softmax_core as sc
from explorer_ui import quiz
from softmax_teaching.tutorial_trace import trace_rows


def test_numbers_are_right_within_the_tolerance_and_say_how_far_off():
    q = quiz.Question("k", "how many?", 8.0, "because")
    assert quiz.grade(q, 8.5).right and not quiz.grade(q, 16).right
    assert quiz.grade(q, 16).factor == 2.0
    assert "2" in quiz.verdict_text(q, 16, quiz.grade(q, 16))
    assert "4" in quiz.verdict_text(q, 2, quiz.grade(q, 2))
    zero = quiz.Question("z", "?", 0.0, "")
    assert quiz.grade(zero, 0).right and not quiz.grade(zero, 1).right


def test_padded_lane_question_follows_the_kernel_and_the_variant():
    good = trace_rows(2, 781, dtype="float32", variant="correct", seed=0)
    q = quiz.padded_lane_after_exp(good, 0)
    assert q.answer == "zero" and quiz.grade(q, "zero").right and not quiz.grade(q, "one").right
    bad = trace_rows(2, 781, dtype="float32", variant="pad_zero", seed=0)
    assert quiz.padded_lane_after_exp(bad, 0).answer == "other"
    assert quiz.padded_lane_after_exp(trace_rows(1, 1024, dtype="float32", seed=0), 0) is None


def test_rows_and_occupancy_and_speedup_questions_use_the_computed_values():
    q = quiz.rows_of_program("s", 10, 3, 0)
    assert q.answer == 4.0 and "9" in q.explain
    plan = sc.plan_launch(4096, 781, torch.float32, sc.catalog_gpu("h200"))
    occ = quiz.programs_per_sm("g", plan)
    assert occ.answer == plan.programs_per_sm and str(plan.reg_occupancy) in occ.explain
    traffic = sc.memory_traffic(4096, 781)
    sp = quiz.fused_speedup("m", traffic, 4096, 781, "float32")
    assert sp.answer == traffic.predicted_speedup and sp.signature != quiz.fused_speedup(
        "m", sc.memory_traffic(4096, 1024), 4096, 1024, "float32").signature


def test_bandwidth_floor():
    gpu = sc.catalog_gpu("h200")
    q = quiz.bandwidth_floor("f", gpu, 4096, 781, sc.bytes_moved(4096, 781, 4))
    assert abs(q.answer - 2 * 4096 * 781 * 4 / (gpu.memory_bandwidth_gbps * 1e3)) < 1e-9


def test_long_row_questions_use_the_traced_tiles_and_the_split_plan():
    from softmax_teaching import long_row_trace as lrt

    q = quiz.tiles_in_row("t", 5000, 1024, 5)
    assert q.answer == 5.0 and "120" in q.explain            # 5 x 1024 - 5000 lanes masked
    used, chunk = lrt.split_shape(16384, 4)
    c = quiz.chunk_per_program("c", 16384, used, chunk)
    assert c.answer == chunk == 4096 and quiz.grade(c, 4096).right
