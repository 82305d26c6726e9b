"""The layouts and memory transactions page under AppTest: both languages, every preset, a custom layout, bad
input as an error box, the player's steps, and a link that reopens the same state."""
from __future__ import annotations

import math
import re

import pytest

from explorer_ui import transactions_view as tv
from explorer_ui.i18n import TEXT
from explorer_ui.pages_registry import next_page, script
from tests.support.apptest import assert_ok, open_page

PAGE = script("layouts")


def facts(at) -> list[str]:
    return [m.value for m in at.markdown if "sizePerThread" in m.value]


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_the_page_opens_with_both_kernels_facts(lang):
    at = open_page(PAGE, {"lang": lang})
    assert_ok(at)
    assert len(facts(at)) == 2
    assert len(at.get("vega_lite_chart")) == 2
    assert at.header[0].value == TEXT["layouts_memory_title"][lang]


def test_it_comes_after_the_benchmark():
    assert next_page("bench").key == "layouts"


@pytest.mark.slow
def test_every_preset_and_the_player():
    at = open_page(PAGE)
    for preset in tv.PRESETS:
        at.selectbox(key="layouts_preset").set_value(preset).run()
        assert_ok(at)
        assert len(facts(at)) == 2, preset
    at.button(key="layouts_next").click().run()
    assert_ok(at)
    assert at.slider(key="layouts_step").value == 1


@pytest.mark.slow
def test_a_custom_layout_and_bad_input():
    at = open_page(PAGE, {"preset": "custom"})
    at.text_input(key="layouts_shape").set_value("6x40").run()
    at.selectbox(key="layouts_view").set_value("offset").run()
    assert_ok(at)
    assert any("6 × 40" in m.value or "40" in m.value for m in at.markdown)
    at.text_input(key="layouts_shape").set_value("6, a").run()
    assert not at.exception
    assert at.error and at.error[0].value.startswith(TEXT["layouts_error_shape_not_whole_numbers"]["en"].split("{")[0])


@pytest.mark.slow
def test_a_link_reopens_the_same_state():
    at = open_page(PAGE, {"preset": "nchw_dim1_fp32", "gpu": "mi300x", "step": "2"})
    assert_ok(at)
    custom = open_page(PAGE, {"preset": "custom", "shape": "6x40", "view": "padded", "dim": "0"})
    assert_ok(custom)
    assert custom.text_input(key="layouts_shape").value == "6x40"
    assert custom.selectbox(key="layouts_view").value == "padded"
    assert at.selectbox(key="layouts_preset").value == "nchw_dim1_fp32"
    assert at.slider(key="layouts_step").value == 2
    lanes = [math.prod(int(v) for v in found.split(","))
             for f in facts(at) for found in re.findall(r"threadsPerWarp \[([\d, ]+)\]", f)]
    assert lanes == [64, 64]                                   # a wavefront of 64 lanes on the MI300X


def test_a_server_running_kernels_on_its_gpu_draws_the_lanes(tmp_path, monkeypatch):
    """A server whose kernels run on its GPU cannot switch to the interpreter: its records come from a child
    process that interprets (here: this interpreting process pretends to be such a server; what it would
    compile in-process, the offline compiler's child compiles for it)."""
    import dataclasses

    import streamlit as st

    from softmax_core.hardware import compile as sc_compile
    from softmax_core.hardware import runtime
    from softmax_teaching import load_record

    monkeypatch.setenv("SOFTMAX_EXPLORER_CACHE", str(tmp_path))
    st.cache_data.clear()
    assert_ok(open_page(PAGE))                              # the compiles and records of the page's defaults
    here = sorted(path.name for path in (tmp_path / "compile").glob("*-record-*.npz"))
    for path in (tmp_path / "compile").glob("*-record-*.npz"):
        path.unlink()
    st.cache_data.clear()
    monkeypatch.setattr(runtime, "INTERPRETED", False)
    child = sc_compile.compiler_process
    monkeypatch.setattr(sc_compile, "compile_for_target",
                        lambda job, want_asm=False: child.request(dataclasses.replace(job, on_device=False), want_asm))
    monkeypatch.setattr(sc_compile, "compiler_texts", child.texts)
    monkeypatch.setattr(load_record, "record", lambda *a, **k: pytest.fail("recorded in the server's process"))
    at = open_page(PAGE)
    assert_ok(at)
    assert len(facts(at)) == 2 and len(at.get("vega_lite_chart")) == 2
    assert sorted(path.name for path in (tmp_path / "compile").glob("*-record-*.npz")) == here
    st.cache_data.clear()


# lanes per warp, and the 16-byte vector load of each GPU's assembly (PTX for sm_75, AMDGCN for gfx942)
LESSON_GPUS = [("t4", 32, r"`ld\.global\S*\.v4\.b32`"), ("mi300x", 64, r"`\w+_load_dwordx4`")]


@pytest.mark.parametrize("gpu, lanes, instruction", LESSON_GPUS)
def test_the_lesson_gpus_kernel_lanes_and_load_width(gpu, lanes, instruction):
    """The lesson's GPU, carried from the page before: the launch is planned for it, compiled for it (its
    TTGIR's lanes per warp, its load instruction) and its requests counted with its lanes."""
    at = open_page(PAGE, {"gpu": gpu, "preset": "rows_fp32"})
    assert_ok(at)
    planned = facts(at)[0]
    found = re.search(r"threadsPerWarp \[([\d, ]+)\]", planned)
    assert math.prod(int(v) for v in found.group(1).split(",")) == lanes
    assert re.search(instruction, planned) and "16 bytes per lane" in planned
