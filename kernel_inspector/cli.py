"""`python -m softmax_core inspect FILE.py`: the per-GPU table of a kernel file, for a terminal or a CI job.

    python -m softmax_core inspect my_kernel.py --kernel add_kernel --gpu h200,a100-80gb,mi300x \\
        --arg x_ptr=*fp16 --arg BLOCK=1024 --num-warps 4 --json
    ... --measure --size x_ptr=1048576 --size y_ptr=1048576 --size out_ptr=1048576 --grid 1024
    ... --interpret --size x_ptr=4096 ... --grid 4   (once in Triton's interpreter, on the CPU, small sizes)

With --json, stdout holds only JSON: a list with one object per GPU (and per autotune config).
Exit status: 0 when every variant compiled, 1 when one failed, 2 for a refused file or bad arguments.
"""
from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from dataclasses import asdict

from kernel_inspector import argspec, examples, inspect as ki, interpret, measure, sandbox
from kernel_inspector.rules import SourceRefused
from softmax_core.hardware.gpu import catalog_gpu, gpu_catalog

DEFAULT_GPUS = ("h200", "a100-80gb", "mi300x")


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="python -m softmax_core inspect", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("file", help="a Triton kernel file (.py)")
    parser.add_argument("--kernel", help="the @triton.jit function to inspect (default: the file's last)")
    parser.add_argument("--gpu", help=f"catalog keys, comma-separated, or 'all' (default: {','.join(DEFAULT_GPUS)})")
    parser.add_argument("--arg", action="append", default=[], metavar="NAME=SPEC",
                        help="x_ptr=*fp32, n=i32 (n=i32:4096 with a value), eps=fp32:1e-5, BLOCK=1024 (constexpr)")
    parser.add_argument("--num-warps", type=int, default=4)
    parser.add_argument("--num-stages", type=int, default=3)
    parser.add_argument("--size", action="append", default=[], metavar="NAME=SHAPE",
                        help="a pointer argument's tensor shape, e.g. x_ptr=4096x781 (bytes moved, --measure inputs)")
    parser.add_argument("--grid", default="", help="the launch grid, e.g. 1823 or 32x32 (default: 1 program)")
    parser.add_argument("--flops", type=float, help="the kernel's flop count, for the compute floor")
    parser.add_argument("--precision", choices=ki.FLOP_PRECISIONS, default="fp32", help="peak rate for --flops")
    parser.add_argument("--timeout", type=float, default=60.0, help="seconds the compile may take")
    parser.add_argument("--json", action="store_true", help="print only JSON")
    parser.add_argument("--measure", action="store_true", help="run it on this machine's GPU (random inputs)")
    parser.add_argument("--interpret", action="store_true",
                        help="run it once in Triton's interpreter on the CPU (random inputs, small sizes)")
    return parser


# Each gate refusal's key in the page's words table (the page's refusal_text reads the same keys)
REFUSAL_WORDS = {code: f"yk_refused_{key}" for code, key in (
    ("too_large", "too_large"), ("syntax_error", "syntax"), ("too_complex", "too_complex"),
    ("import_not_allowed", "import"), ("statement_not_allowed", "statement"),
    ("decorator_not_allowed", "decorator"), ("function_not_jit", "not_jit"), ("default_not_constant", "default"),
    ("annotation_not_allowed", "annotation"), ("dunder_name", "dunder"), ("private_attribute", "private"),
    ("forbidden_name", "forbidden"), ("unknown_name", "unknown"), ("module_as_value", "module"),
    ("attribute_not_allowed", "attribute"), ("expression_not_allowed", "expression"),
    ("constant_not_allowed", "constant"), ("no_kernel", "no_kernel"), ("kernel_not_found", "kernel_not_found"),
    ("name_rebound", "name_rebound"))}


def english_words() -> dict[str, str]:
    """The "Your kernel" page's English words (explorer_ui/locales/your_kernel.en.toml), where the explorer is
    installed beside this package; empty where it is not (then the codes are printed as they are)."""
    import importlib.util
    import tomllib

    spec = importlib.util.find_spec("explorer_ui")
    if spec is None or not spec.submodule_search_locations:
        return {}
    path = Path(list(spec.submodule_search_locations)[0]) / "locales" / "your_kernel.en.toml"
    return tomllib.loads(path.read_text()) if path.is_file() else {}


def refusal_sentence(code: str, figures: dict) -> str:
    """A refusal as the page says it in English ("Line 3: ... Nothing was run."), the code after it."""
    words = english_words()
    rule = words.get(REFUSAL_WORDS.get(code, ""), "")
    if not rule or "yk_refused" not in words:
        return f"{code} " + " ".join(f"{k}={v}" for k, v in figures.items() if v is not None)
    detail = str(figures.get("detail") or "")
    if figures.get("value") is not None:
        detail += f" ({figures['value']:,} > {figures['limit']:,})"
    return words["yk_refused"].format(line=figures.get("line", 1), rule=rule, detail=detail) + f" [{code}]"


# A measurement refused before anything ran: the page's words for it
MEASURE_REFUSALS = {"no_sandbox": "yk_measure_no_sandbox", "jail_no_gpu": "yk_measure_jail_no_gpu"}


def measure_refusal_sentence(m) -> str:
    """A refused measurement as the page says it in English, the code after it."""
    words = english_words()
    key = MEASURE_REFUSALS[m.code]
    return (words[key].format(detail=m.detail.strip().splitlines()[-1] if m.detail.strip() else "-")
            + f" [{m.code}]") if key in words else f"{m.code} {m.detail}"


