"""The parts of a sentence that its figures choose: which clause, which piece, what a count leaves out.

Each composer gets (code, figures, lang) and returns the extra placeholders its code's template uses, built
from pieces of the same language's tables. Nothing here is English or Chinese: the words are in the tables.
"""
from __future__ import annotations

from softmax_core.words.core import CODE_CLASSES, COMPOSERS, describe, piece


def _capital(text: str) -> str:
    return text[:1].upper() + text[1:]


def plan_reason(code, v: dict, lang: str) -> dict:
    """softmax_core.plans.reasons.ReasonCode: the tutorial plan's clauses, and a tuned path's `why`."""
    value = code.value
    if value == "tutorial_fits":
        sram = (piece("plan_pieces", "sram_none", lang) if v["sram_occupancy"] is None
                else piece("plan_pieces", "sram_allows", lang, **v))
        limiter = str(v["limiter"]).replace(" ", "_")
        # the figures decide: when both terms allow the same count, neither runs out first
        if limiter != "rows" and v["sram_occupancy"] is not None and v["sram_occupancy"] == v["reg_occupancy"]:
            limiter = "tie"
        return {"sram": sram, "limiter_why": piece("plan_pieces", f"limiter_{limiter}", lang, **v)}
    if value not in ("rows", "tiled", "split", "any_dim"):
        return {}
    why = describe(type(code)(v["why"]), v, lang)
    extra: dict = {}
    if value == "rows":
        extra["spilled"] = (piece("plan_pieces", "rows_no_spill", lang) if v["n_spills"] == 0
                            else piece("plan_pieces", "rows_spilled", lang, **v))
    elif value == "any_dim":
        pass
    elif value == "tiled":
        if v["split_declined"]:
            why += piece("plan_pieces", "tiled_split_declined", lang)
        extra["per_row"] = (piece("plan_pieces", "tiled_one_per_row", lang) if v["shared_by"] == 1
                            else piece("plan_pieces", "tiled_shared_row", lang, **v))
    else:
        direction = v["direction"]
        extra = {"publish": piece("plan_pieces", f"split_publish_{direction}", lang),
                 "total": piece("plan_pieces", f"split_total_{direction}", lang),
                 "traffic": piece("plan_pieces", f"split_traffic_{direction}", lang), "others": v["split"] - 1}
    return {**extra, "why": _capital(why)}


def register_source(code, v: dict, lang: str) -> dict:
    """softmax_core.hardware.compile.RegisterSource: a driver that refused to load the kernel adds a clause."""
    refused = v.get("refused") or ""
    return {"refused_clause": piece("hardware_pieces", "refused", lang, error=refused) if refused else ""}


def occupancy_rule(code, v: dict, lang: str) -> dict:
    """softmax_core.hardware.occupancy.OccupancyRule: the slots and shared memory parts, where they apply."""
    if code.value == "chapter":
        return {"shared_part": "" if v["sram_occupancy"] is None
                else piece("hardware_pieces", "chapter_shared", lang, **v)}
    vendor = "amd" if v["vendor"] == "amd" else "nvidia"
    return {"unit_note": piece("hardware_pieces", f"alloc_unit_{vendor}", lang, **v),
            "bank": piece("hardware_pieces", f"bank_{vendor}", lang),
            "block_part": "" if v["by_block_slots"] is None else piece("hardware_pieces", "block_slots", lang, **v),
            "shared_part": (piece("hardware_pieces", "no_shared", lang) if v["by_shared"] is None
                            # the rounding to the allocation unit is written out where it changes the bytes
                            else piece("hardware_pieces", "shared", lang, **v) if v.get("shared_per_program") in
                            (None, v["shared_bytes"] + v["reserved_shared_per_block"])
                            else piece("hardware_pieces", "shared_rounded", lang, **v))}


def timer(code, v: dict, lang: str) -> dict:
    """softmax_bench.records.Clock: do_bench as recorded before the 20th / 80th percentiles were kept."""
    if code.value == "do_bench":
        return {"kept": piece("bench_pieces", "median_only" if v.get("median_only") else "quantiles", lang)}
    return {}


def not_timed(code, v: dict, lang: str) -> dict:
    """softmax_bench.providers.NotTimed: a plan's own reason, or a resource named by its limiter."""
    if code.value == "does_not_fit":
        plan_code = CODE_CLASSES["ReasonCode"](v["plan_code"])
        return {"plan_reason": describe(plan_code, {k: x for k, x in v.items() if k != "plan_code"}, lang)}
    if code.value == "out_of_resources":
        limiter = CODE_CLASSES["Limiter"]
        resource = v.get("resource")
        return {"resource": describe(limiter(resource), {}, lang) if resource in set(limiter) else resource}
    return {}


COMPOSERS.update({"NotTimed": not_timed, "ReasonCode": plan_reason, "RegisterSource": register_source,
                  "OccupancyRule": occupancy_rule, "Clock": timer})
