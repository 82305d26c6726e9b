"""The UI package's pure logic, without Streamlit: what the pages compute before they draw."""
from __future__ import annotations

import numpy as np
import pytest

import softmax_core as sc
from explorer_ui import fmt, gpu_figures, padding, row_schedule, urlstate
from softmax_teaching import tutorial_trace as sc_trace


# -- padding chain -----------------------------------------------------------------------------------------
def test_lane_states_tell_real_lanes_from_each_kind_of_padding():
    lanes = np.arange(8)
    loaded = np.array([1.0, 2.0, np.nan, 0.5, 3.0, -np.inf, 0.0, 0.25])
    assert padding.lane_states(lanes, loaded, 5, "load", "correct") == \
        ["real", "real", "nan", "real", "real", "pad_neg_inf", "pad_zero", "pad_nonzero"]
    out = np.array([0.1, np.nan, 0.2, 0.3, 0.4, 0.0, 0.0, 0.0])
    assert padding.lane_states(lanes, out, 5, "store", "correct") == ["stored", "nan"] + ["stored"] * 3 + \
        ["not_stored"] * 3
    assert padding.lane_states(lanes, out, 5, "store", "no_store_mask")[5:] == ["stray"] * 3


def test_runs_cut_where_the_state_changes():
    assert padding.runs(["a", "a", "b", "a"]) == [(0, 2), (2, 3), (3, 4)]
    assert padding.runs(["a"]) == [(0, 1)]


def test_memory_segments_cut_at_state_and_row_changes_and_mark_the_guard():
    status = np.array(["right"] * 5 + ["wrong", "past_end", "unwritten"], dtype=object)
    assert padding.memory_segments(status, n_cols=3, guard_start=6) == [
        (0, 3, "right", 0), (3, 5, "right", 1), (5, 6, "wrong", 1), (6, 7, "past_end", -1), (7, 8, "unwritten", -1)]


@pytest.fixture(scope="module")
def traces():
    def run(variant):
        kw = dict(num_programs=None, num_stages=None, dtype="float32", variant=variant, seed=0, poisoned_row=0,
                  keep_stages=True)
        footprint = sc_trace.store_footprint(2, 5, 0, store_masked=variant != "no_store_mask", dtype="float32")
        return sc_trace.trace_rows(2, 5, **kw), footprint
    return {v: run(v) for v in ("correct", "no_store_mask", "pad_zero")}


def test_memory_status_of_real_launches(traces):
    right, _ = traces["correct"]
    status = padding.memory_status(right)
    assert set(status[: right.guard_start]) == {"right"} and "past_end" not in set(status)
    stray, _ = traces["no_store_mask"]
    assert "past_end" in set(padding.memory_status(stray))


def test_frame_facts_of_real_launches(traces):
    right, footprint = traces["correct"]
    facts = padding.frame_facts(right, footprint, 0, "load")
    assert (facts["N"], facts["B"], facts["pad"], facts["pad_value"]) == (5, 8, 3, "−inf")
    assert float(padding.frame_facts(right, footprint, 0, "divide")["out_sum"]) == pytest.approx(1, abs=1e-5)
    zero, footprint = traces["pad_zero"]
    assert padding.frame_facts(zero, footprint, 0, "load")["pad_value"] == "0"
    stray, footprint = traces["no_store_mask"]
    facts = padding.frame_facts(stray, footprint, 0, "store")
    assert facts["n_stray"] == 3 and (facts["first"], facts["last"]) == (5, 7)


def test_fmt():
    assert [fmt.number(v) for v in (np.nan, -np.inf, np.inf, 0.0, 1 / 3)] == ["NaN", "−inf", "+inf", "0", "0.3333"]
    assert padding.trace_stage("sum") == "exp" and padding.FRAME_NAMES[0] == "load"


# -- row schedule --------------------------------------------------------------------------------------------
def test_phase_of_each_animation_step():
    iteration = np.array([0, 0, 1, 1, 2])
    assert list(row_schedule.phase_of(0, 5, iteration)) == ["later"] * 5
    assert list(row_schedule.phase_of(2, 5, iteration)) == ["done", "done", "now", "now", "later"]
    assert list(row_schedule.phase_of(4, 5, iteration)) == ["done"] * 5
    assert set(row_schedule.phase_of(1, 5, iteration)) <= set(row_schedule.ROW_PHASES)


