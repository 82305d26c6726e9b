"""Command line of the benchmark harness: `python -m softmax_bench` runs a sweep on this GPU and saves it as a
record (CSV + JSON with provenance) in --out. `python -m softmax_core --benchmark ...` hands over to it.

Needs neither streamlit nor altair, so it runs on a bare GPU machine.
"""
from __future__ import annotations

import argparse
import shlex
import sys
from typing import Callable

import softmax_bench as bench
from softmax_bench import PROVIDERS, BenchmarkRun
from softmax_core.hardware import dtypes, runtime


def text_progress(stream=None, width: int = 30) -> Callable[[int, int, str], None]:
    """A progress bar for the command line. On a terminal it redraws one line; in a log (not a tty) it
    prints a line every 10% so the log stays short."""
    stream = stream or sys.stdout
    interactive = stream.isatty()
    shown = {"tenth": -1}

    def report(done: int, total: int, label: str) -> None:
        fraction = done / total if total else 1.0
        bar = "#" * round(fraction * width) + "-" * (width - round(fraction * width))
        line = f"[{bar}] {done}/{total} {label}"
        if interactive:
            stream.write("\r" + line.ljust(width + 50) + ("\n" if done == total else ""))
        elif int(fraction * 10) > shown["tenth"] or done == total:
            shown["tenth"] = int(fraction * 10)
            stream.write(line + "\n")
        stream.flush()
    return report


def format_table(run: BenchmarkRun) -> str:
    """GB/s per N (rows) and provider (columns), then each provider's ratio to copy, then why things failed."""
    f = run.frame
    parts = []
    for direction, part in f.groupby("direction", sort=False):
        cells = part.assign(cell=[(f"{g:,.0f}" if g >= 100 else f"{g:.3g}") if s == "ok" else
                                  ("fails" if s == "failed" else "–")
                                  for g, s in zip(part.gbps, part.status)])
        table = cells.pivot(index="N", columns="provider", values="cell")[list(dict.fromkeys(part.provider))]
        parts.append(f"{direction}, {run.provenance.get('dtype')}, M={run.provenance.get('M')}: GB/s\n"
                     + table.to_string())
        if part.copy_ratio.notna().any():
            ratio = part.pivot(index="N", columns="provider", values="copy_ratio")[list(dict.fromkeys(part.provider))]
            parts.append(f"{direction}: ratio to copy (same run)\n" + ratio.drop(columns="copy", errors="ignore")
                         .to_string(float_format=lambda v: f"{v:.2f}", na_rep="–"))
    problems = f[f.status != "ok"].groupby(["provider", "direction", "status", "reason"], sort=False).N.agg(list)
    if len(problems):
        parts.append("not measured:\n" + "\n".join(f"  {prov} {d} {s} at N={ns}: {why}"
                                                   for (prov, d, s, why), ns in problems.items()))
    return "\n\n".join(parts)


def _csv_list(text: str | None, cast=str) -> list | None:
    return [cast(item.strip()) for item in text.split(",") if item.strip()] if text else None


def record_stem(run: BenchmarkRun, sweep: str, dtype: str, timer: str = bench.EAGER, single: bool = False) -> str:
    """A run's file name, without extension: <gpu>-<sweep>-<dtype>-<UTC stamp> for eager timing, with
    "-cudagraph" after the sweep for CUDA-graph timing, so the two records never share a name. The tutorial
    sweep of one dtype is softmax-benchmark(-cudagraph), as the tutorial names its output."""
    suffix = "" if timer == bench.EAGER else f"-{timer}"
    if sweep == "tutorial" and single:
        return f"softmax-benchmark{suffix}"
    gpu = "".join(c if c.isalnum() else "-" for c in (run.provenance["gpu"] or "gpu").lower()).strip("-")
    stamp = run.provenance["date"][:16].replace(":", "").replace("-", "")
    return f"{gpu}-{sweep}{suffix}-{dtype}-{stamp}"


def run_models_benchmark(args: argparse.Namespace, argv: list[str]) -> int:
    """The models sweep (softmax_bench/models.py): every case once, one record in --out."""
    from softmax_bench import models

    providers = _csv_list(args.providers) or list(models.MODEL_PROVIDERS)
    cases = [c for c in models.MODEL_CASES if not args.cases or c.name in _csv_list(args.cases)]
    timer = bench.TIMERS[args.timer](args.rep_ms)
    run = models.run_models_sweep(cases, providers, timer=timer, progress=text_progress(),
                                  command=shlex.join(["python", "-m", "softmax_bench", *argv]))
    print(models.ratio_table(run).to_string(float_format=lambda v: f"{v:.2f}", na_rep="–"), flush=True)
    stem = bench.free_stem(args.out, record_stem(run, "models", "mixed", args.timer))
    csv_path, json_path = bench.save_run(run, args.out, stem)
    print(f"wrote {csv_path} (table) and {json_path} (provenance)", flush=True)
    return 0


