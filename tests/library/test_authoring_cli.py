"""`python -m softmax_core inspect`: JSON only on stdout, one object per GPU with the agreed fields; a
refused file exits 2 with its code; --measure without a GPU says so; on a GPU (the device run) it measures in
the jail, or refuses where the jail does not work there."""
import json
import subprocess
from pathlib import Path

import pytest
import torch

import softmax_core as sc
from softmax_core import __main__ as cli
from kernel_inspector import examples, jail

ROOT = Path(__file__).resolve().parents[2]
FIELDS = {"gpu", "registers", "spills", "shared_bytes", "num_warps", "programs_per_sm", "chapter_programs_per_sm",
          "limiter", "toolchain"}
ADD_SIZES = ["--size", "x_ptr=1048576", "--size", "y_ptr=1048576", "--size", "out_ptr=1048576", "--grid", "1024"]


def inspect(capsys, tmp_path, source, *args) -> subprocess.CompletedProcess:
    """`python -m softmax_core inspect FILE ARGS`, by the module's main in this process (the compile still runs
    in its sandboxed child; tests/library/test_memory_catalog_and_cli.py starts the module itself)."""
    path = tmp_path / "kernel.py"
    path.write_text(source)
    capsys.readouterr()
    code = cli.main(["inspect", str(path), *args])
    out = capsys.readouterr()
    return subprocess.CompletedProcess(args, code, out.out, out.err)


def test_json_holds_one_object_per_gpu(capsys, tmp_path):
    done = inspect(capsys, tmp_path, examples.VECTOR_ADD, "--gpu", "a100-80gb,mi300x", "--arg", "BLOCK=2048",
                   "--num-warps", "8", "--json", *ADD_SIZES)
    assert done.returncode == 0, done.stderr
    rows = json.loads(done.stdout)
    assert [r["gpu"] for r in rows] == ["a100-80gb", "mi300x"]
    for row in rows:
        assert FIELDS <= set(row) and row["num_warps"] == 8 and row["constexprs"] == {"BLOCK": 2048}
        occ = sc.occupancy(sc.catalog_gpu(row["gpu"]), row["registers"], row["shared_bytes"], 8, 1 << 30)
        assert (row["programs_per_sm"], row["chapter_programs_per_sm"], row["limiter"]) == (
            occ.programs_per_sm, occ.chapter_programs_per_sm, occ.limiter)
        assert row["bytes_moved"] == 3 * 1048576 * 4
    assert rows[0]["memory_floor_s"] == pytest.approx(3 * 1048576 * 4 / (sc.catalog_gpu("a100-80gb").memory_bandwidth_gbps * 1e9))


def test_a_refused_file_exits_2_with_its_code_and_line(capsys, tmp_path):
    done = inspect(capsys, tmp_path, "import os\nos.system('touch pwned')\n", "--json")
    assert done.returncode == 2
    assert json.loads(done.stdout) == {"error": "import_not_allowed", "line": 1, "detail": "os", "value": None,
                                       "limit": None}
    assert not (ROOT / "pwned").exists() and not (tmp_path / "pwned").exists()


def test_a_refusal_in_a_terminal_is_worded_as_the_page_words_it(capsys, tmp_path):
    from explorer_ui.i18n import TEXT

    done = inspect(capsys, tmp_path, "import os\nos.system('touch pwned')\n")
    assert done.returncode == 2
    sentence = TEXT["yk_refused"]["en"].format(line=1, rule=TEXT["yk_refused_import"]["en"], detail="os")
    assert sentence in done.stderr and "import_not_allowed" in done.stderr


@pytest.mark.skipif(torch.cuda.is_available(), reason="checks the message a machine without a GPU gives")
def test_measure_without_a_gpu_says_so(capsys, tmp_path):
    done = inspect(capsys, tmp_path, examples.VECTOR_ADD, "--measure", "--json", *ADD_SIZES)
    assert done.returncode == 2 and json.loads(done.stdout)["error"] == "no_gpu"


@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a GPU")
def test_measure_on_a_gpu_reports_bandwidth_with_spread(capsys, tmp_path):
    done = inspect(capsys, tmp_path, examples.VECTOR_ADD, "--gpu", "h200", "--arg", "BLOCK=1024", "--arg",
                   "n_elements=i32:1048576", "--measure", "--json", *ADD_SIZES)
    assert done.returncode == 0, done.stderr
    m = json.loads(done.stdout)["measurement"]
    if jail.probe() != "bubblewrap":      # a pasted kernel runs only in the jail: here, a refusal, nothing run
        assert (m["ok"], m["code"], m["sandbox"]) == (False, "no_sandbox", "none"), m
        return
    assert m["ok"] and m["sandbox"] == "bubblewrap", m
    (out,) = [t for t in m["tensors"] if t["name"] == "out_ptr"]     # the example's reference check
    assert out["reference_error"] <= out["reference_tolerance"], out
    low, mid, high = m["achieved_gbps"]
    assert 0 < low <= mid <= high and 0 < m["fraction_of_copy"] < 1.5


@pytest.mark.slow
def test_interpret_runs_it_once_on_the_cpu_and_checks_an_example(capsys, tmp_path):
    small = examples.SMALL["vector_add"]
    sizes = [f"--size={n}={'x'.join(map(str, s))}" for n, s in small["sizes"].items()]
    args = [f"--arg={a}" for a in small["args"]]
    done = inspect(capsys, tmp_path, examples.VECTOR_ADD, "--gpu", "a100-80gb", "--grid", "4", "--interpret", "--json",
                   *args, *sizes)
    assert done.returncode == 0, done.stderr
    result = json.loads(done.stdout)
    run = result["interpreter"]
    assert run["ok"] and run["wall_seconds"] > 0 and "not a GPU" in run["clock"]
    out = {t["name"]: t for t in run["tensors"]}["out_ptr"]
    assert out["written"] and out["reference_error"] <= out["reference_tolerance"]
    assert result["gpus"][0]["gpu"] == "a100-80gb"
