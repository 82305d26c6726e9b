"""A plan's reason (softmax_core.plans.reasons.PlanReason: a code and its figures) in the page's language.

The words live in locales/plan_reasons.<lang>.toml: `reason_<code>` is the sentence, `reason_why_<code>` the
clause a tuned plan's `why` code names, and a few pieces (the shared-memory clause, the limiter, what split
programs exchange) are chosen here from the figures. The library's English renderer for the command line is
softmax_core.plans.reason_text; the two say the same things from the same figures.
"""
from __future__ import annotations

from typing import Callable

from softmax_core.plans.reasons import WHY_CODES, PlanReason, ReasonCode

from .i18n import t

# The tutorial plan's codes; the tuned plan's codes are its paths (the keys of WHY_CODES).
TUTORIAL_CODES = (ReasonCode.TUTORIAL_FITS, ReasonCode.TUTORIAL_OVER_SHARED_MEMORY,
                  ReasonCode.TUTORIAL_OVER_REGISTERS)
PATH_CODES = tuple(WHY_CODES)
WHY = tuple(dict.fromkeys(why for whys in WHY_CODES.values() for why in whys))
# What split programs exchange, per direction of the pass.
SPLIT_DIRECTIONS = ("forward", "backward")


def render_reason(reason: PlanReason, tr: Callable[..., str] = t) -> str:
    """The reason as sentences; `tr` is the translation function (i18n.t, or i18n.bound() outside a run)."""
    code, v = reason.code, reason.values
    if code is ReasonCode.TUTORIAL_FITS:
        sram = tr("reason_sram_none") if v["sram_occupancy"] is None else tr("reason_sram_allows", **v)
        limiter_why = tr(f"reason_limiter_{v['limiter'].replace(' ', '_')}")
        return tr("reason_tutorial_fits", **v, sram=sram, limiter_why=limiter_why)
    if code in TUTORIAL_CODES:
        return tr(f"reason_{code.value}", **v)
    why = tr(f"reason_why_{reason.why.value}", **v)
    why = why[:1].upper() + why[1:]
    extra: dict[str, object] = {}
    if code is ReasonCode.ROWS:
        extra["spilled"] = tr("reason_rows_no_spill") if v["n_spills"] == 0 else tr("reason_rows_spilled", **v)
    elif code is ReasonCode.TILED:
        if v["split_declined"]:
            why += tr("reason_tiled_split_declined")
        extra["per_row"] = (tr("reason_tiled_one_per_row") if v["shared_by"] == 1
                            else tr("reason_tiled_shared_row", **v))
    elif code is ReasonCode.SPLIT:
        direction = v["direction"]
        extra = dict(publish=tr(f"reason_split_publish_{direction}"), total=tr(f"reason_split_total_{direction}"),
                     traffic=tr(f"reason_split_traffic_{direction}"), others=v["split"] - 1)
    return tr(f"reason_{code.value}", **{**v, "why": why, **extra})
