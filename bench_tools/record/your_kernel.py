"""The "Your kernel" figures for the four examples, beside what the H200's driver says. Run on the device:

    python -m bench_tools.record.your_kernel --out "$OUT/your_kernel"

For each example of kernel_inspector/examples.py, at its SIZES:
1. `python -m softmax_core inspect FILE --gpu h200,a100-80gb,mi300x ... --measure --json`: the page's per-GPU
   figures (offline compiles in the sandbox: registers, shared memory, programs per SM by the hardware's rules
   and by the chapter's formula, the limiter) and a measurement on this GPU (do_bench quantiles, GB/s against
   a copy of the same bytes);
2. the same kernel launched once with the real JIT on this GPU (random inputs of those sizes), its loaded
   function's registers read with cuFuncGetAttribute, and the driver asked
   cuOccupancyMaxActiveBlocksPerMultiprocessor(function, 32 * num_warps, its shared memory) — as
   bench_tools/record/driver_occupancy.py does for the project's own kernels.
It writes <out>/your-kernel-h200.csv (one row per example: our figures beside the JIT's and the driver's)
and <out>/your-kernel-h200.json (those rows, the three-GPU tables, the measurements, provenance).

Without a CUDA GPU it says so and exits with status 2; `--offline` then runs only step 1 without
--measure (the plumbing, on any machine).
"""
from __future__ import annotations

import argparse
import csv
import ctypes
import datetime
import importlib.util
import json
import platform
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

from kernel_inspector import argspec, examples, gate

GPUS = "h200,a100-80gb,mi300x"
NUM_WARPS, NUM_STAGES = 4, 3          # the CLI's defaults, what the page starts with
CU_FUNC_ATTRIBUTE_NUM_REGS = 4
CU_FUNC_ATTRIBUTE_LOCAL_SIZE_BYTES = 3
FIELDS = ("example", "kernel", "num_warps", "ours_registers", "ours_spills", "ours_shared_bytes",
          "ours_programs_per_sm", "ours_chapter_programs_per_sm", "ours_limiter", "jit_registers", "jit_local_bytes",
          "jit_shared_bytes", "driver_blocks_per_sm", "driver_agrees", "measured_gbps_median", "copy_gbps_median",
          "fraction_of_copy", "measure_code")


def cli_args(name: str) -> list[str]:
    sizes = examples.SIZES[name]
    out = [f"--arg={a}" for a in examples.ARGUMENTS[name]]
    out += [f"--size={n}={'x'.join(map(str, s))}" for n, s in sizes["sizes"].items()]
    out += ["--grid", "x".join(map(str, sizes["grid"])), "--num-warps", str(NUM_WARPS), "--num-stages", str(NUM_STAGES)]
    if sizes["flops"]:
        out += ["--flops", str(sizes["flops"])]
    return out


def inspect(path: Path, name: str, measure: bool) -> tuple[object, list[str]]:
    command = [sys.executable, "-m", "softmax_core", "inspect", str(path), "--gpu", GPUS, "--json", *cli_args(name)]
    if measure:
        command.append("--measure")
    done = subprocess.run(command, cwd=ROOT, capture_output=True, text=True, timeout=900)
    if not done.stdout.strip():
        raise RuntimeError(f"inspect {name} printed nothing (exit {done.returncode}): {done.stderr[-2000:]}")
    return json.loads(done.stdout), command


def _libcuda():
    lib = ctypes.CDLL("libcuda.so.1")
    lib.cuOccupancyMaxActiveBlocksPerMultiprocessor.argtypes = [ctypes.POINTER(ctypes.c_int), ctypes.c_void_p,
                                                                ctypes.c_int, ctypes.c_size_t]
    lib.cuFuncGetAttribute.argtypes = [ctypes.POINTER(ctypes.c_int), ctypes.c_int, ctypes.c_void_p]
    return lib


