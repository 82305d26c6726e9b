"""The app's text (explorer_ui/locales/<topic>.<lang>.toml): both languages say the same things with the same
placeholders, every key the code asks for exists, and every key in the files is asked for.

Keys built at run time (`t(f"padding_state_{s}")`) are listed in FAMILIES, generated from the same tuples the
code builds them from; a test checks that every such template in the code has its family here."""
from __future__ import annotations

import re
import string
from pathlib import Path

import pytest

import softmax_core as sc
import softmax_bench as bench
from softmax_bench import models, trust
from explorer_ui import (cache_model, glossary, gpu_figures, i18n, layout, long_row_frames, padding, pages_registry, quiz,
                         recorded_text, row_schedule, your_kernel)
from softmax_core.hardware.gpu import CACHE_KINDS
from softmax_teaching.chapter_notes import STAGE_GROWTH, STRIDE_VIEWS
from softmax_teaching.bench_reading import IMPOSSIBLE
from softmax_core.traffic import PASS_TENSORS
from softmax_teaching.tutorial_trace import VARIANTS
from softmax_teaching import layout_case, layout_trace
from explorer_ui import transactions_view
from kernel_inspector.policy import POLICY_CODES

ROOT = Path(__file__).resolve().parents[2]
CODE = [ROOT / "app.py", *sorted((ROOT / "pages").glob("*.py")), *sorted((ROOT / "explorer_ui").rglob("*.py"))]
TEXT = i18n.load_locales()

PAGE_NAMES = list(pages_registry.KEYS)          # home, memory, ...


