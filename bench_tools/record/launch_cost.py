"""CPU cost of one softmax call on small matrices, where it decides the speed: calls issued back to back
without waiting for the GPU, so the time per call is the host's (Python, the allocation, the launch) as long
as the GPU's own work per call is shorter. Not a test: run it on a GPU machine.

Each row is the best of 3 x CALLS calls, in µs per call, for:
  torch.empty_like     the allocation alone (every softmax pays one)
  torch.softmax        PyTorch's own, launched from C++
  softmax_core.softmax the library's drop-in (its kept launch for a shape it has seen)
  tutorial             the tutorial's wrapper (plans from the compiled kernel's resources, then launches)
  cuda graph replay    a CUDA graph that captured softmax_core.softmax, replayed: no Python per call
Then a cProfile of softmax_core.softmax, so the time inside the library and inside Triton can be told apart.

    python -m bench_tools.record.launch_cost [OUT.csv] [--profile OUT.txt]

Earlier records of this measurement are in assets/benchmarks/tuning/h200-launch-overhead-*.csv.
"""
from __future__ import annotations

import cProfile
import csv
import io
import pstats
import sys
import time

import torch

import softmax_core as sc
from softmax_core.hardware import dtypes

CALLS = 2000
SIZES = (256, 1024)        # above N = 1024 the GPU's own time per call shows through back-to-back calls


def per_call_us(fn, calls: int = CALLS) -> float:
    """The best of three runs of `calls` back-to-back calls, each run ended by one synchronize."""
    fn()
    torch.cuda.synchronize()
    best = float("inf")
    for _ in range(3):
        start = time.perf_counter()
        for _ in range(calls):
            fn()
        torch.cuda.synchronize()
        best = min(best, (time.perf_counter() - start) / calls * 1e6)
    return best


def graph_replay(x: torch.Tensor):
    sc.softmax(x)
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        sc.softmax(x)
    return graph.replay


def profile_text(fn, calls: int = CALLS) -> str:
    profiler = cProfile.Profile()
    profiler.enable()
    for _ in range(calls):
        fn()
    profiler.disable()
    torch.cuda.synchronize()
    out = io.StringIO()
    pstats.Stats(profiler, stream=out).sort_stats("tottime").print_stats(15)
    return out.getvalue()


def measure() -> list[dict]:
    rows = []
    for dtype in (torch.float32, torch.bfloat16):
        for n in SIZES:
            x = torch.randn(4096, n, device="cuda", dtype=dtype)
            calls = (("torch.empty_like", lambda: torch.empty_like(x)),
                     ("torch.softmax", lambda: torch.softmax(x, -1)),
                     ("softmax_core.softmax", lambda: sc.softmax(x)),
                     ("tutorial", lambda: sc.tutorial_softmax(x)),
                     ("cuda graph replay", graph_replay(x)))
            for name, fn in calls:
                us = per_call_us(fn)
                rows.append(dict(dtype=dtypes.name(dtype), N=n, provider=name, us_per_call=round(us, 2)))
                print(f"{dtypes.name(dtype):9s} N={n:5d} {name:22s} {us:6.2f} us/call", flush=True)
    return rows


def main(argv: list[str]) -> int:
    if not torch.cuda.is_available():
        print("needs a GPU: what is measured is the host's cost of launching GPU work")
        return 2
    profile_out = argv[argv.index("--profile") + 1] if "--profile" in argv else None
    paths = [a for a in argv if not a.startswith("--") and a != profile_out]
    rows = measure()
    x = torch.randn(4096, SIZES[0], device="cuda")
    text = profile_text(lambda: sc.softmax(x))
    print(text)
    if profile_out:
        with open(profile_out, "w") as f:
            f.write(text)
    if paths:
        with open(paths[0], "w", newline="") as f:
            writer = csv.DictWriter(f, fieldnames=list(rows[0]))
            writer.writeheader()
            writer.writerows(rows)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
