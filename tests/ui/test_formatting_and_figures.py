"""Every figure the app shows is true and says how sure it is, in the pure functions behind the pages:
explorer_ui.fmt, .measured, .padding claims, .code as launched, .i18n plurals, .charts palettes.
The same figures on the pages themselves: tests/app/test_page_figures.py."""
from __future__ import annotations

import math
import re

import numpy as np
import pandas as pd
import pytest

from explorer_ui import cache_model, charts, code, fmt
from softmax_bench import trust
from explorer_ui.i18n import format_text, text_in


# -- formatting ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize("n, shown", [(0, "0 B"), (781, "781 B"), (3_124, "3.1 kB"), (12_795_904, "12.8 MB"),
                                      (4_398_100_000_000, "4.4 TB"), (999_960_000, "1.0 GB")])
def test_bytes_take_the_unit_that_fits(n, shown):
    assert fmt.fmt_bytes(n) == shown


def test_an_axis_takes_the_unit_of_its_largest_value():
    assert fmt.axis_bytes([20, 4_398_100_000_000]) == ("TB", 1e12)
    assert fmt.axis_bytes([20_000]) == ("kB", 1e3)
    assert fmt.axis_bytes([]) == ("B", 1.0)


@pytest.mark.parametrize("seconds, shown", [(9.6e-9, "9.6 ns"), (8.53e-7, "853.0 ns"), (1e-6, "1.0 µs"),
                                            (1.2345e-3, "1,234.5 µs"), (None, "—"), (float("nan"), "—")])
def test_a_time_below_a_microsecond_is_said_in_nanoseconds(seconds, shown):
    """A floor of a few kilobytes is nanoseconds: "0.0 µs" would read as no time at all."""
    assert fmt.duration(seconds) == shown


def test_tables_get_thousands_separators():
    shown = fmt.table(pd.DataFrame({"N": [781, 262_144], "ms": [0.5, 1234.5], "ok": [True, False]}))
    assert list(shown["N"]) == ["781", "262,144"]
    assert list(shown["ms"]) == ["0.50", "1,234.50"]
    assert list(shown["ok"]) == [True, False]


# -- plurals ------------------------------------------------------------------------------------------------


def test_plural_spec_follows_the_number():
    assert format_text("{n:,|lane|lanes}", n=1) == "1 lane"
    assert format_text("{n:,|lane|lanes}", n=1024) == "1,024 lanes"
    assert format_text("{n:,}", n=1024) == "1,024"


@pytest.mark.parametrize("key, values, wrong", [
    ("padding_block", dict(N=1, B=1, pad=0, programs=1, gpu="G"), "1 programs"),
    ("padding_frame_load", dict(B=1, N=1, pad=0), "1 lanes"),
    ("gpu_what_if_text", dict(regs=1, programs=1, limiter="x", grid=1, real=1, hardware=1), "1 registers"),
    ("schedule_frame_launch", dict(P=1), "1 programs"),
])
def test_no_one_with_a_plural_noun(key, values, wrong):
    assert wrong not in text_in("en", key, **values)
    assert text_in("zh", key, **values)          # the Chinese text formats with the same values


def test_out_of_resources_is_said_once():
    from explorer_ui.i18n import said_in
    from softmax_core.plans.reasons import PlanReason, ReasonCode

    reason = PlanReason(ReasonCode.TUTORIAL_OVER_SHARED_MEMORY,
                        dict(shared_bytes=300_000, block_size=65536, gpu="G", max_shared_mem=232_448))
    for lang in ("en", "zh"):
        message = text_in(lang, "gpu_does_not_fit",
                          explanation=said_in(lang, reason))
        assert message.count("OutOfResources") == 1


# -- measured figures and their spread ------------------------------------------------------------------------


def row(p20, med, p80, lo, hi):
    return {"ms_p20": p20, "ms_median": med, "ms_p80": p80, "ms_min": lo, "ms_max": hi}


def test_a_steady_speedup_is_clear_and_a_wide_one_is_not():
    steady = trust.speedup(trust.timing_spread(row(4.0, 4.1, 4.2, 3.9, 9.0)),
                              trust.timing_spread(row(1.0, 1.02, 1.05, 0.9, 3.0)))
    assert steady.verdict == trust.CLEAR and steady.lo < steady.value < steady.hi
    unsteady = trust.speedup(trust.timing_spread(row(4.0, 5.0, 7.0, 3.9, 9.0)),
                                trust.timing_spread(row(1.0, 1.02, 1.05, 0.9, 3.0)))
    assert unsteady.verdict == trust.TOO_SPREAD          # naive p80 / p20 = 1.75 > SPREAD_LIMIT
    straddles = trust.speedup(trust.timing_spread(row(1.0, 1.1, 1.2, 1, 2)),
                                 trust.timing_spread(row(1.0, 1.05, 1.15, 1, 2)))
    assert straddles.verdict == trust.TOO_SPREAD          # interval 0.87–1.2 contains 1


