"""What a recorded run and the GPU catalog say, in the reader's language.

A recorded run keeps codes and figures (softmax_bench.records): its clock, its backend, each row's
reason for not being timed, the providers that could not run. softmax_core.words says each of them in
either language (explorer_ui.i18n.say). The GPU catalog (softmax_core/data/gpus.json) cites each figure's
source in English; in 中文 a citation is found by its source id in gpu_sources.zh.toml (the English lives
once, in the catalog). A live GPU's source (the driver call that reported it) is code and stays as it is.
"""
from __future__ import annotations

import tomllib
from functools import lru_cache
from pathlib import Path

from softmax_bench import providers, records
from softmax_core.hardware.gpu import catalog_sources

from .i18n import has, language, say, t

# statuses of a benchmark row that was not timed (softmax_bench.harness), each with a bench_status_ key
STATUSES = ("failed", "skipped")

SOURCES_ZH = Path(__file__).resolve().parent / "gpu_sources.zh.toml"


@lru_cache(maxsize=1)
def source_table() -> dict[str, str]:
    """Source id (softmax_core/data/gpus.json `sources`) -> its citation in Chinese."""
    return tomllib.loads(SOURCES_ZH.read_text(encoding="utf-8"))


@lru_cache(maxsize=1)
def _source_ids() -> dict[str, str]:
    return {citation: key for key, citation in catalog_sources().items()}


def source_text(citation: str) -> str:
    """A GPU figure's source as the reader reads it: in 中文 the catalog citation's Chinese (by its source id)."""
    if language() != "zh":
        return citation
    key = _source_ids().get(citation)
    return source_table().get(key, citation) if key else citation


def provider_text(name: str) -> str:
    """A provider's name for people (softmax_bench.providers.label), in the reader's language."""
    return providers.label(name, language())


def reason_text(reason) -> str:
    """Why a benchmark row was not timed (a Coded, softmax_bench.providers.NotTimed), or ""."""
    return say(reason) if reason else ""


# provenance entries the table leaves out: the clock's settings are said with the clock
_HIDDEN = ("timer_figures",)


def provenance_value(info: dict, key: str) -> str:
    """One entry of a recorded run's provenance (records' version 3 terms), as the benchmark page shows it."""
    value = info.get(key)
    separator = "、" if language() == "zh" else ", "
    if key == "timer":
        clock = records.timer(info)
        return say(clock) if clock is not None else str(info.get("timer_figures", {}).get("name", "?"))
    if key == "backend":
        return say(records.backend(info)) if value else "?"
    if key in ("bytes", "copy") and value in set(records.Method):
        return say(records.Method(value))
    if key == "providers":
        return separator.join(provider_text(name) for name in value or ())
    if key == "unavailable":
        return separator.join(f"{provider_text(name)}: {say(why)}" for name, why in records.unavailable(info).items())
    if key == "directions":
        return separator.join(t(f"bench_dir_{v}") if has(f"bench_dir_{v}") else str(v) for v in value or ())
    if isinstance(value, dict):
        return ", ".join(f"{a}: {b}" for a, b in value.items())
    if isinstance(value, list):
        return ", ".join(map(str, value))
    return str(value)


def provenance_rows(info: dict) -> dict[str, str]:
    """A recorded run's provenance as the benchmark page's table shows it: key -> shown value."""
    return {key: provenance_value(info, key) for key in info if key not in _HIDDEN}
