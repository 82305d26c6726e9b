"""The "Your kernel" page against an untrusted class: it says what pasted code is compiled in; where there is
no jail on a server students reach over the network, compiling is off and the page says why and how to change
it; a crafted share link gets a message, not a traceback."""
import pytest

from explorer_ui.i18n import TEXT
from explorer_ui.pages_registry import script
from kernel_inspector import jail, policy
from tests.support.apptest import open_page

PAGE = script("your_kernel")


def first_words(key: str, lang: str) -> str:
    return TEXT[key][lang].split("{")[0][:40]


@pytest.mark.parametrize("lang", ["en", pytest.param("zh", marks=pytest.mark.slow)])
def test_no_jail_on_a_class_address_turns_compiling_off_and_says_how(lang, monkeypatch):
    monkeypatch.setattr(jail, "probe", lambda: "none")
    monkeypatch.setenv(policy.PUBLIC_ADDRESS_ENV, "0.0.0.0")
    monkeypatch.delenv(policy.ALLOW_UNSANDBOXED_ENV, raising=False)
    at = open_page(PAGE, {"lang": lang})
    assert not at.exception
    assert any(first_words("yk_sandbox_off", lang) in w.value and policy.ALLOW_UNSANDBOXED_ENV in w.value
               for w in at.warning)
    assert not [b for b in at.button if b.key == "yk_compile"]


@pytest.mark.slow
def test_the_teachers_flag_turns_it_on_with_a_warning(monkeypatch):
    monkeypatch.setattr(jail, "probe", lambda: "none")
    monkeypatch.setenv(policy.PUBLIC_ADDRESS_ENV, "0.0.0.0")
    monkeypatch.setenv(policy.ALLOW_UNSANDBOXED_ENV, "1")
    at = open_page(PAGE, {"lang": "en"})
    assert any(first_words("yk_sandbox_none_allowed", "en") in w.value for w in at.warning)
    assert [b for b in at.button if b.key == "yk_compile"]


@pytest.mark.slow
def test_with_the_jail_the_page_says_so(monkeypatch):
    monkeypatch.setattr(jail, "probe", lambda: "bubblewrap")
    at = open_page(PAGE, {"lang": "en"})
    assert any(first_words("yk_sandbox_jail", "en") in c.value for c in at.caption)


@pytest.mark.parametrize("raw", [b"[" * 100_000 + b"]" * 100_000,
                                 pytest.param(b'{"source": "x", "flops": "abc"}', marks=pytest.mark.slow)],
                         ids=["deep", "wrong_type"])
def test_a_crafted_share_link_is_a_message_not_a_traceback(raw):
    import base64
    import zlib

    text = base64.urlsafe_b64encode(zlib.compress(raw, 9)).decode().rstrip("=")
    at = open_page(PAGE, {"lang": "en", "k": text})
    assert not at.exception
    assert any(TEXT["yk_bad_link"]["en"] in w.value for w in at.warning)
