"""softmax_core.softmax on shapes nobody chose: fresh random widths, heights, dtypes, views and dims each run,
forward and backward, against float64. The draw walks every range of row lengths (tiny, short, mid, long, very
long: the ranges of the tiny-rows, rows, vector-rows, tiled and split plans, with and without edges) on every
layout (contiguous, rows starting off a 16-byte boundary, a padded row stride, a transposed view, a dim that is
not the last), the values in each at random.

The seed is printed, and the failing case names its shape, strides and dim, so a failure can be replayed with
SOFTMAX_RANDOM_SEED=<seed> (SOFTMAX_RANDOM_CASES=<n> draws more). Two draws: short rows on any device (under
the interpreter, in CI, where a long row would take hours), and on a GPU every range, to 300,000 values.
"""
from __future__ import annotations

import os
import random
import time

import pytest
import torch
from dataclasses import dataclass

import softmax_core as sc
from softmax_core.launch.launches import cached_plan
from tests.support.reference import TOLERANCE, assert_like_torch

DTYPES = (torch.float32, torch.bfloat16, torch.float16)
DEVICE = sc.runtime.kernel_device()
# "other dim": (m // 64, n, inner <= 64); "narrow inner" and "wide inner": the class sweep's two classes of a
# non-last dim (bench_tools/class_sweep.py): an inner run of 2-63 with many outer slices (the plans that hold
# several per program), and of 64-2048 (columns by bytes).
LAYOUTS = ("contiguous", "offset", "padded", "transposed", "other dim", "narrow inner", "wide inner")


@dataclass(frozen=True)
class Draw:
    """What a draw ranges over: row lengths by range (low, high), heights, the largest tensor, and the plans
    (path names) some case of it always reaches."""
    widths: dict
    heights: tuple
    max_elements: int          # the float64 reference of the largest case fits with room
    time_budget_s: float       # compiles of a cold cache included; fewer cases are drawn past it, but never
    reaches: tuple             # fewer than one per (range, layout) pair

    @property
    def cases(self) -> int:    # each forward and backward: every (range, layout) pair twice, or as asked
        return int(os.environ.get("SOFTMAX_RANDOM_CASES", 2 * len(self.widths) * len(LAYOUTS)))


# Under the interpreter (CPU, CI) the rows stay short, where a case takes a second, not hours: tiny contiguous
# rows are always held whole. On a GPU they reach 300,000 values: very long float32 rows of a multiple of 16
# values are always shared by programs.
SHORT = Draw({"tiny": (1, 16), "short": (17, 1500)}, (1, 3, 17, 40), 1 << 15, 60, ("rows",))
FULL = Draw({"tiny": (1, 16), "short": (17, 4096), "mid": (4097, 40_000), "long": (40_001, 160_000),
             "very long": (160_001, 300_000)}, (1, 3, 64, 777, 4096, 20_000, 70_000), 1 << 27, 150,
            ("rows", "split"))


def draw_width(rng: random.Random, draw: Draw, kind: str) -> int:
    """A row length in the range `kind` names: powers of two, multiples of 8 and 16, and odd ones alike."""
    n = rng.randint(*draw.widths[kind])
    return rng.choice((n, n - n % 8 or 8, n - n % 16 or 16, triton_pow2_at_most(n)))


def triton_pow2_at_most(n: int) -> int:
    return 1 << (n.bit_length() - 1)


