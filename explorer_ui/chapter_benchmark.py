"""The chapter's Step 5 claims beside the recorded H200 sweep, in the page's language:
softmax_core.bench.chapter_claims computes each verdict and its figures, softmax_core.words.claims says them."""
from __future__ import annotations

from functools import lru_cache

import pandas as pd

from explorer_ui.i18n import language
from softmax_core.bench import chapter_claims as cc
from softmax_core.words import claims as claim_words


@lru_cache(maxsize=1)
def chapter_runs() -> cc.ChapterRuns | None:
    return cc.load_chapter_runs()


def claims_table(lang: str | None = None) -> pd.DataFrame | None:
    """One row per claim: the chapter's words, the verdict, what the record says. None without a record."""
    runs = chapter_runs()
    return None if runs is None else claim_words.claims_table(runs, lang or language())


def bounds_text(lang: str | None = None) -> str | None:
    """Why the figures are what they are: launch cost at the smallest N, L2, the copy's ceiling."""
    runs = chapter_runs()
    return None if runs is None else claim_words.bounds_text(runs, lang or language())


def sweep_chart_data() -> pd.DataFrame | None:
    """GB/s by N (index) and provider (columns) of the main run, for a line chart."""
    runs = chapter_runs()
    if runs is None:
        return None
    f = runs.main.frame[runs.main.frame.status == "ok"]
    return f.pivot(index="N", columns="provider", values="gbps")[list(dict.fromkeys(f.provider))]


def record_caption(lang: str | None = None) -> str | None:
    runs = chapter_runs()
    return None if runs is None else claim_words.record_caption(runs, lang or language())