def run_benchmark(args: argparse.Namespace, argv: list[str]) -> int:
    """Run the chosen sweep once per dtype, print each table, save each run as CSV + JSON in --out."""
    if args.sweep == "models":
        return run_models_benchmark(args, argv)
    if args.sweep == "tutorial":  # the tutorial's benchmark, plus the copy roofline so ratios can be read off
        M, sizes, dtype_names = bench.TUTORIAL_SWEEP_M, bench.TUTORIAL_SWEEP_N, ["float32"]
        providers, directions = ["copy", "tutorial", "tuned", "torch"], ["forward"]
    else:
        M, sizes, dtype_names = bench.FULL_SWEEP_M, bench.FULL_SWEEP_N, bench.FULL_SWEEP_DTYPES
        providers, directions = bench.available_providers(), ["forward", "backward"]
    try:
        sizes = _csv_list(args.sizes, int) or sizes
    except ValueError:
        print(f"--sizes takes integers separated by commas, got {args.sizes!r}")
        return 2
    dtype_names, providers = _csv_list(args.dtypes) or dtype_names, _csv_list(args.providers) or providers
    if bad := [d for d in dtype_names if d not in dtypes.TUTORIAL_DTYPES] + [p for p in providers if p not in PROVIDERS]:
        print(f"unknown dtype or provider: {', '.join(bad)} (dtypes: {', '.join(dtypes.TUTORIAL_DTYPES)}; "
              f"providers: {', '.join(PROVIDERS)})")
        return 2
    command = shlex.join(["python", "-m", "softmax_bench", *argv])
    timer = bench.TIMERS[args.timer](args.rep_ms)
    for dtype in dtype_names:
        print(f"{args.sweep} sweep: M={M}, {dtype}, {len(sizes)} sizes, {', '.join(providers)}, "
              f"{' + '.join(directions)}; timer: {bench.describe_timer(timer)}", flush=True)
        run = bench.run_sweep(M, sizes, dtype, providers, directions, timer=timer,
                              progress=text_progress(), command=command)
        print(format_table(run), flush=True)
        single = len(dtype_names) == 1
        stem = record_stem(run, args.sweep, dtype, args.timer, single=single)
        if not (args.sweep == "tutorial" and single):    # the tutorial's own output name is rewritten, as it is there
            stem = bench.free_stem(args.out, stem)
        csv_path, json_path = bench.save_run(run, args.out, stem)
        print(f"wrote {csv_path} (table) and {json_path} (provenance)", flush=True)
    return 0


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="python -m softmax_bench", description=__doc__)
    parser.add_argument("--benchmark", action="store_true", help="run a benchmark sweep (needs a GPU)")
    parser.add_argument("--sweep", choices=("tutorial", "full", "models"), default="tutorial",
                        help="tutorial: the tutorial's sweep (M=4096, N=256..12672, fp32, forward); "
                             "full: the project's record sweep (fp32 + bf16, N=256..262144, forward + backward); "
                             "models: shapes from real models (vocabulary logits, attention, routers, channel "
                             "softmax, a transposed view, decode rows), forward + backward")
    parser.add_argument("--cases", help="models sweep: comma-separated case names (softmax_bench/models.py)")
    parser.add_argument("--out", default=".", help="directory where --benchmark writes <name>.csv and <name>.json")
    parser.add_argument("--providers", help="comma-separated subset of: " + ", ".join(PROVIDERS))
    parser.add_argument("--sizes", help="comma-separated N values instead of the sweep's own")
    parser.add_argument("--dtypes", help="comma-separated dtypes instead of the sweep's own")
    parser.add_argument("--timer", choices=tuple(bench.TIMERS), default=bench.EAGER,
                        help="eager: triton.testing.do_bench, each call launched from Python, L2 flushed before "
                             "each (the record); cudagraph: triton.testing.do_bench_cudagraph's method, the "
                             "calls replayed from a CUDA graph (no launch cost), L2 not flushed")
    parser.add_argument("--rep-ms", type=int, default=40, help="the timer's timed milliseconds per measurement")
    parser.add_argument("--plan", nargs=2, type=int, metavar=("ROWS", "COLS"), help="print the launch plan")
    parser.add_argument("--dtype", choices=dtypes.TUTORIAL_DTYPES, default="float32")
    parser.add_argument("--gpu", help="plan for a catalog GPU (key from softmax_core/data/gpus.json) instead of this one")
    return parser


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else [a for a in argv if a != "--benchmark"]
    args = build_parser().parse_args(argv)
    print(runtime.backend_description())
    if runtime.backend().code != runtime.Backend.GPU:
        print("a benchmark needs a GPU: this machine has none (Triton's interpreter's timings say nothing about a "
              "GPU). Recorded H200 runs are in assets/benchmarks/.")
        return 2
    return run_benchmark(args, argv)
