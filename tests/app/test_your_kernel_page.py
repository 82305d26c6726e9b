"""The "Your kernel" page under AppTest, in English and 中文: an example compiles for two GPUs and shows its
table, what-if and assembly; a hostile paste is refused with its line and the page keeps serving; running
pasted code stays off unless the teacher turned it on."""
import pytest

from explorer_ui.i18n import TEXT
from tests.support.apptest import ROOT, open_page
from explorer_ui.pages_registry import script

PAGE = script("your_kernel")


def page(lang: str):
    return open_page(PAGE, {"lang": lang})


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_an_example_compiles_and_shows_its_figures(lang, monkeypatch):
    monkeypatch.delenv("SOFTMAX_EXPLORER_RUN_PASTED", raising=False)
    at = page(lang)
    assert at.title[0].value == TEXT["your_kernel_title"][lang]
    at.selectbox(key="yk_example").set_value(TEXT["yk_ex_vector_add"][lang]).run()
    at.multiselect(key="yk_gpus").set_value(["a100-80gb", "mi300x"]).run()
    at.button(key="yk_compile").click().run()
    assert not at.exception and not at.error, [e.value for e in at.error]
    tables = [t.value for t in at.table]
    table = next(t for t in tables if TEXT["yk_col_registers"][lang] in t.columns)
    assert len(table) == 2 and table[TEXT["yk_col_registers"][lang]].iloc[0] > 0   # from the compile
    recorded = next(t for t in tables if TEXT["yk_rcol_driver"][lang] in t.columns)   # the H200 record
    assert len(recorded) == 4 and recorded[TEXT["yk_rcol_driver"][lang]].min() > 0
    assert any(TEXT["yk_specialisation"][lang].split("{")[0] in c.value for c in at.caption)
    assert any(TEXT["yk_measure_off"][lang].split("{")[0] in c.value for c in at.caption)
    assert "k" in at.query_params                               # the state, source included, is in the URL


def test_a_hostile_paste_is_refused_and_the_page_keeps_serving():
    at = page("en")
    at.text_area(key="yk_source").set_value("import os\nos.system('touch pwned')\n").run()
    assert not at.exception
    assert at.error and at.error[0].value.startswith("Line 1:")
    at.selectbox(key="yk_example").set_value(TEXT["yk_ex_vector_add"]["en"]).run()
    assert not at.error and not at.exception
    assert not (ROOT / "pwned").exists()


def _ends_with_next(at) -> bool:
    prefixes = [TEXT[k]["en"].split("{")[0] for k in ("nav_next", "nav_back_home")]
    return any(str(link.proto.label).startswith(tuple(prefixes)) for link in at.get("page_link"))


def test_the_page_leads_on_when_it_stops_early():
    at = page("en")
    assert _ends_with_next(at)
    at.text_area(key="yk_source").set_value("import os\n").run()          # refused: the page stops there
    assert at.error and _ends_with_next(at)
    at.text_area(key="yk_source").set_value(TEXT["yk_ex_vector_add"]["en"]).run()
    at.selectbox(key="yk_example").set_value(TEXT["yk_ex_vector_add"]["en"]).run()
    at.multiselect(key="yk_gpus").set_value([]).run()                     # no GPU picked: it stops there too
    assert at.info and _ends_with_next(at)


@pytest.mark.slow
def test_where_the_teacher_allows_it_the_kernel_runs_in_the_interpreter(monkeypatch):
    monkeypatch.setenv("SOFTMAX_EXPLORER_RUN_PASTED", "1")
    monkeypatch.setattr("torch.cuda.is_available", lambda: False)
    at = page("en")
    at.selectbox(key="yk_example").set_value(TEXT["yk_ex_vector_add"]["en"]).run()
    at.multiselect(key="yk_gpus").set_value(["a100-80gb"]).run()
    at.button(key="yk_compile").click().run()
    assert at.warning and "3,145,728" in at.warning[0].value         # the example's sizes: too many elements
    at.button(key="yk_interpret_small").click().run()
    assert at.text_area(key="yk_sizes").value.startswith("x_ptr=1000")
    at.button(key="yk_interpret").click().run()
    assert not at.exception and not at.error, [e.value for e in at.error]
    assert at.metric[0].label == TEXT["yk_interpret_wall"]["en"] and at.metric[0].value.endswith(" ms")
    tensors = at.table[-1].value
    check = tensors[TEXT["yk_tcol_reference"]["en"]]
    assert check.loc["out_ptr"].startswith("matches") and check.loc["x_ptr"] == "—"


@pytest.mark.parametrize("lang", ["en", "zh"])
@pytest.mark.parametrize("probe, devices, key", [("none", ("/dev/nvidiactl",), "yk_measure_no_sandbox"),
                                                 ("bubblewrap", (), "yk_measure_jail_no_gpu")])
def test_with_a_gpu_but_no_jail_that_reaches_it_measuring_is_refused_in_words(monkeypatch, lang, probe, devices, key):
    """Running allowed and a GPU here, but the jail does not work (or has no device nodes to give): the page
    says why, offers no button, and nothing runs."""
    from kernel_inspector import jail

    monkeypatch.setenv("SOFTMAX_EXPLORER_RUN_PASTED", "1")
    monkeypatch.setattr("torch.cuda.is_available", lambda: True)
    monkeypatch.setattr(jail, "probe", lambda: probe)
    monkeypatch.setattr(jail, "gpu_devices", lambda: devices)
    at = page(lang)
    at.selectbox(key="yk_example").set_value(TEXT["yk_ex_vector_add"][lang]).run()
    at.multiselect(key="yk_gpus").set_value(["a100-80gb"]).run()
    at.button(key="yk_compile").click().run()
    assert not at.exception and not at.error, [e.value for e in at.error]
    expected = TEXT[key][lang].split("{")[0]
    assert any(w.value.startswith(expected) for w in at.warning), [w.value for w in at.warning]
    assert not [b for b in at.button if b.key == "yk_measure"]
