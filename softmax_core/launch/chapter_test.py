"""The chapter's unit test, `test_softmax_kernel`, as a function: seed 0, an odd shape so that rows need padding
(781 -> 1024) and the grid is not a multiple of anything, the tutorial's kernel against torch.softmax with
torch.testing's tolerances as the chapter sets them. `python -m softmax_core` runs it; so does the chapter-notes page."""
from __future__ import annotations

import time
from dataclasses import dataclass

import torch

from softmax_core.hardware import runtime
from softmax_core.launch.api import tutorial_softmax
from softmax_core.plans.tutorial import plan_launch
from softmax_core.words import Coded

CHAPTER_TEST_SIZE = (1823, 781)
CHAPTER_TEST_ATOL = 1e-3
CHAPTER_TEST_RTOL = 1e-3


@dataclass(frozen=True)
class UnitTestResult:
    shape: tuple[int, int]
    passed: bool
    max_abs_error: float
    atol: float
    rtol: float
    message: str                 # torch.testing's report when it failed, "" when it passed
    seconds: float
    backend: Coded               # runtime.backend()
    block_size: int
    num_programs: int


def chapter_unit_test(size: tuple[int, int] = CHAPTER_TEST_SIZE, atol: float = CHAPTER_TEST_ATOL,
                      rtol: float = CHAPTER_TEST_RTOL, seed: int = 0) -> UnitTestResult:
    """The chapter's test_softmax_kernel: seed 0, torch.randn(size), tutorial_softmax against torch.softmax."""
    if len(size) != 2 or min(size) < 1:
        raise ValueError(f"size must be two positive integers, got {size!r}")
    torch.manual_seed(seed)
    x = torch.randn(size[0], size[1], device=runtime.kernel_device())
    started = time.perf_counter()
    z_tri = tutorial_softmax(x)
    seconds = time.perf_counter() - started
    z_ref = torch.softmax(x, dim=1)
    message = ""
    try:
        torch.testing.assert_close(z_tri, z_ref, atol=atol, rtol=rtol)
    except AssertionError as exc:
        message = str(exc)
    plan = plan_launch(size[0], size[1], x.dtype)
    return UnitTestResult(tuple(size), not message, float((z_tri - z_ref).abs().max()), atol, rtol, message,
                          seconds, runtime.backend(), plan.block_size, plan.num_programs)