def test_old_records_without_percentiles_are_not_given_invented_ones():
    nan = math.nan
    old = trust.speedup(trust.timing_spread(row(nan, 4.0, nan, 3.9, 4.4)),
                           trust.timing_spread(row(nan, 1.0, nan, 0.95, 1.1)))
    assert old.kind == trust.MIN_MAX and old.verdict == trust.NOT_JUDGED
    wide = trust.speedup(trust.timing_spread(row(nan, 0.048, nan, 0.045, 0.073)),
                            trust.timing_spread(row(nan, 0.026, nan, 0.0129, 0.107)))
    assert wide.verdict == trust.TOO_SPREAD               # the 12.9–107 µs at N = 781


def test_l2_prediction_counts_x_once_and_every_write_once():
    import softmax_core as sc

    traffic = sc.memory_traffic(4096, 781)
    MN, M = 4096 * 781, 4096
    assert cache_model.naive_bytes_with_cache(traffic) == 4 * (MN + (M + MN + MN + M + MN))
    assert 1.9 < cache_model.predicted_speedup_with_cache(traffic) < 2.1 < traffic.predicted_speedup
    h200 = sc.catalog_gpu("h200")
    assert cache_model.fits_in_cache(4096, 781, 4, h200)
    assert not cache_model.fits_in_cache(4096, 8192, 4, h200)
    assert cache_model.cache_crossing_n(4096, 4, h200) == pytest.approx(h200.l2_mib * 2**20 / (4096 * 4))


# -- padding chain ---------------------------------------------------------------------------------------------


def test_code_as_launched_shows_the_launch_s_pad_value():
    from softmax_teaching.tutorial_trace import launch_flags

    lines = code.kernel_source_as_launched(tuple(launch_flags("pad_zero").items()))
    line = lines[code.find_line(lines, code.KERNEL_ANCHORS["pad_value"]) - 1]
    assert "0.0" in line and "inf" not in line
    lines = code.kernel_source_as_launched(tuple(launch_flags("no_store_mask").items()))
    assert "STORE_MASKED: tl.constexpr = False" in "\n".join(lines)


def test_code_panels_wrap_long_lines_under_their_own_indentation():
    """A long line wraps inside its panel (no panel scrolls sideways), its continuation hanging under the line's
    own indentation plus code.HANG columns, never at column 0 under the block it belongs to; the line numbers
    stay the source's."""
    long = "        x = tl.load(ptr + offsets, mask=mask, other=PAD_VALUE).to(tl.float32)  # " + "word " * 30
    html = code.code_html(("def f():", long), (2,), None, None, None)
    assert "overflow-x:hidden" in html and "white-space:pre-wrap" in html
    assert f"padding-left:{8 + code.HANG}ch;text-indent:-{8 + code.HANG}ch" in html
    assert f"padding-left:{code.HANG}ch;text-indent:-{code.HANG}ch" in html      # the unindented line
    assert html.count(f"background:{code.HIGHLIGHT}") == 1
    numbers = re.findall(r"user-select:none[^>]*>(\d+)<", html)
    assert numbers == ["1", "2"]
    excerpt = code.code_html(tuple(f"x{i} = {i}" for i in range(1, 21)), (10,), None, None, 2)
    assert re.findall(r"user-select:none[^>]*>(\d+)<", excerpt) == ["8", "9", "10", "11", "12"]


def test_a_row_depends_on_its_index_only():
    from softmax_teaching import tutorial_trace as trace

    four = trace.trace_rows(4, 100, keep_stages=False)
    eight = trace.trace_rows(8, 100, keep_stages=False)
    np.testing.assert_array_equal(four.x, eight.x[:4])


def test_claims_follow_the_traced_values():
    from explorer_ui import padding
    from softmax_teaching import tutorial_trace as trace

    ok = trace.trace_rows(2, 100)
    assert padding.frame_claim(ok, 0, "exp") == "exp_in_unit"
    assert padding.frame_claim(ok, 0, "subtract") == "subtract_max_zero"
    poisoned = trace.trace_rows(2, 100, variant="all_neg_inf", poisoned_row=1)
    assert padding.frame_claim(poisoned, 1, "exp") is None
    assert padding.frame_claim(poisoned, 1, "subtract") is None


