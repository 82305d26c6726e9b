"""The "Real shapes" table of docs/performance.md, from the recorded models runs (assets/benchmarks/models/).

    python -m bench_tools.models_table           # print it
    python -m bench_tools.models_table --write   # write it between the markers in docs/performance.md
"""
from __future__ import annotations

import sys
from pathlib import Path

from softmax_bench import models

ROOT = Path(__file__).resolve().parent.parent

BEGIN, END = "<!-- models:begin -->", "<!-- models:end -->"
DOC = ROOT / "docs" / "performance.md"


def table() -> str:
    return models.markdown_summary(models.load_models_runs())


def main(argv: list[str]) -> int:
    text = table()
    if "--write" not in argv:
        print(text)
        return 0
    doc = DOC.read_text()
    start, end = doc.index(BEGIN) + len(BEGIN), doc.index(END)
    DOC.write_text(doc[:start] + "\n\n" + text + "\n" + doc[end:])
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
