"""docs/performance.md's generated parts, written from the records (CSV + JSON) in assets/benchmarks/, so that no
measured figure in that document is typed by hand:

- between `<!-- tables:begin -->` and `<!-- tables:end -->`: the current record, the newest eager run
  (`do_bench`: each call launched from Python, L2 flushed) of the full sweep per dtype, and after it the newest
  CUDA-graph run (`do_bench_cudagraph`: replayed, L2 not flushed) per dtype of the same GPU, when there is one;
- between `<!-- chapter:begin -->` and `<!-- chapter:end -->`: the chapter's Step 5 claims checked against the
  recorded run of its sweep (softmax_bench.chapter_claims, in the app's English words).

    python -m bench_tools.doc_tables            # print them
    python -m bench_tools.doc_tables --write    # replace them in docs/performance.md
"""
from __future__ import annotations

import sys
from pathlib import Path

import pandas as pd

from softmax_bench import (CUDAGRAPH, EAGER, FULL_SWEEP_N, GRAPH_ROOFLINE_LIMIT, RECORDED_DIR,
                                load_recorded_runs, load_run, slower_graph_roofline)
from softmax_bench import chapter_claims, trust
from softmax_bench import claim_words as claim_words
from softmax_bench.records import timer as recorded_timer
from softmax_core.words import describe

ROOT = RECORDED_DIR.parents[1]
BENCH = RECORDED_DIR
DOC = ROOT / "docs" / "performance.md"
BEGIN, END = "<!-- tables:begin -->", "<!-- tables:end -->"
CHAPTER_BEGIN, CHAPTER_END = "<!-- chapter:begin -->", "<!-- chapter:end -->"
DTYPE_ORDER = ("bfloat16", "float32")


def newest_full_sweeps(directory: Path = BENCH, view: str = EAGER, gpu: str | None = None) -> dict[str, str]:
    """dtype -> file stem of the newest run of timing view `view` that covers the full sweep's N (of `gpu`
    when given), bfloat16 first; other sweeps recorded beside it (real model shapes, say) are not the record."""
    newest = {}
    for run in load_recorded_runs(directory, view=view):            # oldest first: the newest one stays
        full = set(FULL_SWEEP_N) <= set(run.frame.N)
        if full and (gpu is None or run.provenance.get("gpu") == gpu):
            newest[run.provenance.get("dtype")] = Path(run.provenance["csv"]).stem
    return {d: newest[d] for d in DTYPE_ORDER if d in newest}


def current_stems() -> dict[str, str]:
    """The current record: dtype -> stem of the newest eager full sweep in assets/benchmarks/."""
    return newest_full_sweeps(BENCH, EAGER)


PEERS = ["tutorial", "torch", "torch_compile", "liger", "quack", "naive"]


def load(stem: str, directory: Path = BENCH) -> tuple[pd.DataFrame, dict]:
    run = load_run(directory / f"{stem}.json")
    return run.frame, run.provenance


def ratios(df: pd.DataFrame, provider: str, direction: str = "forward", eager: pd.DataFrame | None = None) -> dict:
    """N -> `provider`'s GB/s over the copy's, as the app's trust rule shows it (softmax_bench.trust):
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
                  "timing is unsteady (the benchmark page's rule, softmax_bench.trust)."]
    if any(slow.values()):
        sizes = ", ".join(f"{n:,}" for n in sorted({n for d in slow.values() for n in d}))
        lines += ["", f"No ratio (—) at N = {sizes}: there the copy replayed from the graph ran below "
                      f"{GRAPH_ROOFLINE_LIMIT}× the same copy launched from Python (torch's contiguous `copy_` is a "
                      f"`cudaMemcpyAsync`), so ratios to it would flatter every provider; see the eager tables."]
    return "\n".join(lines)


def graph_stems(directory: Path = BENCH) -> dict[str, str]:
    """dtype -> stem of the newest CUDA-graph full sweep in `directory` of the current record's GPU."""
    current = current_stems()
    gpu = load(next(iter(current.values())))[1].get("gpu") if current else None
    return newest_full_sweeps(directory, CUDAGRAPH, gpu) if gpu else {}


def graph_section(directory: Path = BENCH) -> str | None:
    stems = graph_stems(directory)
    if not stems:
        return None
    clock = recorded_timer(load(next(iter(stems.values())), directory)[1])
    timer = describe(clock) if clock is not None else "triton.testing.do_bench_cudagraph"
    lines = ["### Timed from a CUDA graph (`do_bench_cudagraph`)", "",
             f"Each call replayed from a CUDA graph: no CPU launch cost, and L2 is not flushed between calls, so "
             f"compare these ratios to copy with each other, not these GB/s with the eager ones. Timer: {timer}."]
    eager = current_stems()
    return "\n\n".join(["\n".join(lines), *(record(stem, directory, eager.get(dtype)) for dtype, stem in stems.items())])


def tables(directory: Path = BENCH) -> str:
    """The current record's tables (eager), then the CUDA-graph ones found in `directory`."""
    eager = [record(stem) for stem in current_stems().values()]
    graph = graph_section(directory)
    if graph is None:
        return "\n\n".join(eager)
    header = ("### Timed eager (`do_bench`)\n\nEach call launched from Python, L2 flushed before every call: "
              "the record the app shows first.")
    return "\n\n".join([header, *eager, graph])


def chapter_section() -> str:
    """The chapter's claims, each with its verdict and the figures behind it, what bounds those figures, and
    the record they come from: the same words as the chapter-notes page, in English."""
    runs = chapter_claims.load_chapter_runs()
    if runs is None:
        return "No recorded run of the chapter's sweep is in assets/benchmarks/chapter/."
    claims = claim_words.claims_table(runs, "en")
    lines = ["| " + " | ".join(claims.columns) + " |", "|---" * len(claims.columns) + "|"]
    lines += ["| " + " | ".join(str(v).replace("|", "\\|") for v in row) + " |" for row in claims.itertuples(index=False)]
    return "\n\n".join(["\n".join(lines), claim_words.bounds_text(runs, "en"), claim_words.record_caption(runs, "en")])


def replaced(doc: str, begin: str, end: str, text: str) -> str:
    start, stop = doc.index(begin) + len(begin), doc.index(end)
    return doc[:start] + "\n\n" + text + "\n\n" + doc[stop:]


def main(argv: list[str]) -> int:
    parts = ((BEGIN, END, tables()), (CHAPTER_BEGIN, CHAPTER_END, chapter_section()))
    if "--write" in argv:
        doc = DOC.read_text()
        for begin, end, text in parts:
            doc = replaced(doc, begin, end, text)
        DOC.write_text(doc)
        print(f"wrote the generated parts of {DOC.relative_to(ROOT)}")
    else:
        print("\n\n".join(text for _, _, text in parts))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
