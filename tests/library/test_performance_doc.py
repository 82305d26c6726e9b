"""The documents' measured figures come from recorded files, never typed by hand."""
import importlib.util
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def _script(name):
    spec = importlib.util.spec_from_file_location(name, ROOT / "scripts" / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_performance_tables_match_the_recorded_runs():
    tables = _script("performance_tables")
    doc = (ROOT / "docs" / "performance.md").read_text()
    written = doc[doc.index(tables.BEGIN) + len(tables.BEGIN):doc.index(tables.END)].strip()
    assert written == tables.tables().strip(), "run: python scripts/performance_tables.py --write"


def test_the_current_record_is_the_one_the_app_shows():
    import softmax_core.bench as bench
    tables = _script("performance_tables")
    _, f32, b16 = tables.VERSIONS[-1]
    shown = {run.provenance["csv"] for run in bench.load_recorded_runs(view=bench.EAGER)}
    assert {Path(f32).name + ".csv", Path(b16).name + ".csv"} <= shown


def test_performance_tables_print_a_cuda_graph_record_in_a_section_of_its_own(tmp_path):
    """A CUDA-graph record of the current record's GPU (here: the current float32 record re-labelled, with
    QuACK's rows standing in as Liger's) gets its own section after the eager tables, QuACK as a column."""
    import json

    import pandas as pd
    import softmax_core.bench as bench

    tables = _script("performance_tables")
    _, f32, _ = tables.VERSIONS[-1]
    assert tables.graph_section(tmp_path) is None and "Timed from a CUDA graph" not in tables.tables(tmp_path)
    source = json.loads((tables.BENCH / f"{f32}.json").read_text())
    frame = pd.read_csv(tables.BENCH / source["csv"])
    frame = pd.concat([frame[frame.provider != "quack"], frame[frame.provider == "liger"].assign(provider="quack")])
    stem = "nvidia-h200-full-cudagraph-float32-20991231T0000"
    frame.to_csv(tmp_path / f"{stem}.csv", index=False)
    info = {**source, "csv": f"{stem}.csv", "record_version": 2, "timer": bench.DO_BENCH_CUDAGRAPH,
            "timer_description": bench.CudaGraphTimer().description, "date": "2099-12-31T00:00:00+00:00"}
    (tmp_path / f"{stem}.json").write_text(json.dumps(info))
    assert tables.graph_stems(tmp_path) == {"float32": stem}
    text = tables.tables(tmp_path)
    eager_at, graph_at = text.index("### Timed eager (`do_bench`)"), text.index("### Timed from a CUDA graph")
    assert eager_at < text.index(f"`{Path(f32).name}.csv`") < graph_at < text.index(f"`{stem}.csv`")
    assert "do_bench_cudagraph's method (rep=40)" in text[graph_at:]
    graph_part = text[graph_at:]
    header = next(line for line in graph_part.splitlines() if line.startswith("| N | floor"))
    assert "quack" in header
