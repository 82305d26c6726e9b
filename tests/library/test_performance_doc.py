"""docs/performance.md's measured figures come from recorded files, never typed by hand."""
import json
from pathlib import Path

import pandas as pd

import softmax_bench as bench
from bench_tools import doc_tables

ROOT = Path(__file__).resolve().parents[2]


def generated(doc: str, begin: str, end: str) -> str:
    return doc[doc.index(begin) + len(begin):doc.index(end)].strip()


def test_performance_tables_match_the_recorded_runs():
    doc = (ROOT / "docs" / "performance.md").read_text()
    written = generated(doc, doc_tables.BEGIN, doc_tables.END)
    assert written == doc_tables.tables().strip(), "run: python -m bench_tools.doc_tables --write"


def test_the_chapter_section_matches_the_recorded_chapter_sweep():
    doc = (ROOT / "docs" / "performance.md").read_text()
    written = generated(doc, doc_tables.CHAPTER_BEGIN, doc_tables.CHAPTER_END)
    assert written == doc_tables.chapter_section().strip(), "run: python -m bench_tools.doc_tables --write"
    from softmax_bench import chapter_claims
    assert written.count("\n| ") == len(chapter_claims.CLAIMS)       # one row per claim under the header


def test_the_current_record_is_the_newest_full_sweep_and_one_the_app_shows():
    current = doc_tables.current_stems()
    assert set(current) == {"float32", "bfloat16"}
    shown = {run.provenance["csv"] for run in bench.load_recorded_runs(view=bench.EAGER)}
    assert {stem + ".csv" for stem in current.values()} <= shown
    for dtype, stem in current.items():
        newer = [r for r in bench.load_recorded_runs(view=bench.EAGER) if r.provenance["dtype"] == dtype
                 and set(bench.FULL_SWEEP_N) <= set(r.frame.N) and r.provenance["date"] > load_date(stem)]
        assert not newer


def load_date(stem: str) -> str:
    return json.loads((doc_tables.BENCH / f"{stem}.json").read_text())["date"]


def test_a_newer_run_of_another_sweep_is_not_the_record(tmp_path):
    """A sweep of other shapes recorded later (real model shapes, say) stays out of the record's tables."""
    stem = doc_tables.current_stems()["float32"]
    source = json.loads((doc_tables.BENCH / f"{stem}.json").read_text())
    frame = pd.read_csv(doc_tables.BENCH / source["csv"])
    for name, part, date in (("other-sweep", frame[frame.N.isin([781, 4096])], "2099-01-01"),
                             ("newer-full", frame, "2098-01-01")):
        part.to_csv(tmp_path / f"{name}.csv", index=False)
        (tmp_path / f"{name}.json").write_text(json.dumps({**source, "csv": f"{name}.csv",
                                                           "date": f"{date}T00:00:00+00:00"}))
    assert doc_tables.newest_full_sweeps(tmp_path) == {"float32": "newer-full"}


def test_performance_tables_print_a_cuda_graph_record_in_a_section_of_its_own(tmp_path):
    """A CUDA-graph record of the current record's GPU (here: the current float32 record re-labelled, with
    QuACK's rows standing in as Liger's) gets its own section after the eager tables, QuACK as a column."""
    f32 = doc_tables.current_stems()["float32"]
    assert doc_tables.graph_section(tmp_path) is None and "Timed from a CUDA graph" not in doc_tables.tables(tmp_path)
    source = json.loads((doc_tables.BENCH / f"{f32}.json").read_text())
    frame = pd.read_csv(doc_tables.BENCH / source["csv"])
    frame = pd.concat([frame[frame.provider != "quack"], frame[frame.provider == "liger"].assign(provider="quack")])
    stem = "nvidia-h200-full-cudagraph-float32-20991231T0000"
    frame.to_csv(tmp_path / f"{stem}.csv", index=False)
    info = {**source, "csv": f"{stem}.csv", "timer": bench.DO_BENCH_CUDAGRAPH,
            "timer_figures": bench.timer_figures(bench.CudaGraphTimer()), "date": "2099-12-31T00:00:00+00:00"}
    (tmp_path / f"{stem}.json").write_text(json.dumps(info))
    assert doc_tables.graph_stems(tmp_path) == {"float32": stem}
    text = doc_tables.tables(tmp_path)
    eager_at, graph_at = text.index("### Timed eager (`do_bench`)"), text.index("### Timed from a CUDA graph")
    assert eager_at < text.index(f"`{f32}.csv`") < graph_at < text.index(f"`{stem}.csv`")
    assert "do_bench_cudagraph's method (rep=40)" in text[graph_at:]
    graph_part = text[graph_at:]
    header = next(line for line in graph_part.splitlines() if line.startswith("| N | floor"))
    assert "quack" in header
