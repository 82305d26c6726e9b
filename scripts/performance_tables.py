"""Write the recorded-run tables of docs/performance.md from the CSV + JSON files in assets/benchmarks/,
so that no figure in that document is typed by hand.

    python scripts/performance_tables.py            # print the tables
    python scripts/performance_tables.py --write    # replace them in docs/performance.md

The eager record (do_bench: each call launched from Python, L2 flushed) is listed by hand in VERSIONS. When
assets/benchmarks/ also holds CUDA-graph records (do_bench_cudagraph: replayed from a graph, L2 not flushed)
of the current record's GPU, the newest one per dtype gets a section of its own after the eager one.
"""
from __future__ import annotations

import sys
from pathlib import Path

import pandas as pd

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from softmax_core.bench import (CUDAGRAPH, GRAPH_ROOFLINE_LIMIT, load_recorded_runs, load_run,  # noqa: E402
                                slower_graph_roofline)
from softmax_core.bench import trust  # noqa: E402
from softmax_core.bench.records import timer as recorded_timer  # noqa: E402
from softmax_core.words import describe  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
BENCH = ROOT / "assets" / "benchmarks"
DOC = ROOT / "docs" / "performance.md"
BEGIN, END = "<!-- tables:begin -->", "<!-- tables:end -->"
# Each version's record: (label, float32 run, bfloat16 run). The last one is the current record.
VERSIONS = [
    ("v3", "history/nvidia-h200-full-float32-20261129T1459", "history/nvidia-h200-full-bfloat16-20261129T1500"),
    ("v4", "history/nvidia-h200-full-float32-20261129T1523", "history/nvidia-h200-full-bfloat16-20261129T1524"),
    ("v5 (1st run)", "history/nvidia-h200-full-float32-20261129T1725",
     "history/nvidia-h200-full-bfloat16-20261129T1726"),
    ("v5", "history/nvidia-h200-full-float32-20261129T1733", "history/nvidia-h200-full-bfloat16-20261129T1735"),
    ("v6", "history/nvidia-h200-full-float32-20261130T0527", "history/nvidia-h200-full-bfloat16-20261130T0528"),
    ("v7", "history/nvidia-h200-full-float32-20261130T0700", "history/nvidia-h200-full-bfloat16-20261130T0700"),
    ("v8", "nvidia-h200-full-float32-20261130T0820", "nvidia-h200-full-bfloat16-20261130T0837"),
]
PEERS = ["tutorial", "torch", "torch_compile", "liger", "quack", "naive"]


def load(stem: str, directory: Path = BENCH) -> tuple[pd.DataFrame, dict]:
    run = load_run(directory / f"{stem}.json")
    return run.frame, run.provenance


def ratios(df: pd.DataFrame, provider: str, direction: str = "forward", eager: pd.DataFrame | None = None) -> dict:
    """N -> `provider`'s GB/s over the copy's, as the app's trust rule shows it (softmax_core.bench.trust):
    a number, None where the rule withholds it; a size the provider has no timing at is left out."""
    rows = df[df.direction == direction]
    copy = {int(r["N"]): r for r in rows[rows.provider == "copy"].to_dict("records")}
    eager_copy = trust.copy_gbps(eager[eager.direction == direction].to_dict("records")) if eager is not None else {}
    return {int(r["N"]): trust.ratio_to_copy(r, copy.get(int(r["N"])), eager_copy.get(int(r["N"])))[0]
            for r in rows[(rows.provider == provider) & (rows.status == "ok")].to_dict("records")}


def ratio(df: pd.DataFrame, provider: str, direction: str = "forward", eager: pd.DataFrame | None = None) -> pd.Series:
    """`ratios` as a column: NaN where the provider has no timing, "—" where the rule withholds the ratio."""
    return pd.Series({n: "—" if v is None else v for n, v in ratios(df, provider, direction, eager).items()},
                     dtype=object)


def fmt(value, digits=2) -> str:
    if isinstance(value, str):
        return value
    return "fails" if pd.isna(value) else f"{value:.{digits}f}"


def gbps_cell(row) -> str:
    """A GB/s figure as the page shows it: "⚠" after an unsteady timing."""
    return f"{row['gbps']:,.0f}" + (" ⚠" if trust.timing_spread(row).steady is False else "")


def by_version() -> str:
    columns = {}
    for label, f32, b16 in VERSIONS:
        columns[f"fp32 {label}"] = ratio(load(f32)[0], "tuned")
        columns[f"bf16 {label}"] = ratio(load(b16)[0], "tuned")
    table = pd.DataFrame(columns)
    lines = ["### tuned ÷ copy by version (forward, same-run copy)", "",
             "| N | " + " | ".join(table.columns) + " |", "|---" * (len(table.columns) + 1) + "|"]
    lines += [f"| {n} | " + " | ".join(fmt(v) for v in row) + " |" for n, row in table.iterrows()]
    return "\n".join(lines)


