import os
import sys
from pathlib import Path

import pandas as pd
import pytest
import torch

import softmax_core as sc
from softmax_core.hardware import dtypes

# No background pre-warm (explorer_ui/prewarm.py) in the servers and AppTest sessions the tests start: its
# compiles would compete for the CPU with timed browser waits. tests/test_app.py runs it on purpose.
os.environ.setdefault("SOFTMAX_EXPLORER_PREWARM", "0")
# A text key that does not exist raises (explorer_ui/i18n.py), here and in the servers the browser tests start.
os.environ.setdefault("SOFTMAX_EXPLORER_STRICT_TEXT", "1")

# The output is rounded to the input's dtype, so compare at that dtype's precision (softmax_core.hardware.dtypes).
TOLERANCE = {d.torch: dict(atol=d.atol, rtol=d.rtol) for d in dtypes.DTYPES.values()}


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


# -- recorded benchmark runs for the benchmark page (tests/test_app.py, tests/test_zh_complete.py) -----------
def write_record(directory, stem: str, timer: str, date: str, ms: float) -> None:
    """A small recorded run of the chapter's dtype with QuACK among its providers, timed by `timer`."""
    from softmax_core import bench

    clock = bench.CudaGraphTimer() if timer == bench.DO_BENCH_CUDAGRAPH else bench.DoBenchTimer()
    rows = []
    for n in (1024, 4096):
        for provider, factor in (("copy", 1.0), ("tuned", 1.1), ("torch", 1.5), ("quack", 1.05), ("naive", 4.0)):
            t = ms * factor * n / 1024
            rows.append(dict(provider=provider, direction="forward", dtype="float32", M=4096, N=n, ms_p20=t,
                             ms_median=t, ms_p80=t, ms_min=t, ms_max=t,
                             gbps=bench.gbps(2 * 4096 * n * 4, t), copy_ratio=1.0 / factor, status="ok", reason=""))
    provenance = {"gpu": "Test GPU 9000", "date": date, "torch": "x", "triton": "y", "M": 4096, "dtype": "float32",
                  "command": f"made by the tests ({timer})", "record_version": bench.RECORD_VERSION, "timer": timer,
                  "timer_figures": bench.timer_figures(clock), "quack_kernels": "0.6.5",
                  "nvidia_cutlass_dsl": "4.3.0", "providers": ["copy", "quack"]}
    bench.save_run(bench.BenchmarkRun(pd.DataFrame(rows, columns=bench.COLUMNS), provenance), directory, stem)


@pytest.fixture
def graph_recorded_dir(tmp_path, monkeypatch):
    """An eager record and, newer, the same GPU / dtype / M timed from a CUDA graph."""
    write_record(tmp_path, "test-gpu-full-float32-1", "do_bench", "2026-01-02T03:04:05+00:00", 0.02)
    write_record(tmp_path, "test-gpu-full-cudagraph-float32-2", "do_bench_cudagraph", "2026-01-03T03:04:05+00:00", 0.01)
    monkeypatch.setenv("SOFTMAX_EXPLORER_RECORDED_DIR", str(tmp_path))
    return tmp_path
