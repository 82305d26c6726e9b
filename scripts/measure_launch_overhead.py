"""CPU cost of one softmax call on small matrices, where it decides the speed: calls issued back to back
without waiting for the GPU. Not a test: run it on a GPU machine.

Each row is the best of 3 x CALLS calls, in µs per call, for each case in CASES:
  torch.empty_like     the allocation alone (every softmax pays one)
  torch.softmax        PyTorch's own, launched from C++
  ours                 softmax_core.softmax: a dictionary lookup, an allocation and the kept launcher
  ... forward, grad    the same call on a tensor that requires grad (autograd records the call)
  ... backward         torch.autograd.grad over a graph built once (the benchmark's eager backward)
  ours, JIT launch     our rows kernel launched bare through Triton's JIT, `kernel[grid](...)`
  kept launch alone    our kept launch (the C launch function, everything bound), y allocated once
  triton launcher alone  the compiled kernel's Python launcher, as Triton's JIT calls it, y allocated once
  cuda graph replay    a CUDA graph that captured softmax_core.softmax, replayed
  tutorial             the tutorial's wrapper
Then a cProfile of `ours` and of our backward, so the time inside our wrapper and inside Triton can be told
apart.

Records (assets/benchmarks/tuning/):
- h200-launch-overhead-20261129.csv: before (commit 69c0de7; "ours" through a launcher that cached the compiled
  kernel but still went through `CompiledKernel.__getitem__` and our per-call plan lookups; no gain measured).
- h200-launch-overhead-20261130.csv: after (this script; "ours" as described above).
- h200-launch-overhead-20261201-one-launch-path.csv: every eager layout and the backward kept per key, the C apply
  of the autograd Function (commit of softmax_core.launch.launches; torch 2.11, triton 3.6, one H200), with the
  forward-with-grad and backward rows and the shapes of issue 21 (16384x64, 4096x512 bf16, 64x1000x49 dim=1).

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
from softmax_core.kernels.tuned import softmax_rows_kernel
from softmax_core.launch import fast, ready
from softmax_core.launch.launches import cached_plan, launch_aligned

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
    plan = cached_plan(*x.shape, x.dtype, "forward", False, x.get_device(), launch_aligned(x))
    y = torch.empty_like(x)
    softmax_rows_kernel[plan.grid](x, y, x.stride(0), y.stride(0), *x.shape, ROWS=plan.rows_per_program,
                                   BLOCK_N=plan.block_n, SAFE=False, FP64=False, num_warps=plan.num_warps,
                                   num_stages=1)
    return y


def kept_alone(x):
    """The kept launch with y allocated once: what is left when our Python and the allocation are taken away."""
    sc.softmax(x)
    sc.softmax(x)
    go, y = ready.ready_call(x).go, torch.empty_like(x)
    return lambda: go(x, y)


def triton_launcher_alone(x):
    """The compiled kernel called the way Triton's JIT calls it (`CompiledKernel.run`, Triton's Python
    launcher object), y allocated once: the launch cost before we skip that object's Python."""
    sc.softmax(x)
    launch = ready.ready_call(x).launch
    y = torch.empty_like(x)
    compiled = launch.run(x, y)
    kept = fast.KeptLaunch(compiled, launch.plan.grid, x.get_device())
    step = launch.steps[0]
    args = launch.arguments((x, y)) + fast.trailing_values(step.kernel, 6, step.constexprs)
    stream = torch.cuda.current_stream().cuda_stream
    return lambda: kept.launcher(kept.grid[0], 1, 1, stream, kept.function, kept.metadata, None, None, None, *args)


def backward_of(forward, x):
    """autograd.grad over a graph built once: the eager backward as the benchmark times it."""
    leaf = x.detach().requires_grad_()
    y = forward(leaf)
    dy = torch.randn_like(y)
    return lambda: torch.autograd.grad(y, leaf, dy, retain_graph=True)


