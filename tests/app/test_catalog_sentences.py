"""Every catalog GPU x both languages x the pages' defaults and extreme inputs: each page renders without an
exception or an unexpected error, and each concluding sentence is the one its own figures decide:
- GPU page: a tie of limits is said as a tie, a single limit only where it is strictly the smallest (read from
  the metrics the page shows);
- row schedule: the limit its plan sentence names is the set the launch's figures give;
- chapter notes §3: what each further num_stages costs, against the table the page shows beside it;
- memory traffic: the readings left and right of the cache crossing, against the table it shows.
A seeded sample runs in the fast subset; the whole matrix is marked slow."""
import random

import pytest

import softmax_core as sc
from explorer_ui import cache_model, data
from explorer_ui.i18n import TEXT, text_in
from explorer_ui.pages_registry import script
from softmax_core.hardware.occupancy import Limiter
from softmax_core.words import describe
from tests.support.apptest import open_page, widget

GPUS = [g.key for g in sc.gpu_catalog()]
LANGS = ("en", "zh")
# Each page's inputs at its defaults and at their extremes (values the page's own widgets take).
INPUTS = {"gpu": [{"M": 4096, "N": 781}, {"M": 4096, "N": 1}, {"M": 4096, "N": 16384}, {"M": 1, "N": 262144}],
          "schedule": [{"N": 16384}, {"N": 1}], "chapter": [{"N": 781}, {"N": 65536}], "memory": [{}]}
MATRIX = [(page, lang) for page in INPUTS for lang in LANGS]
# The fast subset: per page and language, a seeded handful of (GPU, inputs) in one session.
RNG = random.Random(32)
SAMPLE = {(page, lang): RNG.sample([(g, i) for g in GPUS for i in range(len(INPUTS[page]))], 2)
          for page, lang in MATRIX}
# A plan that cannot launch on a GPU says so in an error box, on purpose.
EXPECTED_ERROR_KEYS = ("gpu_does_not_fit",)


def limits_words(limiters, lang):
    names = [describe(Limiter(x), lang=lang) for x in limiters]
    if len(names) < 2:
        return names[0]
    listed = text_in(lang, "occupancy_list_separator").join(names[:-1]) + text_in(lang, "limits_and") + names[-1]
    return text_in(lang, "limits_tie", names=listed)


def check_gpu_page(at, gpu, lang, inputs):
    metrics = {m.label: m.value for m in at.metric}
    M, N = inputs["M"], inputs["N"]
    plan = data.launch_plan(M, N, "float32", gpu)
    occ = plan.occupancy
    # the GPU's limits, from the allowances themselves
    allow = {Limiter.WARP_SLOTS: occ.by_warp_slots, Limiter.BLOCK_SLOTS: occ.by_block_slots,
             Limiter.REGISTERS: occ.by_registers, Limiter.SHARED_MEMORY: occ.by_shared}
    at_answer = [k for k in (Limiter.WARP_SLOTS, Limiter.BLOCK_SLOTS, Limiter.REGISTERS, Limiter.SHARED_MEMORY)
                 if allow[k] is not None and allow[k] == occ.programs_per_sm]
    assert metrics[TEXT["occupancy_hardware_limiter"][lang]] == limits_words(at_answer, lang)
    assert metrics[TEXT["gpu_n_regs"][lang]] == str(plan.n_regs)
    if plan.fits and plan.limiter != Limiter.ROWS:
        reason = describe(plan.reason, lang=lang)
        assert reason in [s.value for s in at.success]
        said_tie = any(w in reason for w in ("tie at", "并列"))
        assert said_tie == (plan.sram_occupancy == plan.reg_occupancy), reason


def check_schedule(at, gpu, lang, inputs):
    N = inputs["N"]
    rows = next(s for s in at.slider if s.key == "schedule_rows").value
    facts = data.launch_facts(rows, N, "float32", gpu)
    words = limits_words(facts.limiters, lang)
    assert any(words in m.value for m in at.markdown), words


def check_chapter(at, gpu, lang, inputs):
    table = next(d.value for d in at.dataframe if "num_stages" in d.value.columns and "n_regs" in d.value.columns)
    shared = [int(str(v).replace(",", "")) for v in table[TEXT["chapter_col_shared"][lang]]]
    steps = [b - a for a, b in zip(shared, shared[1:])]
    block = 1 << (inputs["N"] - 1).bit_length()
    kind = "none" if all(s == 0 for s in steps) else "row" if all(s == block * 4 for s in steps) else "uneven"
    head = TEXT[f"chapter_stages_{kind}"][lang].split("{")[0]
    assert any(m.value.startswith(head) for m in at.markdown), (kind, steps)
    for other in {"none", "row", "uneven"} - {kind}:       # the prefixes share a first sentence: check the rest
        tail = TEXT[f"chapter_stages_{other}"][lang].split("。" if lang == "zh" else ". ", 1)[1].split("{")[0]
        assert not any(tail in m.value for m in at.markdown), other


def check_memory(at, gpu, lang, inputs):
    table = data.speedup_table("float32")
    if table is None:
        return
    run_gpu = data.gpu_for_name(str(table["gpu"].iloc[0]))
    cross = cache_model.cache_crossing_n(int(table["M"].iloc[0]), 4, run_gpu)
    bullets = [m.value for m in at.markdown if m.value.startswith("- ")]
    readings = cache_model.side_readings(table, cross)
    assert len(bullets) == len(readings)
    for text, side in zip(bullets, readings):
        head = TEXT[f"acc_reading_{side['reading']}"][lang].split("}", 1)[1].split("{")[0]
        assert head in text, (side["reading"], text)


CHECKS = {"gpu": check_gpu_page, "schedule": check_schedule, "chapter": check_chapter, "memory": check_memory}


def run_session(page, lang, cases):
    """One student's session on `page` in `lang`, going through `cases` ((GPU key, index into INPUTS[page]))
    by the page's own widgets, each checked after its run."""
    at = open_page(script(page), {"lang": lang})
    allowed = tuple(TEXT[k][lang].split("{")[0] for k in EXPECTED_ERROR_KEYS)
    for gpu, i in cases:
        inputs = INPUTS[page][i]
        widget(at, f"{page}_gpu").set_value(gpu)
        for name, value in inputs.items():
            widget(at, f"{page}_{name}").set_value(value)
        at.run()
        assert not at.exception, (gpu, inputs, [e.value for e in at.exception])
        assert not [e.value for e in at.error if not e.value.startswith(allowed)], (gpu, inputs)
        CHECKS[page](at, gpu, lang, inputs)


@pytest.mark.parametrize("page,lang", MATRIX)
def test_a_seeded_sample_of_the_matrix(page, lang):
    run_session(page, lang, SAMPLE[page, lang])


@pytest.mark.slow
@pytest.mark.parametrize("page,lang", MATRIX)
def test_the_whole_matrix(page, lang):
    run_session(page, lang, [(g, i) for g in GPUS for i in range(len(INPUTS[page]))])
