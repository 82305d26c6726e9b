"""Whatever was imported first, softmax_core's choice of GPU or interpreter holds (checked in a fresh process)."""
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
x = torch.randn(5, 300, device=sc.runtime.kernel_device()) * 3
torch.testing.assert_close(sc.softmax(x), torch.softmax(x, -1))
torch.testing.assert_close(sc.tutorial_softmax(x), torch.softmax(x, -1))
print("ok", sc.runtime.INTERPRETED)
"""


@pytest.mark.skipif(torch.cuda.is_available(), reason="the import-order problem is the interpreter's")
def test_triton_and_torch_test_utils_imported_first():
    env = {k: v for k, v in __import__("os").environ.items() if k != "TRITON_INTERPRET"}
    env["PYTHONPATH"] = str(ROOT)
    out = subprocess.run([sys.executable, "-c", SCRIPT], cwd=ROOT, env=env, capture_output=True, text=True,
                         timeout=600)
    assert out.returncode == 0, out.stderr[-3000:]
    assert out.stdout.split() == ["ok", "True"]
