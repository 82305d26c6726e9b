"""The chapter's parts that the pictures do not show, each as something that runs and returns its numbers.

- How the chapter learns a kernel's registers and shared memory (`warmup` on a live GPU) and how this
  project learns the same numbers with no GPU (an offline compile read by cuobjdump): `warmup_resources`,
  `offline_resources`.
- Strides: a row's stride is how far the kernel's pointer jumps between rows; what the tutorial kernel and
  `softmax` do with sliced and transposed input: `stride_cases`, `stride_addresses`.
- What `num_stages` asks of the compiler, read from real compiles: `stages_cost`.
- The num_warps heuristic as a rule with its reason, and the registers it leads to: `num_warps_rule`,
  `num_warps_cost`.
- The chapter's unit test, 1823 x 781 against `torch.softmax`: `chapter_unit_test`.
- The 3-D grid the chapter's warmup demands (`grid_quirk`) and how far `tl.exp` is from float64's exp
  (`exp_error`).

Everything here computes: a number on the page comes from running a kernel, compiling one, or reading
triton's own source. No UI.
"""
from __future__ import annotations

from softmax_core.hardware import runtime  # noqa: F401  (first: where the interpreter was asked for, triton's library is made interpretable before @triton.jit runs)

import dataclasses
import inspect
import math
import struct
import time
from dataclasses import dataclass

import torch
import triton
import triton.language as tl

from softmax_core.hardware.compile import KernelResources, kernel_resources
from softmax_core.hardware.gpu import GpuSpec, default_gpu
from softmax_core.launch.api import rows_unit_stride, softmax, tutorial_softmax
from softmax_core.kernels.tutorial import tutorial_softmax_kernel
from softmax_core.plans.tutorial import (TUTORIAL_NUM_WARPS, plan_launch, tutorial_compile_job, tutorial_num_stages,
                            tutorial_num_warps)
from softmax_core.words import Coded
from softmax_core.launch.chapter_test import (CHAPTER_TEST_ATOL, CHAPTER_TEST_RTOL, CHAPTER_TEST_SIZE,  # noqa: F401
                                            UnitTestResult, chapter_unit_test)



# -- registers and shared memory: the chapter's way (live GPU) and the offline way ---------------------------
@dataclass(frozen=True)
class ResourceReport:
    n_regs: int
    n_spills: int
    shared_bytes: int
    block_size: int
    num_warps: int
    num_stages: int
    how: Coded                   # where the numbers came from (compile.RegisterSource, softmax_core.words says it)


def _tutorial_meta(n_cols: int, gpu: GpuSpec) -> tuple[int, int, int]:
    block_size = triton.next_power_of_2(n_cols)
    return block_size, tutorial_num_warps(block_size), tutorial_num_stages(gpu)


class WarmupDoesNotFit(RuntimeError):
    """`_init_handles()` refused the kernel (Triton's OutOfResources): what the chapter's wrapper meets on a
    long row. Carries the figures so the app can explain it in the reader's language."""

    def __init__(self, block_size: int, required: int, limit: int, resource: str):
        super().__init__(f"BLOCK_SIZE {block_size}: {resource} {required:,} > {limit:,}")
        self.block_size, self.required, self.limit, self.resource = block_size, required, limit, resource


def warmup_resources(n_rows: int, n_cols: int, dtype: torch.dtype = torch.float32) -> ResourceReport:
    """The chapter's own calls, on this machine's GPU: `kernel.warmup(...)` compiles without launching,
    `_init_handles()` loads the binary, and the driver reports `n_regs`; `metadata.shared` is what the
    compiler reserved. Raises RuntimeError when there is no GPU (the interpreter has no registers)."""
    if runtime.INTERPRETED:
        raise RuntimeError("no GPU here: warmup needs a device to load the kernel on")
    gpu = default_gpu()
    block_size, num_warps, num_stages = _tutorial_meta(n_cols, gpu)
    x = torch.empty((n_rows, n_cols), dtype=dtype, device=runtime.kernel_device())
    y = torch.empty_like(x)
    kernel = tutorial_softmax_kernel.warmup(x, y, x.stride(0), y.stride(0), n_rows, n_cols, y,
                                            BLOCK_SIZE=block_size, num_stages=num_stages, num_warps=num_warps,
                                            grid=(1,))
    from triton.runtime.errors import OutOfResources
    try:
        kernel._init_handles()        # loading is where the driver refuses a kernel that needs too much
    except OutOfResources as exc:
        raise WarmupDoesNotFit(block_size, int(exc.required), int(exc.limit), exc.name) from exc
    return ResourceReport(int(kernel.n_regs), int(kernel.n_spills), int(kernel.metadata.shared), block_size,
                          num_warps, num_stages, "kernel.warmup(...); kernel._init_handles(); kernel.n_regs, "
                          "kernel.metadata.shared")


