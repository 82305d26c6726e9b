import os
import sys
from pathlib import Path

import pytest
import torch

import softmax_core as sc

# No background pre-warm (explorer_ui/prewarm.py) in the servers and AppTest sessions the tests start: its
# compiles would compete for the CPU with timed browser waits. tests/test_app.py runs it on purpose.
os.environ.setdefault("SOFTMAX_EXPLORER_PREWARM", "0")
# A text key that does not exist raises (explorer_ui/i18n.py), here and in the servers the browser tests start.
os.environ.setdefault("SOFTMAX_EXPLORER_STRICT_TEXT", "1")

# fp32 arithmetic inside; the output is rounded to the input's dtype, so compare at that dtype's precision.
TOLERANCE = {torch.float32: dict(atol=1e-5, rtol=1e-5), torch.float16: dict(atol=1e-3, rtol=1e-3),
             torch.bfloat16: dict(atol=8e-3, rtol=1e-2), torch.float64: dict(atol=1e-12, rtol=1e-12)}


@pytest.fixture
def device():
    return sc.runtime.kernel_device()


def reference_softmax(x: torch.Tensor, dim: int = -1) -> torch.Tensor:
    """float64 softmax rounded to x's dtype: the answer a perfect kernel would give."""
    return torch.softmax(x.double(), dim=dim).to(x.dtype)


def pytest_collection_modifyitems(config, items):
    if torch.cuda.is_available():
        return
    skip = pytest.mark.skip(reason="needs a CUDA GPU; run on the device machine")
    for item in items:
        if "gpu" in item.keywords:
            item.add_marker(skip)


@pytest.fixture(scope="module")
def browser():
    """Debian's Chromium driven by Playwright, for the real-browser tests (one per test module)."""
    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "scripts"))
    import browser_kit as kit

    try:
        from playwright.sync_api import sync_playwright
    except ImportError as exc:
        pytest.fail(f"Playwright is not installed ({exc}).\n{kit.INSTALL_HINT}", pytrace=False)
    if not Path(kit.CHROMIUM).is_file():
        pytest.fail(f"Chromium is not installed: {kit.CHROMIUM} is missing.\n{kit.INSTALL_HINT}", pytrace=False)
    with sync_playwright() as p:
        chromium = p.chromium.launch(executable_path=kit.CHROMIUM, headless=True, args=kit.CHROMIUM_ARGS)
        yield chromium
        chromium.close()