# -- pictures --------------------------------------------------------------------------------------------------


def test_neighbouring_programs_differ_and_repeats_are_labelled():
    groups = charts.program_color_groups(20)
    assert len(groups) == len(charts.PROGRAM_COLORS) and groups[1].startswith("1, 9, 17")
    df = charts.with_program_colors(pd.DataFrame({"program": range(20)}), 20)
    assert all(a != b for a, b in zip(df["colour"], df["colour"][1:]))
    assert charts.program_color_groups(1) == ["0"]          # P = 1: one colour, no fractional legend


def _schedule_frame(n_rows, P):
    rows = np.arange(n_rows)
    return pd.DataFrame({"row": rows, "gx": rows % 16, "gy": rows // 16, "program": rows % P,
                         "iteration": rows // P, "phase": "now"})


def test_row_map_labels_each_cell_by_its_program_and_colours_by_iteration():
    # 51 rows on 34 programs: program 0 handles rows 0 and 34, the cells marked 0 in two colours
    df = _schedule_frame(51, 34)
    spec = charts.row_grid(df, n_iterations=2, iteration_title="loop iteration", title="t").chart.to_dict()
    cells, text = spec["layer"]
    assert text["encoding"]["text"]["field"] == "program" and text["mark"]["fontSize"] >= 12
    color = cells["encoding"]["color"]
    assert color["field"] == "iteration" and color["title"] == "loop iteration"
    assert color["scale"]["domain"] == [0, 1]                    # one legend entry per iteration, none shared
    marked_0 = df[df["program"] == 0]
    assert list(marked_0["row"]) == [0, 34] and list(marked_0["iteration"]) == [0, 1]
    # many iterations: a ramp over 0…K−1, not colours that repeat
    ramp = charts.row_grid(_schedule_frame(40, 2), n_iterations=20, iteration_title="i", title="t").chart.to_dict()
    assert ramp["layer"][0]["encoding"]["color"]["scale"]["domain"] == [0, 19]


def test_program_grid_writes_rows_while_its_columns_are_wide_enough():
    few = charts.program_grid(_schedule_frame(30, 10), x_title="x", y_title="y", title="t", n_programs=10,
                              n_iterations=3).chart.to_dict()
    assert few["layer"][1]["encoding"]["text"]["field"] == "row"
    many = charts.program_grid(_schedule_frame(60, 40), x_title="x", y_title="y", title="t", n_programs=40,
                               n_iterations=2).chart.to_dict()
    assert "layer" not in many


def test_a_series_keeps_its_colour_in_both_languages():
    def colours(lang):
        limits = [text_in(lang, k) for k in ("gpu_line_regs", "gpu_line_sram", "gpu_line_programs")]
        df = pd.DataFrame({"x": [1, 1, 1], "programs": [1, 2, 1], "limit": limits})
        marker = pd.DataFrame([{"x": 1, "programs": 1, "label": "m"}])
        spec = charts.occupancy_curve(df, marker, x_title="x", y_title="y", limit_title="l", title="t",
                                      limits=limits).chart.to_dict()
        scale = spec["layer"][0]["encoding"]["color"]["scale"]
        return dict(zip(scale["domain"], scale["range"]))
    en, zh = colours("en"), colours("zh")
    assert list(en.values()) == list(zh.values())


def test_the_occupancy_axis_is_cut_when_one_limit_dwarfs_the_rest():
    df = pd.DataFrame({"x": [1, 1, 1], "programs": [4, 4000, 4], "limit": ["r", "s", "p"]})
    assert charts.occupancy_y_top(df, "p") == 8.0
    assert charts.occupancy_y_top(df.assign(programs=[4, 6, 4]), "p") is None


def test_tutorial_kernel_is_not_the_palest_and_naive_and_liger_differ():
    light = {"#F0E442", "#56B4E9", "#666666"}
    assert charts.PROVIDER_COLORS["tutorial"] not in light
    assert charts.PROVIDER_COLORS["naive"] != charts.PROVIDER_COLORS["liger"]


def test_chapter_sweep_draws_copy_black_and_dashed_apart_from_every_kernel():
    keys = ["copy", "tuned", "tutorial", "torch"]
    df = pd.DataFrame({"N": [256] * 4, "gbps": [1, 2, 3, 4], "ms": [1] * 4, "copy_ratio": [1] * 4,
                       "provider": [k.upper() for k in keys], "provider_key": keys})
    enc = charts.sweep_lines(df, x_title="x", y_title="y", color_title="c", title="t").chart.to_dict()["encoding"]
    colours = dict(zip(enc["color"]["scale"]["domain"], enc["color"]["scale"]["range"]))
    dashes = dict(zip(enc["strokeDash"]["scale"]["domain"], enc["strokeDash"]["scale"]["range"]))
    assert colours["COPY"] == charts.PROVIDER_COLORS["copy"]
    assert len(set(colours.values())) == len(keys)
    assert dashes["COPY"] != [1, 0] and all(dashes[k.upper()] == [1, 0] for k in keys[1:])


# -- benchmark figures ---------------------------------------------------------------------------------------------


def test_no_ratio_on_an_unsteady_timing():
    steady, shaky = (trust.timing_spread(row(1.0, 1.05, 1.1, 0.9, 2)),
                     trust.timing_spread(row(0.75, 6.2, 7.0, 0.75, 9)))
    assert trust.shown_ratio(steady, steady) == pytest.approx(1.0)
    assert trust.shown_ratio(shaky, steady) is None and trust.shown_ratio(steady, shaky) is None


def test_gbps_chart_gives_each_provider_its_own_colour():
    df = pd.DataFrame({"N": [1, 1, 1], "gbps": [1, 2, 3], "gbps_lo": [1, 2, 3], "gbps_hi": [1, 2, 3], "ms": [1, 1, 1],
                       "copy_ratio": [1, 1, 1], "provider": ["T", "N", "L"],
                       "provider_key": ["tutorial", "naive", "liger"]})
    spec = charts.gbps_chart(df, None, x_title="x", y_title="y", color_title="c", title="t").chart.to_dict()
    scale = spec["layer"][1]["encoding"]["color"]["scale"]
    assert dict(zip(scale["domain"], scale["range"])) == {
        "T": charts.PROVIDER_COLORS["tutorial"], "N": charts.PROVIDER_COLORS["naive"], "L": charts.PROVIDER_COLORS["liger"]}


# -- first-time waits ---------------------------------------------------------------------------------------------


def test_waits_are_announced_with_this_server_s_own_median():
    from explorer_ui import layout

    assert layout.expected_seconds("test-kind") is None
    layout.record_wait("test-kind", 0.01)                     # a cache hit: not work
    assert layout.expected_seconds("test-kind") is None
    for s in (2.0, 9.0, 4.0):
        layout.record_wait("test-kind", s)
    assert layout.expected_seconds("test-kind") == 4.0


def test_prewarm_covers_the_gpu_page_s_longest_row_on_every_gpu():
    import softmax_core as sc
    from explorer_ui import defaults, prewarm

    labels = [what for what, _ in prewarm.work_items()]
    for gpu in sc.gpu_catalog():
        assert any(f"x{defaults.GPU_PAGE_MAX_N} on {gpu.key}" in w and w.startswith("plan") for w in labels), gpu.key
        assert any(f"x{defaults.GPU_PAGE_MAX_N} on {gpu.key}" in w and w.startswith("tuned") for w in labels), gpu.key




def test_chapter_sweep_chart_draws_every_recorded_provider_with_tooltips():
    from explorer_ui import data
    df = data.chapter_sweep_frame()
    if df is None:
        pytest.skip("no recorded run of the chapter's sweep")
    spec = charts.sweep_lines(df, x_title="N", y_title="GB/s", color_title="impl", title="t").chart.to_dict()
    enc = spec["encoding"]
    assert {t["field"] for t in enc["tooltip"]} >= {"provider", "N", "gbps"}
    colours = enc["color"]["scale"]["range"]
    assert len(set(colours)) == len(colours) == df["provider"].nunique()
    assert df["N"].min() == 256 and df["N"].max() == 12672      # the chapter's own sweep


def test_a_code_excerpt_shows_whole_statements():
    lines = ("def f(x):",
             "    # one comment",
             "    # in two lines",
             "    y = x + 1",
             "    if y:",
             "        z = 1",
             "    else:",
             "        z = 2",
             "",
             "    return z")
    assert code.excerpt_span(lines, 3, 4) == (2, 4)           # the comment from its first line
    assert code.excerpt_span(lines, 4, 5) == (4, 8)           # an `if` with its body and its `else`
    assert code.excerpt_span(lines, 6, 7) == (6, 8)           # a dangling `else:` with its body
    # the benchmark page's panel: the load and the masked store, one line of context
    source = code.kernel_source()
    first, last = code.excerpt_span(source, min(code.kernel_lines("load", "store")) - 1,
                                    max(code.kernel_lines("load", "store")) + 1)
    above = source[first - 2].lstrip()
    assert not (above.startswith("#") and source[first - 1].lstrip().startswith("#"))
    assert not source[last - 1].split("#")[0].rstrip().endswith(":")
