"""The layouts page's logic: bad input becomes a code with figures, each layout falls in its class, the recorded
ratio to copy is read from the models sweep with its spread, and one request's lanes come out as a table."""
from __future__ import annotations

import math

import pandas as pd
import pytest

import softmax_core as sc
from explorer_ui import transactions_view as tv
from softmax_teaching.layout_case import Case

H200 = sc.catalog_gpu("h200")


@pytest.mark.parametrize("text, code", [("", "shape_no_sizes"), ("8, a", "shape_not_whole_numbers"),
                                        ("0x4", "shape_size_below_one"), ("1x2x3x4x5x6x7x8x9", "shape_too_many_dims")])
def test_a_bad_shape_is_a_code(text, code):
    with pytest.raises(ValueError) as err:
        tv.check_case(text, "float32", 0, "contiguous", "forward")
    assert err.value.args[0] == code


def test_bad_dims_views_and_sizes_are_codes():
    for args, code in ((("8x4", "float32", 2, "contiguous", "forward"), "dim_out_of_range"),
                       (("8", "float32", 0, "transposed", "forward"), "transposed_needs_two_dims"),
                       (("100000x100000", "float32", 1, "contiguous", "forward"), "too_big")):
        with pytest.raises(ValueError) as err:
            tv.check_case(*args)
        assert err.value.args[0] == code
    assert tv.check_case("8x4", "float32", -1, "padded", "backward") == Case((8, 4), "float32", 1, "padded", "backward")


def test_each_preset_falls_in_its_class():
    gpu = sc.catalog_gpu("h200")
    classes = {name: tv.layout_class(case, view.family, view.fold.n_inner)
               for name, case in tv.PRESETS.items() for view in [tv.planned(case, "h200", gpu)]}
    assert classes == {"rows_fp32": "rows", "transposed_fp32": "transposed", "nchw_dim1_fp32": "strided",
                       "padded_fp32": "rows", "offset_fp32": "rows"}


def test_the_recorded_ratio_has_its_spread():
    ratio = tv.recorded_ratio("transposed", 2048, "forward")
    assert ratio.case == "transposed-last" and ratio.runs >= 1
    assert ratio.low <= ratio.median <= ratio.high and ratio.run_low <= ratio.median <= ratio.run_high


def test_rows_take_the_nearest_row_length():
    frame = pd.DataFrame({"case": ["a", "b"], "layout": ["contiguous"] * 2, "dim": [-1, -1], "N": [256, 50257]})
    assert tv.nearest_rows_case(frame, 40000) == "b" and tv.nearest_rows_case(frame, 300) == "a"


def test_one_request_lane_by_lane():
    kt = tv.kernel_trace(Case((8, 1024), "float32", 1, "contiguous"), "planned", H200)
    frame = tv.lane_frame(kt, 0, 0)
    assert list(frame.columns) == tv.LANE_COLUMNS
    assert len(frame) == 128 and frame.sector_rank.max() == 15 and frame.lane.nunique() == 32
    assert tv.most_sectors(kt) == 16
    assert tv.lane_frame(None).empty


def test_the_page_and_ncu_agree_only_when_their_figures_do():
    assert tv.agreement({"page": 16.0, "ncu": 16.0}) == "same"
    assert tv.agreement({"page": 5.75, "ncu": 4.8125}) == "differs"
    assert tv.agreement({"page": None, "ncu": 4.0}) == "differs"
    assert tv.agreement({"page": 16.0, "ncu": 16.0, "page_launch": (512, 128), "ncu_launch": (512, 128)}) == "same"
    assert tv.agreement({"page": 16.0, "ncu": 16.0, "page_launch": (512, 128), "ncu_launch": (256, 256)}) == "other_launch"


def test_the_class_sweep_gives_each_class_its_ratio():
    assert tv.sweep_class("rows", 1024, 1) == "mid_rows" and tv.sweep_class("rows", 100, 1) == "short_rows"
    assert tv.sweep_class("strided", 1000, 49) == "dim_inner_narrow" and tv.sweep_class("transposed", 9, 9) == "transposed"
    ratio = tv.class_ratio("transposed", "forward")
    assert ratio is not None and ratio.shapes >= 1 and ratio.low <= ratio.median <= ratio.high
    assert ratio.run_low <= ratio.run_high
    frame = pd.DataFrame({"class": ["a"] * 4, "direction": ["forward"] * 4, "status": ["ok"] * 4,
                          "case": ["a-0", "a-0", "a-1", "a-1"], "provider": ["copy", "tuned"] * 2,
                          "ms_median": [1.0, 2.0, 1.0, 4.0]})
    latest = tv.class_ratio("transposed", "forward")     # the newest run by its stamp, not the last name
    stamps = [name.rsplit("-", 1)[-1] for name, frame in tv.class_frames.__wrapped__()
              if ((frame["class"] == "transposed") & (frame.direction == "forward")).any()]
    assert latest.record.rsplit("-", 1)[-1] == max(stamps)
    made = tv.class_ratio("a", "forward", [("r.csv", frame)])
    assert (made.low, made.high, made.shapes) == (0.25, 0.5, 2)
    assert tv.class_ratio("b", "forward", [("r.csv", frame)]) is None


def test_the_reason_on_the_h200_states_its_recorded_compile_and_names_each_gpus_cache():
    # The layouts page states the planner's registers as every page does: on the H200 from its device record
    # (the recorded runs' toolchain), so a contiguous row's reason is the GPU page's tuned plan for that shape.
    from explorer_ui import data
    from explorer_ui.i18n import cache_named, said_in

    case = tv.PRESETS["rows_fp32"]
    n_cols = case.shape[-1]
    n_rows = math.prod(case.shape) // n_cols
    recorded = data.softmax_plan.__wrapped__(n_rows, n_cols, case.dtype, "h200")
    view = tv.planned(case, "h200", sc.catalog_gpu("h200"))
    assert dict(view.reason.figures)["n_regs"] == recorded.resources.n_regs
    assert view.toolchain == recorded.resources.toolchain and "H200" in view.toolchain
    for key, cache in (("h200", "L2"), ("mi300x", "Infinity Cache")):
        gpu = sc.catalog_gpu(key)
        long_axis = tv.Case((512, 8192), "float32", 1, "transposed")      # past a slab: two passes, via the cache
        words = said_in("en", tv.planned(long_axis, key, gpu).reason, cache=cache_named(gpu))
        assert f"still in the {cache}" in words
