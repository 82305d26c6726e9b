"""The code base class, the tables of words (this package's TOML files) and `describe`; the package's
docstring says how they fit together. Composers (compose.py) register themselves in COMPOSERS."""
from __future__ import annotations

import string
import tomllib
from dataclasses import dataclass
from enum import Enum
from importlib import resources
from typing import Callable, Iterable, Iterator, Mapping

LANGUAGES = ("en", "zh")
Figure = int | float | str | bool | None

# Every Code class by name, filled as the classes are defined (so a record can name its code's class).
CODE_CLASSES: dict[str, type["Code"]] = {}


class Code(str, Enum):
    """A code with words in every language: `[<class name>]` in one of this package's tables, keyed by value."""

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        CODE_CLASSES[cls.__name__] = cls

    def __str__(self) -> str:
        return self.value


@dataclass(frozen=True)
class Coded:
    """A code and the figures it is said with: what the library hands the UI instead of a sentence."""

    code: Code
    figures: tuple[tuple[str, Figure], ...] = ()

    @classmethod
    def of(cls, code: Code, **figures: Figure) -> "Coded":
        return cls(code, tuple(figures.items()))

    @property
    def values(self) -> dict[str, Figure]:
        return dict(self.figures)

    def to_json(self) -> dict:
        """{"code": "<class>:<value>", "figures": {...}}: how records store it."""
        return {"code": f"{type(self.code).__name__}:{self.code.value}", "figures": self.values}

    @classmethod
    def from_json(cls, data: Mapping) -> "Coded":
        kind, _, value = str(data["code"]).partition(":")
        if kind not in CODE_CLASSES:
            raise ValueError(f"unknown code class {kind!r} in {data!r}")
        return cls.of(CODE_CLASSES[kind](value), **dict(data.get("figures") or {}))


class _Counted(string.Formatter):
    def format_field(self, value, format_spec: str) -> str:
        if "|" not in format_spec:
            return super().format_field(value, format_spec)
        spec, one, other = format_spec.split("|")
        return f"{format(value, spec)} {one if value == 1 else other}"


_COUNTED = _Counted()


def format_counted(text: str, /, **values) -> str:
    """`text.format(**values)`, where a placeholder may end in `|singular|plural` to name its count's noun."""
    return _COUNTED.format(text, **values) if "|" in text else text.format(**values)


def topic_files(entries: Iterable) -> Iterator[tuple[str, str, dict]]:
    """(file name, language, parsed TOML) of each `<topic>.<lang>.toml` among `entries` (paths, or a package's
    resources), in name order. An unknown language is an error. The library's words and the app's texts are
    both kept in such files."""
    for entry in sorted(entries, key=lambda e: e.name):
        if not entry.name.endswith(".toml"):
            continue
        lang = entry.name.removesuffix(".toml").rsplit(".", 1)[-1]
        if lang not in LANGUAGES:
            raise ValueError(f"{entry.name}: unknown language {lang!r}")
        yield entry.name, lang, tomllib.loads(entry.read_text(encoding="utf-8"))


def load_tables() -> dict[str, dict[str, dict[str, str]]]:
    """{lang: {table: {key: words}}} from every `<topic>.<lang>.toml` of this package. A table defined by
    two files of one language is an error: each code's words have one home."""
    tables: dict[str, dict[str, dict[str, str]]] = {lang: {} for lang in LANGUAGES}
    origin: dict[tuple[str, str], str] = {}
    for name, lang, parsed in topic_files(resources.files("softmax_core.words").iterdir()):
        for table, words in parsed.items():
            if (table, lang) in origin:
                raise ValueError(f"[{table}] ({lang}) is in {origin[table, lang]} and {name}")
            origin[table, lang] = name
            tables[lang][table] = {key: text.strip("\n") for key, text in words.items()}
    return tables


TABLES = load_tables()


def words_for(table: str, key: str, lang: str = "en") -> str:
    """The raw words (a template) of `key` in `table`; KeyError when they are missing."""
    try:
        return TABLES[lang][table][key]
    except KeyError:
        raise KeyError(f"no words for {table}:{key} ({lang}) in softmax_core/words/") from None


def piece(table: str, key: str, lang: str = "en", **figures) -> str:
    """One piece of a sentence, formatted: what a composer chooses between."""
    return format_counted(words_for(table, key, lang), **_said(figures, lang))


def _said(figures: Mapping, lang: str) -> dict:
    return {name: describe(value, lang=lang) if isinstance(value, Code) else value for name, value in figures.items()}


# Composers: for a code class whose sentences have parts chosen by the figures, a function
# (code, figures, lang) -> the extra placeholders its templates use. Registered by the modules in this package.
Composer = Callable[[Code, dict, str], dict]
COMPOSERS: dict[str, Composer] = {}


def describe(subject, figures: Mapping | None = None, lang: str = "en") -> str:
    """Words for a code and its figures in `lang`. `subject`: a Code (figures given), or anything with a
    `code` and `values` (Coded, softmax_core.plans.reasons.PlanReason; `figures` then adds to its values, e.g.
    the GPU's `cache`)."""
    if not isinstance(subject, Code):
        subject, figures = subject.code, {**subject.values, **(figures or {})}
    values = dict(figures or {})
    if lang not in LANGUAGES:
        raise ValueError(f"unknown language {lang!r}; known: {', '.join(LANGUAGES)}")
    table = type(subject).__name__
    template = words_for(table, subject.value, lang)
    composer = COMPOSERS.get(table)
    if "cache" not in values and ("{cache" in template or composer):
        # The cache a re-read finds its rows in is a GPU's (its last_level_cache): a caller that knows the GPU
        # names it (`cache=CacheKind...`, softmax_core.hardware.gpu); without one the words say "the last-level
        # cache" (CacheKind.LAST_LEVEL's words), never a wrong name.
        values["cache"] = words_for("CacheKind", "last_level", lang)
    extra = composer(subject, values, lang) if composer else {}
    return format_counted(template, **_said({**values, **extra}, lang))

