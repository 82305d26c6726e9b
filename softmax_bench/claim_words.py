"""The chapter's Step 5 claims in words: softmax_bench.chapter_claims computes each verdict and its figures,
this module puts them into the words of chapter.<lang>.toml. The chapter-notes page (in the reader's language)
and the doc tables (in English) both call it, so the two say the same thing.

Numbers are written as the app writes them: counts with thousands separators, ratios as "1.85×", fractions of
the copy's GB/s with two digits, shares as whole percents.
"""
from __future__ import annotations

import math

import pandas as pd

from softmax_bench import chapter_claims as cc
from softmax_core.words.core import describe, piece, words_for


def _count(n) -> str:
    return f"{int(n):,}"


def _ratio(x: float | None) -> str:
    return "—" if x is None or not math.isfinite(x) else f"{x:,.2f}×"


def _sizes(ns) -> str:
    return ", ".join(_count(n) for n in ns) if ns else "—"


def _of_copy(x: float | None) -> str:
    """A fraction of the copy's GB/s, "0.62"; "—" when there is none."""
    return "—" if x is None else f"{x:.2f}"


def _percent(x: float) -> str:
    return f"{100 * x:.0f} %"


def evidence(check: cc.ClaimCheck, lang: str = "en") -> str:
    """What the record says for one claim."""
    f = check.figures
    if check.verdict == cc.NOT_MEASURED:
        return piece("claim_not_measured", check.claim.value, lang)
    if check.claim == cc.TRITON_ABOVE_TORCH:
        values = dict(above=f["above"], sizes=f["sizes"], close=f["close"], close_at=_sizes(f["too_close_at"]),
                      torch_at=_sizes(f["torch_above_at"]), median=_ratio(f["median_ratio"]),
                      low=_ratio(f["min_ratio"]), low_n=_count(f["min_ratio_n"]))
    elif check.claim == cc.GAP_GROWS_WITH_N:
        steps = ", ".join(f"{_count(n)} ({100 * c:+.0f} %)" for n, c in f["torch_steps"]) or "—"
        values = dict(rho=f"{f['rank_correlation']:.2f}", first_n=_count(f["first_n"]), first=_ratio(f["first_ratio"]),
                      last_n=_count(f["last_n"]), last=_ratio(f["last_ratio"]), top=_ratio(f["max_ratio"]),
                      top_n=_count(f["max_ratio_n"]), steps=steps)
    elif check.claim == cc.FUSION_EXPLAINS_GAP:
        values = dict(ceiling=_of_copy(f["ceiling_ratio"]), torch_low=_of_copy(f["torch_min_ratio"]),
                      torch_low_n=_count(f["torch_min_ratio_n"]), torch_median=_of_copy(f["torch_median_ratio"]),
                      naive=_of_copy(f.get("naive_median_ratio")), speedup=_ratio(f.get("tutorial_over_naive")))
    elif check.claim == cc.BELOW_PEAK_FROM_EXP_SUM:
        values = dict(n=_count(f["n"]), peak=_count(f["peak_gbps"]), copy=_count(f["copy_gbps"]),
                      tutorial=_count(f["tutorial_gbps"]), share=_percent(f["copy_share_of_gap"]),
                      tuned=_of_copy(f.get("tuned_median_ratio")), tut_ratio=_of_copy(f["tutorial_median_ratio"]))
    else:
        values = dict(above=f["above"], sizes=f["sizes"], compile_at=_sizes(f["compile_above_at"]),
                      close_at=_sizes(f["too_close_at"]))
    return piece("claim_evidence", check.claim.value, lang, **values)


def claims_table(runs: cc.ChapterRuns, lang: str = "en") -> pd.DataFrame:
    """One row per claim: the chapter's words, the verdict, what the record says."""
    columns = [piece("chapter_pieces", f"col_{c}", lang) for c in ("claim", "verdict", "evidence")]
    return pd.DataFrame([dict(zip(columns, (describe(c.claim, lang=lang), describe(c.verdict, lang=lang),
                                             evidence(c, lang)))) for c in cc.check_claims(runs)], columns=columns)


def bounds_text(runs: cc.ChapterRuns, lang: str = "en") -> str:
    """Why the figures are what they are: launch cost at the smallest N, the last cache, the copy's ceiling."""
    b = cc.bounds(runs)
    return piece("chapter_pieces", "bounds", lang, gpu=b["gpu"], peak=_count(b["peak_gbps"] or 0),
                 best=_count(b["copy_best_gbps"]), best_n=_count(b["copy_best_n"]),
                 best_share=_percent(b.get("copy_best_of_peak", float("nan"))), small_n=_count(b["smallest_n"]),
                 small=_count(b["copy_smallest_gbps"]),
                 small_share=_percent(b.get("copy_smallest_of_peak", float("nan"))), us=f"{b['copy_smallest_us']:.1f}",
                 ideal=f"{b['smallest_at_best_us']:.1f}", fixed=f"{b['smallest_fixed_us']:.1f}",
                 mb=f"{b['smallest_mb']:.1f}", cache_mib=f"{b['cache_mib']:g}" if b["cache_mib"] else "—",
                 cache=words_for("chapter_pieces", f"cache_{b['cache_kind'] or 'l2'}", lang),
                 cache_n=_count(b["cache_fits_up_to_n"]) if b.get("cache_fits_up_to_n") else "—")


def record_caption(runs: cc.ChapterRuns, lang: str = "en") -> str:
    """Which recorded run the claims come from, and the command that recorded it."""
    p = runs.main.provenance
    return piece("chapter_pieces", "record", lang, gpu=p["gpu"], torch=p["torch"], triton=p["triton"],
                 date=p["date"][:16].replace("T", " "), file=p["csv"], command=p["command"])
