"""The library's words (softmax_core.words): every code has them in both languages, with the same figures,
and records written before codes (English) still load, as codes."""
import json
import re
import string

import pandas as pd
import pytest
import torch

import softmax_core as sc
import softmax_bench as bench
from softmax_core import words
from softmax_bench.providers import NotTimed
from softmax_core.hardware import compile as kc, occupancy, runtime  # noqa: F401  (they define codes)
from softmax_core.plans import reasons  # noqa: F401
from softmax_core.words import CODE_CLASSES, TABLES, Coded, describe

CJK = r"[\u4e00-\u9fff]"
# figures that quote another program's English message: 中文 may leave them out (and point to the English page)
QUOTED = {"message", "error"}


def placeholders(template: str) -> set[str]:
    return {name.split(".")[0].split("[")[0] for _, name, _, _ in string.Formatter().parse(template) if name}


def every_code():
    return [code for cls in CODE_CLASSES.values() for code in cls]


def test_the_code_classes_are_the_librarys():
    assert {"ReasonCode", "Limiter", "OccupancyRule", "RegisterSource", "Backend", "ProviderName", "NotTimed",
            "Clock", "Method"} <= set(CODE_CLASSES)


@pytest.mark.parametrize("code", every_code(), ids=lambda c: f"{type(c).__name__}.{c.value}")
def test_every_code_has_words_in_both_languages_with_the_same_figures(code):
    table = type(code).__name__
    en, zh = (words.words_for(table, code.value, lang) for lang in ("en", "zh"))
    assert en.strip() and zh.strip()
    assert placeholders(en) ^ placeholders(zh) <= QUOTED, (en, zh)
    assert not re.search(f"{CJK} +{CJK}", zh), zh


def test_every_table_has_the_same_keys_in_both_languages_and_no_word_is_unused():
    assert set(TABLES["en"]) == set(TABLES["zh"])
    for table in TABLES["en"]:
        assert set(TABLES["en"][table]) == set(TABLES["zh"][table]), table
        if table in CODE_CLASSES:      # a code's table holds its codes' words and nothing else
            assert set(TABLES["en"][table]) == {c.value for c in CODE_CLASSES[table]}, table


def test_a_code_without_words_is_an_error_not_a_silent_blank():
    class Unsaid(words.Code):
        NOTHING = "nothing"

    with pytest.raises(KeyError, match="Unsaid:nothing"):
        describe(Unsaid.NOTHING)
    CODE_CLASSES.pop("Unsaid")


def test_a_coded_value_survives_json_and_a_code_figure_is_said_in_words():
    coded = Coded.of(NotTimed.OUT_OF_RESOURCES, resource="shared memory", required=393280, limit=232448)
    assert Coded.from_json(json.loads(json.dumps(coded.to_json()))) == coded
    assert "共享内存" in describe(coded, lang="zh") and "shared memory" in describe(coded)
    with pytest.raises(ValueError, match="unknown code class"):
        Coded.from_json({"code": "Nowhere:x"})


def test_a_waiting_split_program_is_said_to_wait_a_bounded_time():
    figures = dict(why="forced", direction="forward", split=4, chunk=4096, n_regs=64, programs_per_sm=8,
                   groups=33, num_programs=132)
    reason = reasons.PlanReason.of(reasons.ReasonCode.SPLIT, **figures)
    english = describe(reason)
    assert "forever" not in english and "never a hang" in english
    assert "永远" not in describe(reason, lang="zh") and "绝不会卡死" in describe(reason, lang="zh")


def test_kernel_does_not_fit_carries_its_reason_and_says_it_in_english():
    reason = reasons.PlanReason.of(reasons.ReasonCode.TUTORIAL_OVER_SHARED_MEMORY, shared_bytes=393280,
                                   block_size=32768, gpu="G", max_shared_mem=232448)
    err = sc.KernelDoesNotFit(reason)
    assert err.reason is reason and str(err) == describe(reason)
    assert bench.not_timed_by(err) == Coded.of(NotTimed.DOES_NOT_FIT, plan_code="tutorial_over_shared_memory",
                                               **reason.values)


