"""CPU cost of one softmax call on small matrices, where it decides the speed: calls issued back to back
without waiting for the GPU. Not a test: run it on a GPU machine.

Each row is the best of 3 x CALLS calls, in µs per call, for:
  torch.empty_like     the allocation alone (every softmax pays one)
  torch.softmax        PyTorch's own, launched from C++
  ours                 softmax_core.softmax: a dictionary lookup, an allocation and the kept launcher
  ours, JIT launch     our rows kernel launched bare through Triton's JIT, `kernel[grid](...)`
  kept launch alone    our kept launch (the C launch function, everything bound), y allocated once
  triton launcher alone  the compiled kernel's Python launcher, as Triton's JIT calls it, y allocated once
  cuda graph replay    a CUDA graph that captured softmax_core.softmax, replayed
  tutorial             the tutorial's wrapper
Then a cProfile of `ours`, so the time inside our wrapper and inside Triton can be told apart.

Records (assets/benchmarks/tuning/):
- h200-launch-overhead-20261129.csv: before (commit 69c0de7; "ours" through a launcher that cached the compiled
  kernel but still went through `CompiledKernel.__getitem__` and our per-call plan lookups; no gain measured).
- h200-launch-overhead-20261130.csv: after (this script; "ours" as described above).

    PYTHONPATH=. python scripts/measure_launch_overhead.py [OUT.csv] [--profile OUT.txt]
    PYTHONPATH=. python scripts/measure_launch_overhead.py --wrapper-only   # any machine: kernel launch stubbed
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
from softmax_core.launch import api as launchers

CALLS = 2000


def sync() -> None:
    if torch.cuda.is_available():
        torch.cuda.synchronize()


def per_call_us(fn, calls: int = CALLS) -> float:
    fn()
    sync()
    best = float("inf")
    for _ in range(3):
        start = time.perf_counter()
        for _ in range(calls):
            fn()
        sync()
        best = min(best, (time.perf_counter() - start) / calls * 1e6)
    return best


def jit_path(x):
    """Our rows kernel launched bare through Triton's JIT: the launch without our wrapper's Python."""
    plan = launchers.forward_plan(x, False)
    y = torch.empty_like(x)
    launchers.softmax_rows_kernel[plan.grid](x, y, x.stride(0), y.stride(0), *x.shape, ROWS=plan.rows_per_program,
                                             BLOCK_N=plan.block_n, SAFE=False, FP64=False, num_warps=plan.num_warps,
                                             num_stages=1)
    return y


def kept_alone(x):
    """The kept launch with y allocated once: what is left when our Python and the allocation are taken away."""
    sc.softmax(x)
    ready = next(r for k, r in launchers._READY.items() if k[0] == x.shape and k[2] == x.dtype)
    go, y = ready.go, torch.empty_like(x)
    return lambda: go(x, y)


def triton_launcher_alone(x):
    """The kept compiled kernel called the way Triton's JIT calls it (`CompiledKernel.run`, Triton's Python
    launcher object), y allocated once: the launch cost before we skip that object's Python."""
    from softmax_core.launch import fast as fast_launch

    sc.softmax(x)
    kept = next(k for key, k in fast_launch._KEPT.items() if key[0] is launchers.softmax_rows_kernel
                and key[5][0][0] == x.dtype)
    y = torch.empty_like(x)
    args = (x, y, x.stride(0), x.shape[1], x.shape[0], x.shape[1], *kept.tail)
    stream = torch.cuda.current_stream().cuda_stream
    return lambda: kept.run(kept.grid0, 1, 1, stream, kept.function, kept.metadata, None, None, None, *args)


def graph_replay(x):
    sc.softmax(x)
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        sc.softmax(x)
    return graph.replay


def profile_text(fn, calls: int = 2000) -> str:
    profiler = cProfile.Profile()
    profiler.enable()
    for _ in range(calls):
        fn()
    profiler.disable()
    sync()
    out = io.StringIO()
    pstats.Stats(profiler, stream=out).sort_stats("tottime").print_stats(15)
    return out.getvalue()


def wrapper_only() -> None:
    """Our Python per call with the launch itself stubbed out: runs anywhere (the interpreter never launches
    here). Compare with `def f(x): return torch.empty_like(x)` on the same machine."""
    x = torch.randn(4096, 256)
    sc.softmax(torch.randn(4096, 256)[:2].contiguous())        # compile the plan cache machinery
    key = (x.shape, x.stride(), x.dtype, x.get_device(), -1, None, False, x.data_ptr() % 16)
    plan = launchers.cached_plan(4096, 256, x.dtype, "forward", False, -1)
    ready = launchers.ReadyForward(plan, False, x.dtype, x.shape, 4096, 256, 256)
    ready.go = lambda a, b: None          # a kept launch that launches nothing
    launchers._READY[key] = ready
    rows = [("torch.empty_like", per_call_us(lambda: torch.empty_like(x), 20000)),
            ("ours, launch stubbed", per_call_us(lambda: sc.softmax(x), 20000))]
    for name, us in rows:
        print(f"{name:24s} {us:6.2f} us/call")
    print(profile_text(lambda: sc.softmax(x)))


def main(out: str | None, profile_out: str | None) -> None:
    rows = []
    for dtype in (torch.float32, torch.bfloat16):
        for n in (256, 1024):   # above N = 256 the GPU's own time shows through back-to-back calls
            x = torch.randn(4096, n, device="cuda", dtype=dtype)
            providers = (("torch.empty_like", lambda: torch.empty_like(x)),
                         ("torch.softmax", lambda: torch.softmax(x, -1)),
                         ("ours", lambda: sc.softmax(x)),
                         ("ours, JIT launch", lambda: jit_path(x)),
                         ("kept launch alone", kept_alone(x)),
                         ("triton launcher alone", triton_launcher_alone(x)),
                         ("cuda graph replay", graph_replay(x)),
                         ("tutorial", lambda: sc.tutorial_softmax(x)))
            for name, fn in providers:
                us = per_call_us(fn)
                rows.append(dict(dtype=dtypes.name(dtype), N=n, provider=name, us_per_call=round(us, 2)))
                print(f"{dtypes.name(dtype):9s} N={n:5d} {name:20s} {us:6.2f} us/call", flush=True)
    x = torch.randn(4096, 256, device="cuda")
    text = profile_text(lambda: sc.softmax(x))
    print(text)
    if profile_out:
        with open(profile_out, "w") as f:
            f.write(text)
    if out:
        with open(out, "w", newline="") as f:
            w = csv.DictWriter(f, fieldnames=list(rows[0]))
            w.writeheader()
            w.writerows(rows)


if __name__ == "__main__":
    if "--wrapper-only" in sys.argv:
        wrapper_only()
        sys.exit(0)
    argv = sys.argv[1:]
    profile_out = argv[argv.index("--profile") + 1] if "--profile" in argv else None
    paths = [a for a in argv if not a.startswith("--") and a != profile_out]
    main(paths[0] if paths else None, profile_out)