def jit_and_driver(lib, path: Path, name: str) -> dict:
    """Launch the example once with triton's JIT on this GPU and ask the driver about the loaded function."""
    import torch

    kernel_file = gate.check_source(examples.EXAMPLES[name])
    info = kernel_file.kernel(None)
    specs = argspec.merge(argspec.prefill(info), [argspec.parse_arg(a) for a in examples.ARGUMENTS[name]])
    spec = importlib.util.spec_from_file_location(f"your_kernel_{name}", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    kernel = getattr(module, info.name)
    dtypes = {"fp16": torch.float16, "bf16": torch.bfloat16, "fp32": torch.float32}
    sizes = examples.SIZES[name]
    args, constexprs = [], {}
    for s in specs:
        if s.kind == "pointer":
            args.append(torch.randn(sizes["sizes"][s.name], device="cuda", dtype=dtypes[s.dtype]))
        elif s.kind == "scalar":
            args.append(s.value)
        else:
            constexprs[s.name] = s.value
    options = {k: v for k, v in {"num_warps": NUM_WARPS, "num_stages": NUM_STAGES}.items() if k not in constexprs}
    compiled = kernel[tuple(sizes["grid"])](*args, **constexprs, **options)
    torch.cuda.synchronize()
    function = ctypes.c_void_p(compiled.function)
    regs, local, blocks = ctypes.c_int(), ctypes.c_int(), ctypes.c_int()
    lib.cuFuncGetAttribute(ctypes.byref(regs), CU_FUNC_ATTRIBUTE_NUM_REGS, function)
    lib.cuFuncGetAttribute(ctypes.byref(local), CU_FUNC_ATTRIBUTE_LOCAL_SIZE_BYTES, function)
    shared = int(compiled.metadata.shared)
    num_warps = int(compiled.metadata.num_warps)
    status = lib.cuOccupancyMaxActiveBlocksPerMultiprocessor(ctypes.byref(blocks), function, 32 * num_warps, shared)
    if status != 0:
        raise RuntimeError(f"cuOccupancyMaxActiveBlocksPerMultiprocessor failed with CUresult {status}")
    return {"jit_registers": regs.value, "jit_local_bytes": local.value, "jit_shared_bytes": shared,
            "jit_num_warps": num_warps, "driver_blocks_per_sm": blocks.value}


def provenance(command: list[str]) -> dict:
    import torch
    import triton

    commit = subprocess.run(["git", "rev-parse", "HEAD"], cwd=ROOT, capture_output=True, text=True).stdout.strip()
    return {"date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
            "gpu": torch.cuda.get_device_name() if torch.cuda.is_available() else None,
            "torch": torch.__version__, "triton": triton.__version__, "python": platform.python_version(),
            "commit": commit or "unknown (no git here)", "command": " ".join(command),
            "sizes": {name: examples.SIZES[name] for name in examples.EXAMPLES}}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", required=True, help="folder for your-kernel-h200.csv / .json")
    parser.add_argument("--examples", default=",".join(examples.EXAMPLES), help="comma-separated example names")
    parser.add_argument("--offline", action="store_true",
                        help="no GPU: only the offline inspect step, without --measure (checks the plumbing)")
    args = parser.parse_args(argv)
    import torch

    if not torch.cuda.is_available() and not args.offline:
        print("your_kernel: this machine has no CUDA GPU. Run it on the H200 "
              "(or pass --offline to check the offline step alone).", file=sys.stderr)
        return 2
    names = [n.strip() for n in args.examples.split(",") if n.strip()]
    unknown = [n for n in names if n not in examples.EXAMPLES]
    if unknown:
        print(f"your_kernel: no example named {unknown[0]!r}; the examples: {', '.join(examples.EXAMPLES)}",
              file=sys.stderr)
        return 2
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    lib = None if args.offline else _libcuda()
    rows, tables = [], {}
    with tempfile.TemporaryDirectory(prefix="your-kernel-check-") as tmp:
        for name in names:
            path = Path(tmp) / f"{name}.py"
            path.write_text(examples.EXAMPLES[name])
            result, command = inspect(path, name, measure=not args.offline)
            tables[name] = result
            gpus = result["gpus"] if isinstance(result, dict) and "gpus" in result else result
            if isinstance(gpus, dict) and "error" in gpus:
                raise RuntimeError(f"inspect refused {name}: {gpus}")
            ours = next(r for r in gpus if r["gpu"] == "h200")
            m = result.get("measurement", {}) if isinstance(result, dict) else {}
            row = {"example": name, "kernel": gate.check_source(examples.EXAMPLES[name]).kernel(None).name,
                   "num_warps": ours["num_warps"], "ours_registers": ours["registers"], "ours_spills": ours["spills"],
                   "ours_shared_bytes": ours["shared_bytes"], "ours_programs_per_sm": ours["programs_per_sm"],
                   "ours_chapter_programs_per_sm": ours["chapter_programs_per_sm"], "ours_limiter": ours["limiter"],
                   "measured_gbps_median": (m.get("achieved_gbps") or [None, None])[1],
                   "copy_gbps_median": (m.get("copy_gbps") or [None, None])[1],
                   "fraction_of_copy": m.get("fraction_of_copy"), "measure_code": m.get("code", "not run")}
            if lib is not None:
                row.update(jit_and_driver(lib, path, name))
                row["driver_agrees"] = row["driver_blocks_per_sm"] == row["ours_programs_per_sm"]
            rows.append(row)
            print(json.dumps(row), flush=True)
    with open(out / "your-kernel-h200.csv", "w", newline="") as f:
        writer = csv.DictWriter(f, fieldnames=FIELDS, extrasaction="ignore")
        writer.writeheader()
        writer.writerows(rows)
    record = {"provenance": provenance([sys.executable, *sys.argv]), "rows": rows, "inspect": tables}
    (out / "your-kernel-h200.json").write_text(json.dumps(record, indent=1, default=str))
    print(f"wrote {out / 'your-kernel-h200.csv'} and {out / 'your-kernel-h200.json'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
