"""softmax_core.teaching.launch_facts: one answer per fact of a launch (the GPU's programs per SM, its limiter,
slots, waves, who waits), the chapter formula's figure kept apart; and every page states the same figures
(pages rendered under AppTest for several GPUs)."""
from __future__ import annotations

import re
from pathlib import Path

import pytest
import torch

import softmax_core as sc
from softmax_core.hardware.occupancy import occupancy
from softmax_core.teaching.launch_facts import SM_LIMITERS, facts_of_plan, launch_facts, program_placement

ROOT = Path(__file__).resolve().parent.parent
M, N = 4096, 781           # the chapter's matrix


@pytest.mark.parametrize("key", ["t4", "h200", "mi300x", "a100-80gb", "rtx4060ti"])
def test_facts_are_the_hardware_rules_and_the_formula_apart(key):
    gpu = sc.catalog_gpu(key)
    plan = sc.plan_launch(M, N, torch.float32, gpu)
    facts = facts_of_plan(plan)
    occ = occupancy(gpu, plan.n_regs, plan.shared_bytes, plan.num_warps, 10**9)
    assert facts.programs_per_sm == occ.programs_per_sm == plan.hardware_programs_per_sm
    assert facts.chapter_programs_per_sm == plan.programs_per_sm == occ.chapter_programs_per_sm
    assert facts.limiter in SM_LIMITERS
    by = {"warp slots": occ.by_warp_slots, "block slots": occ.by_block_slots, "registers": occ.by_registers,
          "shared memory": occ.by_shared}
    assert by[facts.limiter] == facts.programs_per_sm
    assert facts.slots == gpu.multiprocessor_count * facts.programs_per_sm
    assert facts.num_programs == plan.num_programs                     # the wrapper's grid is the formula's
    assert facts.waves == -(-facts.num_programs // facts.slots)
    assert facts.any_waits == (facts.num_programs > facts.slots) == (facts.waves > 1)
    placed = program_placement(facts.num_programs, gpu.multiprocessor_count, facts.programs_per_sm)
    assert max(p.wave for p in placed) + 1 == facts.waves
    assert sum(p.wave > 0 for p in placed) == facts.waiting


def test_t4_and_mi300x_run_fewer_than_the_formula_and_their_grid_waits():
    """The issue's figures: T4 17 (formula) vs 8 (warp slots), 680 programs on 320 slots; MI300X 11 vs 8."""
    t4 = launch_facts(sc.catalog_gpu("t4"), "float32", M, N)
    assert (t4.chapter_programs_per_sm, t4.programs_per_sm, t4.limiter) == (17, 8, "warp slots")
    assert (t4.num_programs, t4.slots, t4.waves, t4.waiting) == (680, 320, 3, 360) and t4.any_waits
    mi = launch_facts(sc.catalog_gpu("mi300x"), torch.float32, M, N)
    assert (mi.chapter_programs_per_sm, mi.programs_per_sm) == (11, 8) and mi.any_waits
    h200 = launch_facts(sc.catalog_gpu("h200"), "float32", M, N)
    assert h200.formula_agrees and not h200.any_waits and h200.waves == 1


def test_a_grid_set_by_hand_is_told_apart_and_small_grids_never_wait():
    gpu = sc.catalog_gpu("t4")
    plan = sc.plan_launch(100, N, torch.float32, gpu)
    assert facts_of_plan(plan).grid_from_plan and facts_of_plan(plan).num_programs == 100
    hand = facts_of_plan(plan, num_programs=7)
    assert not hand.grid_from_plan and hand.waves == 1 and not hand.any_waits
    assert facts_of_plan(plan, num_programs=321).waiting == 1
    with pytest.raises(ValueError):
        facts_of_plan(plan, num_programs=-1)


# -- every page states the same figures -------------------------------------------------------------------------
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


def page(path: str, query: dict):
    from streamlit.testing.v1 import AppTest

    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=300)
    at.query_params.update(query)
    at.run()
    at.switch_page(path).run()
    assert not at.exception, [e.value for e in at.exception]
    return at


def metric(at, label: str) -> str:
    return next(str(m.value) for m in at.metric if m.label == label)


@pytest.mark.slow
@pytest.mark.parametrize("key", ["t4", "h200", "mi300x"])
def test_every_page_states_the_gpus_programs_per_sm_and_names_the_formulas(key):
    """Render each page that states programs per SM, a limiter, waves or "none waits" for one GPU at the chapter's
    shape: every programs-per-SM figure is the GPU's (launch_facts), except in a paragraph that says it is the
    chapter's formula; the metrics, limiter and waves are the same facts on every page."""
    from explorer_ui.gpu_figures import limiter_key
    from explorer_ui.i18n import t

    gpu = sc.catalog_gpu(key)
    facts = launch_facts(gpu, "float32", M, N)
    tuned = sc.plan_softmax(M, N, torch.float32, gpu)
    pages = {"pages/5_gpu_occupancy.py": {"gpu": key, "N": str(N), "M": str(M)},
             "pages/4_row_schedule.py": {"gpu": key, "N": str(N)},
             "pages/10_glossary.py": {"gpu": key, "N": str(N)}}
    seen = 0
    for path, query in pages.items():
        at = page(path, query)
        for figure, paragraph in stated_per_sm(at):
            seen += 1
            if "softmax_core.softmax" in paragraph:   # the tuned kernel's plan: its own (hardware) figure
                assert figure == tuned.occupancy.programs_per_sm, (path, paragraph)
            elif figure != facts.programs_per_sm:     # a formula's figure (its total or one of its terms), named so
                assert FORMULA.search(paragraph), (path, paragraph)
        text = "\n".join(str(m.value) for m in at.markdown)
        if path == "pages/5_gpu_occupancy.py":
            assert metric(at, t("occupancy_hardware_per_sm")) == str(facts.programs_per_sm)
            assert metric(at, t("gpu_programs_per_sm")) == str(facts.chapter_programs_per_sm)
            assert metric(at, t("occupancy_hardware_limiter")) == t(limiter_key(facts.limiter))
            assert metric(at, t("occupancy_resident")) == f"{facts.slots:,}"
            captions = "\n".join(str(c.value) for c in at.caption)
            assert (f"{facts.waves} waves" in captions) == facts.any_waits
            assert ("none waits" in captions) == (not facts.any_waits)
        if path == "pages/4_row_schedule.py":
            assert t(limiter_key(facts.limiter)) in text
            assert (f"run in {facts.waves} waves" in text) == facts.any_waits    # at full size, M = 4096
        if path == "pages/10_glossary.py":
            assert t(limiter_key(facts.limiter)) in text
    assert seen >= 3          # the pages do state the figure: the check above is not vacuous