def draw_case(rng: random.Random, draw: Draw, index: int) -> dict:
    """Case `index` of a draw: its range of widths and its layout walk every pair in turn; the rest is random."""
    kinds = tuple(draw.widths)
    kind, layout = kinds[index % len(kinds)], LAYOUTS[(index // len(kinds)) % len(LAYOUTS)]
    n = draw_width(rng, draw, kind)
    m = max(1, min(rng.choice(draw.heights), draw.max_elements // (4 * n)))
    dtype = rng.choice(DTYPES)
    if kind == "very long" and layout == "contiguous" and index < len(kinds) * len(LAYOUTS):
        # the first pass's: float32 rows of a multiple of 16 values, always shared by programs (Draw.reaches)
        n, dtype = n - n % 16, torch.float32
    inner = max(1, min(64, draw.max_elements // (4 * n * max(1, m // 64))))    # "other dim": (m // 64, n, inner)
    if layout == "narrow inner":
        inner = rng.randint(2, 63)
    elif layout == "wide inner":
        inner = rng.randint(64, max(64, min(2048, draw.max_elements // n)))
    outer = max(1, m // 64) if layout == "other dim" else max(1, min(m, draw.max_elements // (4 * n * inner)))
    return {"m": m, "n": n, "dtype": dtype, "layout": layout, "inner": inner, "outer": outer,
            "special": rng.random() < 0.3, "seed": rng.randrange(2**31)}


def make_input(case: dict) -> tuple[torch.Tensor, int]:
    """The case's tensor (a view where its layout says so) and the dim to reduce."""
    g = torch.Generator(device=DEVICE).manual_seed(case["seed"])
    m, n, dtype, layout = case["m"], case["n"], case["dtype"], case["layout"]

    def randn(*shape):
        return (torch.randn(*shape, device=DEVICE, generator=g) * 4).to(dtype)

    if layout == "offset":         # rows start off any 16-byte boundary
        x, dim = randn(m, n + 3)[:, 3:], -1
    elif layout == "padded":       # a row stride wider than the row
        x, dim = randn(m, n + 40)[:, :n], -1
    elif layout == "transposed":   # the reduced dim has a stride of m
        x, dim = randn(n, m).t(), -1
    elif layout in ("other dim", "narrow inner", "wide inner"):    # (outer, n, inner), reduced over the middle
        x, dim = randn(case.get("outer", max(1, m // 64)), n, case["inner"]), 1
    else:
        x, dim = randn(m, n), -1
    if case["special"] and x.numel():
        rows = x.movedim(dim, -1)
        rows[..., 0, :] = float("-inf")                  # a whole row of -inf: NaN, as torch
        if rows.shape[-2] > 2:
            rows[..., 1, : rows.shape[-1] // 2] = float("-inf")   # half a row masked
            rows[..., 2, rows.shape[-1] - 1] = float("nan")       # one NaN poisons its row only
    return x, dim


def describe(case: dict, x: torch.Tensor, dim: int) -> str:
    return (f"{case['layout']} {tuple(x.shape)} strides {x.stride()} dim {dim} {case['dtype']} "
            f"special={case['special']} data seed {case['seed']}")


def plan_kind(case: dict) -> str | None:
    """The path a contiguous last-dim case is planned on (what the coverage check counts)."""
    if case["layout"] != "contiguous":
        return None
    plan = cached_plan(case["m"], case["n"], case["dtype"], "forward", False)
    return f"{plan.path}{'-edges' if plan.edges else ''}{'-tiny' if plan.tiny else ''}"


def check_one(case: dict) -> None:
    x, dim = make_input(case)
    label = describe(case, x, dim)
    leaf = x.detach().requires_grad_()
    y = sc.softmax(leaf, dim)
    assert y.dtype == x.dtype and y.shape == x.shape, label
    assert_like_torch(y, x, dim, label)
    if case["special"]:
        return   # NaN rows make every gradient of their row NaN: nothing to compare there
    dy = torch.randn(x.shape, device=DEVICE, generator=torch.Generator(device=DEVICE).manual_seed(1)).to(x.dtype)
    (dx,) = torch.autograd.grad(y, leaf, dy)
    theirs_y = torch.softmax(leaf, dim)
    (theirs,) = torch.autograd.grad(theirs_y, leaf, dy)

    def exact_backward(saved_y):   # dx = y * (dy - sum(y * dy)), exactly, from the y a backward saw
        y64 = saved_y.detach().double()
        return y64 * (dy.double() - (y64 * dy.double()).sum(dim, keepdim=True))

    # As accurate as torch's own backward at this dtype (each against the exact answer for the y it saved), within
    # the dtype's tolerance.
    exact_dx = exact_backward(y)
    ours_err = (dx.double() - exact_dx).abs().max().item()
    torch_err = (theirs.double() - exact_backward(theirs_y)).abs().max().item()
    bound = 2 * torch_err + TOLERANCE[x.dtype]["atol"] * max(1.0, exact_dx.abs().max().item())
    assert ours_err <= bound, f"backward error {ours_err:.3g} against torch's {torch_err:.3g}: {label}"


def run_draw(draw: Draw) -> None:
    seed = int(os.environ.get("SOFTMAX_RANDOM_SEED", random.randrange(2**32)))
    print(f"SOFTMAX_RANDOM_SEED={seed}")
    rng = random.Random(seed)
    start, kinds, done = time.monotonic(), set(), 0
    budget = draw.time_budget_s * max(1, draw.cases // (2 * len(draw.widths) * len(LAYOUTS)))
    for index in range(draw.cases):
        if done >= len(draw.widths) * len(LAYOUTS) and time.monotonic() - start > budget:
            break
        case = draw_case(rng, draw, index)
        kinds.add(plan_kind(case))
        check_one(case)
        done += 1
    # The draw must keep reaching the plans it is meant for, or this test stops testing them.
    for wanted in draw.reaches:
        assert any(k and k.startswith(wanted) for k in kinds), f"no case took the {wanted} path: {kinds} (seed {seed})"


@pytest.mark.slow
def test_random_short_rows_forward_and_backward_match_float64():
    run_draw(SHORT)


@pytest.mark.gpu
@pytest.mark.slow
def test_random_shapes_forward_and_backward_match_float64_on_gpu():
    run_draw(FULL)
    torch.cuda.empty_cache()


@pytest.mark.gpu
@pytest.mark.parametrize("n, dtype", [(50257, torch.bfloat16), (100_277, torch.bfloat16), (151_935, torch.float16),
                                      (20_001, torch.bfloat16), (8, torch.bfloat16), (5000, torch.float16)])
@pytest.mark.parametrize("layout", ["contiguous", "offset", "padded"])
def test_every_unaligned_plan_on_every_spacing(n, dtype, layout):
    """The plans that read an aligned body between masked edges (and the tiled plans they fall back to when
    tensors are spaced unlike the input) at widths that are not multiples of 16, on each row spacing."""
    case = {"m": 300, "n": n, "dtype": dtype, "layout": layout, "special": True, "seed": 7}
    check_one(case)
    check_one({**case, "special": False})
