"""Importing softmax_core chooses nothing; the interpreter, asked for, works whatever was imported first (each
checked in a fresh process)."""
import subprocess
import sys
from pathlib import Path

import pytest
import torch

ROOT = Path(__file__).resolve().parents[2]

SCRIPT = """
import triton, torch
import torch.testing._internal.common_utils  # torch's test utilities import triton too
import softmax_core as sc
sc.runtime.use_interpreter()
x = torch.randn(5, 300, device=sc.runtime.kernel_device()) * 3
torch.testing.assert_close(sc.softmax(x), torch.softmax(x, -1))
torch.testing.assert_close(sc.tutorial_softmax(x), torch.softmax(x, -1))
print("ok", sc.runtime.INTERPRETED)
"""


@pytest.mark.skipif(torch.cuda.is_available(), reason="the import-order problem is the interpreter's")
def test_triton_and_torch_test_utils_imported_first():
    assert in_a_fresh_process(SCRIPT) == ["ok", "True"]


def in_a_fresh_process(script: str) -> list[str]:
    """The words `script` prints, run by a new Python with the checkout importable and TRITON_INTERPRET unset."""
    env = {k: v for k, v in __import__("os").environ.items() if k != "TRITON_INTERPRET"}
    env["PYTHONPATH"] = str(ROOT)
    out = subprocess.run([sys.executable, "-c", script], cwd=ROOT, env=env, capture_output=True, text=True,
                         timeout=600)
    assert out.returncode == 0, out.stderr[-3000:]
    return out.stdout.split()


INERT = """
import os, sys, time
import triton, triton.language as tl
from triton.runtime.jit import JITFunction
before = {name: id(value) for name, value in vars(tl).items() if isinstance(value, JITFunction)}
import softmax_core as sc
import torch
assert "TRITON_INTERPRET" not in os.environ
x = torch.randn(512, 781)
torch.testing.assert_close(sc.softmax(x), torch.softmax(x, -1))
def best(f, rounds=7, calls=10):
    times = []
    for _ in range(rounds):
        start = time.perf_counter()
        for _ in range(calls):
            f(x)
        times.append((time.perf_counter() - start) / calls)
    return min(times)
ours, theirs = best(sc.softmax), best(lambda t: torch.softmax(t, -1))
per_call_like_torch = ours <= 2 * theirs + 1e-3     # torch's speed, not the interpreter's (about a second)
after = {name: id(value) for name, value in vars(tl).items() if isinstance(value, JITFunction)}
assert "TRITON_INTERPRET" not in os.environ
assert before == after and before, "triton.language was rebound"
try:
    sc.runtime.use_interpreter()
    raise SystemExit("use_interpreter after the kernels were defined did not refuse")
except sc.runtime.InterpreterChosenTooLate:
    pass
print("inert", per_call_like_torch, sc.runtime.INTERPRETED)
"""


@pytest.mark.skipif(torch.cuda.is_available(), reason="a CPU tensor is answered by torch only without a GPU here")
def test_importing_changes_nothing_and_a_cpu_tensor_is_torch_s_answer():
    assert in_a_fresh_process(INERT) == ["inert", "True", "False"]
