"""What the server that runs the explorer says for every session, set by `softmax-explorer` (explorer_ui/
launcher.py) in the environment of the Streamlit process it starts. No Streamlit here: the launcher reads
these names before Streamlit is imported, or when it is not installed.

- SOFTMAX_EXPLORER_LANG: the language a session starts in when its link has no ?lang= (else the browser's).
- SOFTMAX_EXPLORER_PRESENT: "1" starts every session in presentation mode unless its link says ?present=0.
"""
from __future__ import annotations

import os
from pathlib import Path

LANG_ENV = "SOFTMAX_EXPLORER_LANG"
PRESENT_ENV = "SOFTMAX_EXPLORER_PRESENT"
LOCALES_DIR = Path(__file__).resolve().parent / "locales"


def languages() -> list[str]:
    """The languages the app has text in: those of its translation tables (`<topic>.<lang>.toml`)."""
    return sorted({path.stem.rsplit(".", 1)[1] for path in LOCALES_DIR.glob("*.toml")})


def default_language() -> str | None:
    """The server's language for sessions whose link names none; None: follow the browser."""
    lang = os.environ.get(LANG_ENV, "").strip().lower()
    return lang if lang in languages() else None


def present_by_default() -> bool:
    return os.environ.get(PRESENT_ENV, "").strip().lower() in ("1", "true", "yes", "on")