def offline_resources(n_cols: int, dtype: torch.dtype = torch.float32, gpu: GpuSpec | None = None,
                      resources_of=None) -> ResourceReport:
    """The same two numbers without a GPU: compile the same kernel for the GPU's architecture and read the
    cubin (softmax_core.hardware.compile). Never loads it, even where a GPU is present, so the two ways can be compared."""
    gpu = gpu or default_gpu()
    block_size, num_warps, num_stages = _tutorial_meta(n_cols, gpu)
    job = dataclasses.replace(tutorial_compile_job(block_size, num_warps, num_stages, dtype, gpu), on_device=False)
    res: KernelResources = (resources_of or kernel_resources)(job)
    return ResourceReport(res.n_regs, res.n_spills, res.shared_bytes, block_size, num_warps, num_stages, res.how)


# `resources_of` (default softmax_core.hardware.compile.kernel_resources): where a job's registers and shared
# memory are read; the app passes one that answers from a device record for the GPU it was made on.


# -- strides -------------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class StrideCase:
    name: str                    # "contiguous" | "column_slice" | "every_other_row" | "transposed"
    expression: str              # how the view is made, as torch code
    shape: tuple[int, int]
    stride: tuple[int, int]
    contiguous: bool
    copies: bool                 # the launchers copy the input first (its rows are not unit-stride)
    kernel_row_stride: int       # input_row_stride the kernel then receives (both launchers alike)
    tutorial_error: float        # max |y - torch.softmax(x.double())|, tutorial_softmax
    softmax_error: float         # the same, softmax_core.softmax
    assumed_contiguous_error: float  # the same if the kernel were told stride(0) == n_cols (the bug strides prevent)


STRIDE_VIEWS = ("contiguous", "column_slice", "every_other_row", "transposed")


def _views(n_rows: int, n_cols: int, seed: int) -> list[tuple[str, str, torch.Tensor]]:
    g = torch.Generator().manual_seed(seed)
    device = runtime.kernel_device()
    wide = torch.randn(2 * n_rows, 2 * n_cols, generator=g).to(device)
    tall = torch.randn(n_cols, n_rows, generator=g).to(device)
    views = [("x = torch.randn(M, N)", wide[:n_rows, :n_cols].contiguous()),
             ("x = big[:, :N]        # big: (M, 2N)", wide[:n_rows, :n_cols]),
             ("x = big[::2, :N]     # big: (2M, 2N)", wide[::2, :n_cols]),
             ("x = other.t()          # other: (N, M)", tall.t())]
    return [(name, expression, x) for name, (expression, x) in zip(STRIDE_VIEWS, views)]


def _max_error(y: torch.Tensor, x: torch.Tensor) -> float:
    ref = torch.softmax(x.double(), dim=-1)
    return float((y.double() - ref).abs().max())


STRIDE_DEMO = (6, 10)        # small enough to list every row's addresses


def stride_cases(n_rows: int = STRIDE_DEMO[0], n_cols: int = STRIDE_DEMO[1], seed: int = 0) -> tuple[StrideCase, ...]:
    """Four views of the same kind of matrix, run through both launchers, with their errors."""
    if n_rows < 1 or n_cols < 2:
        raise ValueError("stride demo needs n_rows >= 1 and n_cols >= 2")
    cases = []
    for name, expression, x in _views(n_rows, n_cols, seed):
        rows = rows_unit_stride(x)   # what tutorial_softmax and softmax hand the kernel
        # A kernel that trusted the shape instead of the strides would read n_rows x n_cols packed elements
        # from where x starts in memory: exactly what as_strided with strides (n_cols, 1) selects.
        trusting = torch.as_strided(x, (n_rows, n_cols), (n_cols, 1))
        cases.append(StrideCase(
            name=name, expression=expression, shape=tuple(x.shape), stride=tuple(x.stride()),
            contiguous=x.is_contiguous(), copies=rows is not x, kernel_row_stride=rows.stride(0),
            tutorial_error=_max_error(tutorial_softmax(x), x), softmax_error=_max_error(softmax(x), x),
            assumed_contiguous_error=_max_error(tutorial_softmax(trusting.contiguous()), x)))
    return tuple(cases)