def families() -> dict[str, tuple[set[str], bool]]:
    """Template (each `{...}` of the code's f-string as `*`) -> (the keys it builds, whether each must exist).
    Optional keys (the padding frames' additions for one variant) are looked up with `has()` first."""
    steps = [s.name for s in sc.memory_traffic(1, 1).naive_steps]
    return {
        "nav_*": ({f"nav_{p}" for p in PAGE_NAMES}, True),
        "nav_*_blurb": ({f"nav_{p}_blurb" for p in PAGE_NAMES[1:]}, True),
        "*_title": ({f"{p}_title" for p in PAGE_NAMES[1:]}, True),
        "*_intro": ({f"{p}_intro" for p in PAGE_NAMES[1:]}, True),
        "memory_step_*": ({f"memory_step_{s}" for s in steps}, True),
        "padding_variant_*": ({f"padding_variant_{v}" for v in VARIANTS}, True),
        "padding_frame_*": ({f"padding_frame_{f}" for f in padding.FRAME_NAMES}, True),
        "padding_frame_*_*": ({f"padding_frame_{f}_{v}" for f in padding.FRAME_NAMES for v in VARIANTS}, False),
        "padding_state_*": ({f"padding_state_{s}" for s in padding.LANE_STATES}, True),
        "padding_mem_*": ({f"padding_mem_{s}" for s in padding.MEMORY_STATES}, True),
        "schedule_phase_*": ({f"schedule_phase_{p}" for p in row_schedule.PIPELINE_PHASES}, True),
        "gpu_fig_*": ({f"gpu_fig_{f}" for f in gpu_figures.GPU_FIGURES}, True),
        "gpu_vary_*": ({f"gpu_vary_{v}" for v in gpu_figures.VARY}, True),
        "gpu_path_*": ({f"gpu_path_{p}" for p in gpu_figures.TUNED_PATHS}, True),
        "bench_dir_*": ({f"bench_dir_{d}" for d in PASS_TENSORS}, True),
        "compare_kernel_*": ({"compare_kernel_tutorial", "compare_kernel_tuned"}, True),
        "padding_claim_*": ({f"padding_claim_{c}" for c in padding.CLAIMS}, True),
        "acc_kind_*": ({f"acc_kind_{k}" for k in (trust.QUANTILES, trust.MIN_MAX)}, True),
        "acc_verdict_*": ({f"acc_verdict_{v}" for v in trust.VERDICTS}, True),
        "acc_verdict_short_*": ({f"acc_verdict_short_{v}" for v in trust.VERDICTS}, True),
        "longrows_phase_*": ({f"longrows_phase_{p}" for p in long_row_frames.TILE_PHASES}, True),
        "longrows_frame_*": ({f"longrows_frame_{f}" for f in long_row_frames.ONLINE_FRAMES}, True),
        "longrows_cliff_fail_*": ({f"longrows_cliff_fail_{c}" for c in long_row_frames.CLIFF_LIMITERS}, True),
        "longrows_path_*": ({f"longrows_path_{p}" for p in long_row_frames.PATH_NAMES}, True),
        "longrows_pattern_*": ({f"longrows_pattern_{p}" for p in long_row_frames.PATTERNS}, True),
        "longrows_l2_lesson_*": ({f"longrows_l2_lesson_{w}" for w in long_row_frames.FALLOFF_PLACES}, True),
        "bench_cpu_impossible_*": ({f"bench_cpu_impossible_{w}" for w in IMPOSSIBLE}, True),
        "gloss_*_term": ({f"gloss_{k}_term" for k in glossary.TERM_KEYS}, True),
        "gloss_*_def": ({f"gloss_{k}_def" for k in glossary.TERM_KEYS}, True),
        "gloss_*_match": ({f"gloss_{k}_match" for k in glossary.TERM_KEYS}, True),
        "gloss_*_figure": ({f"gloss_{k}_figure" for k in glossary.TERM_KEYS}, False),
        "chapter_stride_case_*": ({f"chapter_stride_case_{v}" for v in STRIDE_VIEWS}, True),
        "predict_lane_*": ({f"predict_lane_{k}" for k in quiz.LANE_KINDS}, True),
        "bench_status_*": ({f"bench_status_{s}" for s in recorded_text.STATUSES}, True),
        "bench_timing_*": ({f"bench_timing_{v}" for v in bench.TIMING_VIEWS}, True),
        "cache_name_*": ({f"cache_name_{k}" for k in CACHE_KINDS}, True),
        "layouts_preset_*": ({f"layouts_preset_{k}" for k in transactions_view.NAMED_LAYOUTS}, True),
        "layouts_view_*": ({f"layouts_view_{k}" for k in layout_case.VIEWS}, True),
        "layouts_direction_*": ({f"layouts_direction_{k}" for k in layout_case.DIRECTIONS}, True),
        "layouts_error_*": ({f"layouts_error_{k}" for k in transactions_view.INPUT_ERRORS}, True),
        "layouts_family_*": ({f"layouts_family_{k}" for k in transactions_view.FAMILIES}, True),
        "layouts_kernel_*": ({f"layouts_kernel_{k}" for k in transactions_view.KERNELS}, True),
        "layouts_missing_*": ({f"layouts_missing_{k}" for k in layout_trace.MISSING}, True),
        "layouts_class_*": ({f"layouts_class_{k}" for k in transactions_view.CLASSES}, True),
        "layouts_ncu_*": ({f"layouts_ncu_{k}" for k in transactions_view.AGREEMENTS}, True),
        "shape_kind_*": ({f"shape_kind_{k}" for k in models.KINDS}, True),
        "cache_full_*": ({f"cache_full_{k}" for k in CACHE_KINDS}, True),
        "chapter_stages_*": ({f"chapter_stages_{g}" for g in STAGE_GROWTH}, True),
        "acc_reading_*": ({f"acc_reading_{r}" for r in cache_model.SIDE_READINGS}, True),
        "acc_side_*": ({"acc_side_below", "acc_side_above"}, True),
        "yk_box_*": ({f"yk_box_{b}" for b in your_kernel.BOXES}, True),
        "yk_problem_*": ({f"yk_problem_{c}" for c in your_kernel.BOX_PROBLEMS}, True),
        "launcher_sandbox_*": ({f"launcher_sandbox_{c}" for c in POLICY_CODES}, True),
    }


def code_text() -> str:
    return "\n".join(path.read_text(encoding="utf-8") for path in CODE)


def literal_keys() -> set[str]:
    """Keys written out in the code: t("key"), tr("key"), has("key")."""
    return set(re.findall(r'\b(?:t|tr|has)\(\s*["\']([A-Za-z0-9_]+)["\']', code_text()))


