"""Shared by every test folder (library/, ui/, app/, browser/, serve/): the environment the app runs in under
test, skipping `gpu` tests without a GPU, and the fixtures (the markers are in pyproject.toml). Helpers a test
imports live in tests/support/."""
import os

import pytest
import torch

import softmax_core as sc

# The suite runs the real kernels: on a machine without a GPU, in Triton's interpreter (chosen before any kernel
# is defined, as the explorer chooses it). tests/library/test_import_order.py checks that a bare import chooses nothing.
sc.runtime.use_interpreter_without_gpu()
from tests.support.browser import chromium
from tests.support.records import write_record

# No background pre-warm (explorer_ui/prewarm.py) in the servers and AppTest sessions the tests start: its
# compiles would compete for the CPU with timed browser waits. tests/app/test_every_page_and_widget.py runs it
# on purpose.
os.environ.setdefault("SOFTMAX_EXPLORER_PREWARM", "0")
# A text key that does not exist raises (explorer_ui/i18n.py), here and in the servers the browser tests start.
os.environ.setdefault("SOFTMAX_EXPLORER_STRICT_TEXT", "1")


@pytest.fixture
def device():
    return sc.runtime.kernel_device()


# The suite runs on two pytest-xdist workers (pyproject.toml's addopts). tests/browser/ shares one Chromium and
# one app server across its files (tests/browser/conftest.py): its tests form one group, which the "loadgroup"
# schedule gives to one worker, so that server is started, and each page's first run in it paid, once.
SHARED_SERVER_FOLDER = "browser"


def pytest_collection_modifyitems(config, items):
    tests = os.path.dirname(__file__)
    for item in items:
        if os.path.relpath(str(item.path), tests).split(os.sep)[0] == SHARED_SERVER_FOLDER:
            item.add_marker(pytest.mark.xdist_group(SHARED_SERVER_FOLDER))
    if torch.cuda.is_available():
        return
    skip = pytest.mark.skip(reason="needs a CUDA GPU; run on the device machine")
    for item in items:
        if "gpu" in item.keywords:
            item.add_marker(skip)


@pytest.fixture(scope="module")
def browser():
    """Debian's Chromium driven by Playwright, one per test module (tests/browser/ shares one across its files)."""
    with chromium() as launched:
        yield launched


@pytest.fixture
def graph_recorded_dir(tmp_path, monkeypatch):
    """An eager record and, newer, the same GPU / dtype / M timed from a CUDA graph."""
    write_record(tmp_path, "test-gpu-full-float32-1", "do_bench", "2026-01-02T03:04:05+00:00", 0.02)
    write_record(tmp_path, "test-gpu-full-cudagraph-float32-2", "do_bench_cudagraph", "2026-01-03T03:04:05+00:00", 0.01)
    monkeypatch.setenv("SOFTMAX_EXPLORER_RECORDED_DIR", str(tmp_path))
    return tmp_path