def stride_addresses(row_stride: int, n_rows: int, n_cols: int) -> tuple[tuple[int, int], ...]:
    """(first, last) element offset the kernel reads for each row: row_idx * input_row_stride + [0, n_cols)."""
    return tuple((r * row_stride, r * row_stride + n_cols - 1) for r in range(n_rows))


# -- num_stages and num_warps ---------------------------------------------------------------------------------
@dataclass(frozen=True)
class StageCost:
    num_stages: int
    n_regs: int
    shared_bytes: int
    row_bytes: int               # one padded row of the input: BLOCK_SIZE x element size


STAGE_GROWTH = ("row", "none", "uneven")


@dataclass(frozen=True)
class StageGrowth:
    """What each further num_stages costs in shared memory, read from a stages_cost table: "row" (each adds
    exactly one padded row: a buffer for the row being loaded), "none" (no stage adds a byte: the compiler
    buffers no rows in shared memory on this GPU), or "uneven" (they add other amounts: `steps`)."""

    kind: str                    # one of STAGE_GROWTH
    steps: tuple[int, ...]       # bytes each further stage adds, in order
    row_bytes: int
    element_bytes: int


def stage_growth(costs: tuple[StageCost, ...], element_bytes: int) -> StageGrowth:
    steps = tuple(b.shared_bytes - a.shared_bytes for a, b in zip(costs, costs[1:]))
    row = costs[0].row_bytes if costs else 0
    kind = ("none" if all(s == 0 for s in steps) else "row" if all(s == row for s in steps) else "uneven")
    return StageGrowth(kind, steps, row, element_bytes)


def stages_cost(n_cols: int, dtype: torch.dtype = torch.float32, gpu: GpuSpec | None = None,
                stages: tuple[int, ...] = (1, 2, 3, 4), resources_of=None) -> tuple[StageCost, ...]:
    """Compile the tutorial kernel once per num_stages and read what each asks of the SM: the pipelined
    loop keeps num_stages - 1 rows in flight, each in a buffer of shared memory."""
    gpu = gpu or default_gpu()
    block_size = triton.next_power_of_2(n_cols)
    num_warps = tutorial_num_warps(block_size)
    row_bytes = block_size * torch.empty((), dtype=dtype).element_size()
    out = []
    for s in stages:
        job = dataclasses.replace(tutorial_compile_job(block_size, num_warps, s, dtype, gpu), on_device=False)
        res = (resources_of or kernel_resources)(job)
        out.append(StageCost(s, res.n_regs, res.shared_bytes, row_bytes))
    return tuple(out)


@dataclass(frozen=True)
class WarpsRow:
    block_size: int
    num_warps: int
    threads: int
    values_per_thread: int       # how many of the row's lanes each thread holds in registers


def num_warps_thresholds() -> tuple[tuple[int, int], ...]:
    """The heuristic itself, as tutorial_plan keeps it: (BLOCK_SIZE at least, num_warps), first match wins."""
    return TUTORIAL_NUM_WARPS


