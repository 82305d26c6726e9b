"""The chapter's Step 5 claims beside the recorded H200 sweep, in the page's language:
softmax_bench.chapter_claims computes each verdict and its figures, softmax_bench.claim_words says them.
The record is loaded once (explorer_ui.data.chapter_runs) and drawn by explorer_ui.charts.sweep_lines."""
from __future__ import annotations

import pandas as pd

from explorer_ui.data import chapter_runs
from explorer_ui.i18n import language
from softmax_bench import claim_words as claim_words


def claims_table(lang: str | None = None) -> pd.DataFrame | None:
    """One row per claim: the chapter's words, the verdict, what the record says. None without a record."""
    runs = chapter_runs()
    return None if runs is None else claim_words.claims_table(runs, lang or language())


def bounds_text(lang: str | None = None) -> str | None:
    """Why the figures are what they are: launch cost at the smallest N, L2, the copy's ceiling."""
    runs = chapter_runs()
    return None if runs is None else claim_words.bounds_text(runs, lang or language())


def record_caption(lang: str | None = None) -> str | None:
    runs = chapter_runs()
    return None if runs is None else claim_words.record_caption(runs, lang or language())