def test_row_list():
    assert row_schedule.row_list([1, 2, 3, 4], 2) == "1, 2 …"
    assert row_schedule.row_list(np.array([7, 9]), 5) == "7, 9"


# -- GPU & occupancy -----------------------------------------------------------------------------------------
def test_gpu_figures_list_every_field_in_order():
    gpu = sc.catalog_gpu("h200")
    figures = gpu_figures.gpu_figures(gpu, "cc")
    assert [f for f, _ in figures] == [f for f in gpu_figures.GPU_FIGURES if f not in gpu_figures.VENDOR_FIGURES]
    amd = dict(gpu_figures.gpu_figures(sc.catalog_gpu("mi300x"), "cc"))
    assert amd["infinity_cache_mib"] == "256 MiB" and amd["l2_mib"] == "4 MiB"
    shown = dict(figures)
    assert shown["name"] == gpu.name and shown["max_shared_mem"] == f"{gpu.max_shared_mem:,} B"
    assert shown["arch"].endswith(f"(cc {gpu.compute_capability[0]}.{gpu.compute_capability[1]})")


def test_register_curve_is_the_smaller_of_its_limits():
    gpu = sc.catalog_gpu("h200")
    rows = gpu_figures.register_curve(gpu, 1024, 4, range(16, 65, 16))
    by = {}
    for r in rows:
        by.setdefault(r["x"], {})[r["limit"]] = r["programs"]
    assert list(by) == [16, 32, 48, 64]
    for limits in by.values():
        assert limits["programs"] == min(limits["registers"], limits["shared memory"])
        assert limits["hardware"] <= limits["programs"]          # the GPU's rules never allow more
    assert by[16]["registers"] >= by[64]["registers"]
    no_shared = gpu_figures.register_curve(gpu, 0, 4, range(32, 33))
    assert {r["limit"] for r in no_shared} == {"registers", "programs", "hardware"}


# -- URL values ------------------------------------------------------------------------------------------------
def test_parse_int_clamps_rounds_and_notes():
    assert urlstate.parse_int("N", "12", 781, 1, 100) == (12, None)
    assert urlstate.parse_int("N", " 1e2 ", 781, 1, 1000) == (100, None)
    value, note = urlstate.parse_int("N", "999999", 781, 1, 16384)
    assert value == 16384 and note.clamped and note.used == "16384"
    value, note = urlstate.parse_int("N", "abc", 781, 1, 16384)
    assert value == 781 and not note.clamped
    assert urlstate.parse_int("N", "inf", 5, 1, 9)[0] == 5


def test_parse_choice_multi_bool_and_url_text():
    assert urlstate.parse_choice("n", "1024", 128, (128, 1024)) == (1024, None)
    assert urlstate.parse_choice("n", "7", 128, (128, 1024))[0] == 128
    value, note = urlstate.parse_multi("p", "naive,bogus,naive", ["copy"], ["copy", "naive"])
    assert value == ["naive"] and note.raw == "naive,bogus,naive"
    assert urlstate.parse_multi("p", "bogus", ["copy"], ["copy"])[0] == ["copy"]
    assert urlstate.parse_bool("z", "ON", False) == (True, None)
    assert urlstate.parse_bool("z", "maybe", False)[1].used == "false"
    assert [urlstate.url_text(v) for v in (True, ["a", "b"], 3)] == ["true", "a,b", "3"]


def test_urlstate_is_the_only_module_that_touches_the_url():
    from pathlib import Path

    root = Path(__file__).resolve().parents[2]
    code = [root / "app.py", *(root / "pages").glob("*.py"), *(root / "explorer_ui").glob("*.py")]
    touching = {p.name for p in code if "query_params" in p.read_text(encoding="utf-8")}
    assert touching == {"urlstate.py"}