def forward_with_grad(forward, x):
    leaf = x.detach().requires_grad_()
    return lambda: forward(leaf)


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
    """Our Python per call with the kernel launches stubbed out: runs anywhere (under the interpreter too).
    Beside it, torch's own calls on this machine's CPU tensors: their compute is tiny at this size, so the
    difference is the Python and dispatch around the kernel."""
    torch.set_num_threads(1)         # torch's CPU kernels without a thread pool's start-up in each call
    rows = []
    for shape, dim in (((64, 32), -1), ((8, 16, 12), 1)):
        x = torch.randn(shape)
        sc.softmax(x, dim)
        call = ready.ready_call(x, dim)
        call.go = lambda a, b: None          # the kept launch, launching nothing
        leaf = x.clone().requires_grad_()
        sc.softmax(leaf, dim).sum().backward()
        grad_call = ready.ready_call(leaf, dim)
        grad_call.go = lambda a, b: None
        for key in list(grad_call.backward_kept):
            grad_call.backward_kept[key] = lambda a, b, c: None
        label = f"{tuple(shape)} dim={dim}"
        rows += [(label, "torch.empty_like", per_call_us(lambda: torch.empty_like(x), 20000)),
                 (label, "torch.softmax (CPU kernel)", per_call_us(lambda: torch.softmax(x, dim), 20000)),
                 (label, "ours, launch stubbed", per_call_us(lambda: sc.softmax(x, dim), 20000)),
                 (label, "torch backward (CPU kernel)", per_call_us(backward_of(lambda t: torch.softmax(t, dim), x), 5000)),
                 (label, "ours backward, launch stubbed", per_call_us(backward_of(lambda t: sc.softmax(t, dim), x), 5000)),
                 (label, "torch forward, grad", per_call_us(forward_with_grad(lambda t: torch.softmax(t, dim), x), 5000)),
                 (label, "ours forward, grad, stubbed", per_call_us(forward_with_grad(lambda t: sc.softmax(t, dim), x), 5000))]
    for label, name, us in rows:
        print(f"{label:18s} {name:32s} {us:6.2f} us/call")
    x = torch.randn(64, 32)
    print(profile_text(lambda: sc.softmax(x)))
    print(profile_text(backward_of(lambda t: sc.softmax(t, -1), x)))


# (label, shape, dtype, dim): the record sweep's short rows, and the shapes issue 21 measured CPU cost at
CASES = (("4096x256", (4096, 256), torch.float32, -1), ("4096x1024", (4096, 1024), torch.float32, -1),
         ("4096x256", (4096, 256), torch.bfloat16, -1), ("16384x64", (16384, 64), torch.float32, -1),
         ("4096x512", (4096, 512), torch.bfloat16, -1), ("64x1000x49 dim=1", (64, 1000, 49), torch.float32, 1))


def main(out: str | None, profile_out: str | None) -> None:
    rows = []
    for label, shape, dtype, dim in CASES:
        x = torch.randn(shape, device="cuda", dtype=dtype)
        providers = [("torch.empty_like", lambda: torch.empty_like(x)),
                     ("torch.softmax", lambda: torch.softmax(x, dim)),
                     ("ours", lambda: sc.softmax(x, dim)),
                     ("torch forward, grad", forward_with_grad(lambda t: torch.softmax(t, dim), x)),
                     ("ours forward, grad", forward_with_grad(lambda t: sc.softmax(t, dim), x)),
                     ("torch backward", backward_of(lambda t: torch.softmax(t, dim), x)),
                     ("ours backward", backward_of(lambda t: sc.softmax(t, dim), x))]
        if dim == -1 and len(shape) == 2:
            providers += [("ours, JIT launch", lambda: jit_path(x)),
                          ("kept launch alone", kept_alone(x)),
                          ("triton launcher alone", triton_launcher_alone(x)),
                          ("cuda graph replay", graph_replay(x)),
                          ("tutorial", lambda: sc.tutorial_softmax(x))]
        for name, fn in providers:
            us = per_call_us(fn)
            rows.append(dict(case=label, dtype=dtypes.name(dtype), provider=name, us_per_call=round(us, 2)))
            print(f"{label:18s} {dtypes.name(dtype):9s} {name:22s} {us:6.2f} us/call", flush=True)
    x = torch.randn(4096, 256, device="cuda")
    text = profile_text(lambda: sc.softmax(x))
    leaf = x.clone().requires_grad_()
    y = sc.softmax(leaf)
    dy = torch.randn_like(y)
    text += "\n-- backward --\n" + profile_text(lambda: torch.autograd.grad(y, leaf, dy, retain_graph=True))
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
