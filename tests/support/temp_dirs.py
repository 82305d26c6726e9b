"""Temporary folders of a test's own: the Your-kernel compile and run children make theirs under Python's
temporary folder, and a test that checks they leave nothing behind counts only its own."""
from __future__ import annotations

import tempfile
from pathlib import Path

import pytest


@pytest.fixture
def private_temp_dir(tmp_path, monkeypatch):
    """Python's temporary folder (and the children's TMPDIR) set to a folder of this test's, so that what is left
    in it is this test's, whatever runs beside it (another pytest-xdist worker, a server's Your-kernel page)."""
    folder = tmp_path / "tmp"
    folder.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(folder))
    monkeypatch.setenv("TMPDIR", str(folder))
    return folder


def leftovers() -> set[str]:
    """The children's folders still in Python's temporary folder."""
    return {p.name for p in Path(tempfile.gettempdir()).glob("your-kernel-*")}
