"""CPU cost of one softmax call where it decides the speed: calls issued back to back without waiting for the
GPU, so the time per call is the host's (Python, the allocation, the launch) as long as the GPU's own work
per call is shorter. Torch is measured in the same loop, so the two are compared on one host at one time.

For each case in CASES (the record sweep's short rows and the shapes issue 21 measured), in µs per call, the
best of 3 runs of CALLS calls each ended by one synchronize:
  torch.empty_like        the allocation alone (every softmax pays one)
  torch.softmax           PyTorch's own, launched from C++
  ours                    softmax_core.softmax: a dictionary lookup, an allocation and the kept launcher
  ... forward, grad       the same call on a tensor that requires grad (autograd records the call)
  ... backward            torch.autograd.grad over a graph built once (the benchmark's eager backward)
and, for the matrices:
  ours, JIT launch        our forward kernel launched bare through Triton's JIT, `kernel[grid](...)`
  kept launch alone       our kept launch (the C launch function, everything bound), y allocated once
  cuda graph replay       a CUDA graph that captured softmax_core.softmax, replayed: no Python per call
  tutorial                the tutorial's wrapper (plans from the compiled kernel's resources, then launches)
Then a cProfile of `ours` and of our backward, so the time inside the library and inside Triton can be told
apart.

`--stub` runs anywhere (a CPU, the interpreter): every kernel launch is replaced by a function that only reads
its tensors' addresses, so what is timed is our Python around the launch, the allocation and autograd's
bookkeeping; torch.empty_like beside it is the allocation alone. Timed as the best of REPEATS short runs
(perf_counter_ns), which a loaded machine disturbs least. The GPU's C launch itself is not in it.

    python -m bench_tools.record.launch_cost [OUT.csv] [--profile OUT.txt] [--quick]   # on a GPU, ~30-60 s
(--quick: the cases in QUICK_CASES only)
    python -m bench_tools.record.launch_cost --stub [OUT.csv]                     # any machine, ~30 s

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
import triton

import softmax_core as sc
from softmax_core.hardware import dtypes
from softmax_core.launch import any_dim, ready
from softmax_core.launch.launches import SoftmaxLaunch

CALLS = 2000

# (label, shape, dtype, dim): the record sweep's short rows, and the shapes issue 21 measured CPU cost at
CASES = (("4096x256", (4096, 256), torch.float32, -1), ("4096x1024", (4096, 1024), torch.float32, -1),
         ("4096x256", (4096, 256), torch.bfloat16, -1), ("16384x64", (16384, 64), torch.float32, -1),
         ("4096x512", (4096, 512), torch.bfloat16, -1), ("64x1000x49 dim=1", (64, 1000, 49), torch.float32, 1),
         ("65536x8", (65536, 8), torch.bfloat16, -1), ("65536x64", (65536, 64), torch.float32, -1),
         ("4096x2048", (4096, 2048), torch.bfloat16, -1))
QUICK_CASES = ("4096x256", "4096x512", "64x1000x49 dim=1", "65536x8")
# (label, shape of the buffer, dtype, dim): the last two dims of the buffer swapped, softmax over `dim`
TRANSPOSED_CASES = (("(8x256x256)T dim=-1", (8, 256, 256), torch.float32, -1),)


def sync() -> None:
    if torch.cuda.is_available():
        torch.cuda.synchronize()


def per_call_us(fn, calls: int = CALLS, runs: int = 3) -> float:
    """The best of `runs` runs of `calls` back-to-back calls, each run ended by one synchronize."""
    fn()
    sync()
    best = float("inf")
    for _ in range(runs):
        start = time.perf_counter_ns()
        for _ in range(calls):
            fn()
        sync()
        best = min(best, (time.perf_counter_ns() - start) / calls / 1e3)
    return best


def forward_with_grad(forward, x):
    leaf = x.detach().requires_grad_()
    return lambda: forward(leaf)


def backward_of(forward, x):
    """autograd.grad over a graph built once: the eager backward as the benchmark times it."""
    leaf = x.detach().requires_grad_()
    y = forward(leaf)
    dy = torch.randn_like(y)
    return lambda: torch.autograd.grad(y, leaf, dy, retain_graph=True)


def call_rows(x: torch.Tensor, dim: int) -> list[tuple[str, object]]:
    """(provider, fn) for the calls every case times, torch's and ours side by side."""
    def ours(t):
        return sc.softmax(t, dim)

    def theirs(t):
        return torch.softmax(t, dim)

    return [("torch.empty_like", lambda: torch.empty_like(x)),
            ("torch.softmax", lambda: theirs(x)),
            ("ours", lambda: ours(x)),
            ("torch forward, grad", forward_with_grad(theirs, x)),
            ("ours forward, grad", forward_with_grad(ours, x)),
            ("torch backward", backward_of(theirs, x)),
            ("ours backward", backward_of(ours, x))]


class EmptyBackward(torch.autograd.Function):
    """A Python autograd node whose backward only allocates: what autograd's engine and a Python node cost."""

    @staticmethod
    def forward(ctx, x):
        return torch.empty_like(x)

    @staticmethod
    def backward(ctx, dy):
        return torch.empty_like(dy)