def _fail(args, code: str, **figures) -> int:
    payload = {"error": code, **figures}
    if args.json:
        print(json.dumps(payload))
    elif code in REFUSAL_WORDS:
        print(f"refused: {refusal_sentence(code, figures)}", file=sys.stderr)
    else:
        words = english_words()
        detail = figures.get("detail", "")
        text = (words["yk_bad_arg"].format(code=code, text=detail) if code in argspec.ARG_ERROR_CODES and "yk_bad_arg"
                in words else f"{code} " + " ".join(f"{k}={v}" for k, v in figures.items()))
        print(f"refused: {text}", file=sys.stderr)
    return 2


def table(rows: list[dict]) -> str:
    head = ("gpu", "config", "num_warps", "registers", "spills", "shared_bytes", "programs_per_sm",
            "chapter_programs_per_sm", "limiter", "memory_floor_s")
    lines = ["  ".join(head)]
    for row in rows:
        if row["error"]:
            lines.append(f"{row['gpu']}  {row['config']}  error {row['error']['hint']} at line "
                         f"{row['error']['line']}: {row['error']['message'].splitlines()[-1] if row['error']['message'] else ''}")
        else:
            lines.append("  ".join("-" if row[h] is None else (f"{row[h]:.3g}" if isinstance(row[h], float) else str(row[h]))
                                   for h in head))
    toolchains = sorted({row["toolchain"] for row in rows if row["toolchain"]})
    return "\n".join(lines + [f"toolchain: {t}" for t in toolchains])


def main(argv: list[str]) -> int:
    args = build_parser().parse_args(argv)
    path = Path(args.file)
    if not path.is_file():
        return _fail(args, "no_file", file=args.file)
    if path.stat().st_size > 4 * 1024 * 1024:
        return _fail(args, "too_large", bytes=path.stat().st_size)
    source = path.read_text(errors="replace")
    if args.measure:
        import torch

        if not torch.cuda.is_available():
            return _fail(args, "no_gpu", detail="--measure runs the kernel on this machine's GPU; it has none")
    try:
        keys = [g.key for g in gpu_catalog()] if args.gpu == "all" else (args.gpu.split(",") if args.gpu else DEFAULT_GPUS)
        gpus = [catalog_gpu(key.strip()) for key in keys]
    except ValueError as exc:
        return _fail(args, "unknown_gpu", detail=str(exc).split(";")[0])
    try:
        sizes = {name: ki.parse_shape(shape) for name, _, shape in (s.partition("=") for s in args.size)}
        grid = ki.parse_shape(args.grid) if args.grid else (1,)
        kernel_file, specs, report = sandbox.refuse_or_compile(source, args.kernel, args.arg, gpus, args.num_warps,
                                                               args.num_stages, sandbox.SandboxLimits(args.timeout))
        moved = ki.bytes_moved(specs, sizes)
    except SourceRefused as refused:
        r = refused.refusal
        return _fail(args, r.code, line=r.line, detail=r.detail, value=r.value, limit=r.limit)
    except argspec.ArgSpecError as exc:
        return _fail(args, exc.code, detail=exc.text)
    except ValueError as exc:
        return _fail(args, "bad_size", detail=str(exc))
    by_key = {g.key: g for g in gpus}
    rows = [ki.inspect_variant(by_key[v.gpu], v, ki.grid_programs(grid), moved, args.flops, args.precision).as_json()
            for v in report.variants]
    specialised = asdict(report.specialisation) if report.specialisation else None
    for row in rows:
        row["specialisation"] = specialised       # what the compile assumed of the values (as the JIT would)
    result: object = rows
    if args.measure:
        m = measure.measure(kernel_file, report.kernel, specs, sizes, grid, args.num_warps, args.num_stages,
                            moved or 0, args.flops, reference=examples.example_named(source))
        if m.code in MEASURE_REFUSALS and not args.json:
            print(f"refused: {measure_refusal_sentence(m)}", file=sys.stderr)
        result = {"gpus": rows, "measurement": {"ok": m.ok, "code": m.code, "detail": m.detail, "gpu": m.gpu_name,
                                                "sandbox": m.sandbox, "tensors": [asdict(t) for t in m.tensors],
                                                "kernel_ms": m.kernel_ms, "copy_ms": m.copy_ms,
                                                "achieved_gbps": m.achieved_gbps, "copy_gbps": m.copy_gbps,
                                                "achieved_tflops": m.achieved_tflops,
                                                "fraction_of_copy": m.fraction_of_copy}}
    if args.interpret:
        run = interpret.run(kernel_file, report.kernel, specs, sizes, grid, args.num_warps, args.num_stages,
                            examples.example_named(source))
        result = {"gpus": rows, **({"measurement": result["measurement"]} if args.measure else {}),
                  "interpreter": {**asdict(run), "clock": "interpreter on this machine's CPU, not a GPU"}}
    if args.json:
        print(json.dumps(result))
    else:
        print(table(rows))
        if specialised:
            print("specialised as Triton's JIT would: equal to 1 (constant): "
                  f"{', '.join(specialised['equal_to_one']) or '-'}; divisible by 16: "
                  f"{', '.join(specialised['divisible_by_16']) or '-'}; no value (unspecialised): "
                  f"{', '.join(specialised['no_value']) or '-'}")
        if args.measure:
            print(json.dumps(result["measurement"], indent=1))
        if args.interpret:
            print(json.dumps(result["interpreter"], indent=1))
    return 0 if all(row["error"] is None for row in rows) else 1