def num_warps_rule(block_sizes: tuple[int, ...], warp_size: int = 32) -> tuple[WarpsRow, ...]:
    """What the heuristic gives each BLOCK_SIZE, and the quantity it keeps in check: a row of BLOCK_SIZE
    values is spread over num_warps x warp_size threads, so each thread holds BLOCK_SIZE / threads of them."""
    rows = []
    for b in block_sizes:
        w = tutorial_num_warps(b)
        threads = w * warp_size
        rows.append(WarpsRow(b, w, threads, max(1, b // threads)))
    return tuple(rows)


@dataclass(frozen=True)
class WarpsCost:
    rule: WarpsRow
    n_regs: int | None           # registers per thread of the compiled kernel; None: it does not compile for the GPU
    n_spills: int | None


def num_warps_cost(block_sizes: tuple[int, ...], dtype: torch.dtype = torch.float32,
                   gpu: GpuSpec | None = None, resources_of=None) -> tuple[WarpsCost, ...]:
    """The rule for each BLOCK_SIZE beside the registers the kernel then needs, compiled offline for `gpu`'s
    architecture (`offline_resources`, so the same numbers with or without the GPU at hand)."""
    gpu = gpu or default_gpu()
    out = []
    for r in num_warps_rule(block_sizes, gpu.warp_size):
        try:
            res = offline_resources(r.block_size, dtype, gpu, resources_of)
            out.append(WarpsCost(r, res.n_regs, res.n_spills))
        except Exception:        # a row too wide to compile for this GPU: the rule still stands
            out.append(WarpsCost(r, None, None))
    return tuple(out)


# -- the 3-D grid and tl.exp ------------------------------------------------------------------------------------
@dataclass(frozen=True)
class GridQuirk:
    source: str                  # CompiledKernel.__getitem__, from the installed triton
    line: str                    # the line that indexes grid[0], grid[1], grid[2] ("" if this triton has none)
    triton_version: str


def grid_quirk() -> GridQuirk:
    """Why the chapter launches with grid=(num_programs, 1, 1): warmup returns a CompiledKernel, and its
    launcher reads all three grid dimensions. Read from the installed triton, not retold."""
    from triton.compiler.compiler import CompiledKernel

    source = inspect.getsource(CompiledKernel.__getitem__)
    line = next((ln.strip() for ln in source.splitlines() if "grid[2]" in ln), "")
    return GridQuirk(source, line, triton.__version__)


@triton.jit
def _exp_kernel(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    # The same tl.exp the tutorial kernel calls, on a plain vector.
    offsets = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offsets < n
    tl.store(y_ptr + offsets, tl.exp(tl.load(x_ptr + offsets, mask=mask)), mask=mask)


@dataclass(frozen=True)
class ExpError:
    lo: float
    hi: float
    n: int
    tl_max_rel: float            # max |tl.exp(x) - exp(x)| / exp(x), exp in float64
    tl_max_ulp: float            # the same error in units of float32's last place at exp(x)
    torch_max_rel: float         # torch.exp in float32, for comparison
    torch_max_ulp: float
    worst_x: float               # where tl.exp was furthest off
    backend: Coded               # runtime.backend()


EXP_BLOCK = 1024


def exp_error(lo: float = -20.0, hi: float = 0.0, n: int = 1 << 14) -> ExpError:
    """Run tl.exp over n evenly spaced float32 inputs in [lo, hi] (after subtracting the max, every input of
    the kernel's exp is <= 0) and compare with float64's exp. On a GPU this measures the hardware's
    approximation; under the interpreter it measures what the interpreter uses (numpy's float32 exp)."""
    if not (math.isfinite(lo) and math.isfinite(hi) and lo < hi) or n < 2:
        raise ValueError("need finite lo < hi and n >= 2")
    x = torch.linspace(lo, hi, n, dtype=torch.float32, device=runtime.kernel_device())
    y = torch.empty_like(x)
    with runtime.one_launch_at_a_time():
        _exp_kernel[(triton.cdiv(n, EXP_BLOCK),)](x, y, n, BLOCK=EXP_BLOCK)
    exact = torch.exp(x.double())
    ulp = torch.finfo(torch.float32).eps * torch.exp2(torch.floor(torch.log2(exact)))

    def errors(approx: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        diff = (approx.double() - exact).abs()
        return diff / exact, diff / ulp

    tl_rel, tl_ulp = errors(y)
    t_rel, t_ulp = errors(torch.exp(x))
    worst = int(torch.argmax(tl_rel))
    return ExpError(lo, hi, n, float(tl_rel.max()), float(tl_ulp.max()), float(t_rel.max()), float(t_ulp.max()),
                    float(x[worst]), runtime.backend())


@dataclass(frozen=True)
class ExpPtx:
    log2e: str                       # log2(e) as PTX writes a float32 constant, e.g. "0f3FB8AA3B"
    multiplies: tuple[str, ...]      # x * log2(e)
    exponentials: tuple[str, ...]    # 2 ** that


def float32_ptx(value: float) -> str:
    """A float32 constant as PTX spells it: 0f and its 8 hex digits."""
    return "0f" + struct.pack(">f", value).hex().upper()


def exp_instructions(ptx: str) -> ExpPtx:
    """The PTX lines that compute the exponential: the compiler turns tl.exp(x) into ex2.approx of
    x * log2(e), the GPU's fast base-2 exponential."""
    log2e = float32_ptx(math.log2(math.e))
    lines = [line.strip() for line in ptx.splitlines()]
    return ExpPtx(log2e, tuple(ln for ln in lines if ln.startswith("mul") and log2e in ln),
                  tuple(ln for ln in lines if ln.startswith("ex2.")))


__all__ = ["CHAPTER_TEST_SIZE", "ResourceReport", "warmup_resources", "offline_resources", "StrideCase",
           "stride_cases", "stride_addresses", "StageCost", "stages_cost", "WarpsRow", "num_warps_thresholds",
           "num_warps_rule", "UnitTestResult", "chapter_unit_test", "GridQuirk", "grid_quirk", "ExpError",
           "exp_error", "ExpPtx", "float32_ptx", "exp_instructions"]