def templates() -> set[str]:
    """Keys the code builds: t(f"..."), tr(f"..."), `text_key = f"..."`, and what a `*_key()` function returns."""
    src = code_text()
    fstring = r'f(?:"((?:[^"{]|\{[^}]*\})*)"|\'((?:[^\'{]|\{[^}]*\})*)\')'
    found = ["".join(m) for m in re.findall(r"\b(?:t|tr)\(\s*" + fstring, src)]
    found += re.findall(r'\btext_key\s*=\s*f"([^"]+)"', src)
    found += re.findall(r'def \w+_key\([^)]*\)[^:]*:\s*\n(?:\s*"""[^\n]*"""\n)?\s*return f"([^"]+)"', src)
    return {re.sub(r"\{[^{}]*(?:\{[^{}]*\}[^{}]*)*\}", "*", f) for f in found}


def placeholders(text: str) -> set[str]:
    return {re.split(r"[.\[]", field)[0] for _, field, _, _ in string.Formatter().parse(text) if field is not None}


def test_every_topic_file_has_both_languages_with_the_same_keys():
    import tomllib

    by_topic: dict[str, dict[str, set[str]]] = {}
    for path in i18n.LOCALES_DIR.glob("*.toml"):
        topic, lang = path.stem.rsplit(".", 1)
        by_topic.setdefault(topic, {})[lang] = set(tomllib.loads(path.read_text(encoding="utf-8")))
    assert by_topic
    for topic, langs in by_topic.items():
        assert set(langs) == set(i18n.LANGUAGES), topic
        assert langs["en"] == langs["zh"], (topic, langs["en"] ^ langs["zh"])


def test_every_key_has_the_same_placeholders_in_both_languages():
    differ = {key: {lang: placeholders(text) for lang, text in entry.items()} for key, entry in TEXT.items()
              if placeholders(entry["en"]) != placeholders(entry["zh"])}
    assert not differ


def test_no_text_is_empty():
    assert not [(key, lang) for key, entry in TEXT.items() for lang, text in entry.items() if not text.strip()]


def test_every_run_time_key_template_in_the_code_has_its_family():
    found = templates()
    assert "padding_state_*" in found and "gpu_path_*" in found      # the scan sees what it is meant to see
    assert found == set(families()), found ^ set(families())


def test_every_key_used_exists_in_both_languages():
    used = literal_keys() | {k for keys, required in families().values() if required for k in keys}
    missing = {key for key in used if set(TEXT.get(key, {})) != set(i18n.LANGUAGES)}
    assert not missing


def test_no_dead_keys():
    used = literal_keys() | {k for keys, _ in families().values() for k in keys}
    assert set(TEXT) - used == set()


def test_a_key_in_two_topic_files_is_refused(tmp_path):
    (tmp_path / "one.en.toml").write_text('same = "a"\n', encoding="utf-8")
    (tmp_path / "two.en.toml").write_text('same = "b"\n', encoding="utf-8")
    with pytest.raises(ValueError, match="same"):
        i18n.load_locales(tmp_path)


def test_a_missing_key_raises_under_the_tests_and_shows_itself_otherwise(monkeypatch):
    assert i18n.strict()                                           # tests/conftest.py turns it on
    with pytest.raises(KeyError):
        i18n.text_in("en", "no_such_key")
    monkeypatch.setenv(i18n.STRICT_ENV, "0")
    assert i18n.text_in("zh", "no_such_key") == "no_such_key"
    assert i18n.text_in("zh", "nav_home") == TEXT["nav_home"]["zh"]


def test_the_run_time_families_match_what_the_library_produces():
    """The tuples the families are built from name what softmax_core really returns."""
    from softmax_teaching.pipeline import pipeline_timeline
    from softmax_core.hardware.occupancy import occupancy

    gpu = sc.default_gpu()
    cases = [occupancy(gpu, 32, 0, 4, 1), occupancy(gpu, 32, 0, 4, 10**9),
             occupancy(gpu, 32, gpu.max_shared_mem // 2, 4, 10**9), occupancy(gpu, 16, 0, 1, 10**9)]
    assert {occ.chapter_limiter for occ in cases} == set(gpu_figures.LIMITERS)
    assert {occ.limiter for occ in cases} <= set(gpu_figures.HARDWARE_LIMITERS)
    assert {s.phase for s in pipeline_timeline(3, 2, 3.0)} == set(row_schedule.PIPELINE_PHASES)
    paths = {sc.plan_softmax(4, n, __import__("torch").float32, gpu).path for n in (781, 1 << 20)}
    assert paths <= set(gpu_figures.TUNED_PATHS) and len(paths) == 2