def backward_parts(x: torch.Tensor) -> list[tuple[str, object]]:
    """Where an eager backward's time goes: autograd.grad through a C++ node that launches nothing (the engine
    alone), through a Python node that only allocates (the engine and a Python node), torch's backward kernel
    called alone, and ours called alone (the kept backward, no autograd)."""
    leaf = x.detach().requires_grad_()
    through_clone = leaf.clone()          # CloneBackward0 hands dy on: no kernel
    through_python = EmptyBackward.apply(leaf)
    dy = torch.randn_like(x)
    y = torch.softmax(x, -1)
    sc.softmax(leaf)
    ours = ready.ready_call(leaf)
    ours_y = sc.softmax(x)
    ours.backward(ours_y, dy)
    return [("engine, C++ node, no kernel", lambda: torch.autograd.grad(through_clone, leaf, dy, retain_graph=True)),
            ("engine, Python node, one allocation",
             lambda: torch.autograd.grad(through_python, leaf, dy, retain_graph=True)),
            ("torch backward kernel alone", lambda: torch._softmax_backward_data(dy, y, -1, x.dtype)),
            ("ours backward call alone", lambda: ours.backward(ours_y, dy))]


def torch_static_launch(x: torch.Tensor):
    """An experiment: our compiled forward kernel launched through torch's C++ launcher for Triton kernels
    (torch._C._StaticCudaLauncher, what Inductor uses), with the compiled kernel's own function handle, y
    allocated once. None where this torch has no such launcher."""
    launcher = getattr(torch._C, "_StaticCudaLauncher", None)
    if launcher is None:
        return None
    sc.softmax(x)
    call = ready.ready_call(x)
    launch = call.launch
    kernel = launch.run(x, torch.empty_like(x))          # the compiled kernel the JIT launched
    signature = kernel.src.signature
    names = kernel.src.fn.arg_names
    constants = set(getattr(kernel.src, "constants", {}) or {})
    types = {"i1": "i", "i32": "i", "i64": "l", "u32": "I", "u64": "K", "fp32": "f", "fp16": "f", "bf16": "f",
             "fp64": "d"}
    arg_tys, picks = "", []
    for i, name in enumerate(names):
        ty = signature.get(name, signature.get(i))
        if ty == "constexpr" or name in constants or (i,) in constants or i in constants:
            continue
        arg_tys += "O" if str(ty).startswith("*") else types[str(ty)]
        picks.append(i)
    extra = 0
    for scratch in ("global_scratch_size", "profile_scratch_size"):
        if hasattr(kernel.metadata, scratch):
            extra += 1
    arg_tys += "O" * extra
    y = torch.empty_like(x)
    values = (x.data_ptr(), y.data_ptr()) + launch.scalars
    args = tuple(values[i] for i in picks) + (None,) * extra
    function = kernel.function
    g = launch.plan.grid
    grid = (tuple(g) + (1, 1))[:3]
    warps, shared = kernel.metadata.num_warps, kernel.metadata.shared
    stream = torch.cuda.current_stream().cuda_stream
    c_launch = launcher._launch_kernel
    c_launch(function, *grid, warps, shared, arg_tys, args, stream)
    torch.cuda.synchronize()
    ok = torch.allclose(y, torch.softmax(x, -1), atol=1e-3, rtol=1e-2)
    print(f"torch static launcher: {arg_tys} -> {'same output' if ok else 'DIFFERENT OUTPUT'}", flush=True)
    rest = args[2:]
    return lambda: c_launch(function, *grid, warps, shared, arg_tys, (x.data_ptr(), y.data_ptr()) + rest, stream)


def jit_launch(x: torch.Tensor):
    """Our forward kernel launched bare through Triton's JIT: the launch without our wrapper's Python."""
    sc.softmax(x)
    launch = ready.ready_call(x).launch
    y = torch.empty_like(x)
    return lambda: launch.run(x, y)


def kept_alone(x: torch.Tensor):
    """The kept launch with y allocated once: what is left when our Python and the allocation are taken away."""
    sc.softmax(x)
    sc.softmax(x)
    go, y = ready.ready_call(x).go, torch.empty_like(x)
    return lambda: go(x, y)


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
    sync()
    out = io.StringIO()
    pstats.Stats(profiler, stream=out).sort_stats("tottime").print_stats(15)
    return out.getvalue()


