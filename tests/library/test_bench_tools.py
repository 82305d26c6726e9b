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


def test_rows_tune_draws_the_class_sweeps_row_shapes_and_times_the_plan_beside_its_families(device):
    from bench_tools import class_sweep, rows_tune
    from softmax_core.launch.api import softmax_backward
    from tests.support.reference import TOLERANCE

    cases = rows_tune.class_cases("short_rows,long_rows", 808, 3)
    drawn = [s for s in class_sweep.draw(808, ["short_rows", "long_rows"], 3)]
    assert [(M, N, str(dt)[6:]) for _, M, N, dt in cases] == [(*s.shape, s.dtype) for s in drawn]
    M, N, dt = 41, 21, torch.float16                  # an odd 2-byte width: the words, the span, the rows kernel
    variants = {v.name: v for v in rows_tune.class_variants("short", M, N, dt)}
    assert {"default-forward", "default-backward", "span", "words-p2-v1024-w4"} <= set(variants)
    assert any(k.startswith("rows-r") for k in variants) and any(k.startswith("lane-r") for k in variants)
    y = torch.softmax(torch.randn(M, N, device=device), -1).to(dt)
    dy = torch.randn(M, N, device=device).to(dt)
    yd, dyd = y.double(), dy.double()
    expected = yd * (dyd - (yd * dyd).sum(-1, keepdim=True))
    for name in ("default-backward", "span", "words-p2-v1024-w4", "rows-r32-w4-vec1"):
        plan = variants[name].plan
        assert plan.n_rows == M and plan.direction == "backward", name
        torch.testing.assert_close(softmax_backward(y, dy, plan).double(), expected, **TOLERANCE[dt], msg=name)


@pytest.mark.parametrize("M, N, dtype", [(5, 37, torch.float32), (3, 300, torch.bfloat16)])
def test_backward_route_times_four_calls_that_all_give_the_backward(M, N, dtype):
    from bench_tools.record import backward_route
    from softmax_core.launch.launches import cached_plan

    inputs = bench.make_inputs(M, N, dtype, True, 3)
    calls = backward_route.routes(inputs.x, inputs.dy, cached_plan(M, N, dtype, "backward", False))
    assert list(calls) == ["add", "launch", "autograd", "torch"]
    assert calls["add"]().shape == (M, N)             # the copy: timed, not checked
    for name in ("launch", "autograd", "torch"):
        assert bench.mismatch(calls[name](), inputs.dx_ref, dtype) is None, name
    wrong = calls["launch"]() + 0.1                   # the check can fail
    assert bench.mismatch(wrong, inputs.dx_ref, dtype) is not None


def test_the_strided_tune_times_the_library_plan_with_each_offset_width():
    from bench_tools.record.shared_dim_tune import variants_of

    got = dict(variants_of("forward", lambda nbytes: nbytes // 2, {"offsets"}))
    assert got == {"offsets-64": {"offsets_32": False}, "offsets-32": {"offsets_32": True}}
    assert not any(name.startswith("offsets") for name, _ in variants_of("forward", lambda b: b, {"fitted"}))


def test_the_strided_tune_times_parts_that_wait_beside_parts_in_two_launches():
    from bench_tools.record.shared_dim_tune import WAITS, variants_of
    from softmax_core.hardware.gpu import catalog_gpu
    from softmax_core.plans.any_dim import plan_split_dim
    from softmax_core.plans.strided import forward_groups

    got = dict(variants_of("backward", lambda nbytes: nbytes // 2, {"waits"}))
    assert len(got) == len(WAITS) and all(kw["waits"] and kw["parts"] for kw in got.values())
    assert all(name.startswith("waits-") for name in got)
    assert not any(kw.get("waits") for _, kw in variants_of("forward", lambda b: b, {"few-parts", "fitted"}))
    b, v, n = WAITS[0]
    layout = forward_groups((4, 3000, 40), (120000, 40, 1), 1)[1]
    plan = plan_split_dim(layout, 4, "float32", catalog_gpu("h200"), "forward", column_bytes=b, values=v, per_sm=n,
                          waits=True, compile=False)
    assert plan.waits and plan.parts >= 2
