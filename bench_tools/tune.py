"""A tuning sweep on the benchmark harness. A variant is a kernel launch, not a plan: the @triton.jit function,
its constexprs, the launch options and the grid, with a function that lays out the kernel's runtime arguments.
Every variant is checked against torch (float32 reference, the dtype's tolerance) and then timed by the
harness's timer, beside the copy roofline and the library's providers at the same shape, so each variant's
ratio to copy comes from the same run. A variant that raises or answers wrong is a row with status "failed"
and its reason; the sweep goes on.

    python -m bench_tools.tune --list                              # the example sweep's variants
    python -m bench_tools.tune OUT_STEM [--sizes 1024,4096] [--dtype float32] [--timer eager|cudagraph]

writes OUT_STEM.csv (the harness's columns, one row per provider or variant and shape, plus each variant's
kernel, constexprs, grid, num_warps and num_stages) and OUT_STEM.json (provenance). The example sweep tries
the tutorial kernel at each size over num_warps and grid sizes; a sweep of other kernels builds its own
`Variant`s and calls `tune(shapes, variants_for, ...)`, then `fastest(frame)`.
"""
from __future__ import annotations

import argparse
import json
import shlex
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Sequence

import pandas as pd
import torch
import triton

import softmax_bench as bench
from softmax_core.hardware import dtypes, runtime
from softmax_core.hardware.gpu import default_gpu
from softmax_core.kernels.tutorial import tutorial_softmax_kernel

BASELINES = ("copy", "tuned", "torch")
SETTINGS = ("kernel", "constexprs", "grid", "num_warps", "num_stages")


@dataclass(frozen=True)
class Variant:
    """One launch of `kernel` for one shape: kernel[grid](*arguments(x, y), **constexprs, num_warps=...,
    num_stages=...), with y = torch.empty_like(x). Constexprs are (name, value) pairs, so a Variant is hashable.
    A kernel that takes `num_stages` as a constexpr of its own gets it from `constexprs`."""
    name: str                                                  # unique within a sweep: the CSV's provider
    kernel: object                                             # a @triton.jit function
    arguments: Callable[[torch.Tensor, torch.Tensor], tuple]   # the runtime arguments, in the kernel's order
    grid: tuple[int, ...]
    constexprs: tuple[tuple[str, object], ...] = ()
    num_warps: int = 4
    num_stages: int = 1

    def launch(self, x: torch.Tensor) -> torch.Tensor:
        y = torch.empty_like(x)
        options = {"num_warps": self.num_warps, "num_stages": self.num_stages, **dict(self.constexprs)}
        with runtime.one_launch_at_a_time():
            self.kernel[self.grid](*self.arguments(x, y), **options)
        return y

    def provider(self) -> bench.Provider:
        return bench.Provider(self.name, self.launch)

    def settings(self) -> dict:
        """The variant's columns of the CSV."""
        return dict(kernel=getattr(self.kernel, "__name__", str(self.kernel)),
                    constexprs=json.dumps(dict(self.constexprs)), grid="x".join(map(str, self.grid)),
                    num_warps=self.num_warps, num_stages=self.num_stages)


def tune(shapes: Sequence[tuple[int, int]], variants_for: Callable[[int, int, torch.dtype], Sequence[Variant]],
         dtype: torch.dtype | str = torch.float32, baselines: Sequence[str] = BASELINES,
         timer: bench.Timer | None = None, seed: int = 0,
         progress: Callable[[int, int, str], None] | None = None) -> pd.DataFrame:
    """Check and time, forward, the baselines and every variant at every (M, N), one shape's inputs shared
    by all of them. One row per (shape, provider or variant): the harness's columns plus SETTINGS."""
    dtype = dtypes.of(dtype, dtypes.TUTORIAL_DTYPES).torch
    timer = timer or bench.default_timer()
    plan = [(M, N, [bench.get_provider(b) for b in baselines], list(variants_for(M, N, dtype))) for M, N in shapes]
    total, done, rows = sum(len(b) + len(v) for _, _, b, v in plan), 0, []
    with bench.exclusive_gpu():
        for M, N, providers, variants in plan:
            if len({v.name for v in variants}) < len(variants):
                raise ValueError(f"variant names repeat at {M} x {N}: {[v.name for v in variants]}")
            inputs = bench.make_inputs(M, N, dtype, False, seed)
            for p in providers:
                rows.append(bench.measure(p, "forward", inputs, timer))
                done += 1
                if progress:
                    progress(done, total, f"{p.name} N={N}")
            for v in variants:
                rows.append({**bench.measure(v.provider(), "forward", inputs, timer), **v.settings()})
                done += 1
                if progress:
                    progress(done, total, f"{v.name} N={N}")
            del inputs
    columns = [*bench.COLUMNS, *SETTINGS]
    return pd.DataFrame(bench.with_copy_ratio(rows), columns=columns)