# -- plan reasons ----------------------------------------------------------------------------------------------
def every_reason():
    """One PlanReason of every code (and, for tuned paths, every `why`), with made-up figures of each kind."""
    from softmax_core.plans.reasons import FIGURES, WHY_CODES, PlanReason, ReasonCode

    special = {"gpu": "Test GPU", "split_declined": True, "direction": "backward", "limiter": "shared memory",
               "sram_occupancy": 3}

    def figures(code):
        return {name: special.get(name, 1000 + i) for i, name in enumerate(FIGURES[code]) if name != "why"}

    reasons = [PlanReason.of(code, **figures(code)) for code in
               (ReasonCode.TUTORIAL_FITS, ReasonCode.TUTORIAL_OVER_SHARED_MEMORY, ReasonCode.TUTORIAL_OVER_REGISTERS)]
    reasons.append(PlanReason.of(ReasonCode.TUTORIAL_FITS, **{**figures(ReasonCode.TUTORIAL_FITS),
                                                               "sram_occupancy": None, "limiter": "rows"}))
    for path, whys in WHY_CODES.items():
        for why in whys:
            reasons.append(PlanReason.of(path, why=why.value, **figures(path), **figures(why)))
    reasons.append(PlanReason.of(ReasonCode.SPLIT, why="forced", **{**figures(ReasonCode.SPLIT),
                                                                   "direction": "forward"}))
    reasons.append(PlanReason.of(ReasonCode.ROWS, why="forced", **{**figures(ReasonCode.ROWS), "n_spills": 0}))
    return reasons


def test_the_app_says_a_reason_in_the_words_the_library_says_it():
    from explorer_ui.i18n import said_in
    from softmax_core.words import describe

    for reason in every_reason():
        for lang in ("en", "zh"):
            assert said_in(lang, reason) == describe(reason, lang=lang), reason


def test_a_reason_in_chinese_shows_the_same_figures_as_in_english():
    import re

    from softmax_core.words import describe

    for reason in every_reason():
        en, zh = (describe(reason, lang=lang) for lang in ("en", "zh"))
        figures = r"\d[\d,]{2,}"          # the made-up figures are all 1,000 and up
        assert sorted(re.findall(figures, zh)) == sorted(re.findall(figures, en)), (en, zh)
        assert not re.search(r"[A-Za-z]{3,} [a-z]{3,} [a-z]{3,}", zh.replace("docs/performance.md", "")), zh


def test_presentation_mode_moves_bottomlegends_beside_the_plot():
    from explorer_ui.charts.base import legends_beside

    spec = {"layer": [{"encoding": {"color": {"legend": {"orient": "bottom", "columns": 3}}}},
                      {"encoding": {"shape": {"legend": None}}}],
            "encoding": {"x": {"legend": {"orient": "top"}}}}
    legends_beside(spec)
    assert spec["layer"][0]["encoding"]["color"]["legend"] == {"orient": "right", "columns": 1}
    assert spec["layer"][1]["encoding"]["shape"]["legend"] is None
    assert spec["encoding"]["x"]["legend"] == {"orient": "top"}


def test_a_graph_roofline_slower_than_eager_is_found_and_a_faster_one_is_not():
    import softmax_bench as bench

    def rows(pairs, provider="copy"):
        return [{"provider": provider, "N": n, "gbps": g, "status": "ok"} for n, g in pairs]

    eager = rows([(256, 1000.0), (32768, 4000.0), (65536, 4100.0)]) + rows([(32768, 1.0)], "tuned")
    graph = rows([(256, 3000.0), (32768, 2600.0), (65536, 3700.0)]) + [
        {"provider": "copy", "N": 131072, "gbps": 1.0, "status": "ok"}]          # no eager row at 131072
    limit = bench.GRAPH_ROOFLINE_LIMIT
    assert bench.slower_graph_roofline(graph, eager) == {32768: (2600.0, 4000.0)}  # 3700 > 0.9 x 4100
    assert bench.slower_graph_roofline(graph, eager, limit=0.95) == {32768: (2600.0, 4000.0),
                                                                         65536: (3700.0, 4100.0)}
    failed = [dict(r, status="failed") for r in graph]
    assert bench.slower_graph_roofline(failed, eager) == {} and limit < 1
