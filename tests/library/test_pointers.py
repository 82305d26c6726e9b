"""Every path the project cites exists: in the README, docs/, .ci/run, pyproject.toml, requirements.txt, deploy/,
and the code's comments and strings. A glob must match something, and `file.py's name` / `file.py:name` must
name something defined in that file. A reader who follows a pointer finds what it points at."""
from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
TEXTS = ("README.md", "pyproject.toml", "requirements.txt", "setup.py", "MANIFEST.in", ".ci/run")
FOLDERS = ("docs", "deploy", "softmax_core", "softmax_teaching", "softmax_bench", "kernel_inspector", "explorer_ui",
           "bench_tools", "classroom_tools", "pages", "tests", "app.py")
SUFFIXES = (".py", ".md", ".toml", ".txt", ".sh", ".conf", ".template", ".cfg", ".in")
# the top of the tree, plus folders a pointer may name that the project has not got (a pointer there is stale)
TOP = {p.name for p in ROOT.iterdir()} | {"scripts", ".ci", ".streamlit"}
# a package's own subfolders, as code inside the package names them ("plans/tuned.py")
PACKAGE_ROOTS = ("softmax_core", "softmax_teaching", "softmax_bench", "kernel_inspector", "explorer_ui", "tests",
                 "bench_tools")
PATH = re.compile(r"(?<![\w./~$@:<{-])((?:\.?[A-Za-z_][\w.-]*/)+[\w.*-]*)")
# `file.py's name` or `file.py:name`, where the name is code: in backticks, with an underscore, or called
DEFINED_IN = re.compile(r"([\w/]+\.py)(?:'s |:)(?:`([A-Za-z_]\w*)`|([A-Za-z_]\w*_\w*|[A-Za-z_]\w*(?=\()))")
# paths that are made when the code runs (a cache, a build, a run's output), not kept in the tree
MADE_AT_RUN_TIME = ("dist/", "build/", "wheelhouse/", "explorer_ui/app/", "softmax_core/data/assets/", ".venv/",
                    "tests/browser/screenshots/", "test-artifacts/", ".gl/", ".whl/")


def cited_files() -> list[Path]:
    files = [ROOT / name for name in TEXTS if (ROOT / name).exists()]
    for folder in FOLDERS:
        path = ROOT / folder
        files += [path] if path.is_file() else [p for p in sorted(path.rglob("*"))
                                                   if p.suffix in SUFFIXES and "__pycache__" not in p.parts]
    return [p for p in files if p.resolve() != Path(__file__).resolve()]


def _candidates(token: str, cited_in: Path) -> list[Path]:
    first = token.split("/")[0]
    if first in TOP:
        return [ROOT / token]
    owner = cited_in.relative_to(ROOT).parts[0]
    roots = [owner] if owner in PACKAGE_ROOTS else []
    return [ROOT / base / token for base in roots + [r for r in PACKAGE_ROOTS if r != owner]
            if (ROOT / base / first).is_dir()]


def _exists(path: Path, token: str) -> bool:
    if "*" in token:
        return any(ROOT.glob(path.relative_to(ROOT).as_posix()))
    return path.exists() if not token.endswith("/") else path.is_dir()


def broken_pointers(files) -> list[str]:
    broken = []
    for cited_in in files:
        text = cited_in.read_text(encoding="utf-8", errors="replace")
        for line_no, line in enumerate(text.splitlines(), 1):
            for token in PATH.findall(line):
                token = token.rstrip(".,;:)")
                if "/" not in token or token.startswith(MADE_AT_RUN_TIME) or "." not in token.split("/")[-1] \
                        and not token.endswith("/"):
                    continue
                candidates = _candidates(token, cited_in)
                if candidates and not any(_exists(c, token) for c in candidates):
                    broken.append(f"{cited_in.relative_to(ROOT)}:{line_no}: {token}")
            for module, quoted, plain in DEFINED_IN.findall(line):
                name = quoted or plain
                targets = [c for c in _candidates(module, cited_in) if c.is_file()]
                if targets and not any(re.search(rf"^\s*(?:async def|def|class)\s+{name}\b|^\s*{name}\s*[:=]",
                                                 t.read_text(encoding="utf-8"), re.M) for t in targets):
                    broken.append(f"{cited_in.relative_to(ROOT)}:{line_no}: {module}'s {name}")
    return broken


def test_every_cited_path_exists():
    broken = broken_pointers(cited_files())
    assert not broken, "pointers to nothing:\n" + "\n".join(broken)


def test_a_stale_pointer_is_found(tmp_path):
    """The checker can fail: a file citing a missing script, a missing glob and a missing function."""
    probe = ROOT / "docs" / "pointer_probe_for_the_test.md"
    probe.write_text("see scripts/no_such_tool.py, assets/benchmarks/*.nothing and plans/tuned.py's no_such_plan\n"
                     "but softmax_core/plans/tuned.py, docs/, assets/benchmarks/*.json hold\n")
    try:
        found = broken_pointers([probe])
    finally:
        probe.unlink()
    assert [f.split(": ", 1)[1] for f in found] == ["scripts/no_such_tool.py", "assets/benchmarks/*.nothing",
                                                    "plans/tuned.py's no_such_plan"]
