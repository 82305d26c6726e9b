"""The documents' measured figures come from recorded files, never typed by hand."""
import importlib.util
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


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
    shown = {run.provenance["csv"] for run in bench.load_recorded_runs()}
    assert {Path(f32).name + ".csv", Path(b16).name + ".csv"} <= shown
