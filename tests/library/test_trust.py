"""One trust rule for measured figures (softmax_bench.trust), for the benchmark page and the doc tables."""
import math

from softmax_bench import GRAPH_ROOFLINE_LIMIT, trust
from softmax_core.words import describe


def row(provider, gbps, p20=1.0, p80=1.2, status="ok"):
    return {"provider": provider, "N": 1024, "gbps": gbps, "status": status, "ms_median": 1.1, "ms_p20": p20,
            "ms_p80": p80, "ms_min": p20, "ms_max": p80}


def test_a_ratio_of_two_steady_timings_is_shown():
    value, why = trust.ratio_to_copy(row("tuned", 900.0), row("copy", 1000.0))
    assert math.isclose(value, 0.9) and why.code is trust.Trust.SHOWN


def test_an_unsteady_timing_on_either_side_withholds_the_ratio_and_says_whose():
    for tuned, copy, whose in ((row("tuned", 900.0, p80=1.6), row("copy", 1000.0), "tuned"),
                               (row("tuned", 900.0), row("copy", 1000.0, p20=1.0, p80=2.0), "copy")):
        value, why = trust.ratio_to_copy(tuned, copy)
        assert value is None and why.code is trust.Trust.UNSTEADY and why.values["provider"] == whose
        assert "unsteady" in describe(why) and "不稳定" in describe(why, lang="zh")


def test_a_graph_roofline_below_the_eager_copy_withholds_the_ratio():
    slow = 1000.0 * GRAPH_ROOFLINE_LIMIT * 0.99
    value, why = trust.ratio_to_copy(row("tuned", 900.0), row("copy", slow), eager_copy_gbps=1000.0)
    assert value is None and why.code is trust.Trust.ROOFLINE_BELOW_EAGER
    assert trust.ratio_to_copy(row("tuned", 900.0), row("copy", 1000.0), eager_copy_gbps=1000.0)[0] is not None


def test_a_run_without_percentiles_is_shown_but_not_judged_and_a_failed_row_has_no_ratio():
    old = {**row("tuned", 900.0), "ms_p20": float("nan"), "ms_p80": float("nan")}
    value, why = trust.ratio_to_copy(old, row("copy", 1000.0))
    assert value is not None and why.code is trust.Trust.SHOWN_NOT_JUDGED
    assert trust.ratio_to_copy(row("tuned", 0.0, status="failed"), row("copy", 1000.0))[0] is None


def test_the_doc_tables_withhold_what_the_page_withholds():
    from bench_tools import doc_tables

    frame, _ = doc_tables.load(doc_tables.current_stems()["bfloat16"])
    fwd = frame[frame.direction == "forward"]
    copy = {int(r["N"]): r for r in fwd[fwd.provider == "copy"].to_dict("records")}
    shown = doc_tables.ratios(frame, "torch_compile")
    for r in fwd[(fwd.provider == "torch_compile") & (fwd.status == "ok")].to_dict("records"):
        assert shown[int(r["N"])] == trust.ratio_to_copy(r, copy[int(r["N"])])[0]
    assert any(v is None for v in shown.values())        # the record has unsteady timings: some are withheld