def record(stem: str, directory: Path = BENCH, eager_stem: str | None = None) -> str:
    """One record's tables. For a CUDA-graph record, `eager_stem` names the eager record of the same dtype:
    where the graph's copy ran slower than the eager one (bench.slower_graph_roofline) no ratio is printed."""
    df, prov = load(stem, directory)
    slow: dict[str, dict] = {}
    eager = None
    if eager_stem is not None:
        eager = load(eager_stem)[0]
        slow = {d: slower_graph_roofline(df[df.direction == d].to_dict("records"),
                                         eager[eager.direction == d].to_dict("records"))
                for d in ("forward", "backward")}
    present = [p for p in PEERS if p in set(df.provider)]
    fwd = df[df.direction == "forward"]
    ok = {(r["provider"], int(r["N"])): r for r in fwd[fwd.status == "ok"].to_dict("records")}
    shown = {p: ratios(df, p, "forward", eager) for p in ["tuned"] + present if p != "naive"}
    header = (f"### {prov['dtype']}, M = {prov['M']} — `{stem.split('/')[-1]}.csv`\n\n"
              f"{prov['gpu']}, driver {prov['driver']}, torch {prov['torch']}, triton {prov['triton']}, "
              f"{prov['date']}, source digest {prov.get('source_digest', '—')}, `{prov['command']}`\n")
    cols = ["floor µs (copy)", "copy GB/s", "tuned"] + present + ["tuned/copy", "best peer/copy"]
    lines = [header, "| N | " + " | ".join(cols) + " |", "|---" * (len(cols) + 1) + "|"]
    for n in sorted({n for _, n in ok}):
        copy = ok[("copy", n)]
        peers = [shown[p].get(n) for p in present if p != "naive" and (p, n) in ok]
        best_peer = max((v for v in peers if v is not None), default=None)
        cells = [f"{copy['ms_median'] * 1e3:.1f}", gbps_cell(copy), gbps_cell(ok[("tuned", n)])]
        cells += ["fails" if (p, n) not in ok else gbps_cell(ok[(p, n)]) for p in present]
        tuned = shown["tuned"].get(n)
        cells += ["—" if tuned is None else fmt(tuned),
                  "—" if best_peer is None or len(peers) > len([v for v in peers if v is not None]) else fmt(best_peer)]
        lines.append(f"| {n} | " + " | ".join(cells) + " |")
    bwd = {p: ratio(df, p, "backward", eager) for p in ["tuned", "torch", "torch_compile", "liger", "quack"]
           if p in set(df.provider)}
    table = pd.DataFrame(bwd)
    lines += ["", "Backward (through autograd), ratio to a 2-read-1-write copy of the same bytes:", "",
              "| N | " + " | ".join(table.columns) + " |", "|---" * (len(table.columns) + 1) + "|"]
    lines += [f"| {n} | " + " | ".join(fmt(v) for v in row) + " |" for n, row in table.iterrows()]
    lines += ["", f"⚠: an unsteady timing (p80 more than {trust.SPREAD_LIMIT}× p20); — : no ratio where either "
                  "timing is unsteady (the benchmark page's rule, softmax_core.bench.trust)."]
    if any(slow.values()):
        sizes = ", ".join(f"{n:,}" for n in sorted({n for d in slow.values() for n in d}))
        lines += ["", f"No ratio (—) at N = {sizes}: there the copy replayed from the graph ran below "
                      f"{GRAPH_ROOFLINE_LIMIT}× the same copy launched from Python (torch's contiguous `copy_` is a "
                      f"`cudaMemcpyAsync`), so ratios to it would flatter every provider; see the eager tables."]
    return "\n".join(lines)


def graph_stems(directory: Path = BENCH) -> dict[str, str]:
    """dtype -> file stem of the newest CUDA-graph record of that dtype (bfloat16 first, as the eager tables)
    of the current eager record's GPU; empty when there is no such record."""
    gpu = load(VERSIONS[-1][1])[1].get("gpu")
    newest = {}
    for run in load_recorded_runs(directory, view=CUDAGRAPH):       # oldest first: the newest one stays
        if run.provenance.get("gpu") == gpu:
            newest[run.provenance.get("dtype")] = Path(run.provenance["csv"]).stem
    return {d: newest[d] for d in ("bfloat16", "float32") if d in newest}


def graph_section(directory: Path = BENCH) -> str | None:
    stems = graph_stems(directory)
    if not stems:
        return None
    clock = recorded_timer(load(next(iter(stems.values())), directory)[1])
    timer = describe(clock) if clock is not None else "triton.testing.do_bench_cudagraph"
    lines = ["### Timed from a CUDA graph (`do_bench_cudagraph`)", "",
             f"Each call replayed from a CUDA graph: no CPU launch cost, and L2 is not flushed between calls, so "
             f"compare these ratios to copy with each other, not these GB/s with the eager ones. Timer: {timer}."]
    eager = {"bfloat16": VERSIONS[-1][2], "float32": VERSIONS[-1][1]}
    return "\n\n".join(["\n".join(lines), *(record(stem, directory, eager[dtype]) for dtype, stem in stems.items())])


def tables(directory: Path = BENCH) -> str:
    _, f32, b16 = VERSIONS[-1]
    eager = [by_version(), record(b16), record(f32)]
    graph = graph_section(directory)
    if graph is None:
        return "\n\n".join(eager)
    header = ("### Timed eager (`do_bench`)\n\nEach call launched from Python, L2 flushed before every call: "
              "the record the app shows first.")
    return "\n\n".join([header, *eager, graph])


if __name__ == "__main__":
    text = tables()
    if "--write" in sys.argv:
        doc = DOC.read_text()
        start, end = doc.index(BEGIN) + len(BEGIN), doc.index(END)
        DOC.write_text(doc[:start] + "\n\n" + text + "\n\n" + doc[end:])
        print(f"wrote the tables into {DOC.relative_to(ROOT)}")
    else:
        print(text)
