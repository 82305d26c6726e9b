"""A page state (the kernel's source included) as one short URL-safe text: JSON, zlib, base64url.

Decoding is bounded (MAX_STATE_CHARS decompressed), so a crafted link cannot make the server inflate
gigabytes; anything that does not decode is None, and the page starts from its defaults.
"""
from __future__ import annotations

import base64
import binascii
import json
import zlib

MAX_STATE_CHARS = 200_000


def encode_state(state: dict) -> str:
    raw = json.dumps(state, separators=(",", ":"), sort_keys=True).encode()
    return base64.urlsafe_b64encode(zlib.compress(raw, 9)).decode().rstrip("=")


def decode_state(text: str) -> dict | None:
    try:
        packed = base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))
        inflater = zlib.decompressobj()
        raw = inflater.decompress(packed, MAX_STATE_CHARS)
        if inflater.unconsumed_tail:
            return None
        state = json.loads(raw)
    except (binascii.Error, zlib.error, ValueError):
        return None
    return state if isinstance(state, dict) else None
