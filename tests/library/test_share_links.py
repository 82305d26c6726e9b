"""Share links are anyone's text: deep, huge or ill-typed ones decode to None (the page then says the link
could not be read), never a traceback."""
import base64
import json
import zlib

import pytest

from kernel_inspector import share


def link(raw: bytes) -> str:
    return base64.urlsafe_b64encode(zlib.compress(raw, 9)).decode().rstrip("=")


def test_a_page_state_goes_there_and_back():
    state = {"source": "import triton\n", "args": "x_ptr=*fp32", "sizes": "", "grid": "1", "flops": 2.0}
    assert share.decode_state(share.encode_state(state)) == state


@pytest.mark.parametrize("raw", [
    b"[" * 100_000 + b"]" * 100_000,                     # a short link inflating to deep nesting
    b'{"source": ' + b"[" * 50_000 + b"]" * 50_000 + b"}",
    json.dumps({"source": "x", "flops": "abc"}).encode(),    # a field of the wrong type
    json.dumps({"source": ["x"]}).encode(),
    json.dumps({"source": "x", "flops": True}).encode(),
    json.dumps({"source": "x", "extra": 1}).encode(),        # a field the page does not have
    json.dumps(["source"]).encode(),
    b"x" * 1_000_000,                                      # inflates past the bound
    b"\xff\xfe not json",
], ids=["deep", "deep_field", "wrong_type", "list_for_text", "bool_for_number", "extra_field", "not_a_dict",
        "inflates_too_far", "not_json"])
def test_a_crafted_link_decodes_to_nothing(raw):
    text = link(raw)
    if raw.startswith(b"[" * 10):
        assert len(text) < 1000                          # the attack is a short link
    assert share.decode_state(text) is None


@pytest.mark.parametrize("text", ["", "!!!", "A" * (share.MAX_LINK_CHARS + 1), "eJw"],
                         ids=["empty", "not_base64", "too_long", "truncated"])
def test_text_that_is_no_link_decodes_to_nothing(text):
    assert share.decode_state(text) is None
