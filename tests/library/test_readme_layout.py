"""The README's layout table names every module of softmax_core/ and explorer_ui/ on a line of its own, and
every path it names exists: a newcomer reads the tree from it."""
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PACKAGES = ("softmax_core", "softmax_teaching", "softmax_bench", "kernel_inspector", "explorer_ui")
# folders the table names as a whole, one line for the folder
WHOLE_FOLDERS = ("explorer_ui/data/", "explorer_ui/charts/")


def table_paths() -> list[list[str]]:
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    table = text[text.index("## Layout"):text.index("\n## ", text.index("## Layout") + 1)]
    return [re.findall(r"`([^`]+)`", line.split("|")[1]) for line in table.splitlines()
            if line.startswith("| `")]


def test_every_module_has_its_line():
    named = {path for row in table_paths() for path in row}
    missing = []
    for package in PACKAGES:
        for module in sorted((ROOT / package).rglob("*.py")):
            rel = module.relative_to(ROOT).as_posix()
            if module.name == "__init__.py" and rel != "softmax_core/__init__.py" and \
                    rel != "softmax_core/data/__init__.py":
                continue
            if rel in named or any(rel.startswith(folder) for folder in WHOLE_FOLDERS):
                continue
            missing.append(rel)
    assert not missing, missing


def test_a_module_line_names_one_module():
    for row in table_paths():
        modules = [p for p in row if p.endswith(".py") and p.startswith(PACKAGES)]
        assert len(modules) <= 1, row


def test_every_path_in_the_table_exists():
    for row in table_paths():
        for path in row:
            if "*" in path:
                assert list(ROOT.glob(path)), path
            else:
                assert (ROOT / path.rstrip("/")).exists(), path
