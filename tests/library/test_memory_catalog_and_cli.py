import subprocess
import sys
from pathlib import Path

import pytest
import torch

import softmax_core as sc
from softmax_core import __main__ as cli

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.parametrize("M, N, dtype", [(4096, 1024, torch.float32), (1823, 781, torch.float16), (1, 1, torch.bfloat16)])
def test_memory_totals_are_the_tutorials(M, N, dtype):
    t = sc.memory_traffic(M, N, dtype)
    size = torch.empty((), dtype=dtype).element_size()
    assert t.naive_elements == 8 * M * N + 4 * M
    assert sum(s.elements_read for s in t.naive_steps) == 5 * M * N + 2 * M
    assert sum(s.elements_written for s in t.naive_steps) == 3 * M * N + 2 * M
    assert t.fused_elements == 2 * M * N and t.fused_bytes == 2 * M * N * size
    assert t.predicted_speedup == pytest.approx((8 * M * N + 4 * M) / (2 * M * N))
    assert len(t.naive_steps) == 5
    assert sc.bytes_moved(M, N, size) == t.fused_bytes
    assert sc.bytes_moved(M, N, size, "backward") == 3 * M * N * size


def test_catalog_has_the_gpus_we_teach_with_and_sources():
    keys = {g.key for g in sc.gpu_catalog()}
    assert {"h200", "h100-sxm", "a100-80gb", "l4", "t4", "rtx4090", "rtx4060ti", "mi300x"} <= keys
    for g in sc.gpu_catalog():
        assert g.multiprocessor_count > 0 and g.max_num_regs > 0 and g.max_shared_mem > 0
        for figure in ("multiprocessor_count", "max_num_regs", "max_shared_mem", "warp_size",
                       "memory_bandwidth_gbps"):
            assert g.source.get(figure), f"{g.key}: no source for {figure}"
    assert sc.catalog_gpu("mi300x").warp_size == 64
    with pytest.raises(ValueError, match="known"):
        sc.catalog_gpu("voodoo2")


def test_current_gpu_matches_the_machine():
    live = sc.current_gpu()
    if torch.cuda.is_available():
        assert live is not None and live.live and live.multiprocessor_count > 0
    else:
        assert live is None and sc.default_gpu().key == "h200"


def run_cli(*args):
    return subprocess.run([sys.executable, "-m", "softmax_core", *args], cwd=ROOT, capture_output=True,
                          text=True, timeout=300)


@pytest.mark.slow       # 1823 x 781 through both kernels in the interpreter: ~10 s (the page's button runs the chapter's half fast)
def test_cli_runs_the_chapters_unit_test_and_the_tuned_check(capsys):
    """`python -m softmax_core` (its main, in this process; test_cli_plan_prints_real_resources starts the
    module itself): the chapter's unit test on the tutorial kernel, then the same 1823 x 781 input, seed and
    tolerances through the tuned softmax. This is where the tuned softmax meets the chapter's unit test on
    the CPU; on a GPU, tests/library/test_tutorial_kernel.py does it again on CUDA."""
    code = cli.main([])
    out = capsys.readouterr().out
    assert code == 0, out
    assert "the chapter's unit test, tutorial kernel, 1823x781 float32: matches" in out, out
    assert "the tuned softmax, same input: matches" in out and "PASSED" in out, out


@pytest.mark.skipif(torch.cuda.is_available(), reason="on a GPU --benchmark really runs")
def test_cli_benchmark_without_gpu_says_so(capsys):
    code = cli.main(["--benchmark"])
    assert code == 2 and "needs a GPU" in capsys.readouterr().out


def test_cli_plan_prints_real_resources():
    result = run_cli("--plan", "4096", "1024", "--gpu", "h200")
    assert result.returncode == 0, result.stderr
    assert "n_regs" in result.stdout and "shared_bytes" in result.stdout
    assert "By the chapter's formula, registers allow" in result.stdout                      # the tutorial plan's reason, in English
    assert "tuned plan" in result.stdout and "fits in registers" in result.stdout


def test_traffic_formulas_are_the_chapters_and_come_from_the_accounting():
    from softmax_core.traffic import linear_formula, traffic_formulas

    assert traffic_formulas() == {"naive_read": "5MN + 2M", "naive_written": "3MN + 2M", "naive_total": "8MN + 4M",
                                  "fused_read": "MN", "fused_written": "MN", "fused_total": "2MN"}
    assert linear_formula(lambda M, N: 7 * M) == "7M"
    with pytest.raises(ValueError):
        linear_formula(lambda M, N: M * M * N)


def test_benchmark_arguments_are_checked_before_anything_runs(capsys):
    """An unknown dtype or provider is refused with the lists of valid ones (no GPU needed to get there)."""
    from softmax_bench.cli import build_parser, run_benchmark

    args = build_parser().parse_args(["--sweep", "full", "--dtypes", "float32,int8",
                                      "--providers", "tuned,nope"])
    assert run_benchmark(args, []) == 2
    said = capsys.readouterr().out
    assert "int8" in said and "nope" in said and "bfloat16" in said