def measure(quick: bool = False) -> list[dict]:
    rows = []
    for label, shape, dtype, dim in CASES:
        if quick and (label not in QUICK_CASES or (label == "4096x256" and dtype != torch.float32)):
            continue
        x = torch.randn(shape, device="cuda", dtype=dtype)
        providers = call_rows(x, dim)
        if dim == -1 and len(shape) == 2:
            providers += [("ours, JIT launch", jit_launch(x)),
                          ("kept launch alone", kept_alone(x)),
                          ("cuda graph replay", graph_replay(x)),
                          ("tutorial", lambda: sc.tutorial_softmax(x))]
            if label in ("4096x256", "4096x512"):
                providers += backward_parts(x)
                try:
                    static = torch_static_launch(x)
                except Exception as e:  # noqa: BLE001  (an experiment: say why it did not run)
                    print(f"torch static launcher: {type(e).__name__}: {e}", flush=True)
                    static = None
                if static is not None:
                    providers.append(("torch static launcher alone", static))
        for name, fn in providers:
            us = per_call_us(fn)
            rows.append(dict(case=label, dtype=dtypes.name(dtype), provider=name, us_per_call=round(us, 2)))
            print(f"{label:18s} {dtypes.name(dtype):9s} {name:22s} {us:6.2f} us/call", flush=True)
    for label, shape, dtype, dim in TRANSPOSED_CASES:
        x = torch.randn(shape, device="cuda", dtype=dtype).transpose(-1, -2)
        for name, fn in call_rows(x, dim):
            us = per_call_us(fn)
            rows.append(dict(case=label, dtype=dtypes.name(dtype), provider=name, us_per_call=round(us, 2)))
            print(f"{label:18s} {dtypes.name(dtype):9s} {name:22s} {us:6.2f} us/call", flush=True)
    return rows


def stub_launches() -> None:
    """Every kernel launch from here on reads its tensors' addresses and launches nothing."""
    def stub_go(tensors, key):
        def go(*t):
            for a in t:
                a.data_ptr()
        return go

    def launch_and_keep(self, tensors, key):
        go = self.kept.get(key)
        if go is None:
            go = self.kept[key] = stub_go(tensors, key)
        return go

    SoftmaxLaunch.launch_and_keep = launch_and_keep
    def run_any_dim(self, tensors, ints, wrap=None):     # (no compiled kernel: nothing to keep)
        for a in tensors:
            a.data_ptr()

    any_dim.PlanCalls.run = run_any_dim
    ready.forget_ready_calls()


def stub_shape(shape: tuple, dim: int) -> tuple:
    """A case's shape for --stub: a softmax over a dim that is not the last is laid out by a copy, which on a
    CPU would time the copy; a few rows keep the layout and make the copy's own work negligible."""
    return shape if dim in (-1, len(shape) - 1) else (2,) + tuple(min(d, 16) for d in shape[1:])


def measure_stubbed(calls: int = 200, runs: int = 200) -> list[dict]:
    """Our Python per call with the launches stubbed (module docstring), beside torch.empty_like, and torch's
    calls on an 8 x 8 CPU tensor (on a CPU, what torch's dispatch and autograd cost with almost no kernel)."""
    torch.set_num_threads(1)
    stub_launches()
    rows = []
    tiny = torch.randn(8, 8)
    cases = [("8x8 CPU", (8, 8), torch.float32, -1, "torch")]
    cases += [(label, stub_shape(shape, dim), dtype, dim, "ours") for label, shape, dtype, dim in CASES]
    for label, shape, dtype, dim, who in cases:
        x = tiny if who == "torch" else torch.randn(shape, dtype=dtype)
        providers = [(name, fn) for name, fn in call_rows(x, dim) if name.startswith(who) or who == "torch"]
        if who == "ours":
            providers.insert(0, ("torch.empty_like", lambda: torch.empty_like(x)))
        for name, fn in providers:
            us = per_call_us(fn, calls // 4 if "backward" in name else calls, runs)
            name = name + " (launch stubbed)" if name.startswith("ours") else name
            rows.append(dict(case=label, shape="x".join(map(str, shape)), dtype=dtypes.name(dtype), provider=name,
                             us_per_call=round(us, 2)))
            print(f"{label:18s} {dtypes.name(dtype):9s} {name:34s} {us:6.2f} us/call", flush=True)
    return rows


def write_csv(path: str, rows: list[dict]) -> None:
    with open(path, "w", newline="") as f:
        writer = csv.DictWriter(f, fieldnames=list(rows[0]))
        writer.writeheader()
        writer.writerows(rows)


def main(argv: list[str]) -> int:
    profile_out = argv[argv.index("--profile") + 1] if "--profile" in argv else None
    paths = [a for a in argv if not a.startswith("--") and a != profile_out]
    if "--stub" in argv:
        rows = measure_stubbed()
        if paths:
            write_csv(paths[0], rows)
        return 0
    if not torch.cuda.is_available():
        print("needs a GPU: what is measured is the host's cost of launching GPU work (--stub runs anywhere)")
        return 2
    print(f"torch {torch.__version__}, triton {triton.__version__}, {torch.cuda.get_device_name()}")
    rows = measure("--quick" in argv)
    x = torch.randn(4096, 256, device="cuda")
    text = profile_text(lambda: sc.softmax(x))
    text += "\n-- backward --\n" + profile_text(backward_of(lambda t: sc.softmax(t), x))
    print(text)
    if profile_out:
        with open(profile_out, "w") as f:
            f.write(text)
    if paths:
        write_csv(paths[0], rows)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
