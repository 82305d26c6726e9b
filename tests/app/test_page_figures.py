"""Every figure a page shows is true and says how sure it is, under AppTest: claims that follow the traced
values, measurements that belong to the shape shown, settings that follow the GPU or the kernel until set by
hand, ratios withheld on unsteady timings. The pure functions behind them: tests/ui/test_formatting_and_figures.py."""
from __future__ import annotations

import json

import pandas as pd
import pytest
import torch
from streamlit.testing.v1 import AppTest

from explorer_ui.i18n import TEXT
from tests.support.apptest import open_page as page
from explorer_ui.pages_registry import script


def texts(at: AppTest) -> str:
    return "\n".join([m.value for m in at.markdown] + [c.value for c in at.caption] + [i.value for i in at.info])


def test_padding_page_pad_zero_shows_its_own_pad_value():
    at = page(script("padding"), {"break": "pad_zero", "step": "0"})
    panels = [h.proto.body for h in at.get("html")]
    assert any("PAD_VALUE" in p and "0.0" in p for p in panels)
    assert not any("PAD_VALUE</span>" in p and "inf" in p.split("PAD_VALUE")[1][:200] for p in panels)


def test_all_neg_inf_exp_step_makes_no_unit_interval_claim():
    at = page(script("padding"), {"break": "all_neg_inf", "step": "3"})
    assert "[0, 1]" not in texts(at)
    at = page(script("padding"), {"break": "correct", "step": "3"})
    assert "[0, 1]" in texts(at)


def test_no_store_mask_says_none_rather_than_a_dash():
    at = page(script("padding"), {"break": "no_store_mask", "N": "1"})
    assert "Rows corrupted: **none**" in texts(at)


def test_more_rows_leave_existing_rows_as_they_were():
    at = page(script("padding"), {"rows": "4"})
    def row3_sum(at):
        table = next(d.value for d in at.dataframe if "row sum" in d.value.columns)
        return table["row sum"].iloc[3]
    before = row3_sum(at)
    at.slider(key="padding_rows").set_value(8).run()
    assert row3_sum(at) == before


def test_a_one_by_one_matrix_does_not_borrow_another_shape_s_measurement():
    at = page(script("memory"), {"M": "1", "N": "1"})
    measured_metric = next(m for m in at.metric if m.label == TEXT["memory_measured"]["en"])
    assert measured_metric.value == "—"
    assert "Not measured at M = 1, N = 1" in texts(at)


def test_home_shows_the_spread_of_its_measured_speedup():
    at = page("app.py")
    assert "Spread:" in texts(at)


def test_memory_page_shows_the_l2_prediction_and_axis_units():
    at = page(script("memory"), {"M": "1048576", "N": "1048576"})
    assert "L2" in texts(at)
    specs = [json.loads(c.proto.spec) for c in at.get("arrow_vega_lite_chart") + at.get("vega_lite_chart")]
    titles = json.dumps(specs)
    assert "TB moved through DRAM" in titles


def test_schedule_rows_follow_the_gpu_until_set_by_hand():
    at = page(script("schedule"))
    first = at.slider(key="schedule_rows").value
    at.selectbox(key="schedule_gpu").set_value("t4").run()
    followed = at.slider(key="schedule_rows").value
    assert followed != first                                 # 1.5 × the T4's slots, not the 4060 Ti's
    at.slider(key="schedule_rows").set_value(20).run()
    at.selectbox(key="schedule_gpu").set_value("rtx4060ti").run()
    assert at.slider(key="schedule_rows").value == 20
    assert "Kept your 20" in texts(at)


def test_a_link_s_rows_are_kept_and_said_so():
    at = page(script("schedule"), {"rows": "7"})
    at.selectbox(key="schedule_gpu").set_value("t4").run()
    assert at.slider(key="schedule_rows").value == 7
    assert "Kept your 7" in texts(at)


@pytest.mark.skipif(torch.cuda.is_available(), reason="the CPU 'Time it' section is the no-GPU page's; a GPU "
                    "machine's page runs the live benchmark instead")
def test_cpu_time_it_shows_spread_and_withholds_unsteady_ratios(monkeypatch):
    import softmax_bench as bench

    def fake_sweep(M, Ns, dtype, providers, directions, **kwargs):      # copy shaky, the rest steady
        rows = []
        for n in Ns:
            for p in providers:
                shaky = p == "copy"
                rows.append(dict(provider=p, direction="forward", dtype=dtype, M=M, N=n,
                                 ms_p20=0.75 if shaky else 1.0, ms_median=6.2 if shaky else 1.05,
                                 ms_p80=7.0 if shaky else 1.1, ms_min=0.7, ms_max=9.0, gbps=10.0,
                                 copy_ratio=0.1, status="ok", reason=""))
        return bench.BenchmarkRun(pd.DataFrame(rows), {"M": M, "dtype": dtype, "date": "2026-11-30"})

    monkeypatch.setattr(bench, "run_sweep", fake_sweep)
    at = page(script("bench"), {"cpuN": "256"})
    at.button(key="bench_cpu_run").click().run()
    assert not at.exception, [e.value for e in at.exception]
    frames = [d.value for d in at.dataframe]
    ratio = next(f for f in frames if "naive" in f.columns and "copy" not in f.columns and "N" in f.columns)
    assert set(ratio["naive"]) == {"—"}                       # copy was unsteady: no fraction of copy printed
    assert any("⚠" in c.value for c in at.caption)


def test_memory_chart_of_a_tiny_matrix_is_in_bytes():
    at = page(script("memory"), {"M": "1", "N": "1"})
    specs = json.dumps([json.loads(c.proto.spec) for c in at.get("arrow_vega_lite_chart") + at.get("vega_lite_chart")])
    assert '"B moved through DRAM"' in specs and "MB moved" not in specs


def test_register_what_if_follows_the_kernel():
    at = page(script("gpu"), {"N": "256"})
    regs_256 = at.slider(key="gpu_regs").value
    real = lambda at: next(m.value for m in at.metric if m.label == TEXT["gpu_n_regs"]["en"])   # noqa: E731
    assert str(regs_256) == str(real(at))
    at.number_input(key="gpu_N").set_value(16384).run()
    assert str(at.slider(key="gpu_regs").value) == str(real(at))          # the new kernel's count, not the old
    at.slider(key="gpu_regs").set_value(200).run()
    at.number_input(key="gpu_N").set_value(1024).run()
    assert at.slider(key="gpu_regs").value == 200 and "Kept your 200" in texts(at)


def test_compare_view_lists_every_catalog_gpu_with_both_occupancy_figures():
    import softmax_core as sc

    at = page(script("gpu"), {"compare": "true"})
    table = next(d.value for d in at.dataframe if TEXT["compare_col_floor"]["en"] in d.value.columns)
    assert len(table) == len(sc.gpu_catalog())
    assert {TEXT["occupancy_hardware_per_sm"]["en"], TEXT["gpu_programs_per_sm"]["en"],
            TEXT["compare_col_toolchain"]["en"]} <= set(table.columns)
    assert any("disagree on" in c.value for c in at.caption)