def test_the_occupancy_rule_is_said_with_its_figures():
    occ = sc.occupancy(sc.catalog_gpu("h200"), 32, 0, 4, 10**6)
    english = describe(occ.rule)
    assert english.startswith("registers: 32 x 32 rounded up to units of 256 = 1024 per warp")
    assert english.endswith(f"no shared memory -> {occ.programs_per_sm} per SM")
    assert "// (32 per thread x 32 threads x 4 warps)" in describe(occ.chapter_rule)
    assert occ.limiter is occupancy.Limiter.WARP_SLOTS and describe(occ.limiter, lang="zh") == "warp 槽位"


# -- records written before codes ------------------------------------------------------------------------------


def test_every_committed_record_is_of_the_current_version_and_an_older_one_is_refused(tmp_path):
    """Every record under assets/ was written (or rewritten once) in codes and figures; a record of an older
    version is refused by name rather than read as English."""
    import json
    for path in sorted(bench.RECORDED_DIR.rglob("*.json")):
        info = json.loads(path.read_text())
        if "csv" in info and "provider" in path.with_suffix(".csv").read_text().splitlines()[0]:
            assert info.get("record_version") == bench.RECORD_VERSION, path
    old = tmp_path / "old.json"
    old.write_text(json.dumps({"csv": "old.csv", "record_version": 2}))
    bench.csv_frame(bench.load_run(next(bench.RECORDED_DIR.glob("*.json"))).frame).to_csv(tmp_path / "old.csv")
    with pytest.raises(ValueError, match="record version 2"):
        bench.load_run(old)


def test_every_committed_record_loads_and_every_reason_is_recognised():
    folders = ("", "history", "chapter")
    runs = [run for folder in folders for run in bench.load_recorded_runs(bench.RECORDED_DIR / folder)]
    assert len(runs) >= 10
    for run in runs:
        info = run.provenance
        assert info["record_version"] == bench.RECORD_VERSION and info["timer"] in set(bench.Clock)
        assert describe(bench.records.timer(info)) and describe(bench.records.backend(info), lang="zh")
        assert {info["bytes"], info["copy"]} <= set(bench.Method) and isinstance(info["providers"], list)
        reasons_ = [r for r in run.frame["reason"] if r is not None]
        assert all(isinstance(r, Coded) and r.code is not NotTimed.RECORDED for r in reasons_)
        assert all(describe(r) and describe(r, lang="zh") for r in reasons_)


def test_a_new_record_stores_codes_and_reads_back_the_same(tmp_path):
    run = bench.run_sweep(2, [8], "float32", ["copy", "tutorial", "quack"], directions=("forward", "backward"),
                          timer=bench.WallClockTimer(warmup=0, max_repeats=3, budget_s=0.0), command="pytest")
    bench.save_run(run, tmp_path, "new")
    saved = json.loads((tmp_path / "new.json").read_text())
    assert saved["timer"] == "wall clock" and saved["timer_figures"]["max_repeats"] == 3
    assert saved["backend"] == runtime.backend().to_json() and saved["providers"] == ["copy", "tutorial", "quack"]
    csv = pd.read_csv(tmp_path / "new.csv")
    assert all(json.loads(text)["code"].startswith("NotTimed:") for text in csv["reason"].dropna())
    loaded = bench.load_run(tmp_path / "new.json")
    assert list(loaded.frame["reason"]) == list(run.frame["reason"])
    assert loaded.provenance["unavailable"] == saved["unavailable"]


def test_a_tensor_of_the_wrong_kind_is_a_code_with_its_figures():
    coded = bench.mismatch(torch.zeros(2, 3, dtype=torch.float16), torch.zeros(2, 4), torch.float32)
    assert coded == Coded.of(NotTimed.WRONG_OUTPUT, shape="(2, 3)", dtype="float16", expected_shape="(2, 4)",
                             expected_dtype="float32")