def fastest(frame: pd.DataFrame) -> pd.DataFrame:
    """Per (M, N): the checked variant with the shortest median time, its settings and its ratio to copy."""
    variants = frame[frame.kernel.notna() & (frame.status == "ok")]
    best = variants.loc[variants.groupby(["M", "N"]).ms_median.idxmin()]
    return best[["M", "N", "provider", "ms_p20", "ms_median", "ms_p80", "gbps", "copy_ratio", *SETTINGS]]


def save(frame: pd.DataFrame, stem: str | Path, timer: bench.Timer, command: str, baselines: Sequence[str]) -> tuple[Path, Path]:
    stem = Path(stem)
    stem.parent.mkdir(parents=True, exist_ok=True)
    csv_path, json_path = stem.with_name(stem.name + ".csv"), stem.with_name(stem.name + ".json")
    bench.csv_frame(frame).to_csv(csv_path, index=False)
    info = bench.provenance(int(frame.M.iloc[0]), sorted(set(map(int, frame.N))), str(frame.dtype.iloc[0]),
                            list(baselines), ["forward"], bench.timer_kind(timer), bench.timer_figures(timer),
                            command, 0)
    info.update(csv=csv_path.name, shapes=sorted({(int(m), int(n)) for m, n in zip(frame.M, frame.N)}),
                variants=sorted(set(frame.provider[frame.kernel.notna()])))
    json_path.write_text(json.dumps(info, indent=2) + "\n")
    return csv_path, json_path


# ------------------------------------------------------------------------------------- the example sweep

def tutorial_arguments(x: torch.Tensor, y: torch.Tensor) -> tuple:
    """tutorial_softmax_kernel's runtime arguments: pointers, row strides, shape, and y as the unused trace."""
    return (x, y, x.stride(0), y.stride(0), x.shape[0], x.shape[1], y)


def tutorial_variants(M: int, N: int, dtype: torch.dtype, warps: Sequence[int] = (1, 2, 4, 8, 16),
                      programs_per_sm: Sequence[int] = (1, 2, 4, 8), stages: Sequence[int] = (1, 2)) -> list[Variant]:
    """The tutorial kernel at one shape: its block (next power of two >= N) over num_warps, num_stages and
    persistent grids of k programs per SM (at most one program per row)."""
    block = triton.next_power_of_2(N)
    sms = default_gpu().multiprocessor_count
    grids = sorted({min(M, k * sms) for k in programs_per_sm})
    return [Variant(f"tutorial w{w} s{s} g{g}", tutorial_softmax_kernel, tutorial_arguments, (g,),
                    (("BLOCK_SIZE", block), ("num_stages", s)), num_warps=w)
            for w in warps for s in stages for g in grids]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench_tools.tune", description=__doc__.splitlines()[0])
    parser.add_argument("stem", nargs="?", help="write STEM.csv and STEM.json")
    parser.add_argument("--list", action="store_true", help="print the example sweep's variants and stop")
    parser.add_argument("--sizes", default="1024,4096", help="comma-separated N (M = 4096)")
    parser.add_argument("--dtype", choices=dtypes.TUTORIAL_DTYPES, default="float32")
    parser.add_argument("--timer", choices=tuple(bench.TIMERS), default=bench.EAGER)
    args = parser.parse_args(argv)
    try:
        shapes = [(4096, int(n)) for n in args.sizes.split(",")]
    except ValueError:
        parser.error(f"--sizes takes integers separated by commas, got {args.sizes!r}")
    if args.list:
        for M, N in shapes:
            for v in tutorial_variants(M, N, dtypes.torch_dtype(args.dtype)):
                print(f"{M} x {N}: {v.name}  {v.settings()}")
        return 0
    if not args.stem:
        parser.error("name the output (STEM), or ask for --list")
    if runtime.INTERPRETED:
        print("timing needs a GPU: this machine runs kernels in Triton's interpreter")
        return 2
    timer = bench.TIMERS[args.timer](40)
    frame = tune(shapes, tutorial_variants, args.dtype, timer=timer)
    print(fastest(frame).to_string(index=False))
    command = shlex.join(["python", "-m", "bench_tools.tune", *(argv if argv is not None else sys.argv[1:])])
    for path in save(frame, args.stem, timer, command, BASELINES):
        print("wrote", path)
    return 0


if __name__ == "__main__":
    sys.exit(main())
