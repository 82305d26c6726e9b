"""The child's result lines, read as untrusted: one schema per kind of line, every field checked.

A line from the jail is a JSON object that pasted code may have written itself. So nothing is built from the
keys it sent: each reader below takes the fields it knows by name, checks each one's type and range, and
builds the parent's own objects from those values. A line with a missing, extra or ill-typed field is
dropped (its variant then reads as "crashed"), never half-read.
"""
from __future__ import annotations

from kernel_inspector.hints import HINT_CODES
from kernel_inspector.rules import REFUSAL_CODES, Refusal
from softmax_core.hardware.compile import KernelResources, RegisterSource

MAX_INT = 1 << 31
MAX_TEXT = 4_000                   # a message, a name
MAX_ASM = 8 << 20                  # one listing (PTX, SASS, AMDGCN)
ASM_KINDS = ("ptx", "sass", "amdgcn")
REGISTER_SOURCES = tuple(s.value for s in RegisterSource)


class BadReply(ValueError):
    """A result line that does not fit its schema."""


def exact_keys(obj, required: set[str], optional: set[str] = frozenset()) -> dict:
    if not isinstance(obj, dict) or not required <= obj.keys() or not obj.keys() <= required | optional:
        raise BadReply("keys")
    return obj


def integer(value, low: int = 0, high: int = MAX_INT) -> int:
    if type(value) is not int or not low <= value <= high:
        raise BadReply("int")
    return value


def optional_integer(value, low: int = 0, high: int = MAX_INT) -> int | None:
    return None if value is None else integer(value, low, high)


def number(value, low: float = 0.0, high: float = 1e9) -> float:
    if type(value) not in (int, float) or not low <= value <= high:
        raise BadReply("number")
    return float(value)


def text(value, limit: int = MAX_TEXT) -> str:
    if type(value) is not str or len(value) > limit:
        raise BadReply("text")
    return value


def one_of(value, choices: tuple) -> str:
    if type(value) is not str or value not in choices:
        raise BadReply("code")
    return value


def refusal(obj) -> Refusal:
    fields = exact_keys(obj, {"code", "line"}, {"column", "detail", "value", "limit"})
    return Refusal(one_of(fields["code"], REFUSAL_CODES), integer(fields["line"]),
                   integer(fields.get("column", 0)), text(fields.get("detail", "")),
                   optional_integer(fields.get("value")), optional_integer(fields.get("limit")))


def resources(obj) -> KernelResources:
    fields = exact_keys(obj, {"n_regs", "n_spills", "shared_bytes", "source"},
                        {"target", "refused", "toolchain", "asm"})
    asm = fields.get("asm", {})
    if not isinstance(asm, dict) or not asm.keys() <= set(ASM_KINDS):
        raise BadReply("asm")
    return KernelResources(integer(fields["n_regs"], 0, 1 << 16), integer(fields["n_spills"]),
                           integer(fields["shared_bytes"]), RegisterSource(one_of(fields["source"], REGISTER_SOURCES)),
                           text(fields.get("target", ""), 64), text(fields.get("refused", "")),
                           text(fields.get("toolchain", ""), 200),
                           {kind: text(listing, MAX_ASM) for kind, listing in asm.items()})


def failure(obj) -> tuple[str, int | None, str]:
    fields = exact_keys(obj, {"hint", "line", "message"})
    return (one_of(fields["hint"], HINT_CODES), optional_integer(fields["line"], 1),
            text(fields["message"]))


def compile_reply(obj, indices: range):
    """("refused", Refusal) or (index, seconds, KernelResources | (hint, line, message)) of one line."""
    if isinstance(obj, dict) and obj.get("kind") == "refused":
        return "refused", refusal(exact_keys(obj, {"kind", "refusal"})["refusal"])
    kind = obj.get("kind") if isinstance(obj, dict) else None
    if kind == "compiled":
        fields = exact_keys(obj, {"kind", "index", "seconds", "resources"})
        result = resources(fields["resources"])
    elif kind == "failed":
        fields = exact_keys(obj, {"kind", "index", "seconds", "failure"})
        result = failure(fields["failure"])
    else:
        raise BadReply("kind")
    index = integer(fields["index"])
    if index not in indices:
        raise BadReply("index")
    return index, number(fields["seconds"]), result
