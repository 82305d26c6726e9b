"""The chapter's Step 5 claims beside the recorded H200 sweep: softmax_core.bench.chapter_claims computes each
verdict and its figures; this module puts them into the page's words (locales/chapter_benchmark.*.toml)."""
from __future__ import annotations

from functools import lru_cache

import pandas as pd

from explorer_ui import fmt
from explorer_ui.i18n import t, text_in
from softmax_core.bench import chapter_claims as cc


@lru_cache(maxsize=1)
def chapter_runs() -> cc.ChapterRuns | None:
    return cc.load_chapter_runs()


def _sizes(ns) -> str:
    return ", ".join(fmt.count(n) for n in ns) if ns else "—"


def _of_copy(x: float | None) -> str:
    """A fraction of the copy's GB/s, "0.62"; "—" when there is none."""
    return "—" if x is None else f"{x:.2f}"


def _percent(x: float) -> str:
    return f"{100 * x:.0f} %"


def _words(lang: str | None):
    """`t` in the page's language, or in `lang` when given (the docs generator asks for English)."""
    return t if lang is None else (lambda key, **values: text_in(lang, key, **values))


def _evidence(check: cc.ClaimCheck, t=t) -> str:
    f = check.figures
    if check.verdict == cc.NOT_MEASURED:
        return t(f"cb_{check.claim}_not_measured")
    if check.claim == cc.TRITON_ABOVE_TORCH:
        return t("cb_triton_above_torch_evidence", above=f["above"], sizes=f["sizes"], close=f["close"],
                 close_at=_sizes(f["too_close_at"]), torch_at=_sizes(f["torch_above_at"]),
                 median=fmt.ratio(f["median_ratio"]), low=fmt.ratio(f["min_ratio"]), low_n=fmt.count(f["min_ratio_n"]))
    if check.claim == cc.GAP_GROWS_WITH_N:
        steps = ", ".join(f"{fmt.count(n)} ({100 * c:+.0f} %)" for n, c in f["torch_steps"]) or "—"
        return t("cb_gap_grows_with_n_evidence", rho=f"{f['rank_correlation']:.2f}", first_n=fmt.count(f["first_n"]),
                 first=fmt.ratio(f["first_ratio"]), last_n=fmt.count(f["last_n"]), last=fmt.ratio(f["last_ratio"]),
                 top=fmt.ratio(f["max_ratio"]), top_n=fmt.count(f["max_ratio_n"]), steps=steps)
    if check.claim == cc.FUSION_EXPLAINS_GAP:
        return t("cb_fusion_explains_gap_evidence", ceiling=_of_copy(f["ceiling_ratio"]),
                 torch_low=_of_copy(f["torch_min_ratio"]), torch_low_n=fmt.count(f["torch_min_ratio_n"]),
                 torch_median=_of_copy(f["torch_median_ratio"]),
                 naive=_of_copy(f.get("naive_median_ratio")), speedup=fmt.ratio(f.get("tutorial_over_naive")))
    if check.claim == cc.BELOW_PEAK_FROM_EXP_SUM:
        return t("cb_below_peak_from_exp_sum_evidence", n=fmt.count(f["n"]), peak=fmt.count(f["peak_gbps"]),
                 copy=fmt.count(f["copy_gbps"]), tutorial=fmt.count(f["tutorial_gbps"]),
                 share=_percent(f["copy_share_of_gap"]), tuned=_of_copy(f.get("tuned_median_ratio")),
                 tut_ratio=_of_copy(f["tutorial_median_ratio"]))
    return t("cb_compile_fuses_less_well_evidence", above=f["above"], sizes=f["sizes"],
             compile_at=_sizes(f["compile_above_at"]), close_at=_sizes(f["too_close_at"]))


def claims_table(lang: str | None = None) -> pd.DataFrame | None:
    """One row per claim: the chapter's words, the verdict, what the record says. None without a record."""
    t = _words(lang)
    runs = chapter_runs()
    if runs is None:
        return None
    rows = [{t("cb_col_claim"): t(f"cb_{c.claim}"), t("cb_col_verdict"): t(f"cb_verdict_{c.verdict}"),
             t("cb_col_evidence"): _evidence(c, t)} for c in cc.check_claims(runs)]
    return pd.DataFrame(rows)


def bounds_text(lang: str | None = None) -> str | None:
    """Why the figures are what they are: launch cost at the smallest N, L2, the copy's ceiling."""
    t = _words(lang)
    runs = chapter_runs()
    if runs is None:
        return None
    b = cc.bounds(runs)
    return t("cb_bounds", gpu=b["gpu"], peak=fmt.count(b["peak_gbps"] or 0), best=fmt.count(b["copy_best_gbps"]),
             best_n=fmt.count(b["copy_best_n"]), best_share=_percent(b.get("copy_best_of_peak", float("nan"))),
             small_n=fmt.count(b["smallest_n"]), small=fmt.count(b["copy_smallest_gbps"]),
             small_share=_percent(b.get("copy_smallest_of_peak", float("nan"))), us=f"{b['copy_smallest_us']:.1f}",
             ideal=f"{b['smallest_at_best_us']:.1f}", fixed=f"{b['smallest_fixed_us']:.1f}",
             mb=f"{b['smallest_mb']:.1f}", l2=f"{b['l2_mib']:g}" if b["l2_mib"] else "—",
             l2_n=fmt.count(b["l2_fits_up_to_n"]) if b.get("l2_fits_up_to_n") else "—")


def sweep_chart_data() -> pd.DataFrame | None:
    """GB/s by N (index) and provider (columns) of the main run, for a line chart."""
    runs = chapter_runs()
    if runs is None:
        return None
    f = runs.main.frame[runs.main.frame.status == "ok"]
    return f.pivot(index="N", columns="provider", values="gbps")[list(dict.fromkeys(f.provider))]


def record_caption(lang: str | None = None) -> str | None:
    t = _words(lang)
    runs = chapter_runs()
    if runs is None:
        return None
    p = runs.main.provenance
    return t("cb_record", gpu=p["gpu"], torch=p["torch"], triton=p["triton"], date=p["date"][:16].replace("T", " "),
             file=p["csv"], command=p["command"])
