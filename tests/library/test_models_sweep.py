"""The models sweep (softmax_bench/models.py): every case is a real shape, checked before it is timed;
peers that take only a contiguous matrix are skipped with their reason; ratios come from the case's own copy."""
import math

import torch

from softmax_bench import models
from softmax_bench.timers import WallClockTimer
from softmax_core.plans.strided import reduction_layout


def test_cases_cover_the_families_and_their_layouts_are_what_they_say():
    assert {c.kind for c in models.MODEL_CASES} >= {"logits", "attention", "router", "channel", "transposed",
                                                    "decode"}
    assert {c.dtype for c in models.MODEL_CASES} == {"float32", "bfloat16", "float16"}
    case = models.ModelCase("t", "transposed", (2, 6, 4), "float32", transposed=True)
    x = models.make_input(case)
    assert x.shape == (2, 6, 4) and not x.is_contiguous()
    assert reduction_layout(tuple(x.shape), x.stride(), 2).n_inner == 6


def test_small_sweep_checks_times_and_skips_with_reasons():
    cases = [models.ModelCase("c", "channel", (3, 40, 5), "float32", dim=1),
             models.ModelCase("r", "router", (100, 8), "bfloat16")]
    run = models.run_models_sweep(cases, ["copy", "tuned", "torch"],
                                  timer=WallClockTimer(warmup=1, max_repeats=3, budget_s=0.05), command="test")
    f = run.frame
    assert set(f.status) == {"ok"} and len(f) == 2 * 2 * 3
    copy = f[f.provider == "copy"]
    assert (copy.copy_ratio == 1.0).all()
    tuned = f[(f.case == "c") & (f.provider == "tuned") & (f.direction == "forward")].iloc[0]
    assert tuned.M == 15 and tuned.N == 40
    assert math.isclose(tuned.gbps, 2 * 600 * 4 * 1e-9 / (tuned.ms_median * 1e-3))
    assert run.provenance["sweep"] == "models" and run.provenance["cases"][0]["dim"] == 1
    table = models.ratio_table(run)
    assert "tuned/best_peer" in table.columns



def test_the_documented_table_is_the_recorded_one():
    from bench_tools import models_table as script

    doc = script.DOC.read_text()
    written = doc[doc.index(script.BEGIN) + len(script.BEGIN):doc.index(script.END)].strip()
    assert written == script.table().strip(), "run: python -m bench_tools.models_table --write"
    assert "gpt2-logits" in written and "transposed view" in written
