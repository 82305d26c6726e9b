"""A page state (the kernel's source included) as one short URL-safe text: JSON, zlib, base64url.

Decoding is bounded and checked, because a link is anyone's: the link's length (MAX_LINK_CHARS), what it
inflates to (MAX_STATE_CHARS), how deep its JSON nests (a link of 162 characters can inflate to thousands of
nested brackets), and the state's fields and their types (FIELDS). Anything else is None, and the page says
the link could not be read and starts from its defaults.
"""
from __future__ import annotations

import base64
import binascii
import json
import zlib

MAX_STATE_CHARS = 200_000
MAX_LINK_CHARS = 300_000
MAX_DEPTH = 4
# The page state's fields: each one's type; the kernel's source and the argument lines are text
FIELDS = {"source": str, "args": str, "sizes": str, "grid": str, "flops": (int, float)}


def encode_state(state: dict) -> str:
    raw = json.dumps(state, separators=(",", ":"), sort_keys=True).encode()
    return base64.urlsafe_b64encode(zlib.compress(raw, 9)).decode().rstrip("=")


def nesting(raw: bytes) -> int:
    """How deep the brackets of a JSON text nest (strings' contents aside), read before it is parsed."""
    depth = deepest = 0
    in_string = escaped = False
    for byte in raw:
        if in_string:
            escaped, in_string = (False, True) if escaped else (byte == 0x5C, byte != 0x22)
        elif byte == 0x22:
            in_string = True
        elif byte in (0x5B, 0x7B):
            depth += 1
            deepest = max(deepest, depth)
        elif byte in (0x5D, 0x7D):
            depth -= 1
    return deepest


def valid_state(state) -> dict | None:
    """`state` where it is a page state (known fields, each of its type), else None."""
    if not isinstance(state, dict) or not set(state) <= set(FIELDS):
        return None
    for name, value in state.items():
        if not isinstance(value, FIELDS[name]) or isinstance(value, bool):
            return None
    return state


def decode_state(text: str) -> dict | None:
    if not isinstance(text, str) or len(text) > MAX_LINK_CHARS:
        return None
    try:
        packed = base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))
        inflater = zlib.decompressobj()
        raw = inflater.decompress(packed, MAX_STATE_CHARS)
        if inflater.unconsumed_tail or nesting(raw) > MAX_DEPTH:
            return None
        state = json.loads(raw)
    except (binascii.Error, zlib.error, ValueError, RecursionError):
        return None
    return valid_state(state)
