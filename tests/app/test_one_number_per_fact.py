"""One number per fact: every page that states programs per SM, a limiter, waves or "none waits" states the
GPU's figure (softmax_teaching.launch_facts), and a paragraph that states the chapter formula's figure
says so in that paragraph. Pages rendered under AppTest for several GPUs."""
from __future__ import annotations

import re

import pytest
import torch

import softmax_core as sc
from softmax_teaching.launch_facts import launch_facts
from tests.support.apptest import open_page

M, N = 4096, 781           # the chapter's matrix

# "8 programs per SM", "**8 programs per SM**", "up to 8 per SM", "17 per SM", "runs 8 such program per SM" ...
PER_SM = re.compile(r"(\d[\d,]*)\**\s+(?:such\s+)?(?:programs?\s+)?(?:of the chapter's kernel\s+)?per SM")
FORMULA = re.compile(r"formula", re.I)


def stated_per_sm(at) -> list[tuple[int, str]]:
    """(figure, paragraph) for every programs-per-SM figure a page's text states."""
    found = []
    for element in [*at.markdown, *at.caption, *at.info, *at.success, *at.warning]:
        text = str(element.value)
        for paragraph in re.split(r"\n\s*\n", text):
            found += [(int(m.group(1).replace(",", "")), paragraph) for m in PER_SM.finditer(paragraph)]
    return found


def metric(at, label: str) -> str:
    return next(str(m.value) for m in at.metric if m.label == label)


LOCAL_COMPILE = re.compile(r"compiled offline on this machine instead \(triton [\d.]+", re.IGNORECASE)


@pytest.mark.slow
@pytest.mark.parametrize("key", ["t4", "h200", "mi300x"])
def test_every_page_states_the_gpus_programs_per_sm_and_names_the_formulas(key):
    """Render each page that states programs per SM, a limiter, waves or "none waits" for one GPU at the chapter's
    shape: every programs-per-SM figure is the GPU's (launch_facts), except in a paragraph that says it is the
    chapter's formula; the metrics, limiter and waves are the same facts on every page."""
    from explorer_ui.i18n import say
    from explorer_ui.i18n import t

    from explorer_ui import data

    gpu = sc.catalog_gpu(key)
    facts = data.launch_facts(M, N, "float32", key)     # the pages' one source (the H200: its recorded compile)
    tuned = sc.plan_softmax(M, N, torch.float32, gpu)
    pages = {"pages/5_gpu_occupancy.py": {"gpu": key, "N": str(N), "M": str(M)},
             "pages/4_row_schedule.py": {"gpu": key, "N": str(N)},
             "pages/10_glossary.py": {"gpu": key, "N": str(N)}}
    seen = 0
    for path, query in pages.items():
        at = open_page(path, query)
        for figure, paragraph in stated_per_sm(at):
            seen += 1
            if "softmax_core.softmax" in paragraph:   # the tuned kernel's plan: its own (hardware) figure
                assert figure == tuned.occupancy.programs_per_sm, (path, paragraph)
            elif figure != facts.programs_per_sm:     # a formula's figure (its total or one of its terms), named so,
                # or this machine's own offline compile shown beside the recorded one, naming its toolchain
                assert FORMULA.search(paragraph) or LOCAL_COMPILE.search(paragraph), (path, paragraph)
        text = "\n".join(str(m.value) for m in at.markdown)
        if path == "pages/5_gpu_occupancy.py":
            assert metric(at, t("occupancy_hardware_per_sm")) == str(facts.programs_per_sm)
            assert metric(at, t("gpu_programs_per_sm")) == str(facts.chapter_programs_per_sm)
            assert metric(at, t("occupancy_hardware_limiter")) == say(facts.limiter)
            assert metric(at, t("occupancy_resident")) == f"{facts.slots:,}"
            captions = "\n".join(str(c.value) for c in at.caption)
            assert (f"{facts.waves} waves" in captions) == facts.any_waits
            assert ("none waits" in captions) == (not facts.any_waits)
        if path == "pages/4_row_schedule.py":
            assert say(facts.limiter) in text
            assert (f"run in {facts.waves} waves" in text) == facts.any_waits    # at full size, M = 4096
        if path == "pages/10_glossary.py":
            assert say(facts.limiter) in text
    assert seen >= 3          # the pages do state the figure: the check above is not vacuous


# "4 such programs surely fit on an SM" (the sharing page), beside PER_SM's "... per SM"
ON_AN_SM = re.compile(r"(\d[\d,]*)\s+such programs?\s+(?:\w+\s+)?fit on an SM")
STATED_N = re.compile(r"N = \**([\d,]+)")


@pytest.mark.slow
@pytest.mark.parametrize("key,dtype", [("h200", "float32"), ("h200", "bfloat16"), ("t4", "float32"),
                                       ("mi300x", "float32")])
def test_long_rows_and_sharing_pages_state_each_kernels_own_programs_per_sm(key, dtype):
    """The long-rows and sharing pages state programs per SM for three kernels at the N they name: the tiled
    kernel (softmax_teaching.long_row_trace.tiled_traffic), the tutorial kernel at the largest N that
    fits (launch_facts, the other pages' source) and the split path's plan (its occupancy). Each figure is
    that kernel's at that N, by the library's one function for it."""
    from softmax_teaching import long_row_trace as lrt

    gpu, torch_dtype = sc.catalog_gpu(key), getattr(torch, dtype)
    seen = 0
    for path in ("pages/7_long_rows.py", "pages/8_sharing_a_row.py"):
        at = open_page(path, {"gpu": key, "dtype": dtype})
        found = stated_per_sm(at)
        for element in at.markdown:
            for paragraph in re.split(r"\n\s*\n", str(element.value)):
                found += [(int(m.group(1).replace(",", "")), paragraph) for m in ON_AN_SM.finditer(paragraph)]
        for figure, paragraph in found:
            n = int(STATED_N.search(paragraph).group(1).replace(",", ""))
            if "tiled kernel" in paragraph:
                expected = lrt.tiled_traffic(M, n, torch_dtype, gpu).programs_per_sm
            elif "split path" in paragraph:
                expected = sc.plan_softmax(M, n, torch_dtype, gpu).occupancy.programs_per_sm
            elif "still fits" in paragraph:        # the tutorial kernel at the last N that launches
                expected = launch_facts(gpu, dtype, M, n).programs_per_sm
            else:
                raise AssertionError(f"a programs-per-SM figure of no known kernel: {paragraph}")
            assert figure == expected, (path, paragraph)
            seen += 1
    assert seen >= 1
