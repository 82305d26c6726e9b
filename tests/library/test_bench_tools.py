"""bench_tools: the tuning sweep's variants are launches, not plans, checked and timed by the harness."""
import json

import pandas as pd
import pytest
import torch

from bench_tools import tune
import softmax_bench as bench

QUICK = bench.WallClockTimer(warmup=1, max_repeats=3, budget_s=0.01)


def test_a_variant_is_checked_then_timed_and_a_wrong_one_is_a_failed_row(tmp_path):
    def variants(M, N, dtype):
        right = tune.tutorial_variants(M, N, dtype, warps=(1,), programs_per_sm=(1,), stages=(1,))
        short = tune.Variant("block shorter than the row", tune.tutorial_softmax_kernel, tune.tutorial_arguments,
                             (4,), (("BLOCK_SIZE", 16), ("num_stages", 1)), num_warps=1)
        return right + [short]

    frame = tune.tune([(8, 33)], variants, timer=QUICK, baselines=("copy",))
    rows = frame.set_index("provider")
    right = rows.loc["tutorial w1 s1 g8"]
    assert right.status == "ok" and right.ms_median > 0 and right.copy_ratio > 0
    assert right.kernel == "tutorial_softmax_kernel" and right.grid == "8" and '"BLOCK_SIZE": 64' in right.constexprs
    wrong = rows.loc["block shorter than the row"]
    assert wrong.status == "failed" and wrong.reason.code is bench.NotTimed.WRONG_RESULT
    assert list(tune.fastest(frame).provider) == ["tutorial w1 s1 g8"]
    assert pd.isna(rows.loc["copy"].kernel)           # a baseline has no variant settings
    csv_path, json_path = tune.save(frame, tmp_path / "sweep", QUICK, "python -m bench_tools.tune sweep", ("copy",))
    info = json.loads(json_path.read_text())
    assert info["csv"] == "sweep.csv" and info["shapes"] == [[8, 33]] and len(info["variants"]) == 2
    saved = pd.read_csv(csv_path)
    assert saved.shape == frame.shape and json.loads(saved.set_index("provider").loc[wrong.name, "reason"])["code"] == (
        "NotTimed:wrong_result")


def test_variants_are_hashable_values_and_names_must_not_repeat():
    a = tune.tutorial_variants(64, 100, torch.float32, warps=(2,), programs_per_sm=(1,), stages=(1,))[0]
    assert hash(a) == hash(tune.Variant(**{f: getattr(a, f) for f in a.__dataclass_fields__}))
    with pytest.raises(ValueError, match="repeat"):
        tune.tune([(8, 16)], lambda M, N, d: [a, a], timer=QUICK, baselines=())


def test_the_command_line_lists_the_example_variants_without_a_gpu(capsys):
    assert tune.main(["--list", "--sizes", "781"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines and all(line.startswith("4096 x 781: tutorial w") for line in lines)
    assert any('"BLOCK_SIZE": 1024' in line for line in lines)
