"""The app, driven headless with Streamlit's AppTest: every page runs, every widget at its minimum, a middle
value and its maximum, the animations step both ways, the language switch, links with bad values, and
the benchmark page with a recorded run. Each `at.run()` is one script run (one animation tick)."""
import re

import pandas as pd
import pytest
import torch
from streamlit.testing.v1 import AppTest

from explorer_ui import code, pages_registry
from explorer_ui.i18n import TEXT
from softmax_core.words import Coded
from tests.support.apptest import ROOT, assert_ok, open_page, widget, widget_keys
from tests.support.records import write_record
from explorer_ui.pages_registry import script

PAGE_FILES = [page.script for page in pages_registry.PAGES]


def app_on(page: str, query: dict | None = None) -> AppTest:
    """A fresh session that opens Home, then `page` (as a click in the sidebar would); no error box either."""
    at = open_page(page, query)
    assert_ok(at)
    return at


def test_assert_ok_rejects_any_error_box_it_was_not_told_to_expect():
    from types import SimpleNamespace

    def page(*errors):
        return SimpleNamespace(exception=[], error=[SimpleNamespace(value=e) for e in errors])

    with pytest.raises(AssertionError):
        assert_ok(page("Something else went wrong"))
    does_not_fit = TEXT["gpu_does_not_fit"]["zh"].split("{")[0] + "…"
    assert_ok(page(does_not_fit), expected_errors=("gpu_does_not_fit",))
    with pytest.raises(AssertionError):
        assert_ok(page(does_not_fit, "another"), expected_errors=("gpu_does_not_fit",))
    with pytest.raises(AssertionError):
        assert_ok(SimpleNamespace(exception=[SimpleNamespace(value="boom")], error=[]))


def test_pages_folder_matches_the_navigation():
    on_disk = {f"pages/{p.name}" for p in (ROOT / "pages").glob("*.py")}
    assert on_disk == set(PAGE_FILES[1:])


@pytest.mark.slow                           # a crawl over every page
def test_home_and_every_page_run_at_defaults():
    at = app_on("app.py")
    assert at.title[0].value == "Fused Softmax Explorer"
    assert any("×" in m.value for m in at.metric)          # the predicted speedup, computed
    for page in PAGE_FILES[1:]:
        at.switch_page(page).run()
        assert_ok(at)
        assert at.title, page


# -- benchmark -------------------------------------------------------------------------------------------------
@pytest.fixture
def recorded_dir(tmp_path, monkeypatch):
    import softmax_bench as bench

    rows = []
    for n in (1024, 32768):
        for provider, ms in (("copy", 0.02), ("tutorial", 0.025), ("torch", 0.04), ("naive", 0.1)):
            fails = provider == "tutorial" and n == 32768
            rows.append(dict(provider=provider, direction="forward", dtype="float32", M=4096, N=n,
                             ms_median=float("nan") if fails else ms * n / 1024, ms_min=float("nan") if fails else ms,
                             ms_max=float("nan") if fails else ms * 2, gbps=float("nan") if fails else 1000.0,
                             copy_ratio=float("nan") if fails else 0.8, status="failed" if fails else "ok",
                             reason=bench.providers.raised("OutOfResources", "shared memory") if fails else None))
    frame = pd.DataFrame(rows, columns=bench.COLUMNS)
    provenance = {"gpu": "Test GPU 9000", "date": "2026-01-02T03:04:05+00:00", "torch": "x", "triton": "y",
                  "M": 4096, "dtype": "float32", "command": "made by test_app", "record_version": bench.RECORD_VERSION,
                  "timer": bench.DO_BENCH, "timer_figures": bench.timer_figures(bench.DoBenchTimer())}
    bench.save_run(bench.BenchmarkRun(frame, provenance), tmp_path, "test-run")
    monkeypatch.setenv("SOFTMAX_EXPLORER_RECORDED_DIR", str(tmp_path))
    return tmp_path


# -- every widget at min, middle and max -------------------------------------------------------------------
# widget key -> values to set, in order; after its values each widget goes back to where it was, so that
# the combinations stay small. A test below checks that no widget on a page is left out.
SWEEPS = {
    script("memory"): {
        "memory_M": [1, 524_288, 1_048_576], "memory_N": [1, 524_288, 1_048_576],
        "memory_dtype": ["float32", "float16", "bfloat16"], "memory_gpu": ["t4", "mi300x", "h200"],
        "memory_step": [0, 3, 5], "predict_memory_speedup_guess": [0.0, 4.0, 100.0],
        "sidebar_lang": ["zh", "en"], "sidebar_present": [True, False]},
    script("padding"): {
        "padding_N": [1, 1000, 16384], "padding_rows": [1, 4, 8], "padding_row": [0, 2, 3],
        "padding_break": ["pad_zero", "no_store_mask", "all_neg_inf", "correct"],
        "padding_zoom": [True, False], "padding_step": [0, 3, 6], "predict_padding_lane_guess": ["one", "zero"],
        "sidebar_lang": ["zh", "en"], "sidebar_present": [True, False]},
    script("schedule"): {
        "schedule_gpu": ["t4", "mi300x", "h200"], "schedule_N": [1, 8192, 16384], "schedule_rows": [1, 80, 160],
        "schedule_auto": [False, True], "schedule_stages": [1, 4, 8], "schedule_load": [1, 5, 10],
        "schedule_step": [0, 1, 3], "predict_schedule_rows_guess": [0.0, 3.0], "sidebar_lang": ["zh", "en"],
        "sidebar_present": [True, False]},
    script("gpu"): {
        "gpu_gpu": ["t4", "mi300x", "h200"], "gpu_M": [1, 524_288, 1_048_576], "gpu_N": [1, 131_072, 262_144],
        "gpu_dtype": ["float32", "float16", "bfloat16"], "gpu_vary": ["block", "regs"], "gpu_regs": [1, 128, 255],
        "gpu_asm": [True, False], "gpu_kernel": ["tuned", "tutorial"], "gpu_compare": [True, False],
        "predict_gpu_fit_guess": [0.0, 8.0], "sidebar_lang": ["zh", "en"], "sidebar_present": [True, False]},
    script("bench"): {
        "bench_cpuM": [16, 128, 2048], "bench_cpuN": [128, 1024, 4096], "bench_run": [0],
        "bench_recdir": ["forward"], "predict_bench_speedup_guess": [0.0, 4.0], "sidebar_lang": ["zh", "en"],
        "sidebar_present": [True, False], "shape_preset": ["channel-dim1", "moe-router-8", "custom"],
        "shape_dtype": ["float32", "float64"], "shape_dim": [-8, 0, 7], "shape_direction": ["backward", "forward"],
        "shape_gpu": ["t4", "mi300x", "h200"]},
    script("chapter"): {
        "chapter_gpu": ["t4", "mi300x", "h200"], "chapter_N": [1, 4096, 65536],
        "chapter_view": ["contiguous", "transposed", "column_slice"], "predict_chapter_stages_guess": [0.0, 12304.0],
        "sidebar_lang": ["zh", "en"], "sidebar_present": [True, False]},
    script("glossary"): {
        "glossary_gpu": ["t4", "mi300x", "h200"], "glossary_N": [1, 4096, 65536],
        "predict_glossary_floor_guess": [0.0, 10.0], "sidebar_lang": ["zh", "en"], "sidebar_present": [True, False]},
    # Nothing is compiled until the button is pressed (tests/app/test_your_kernel_page.py presses it).
    script("your_kernel"): {
        "yk_example": [TEXT[f"yk_ex_{name}"]["en"] for name in ("vector_add", "layer_norm", "matmul", "softmax")],
        "yk_kernel": ["softmax_kernel"], "yk_num_warps": [1, 8, 32], "yk_num_stages": [1, 4, 8],
        "yk_gpus": [[], ["t4"], ["h200", "mi300x"]], "yk_flops": [0.0, 1e9, 1e18], "yk_precision": ["bf16", "fp32"],
        "sidebar_lang": ["zh", "en"], "sidebar_present": [True, False]},
}
# errors a page shows on purpose for some of those values (a row too long for the GPU: the page says why)
EXPECTED_ERRORS = {script("gpu"): ("gpu_does_not_fit",), script("bench"): ("shape_err_dim_out_of_range",)}
# widgets that only appear in some states, swept with that state set up first
CONDITIONAL = {
    script("schedule"): ({"schedule_auto": False, "schedule_rows": 40}, {"schedule_P": [1, 20, 40]}),
}
if torch.cuda.is_available():
    # On a GPU the benchmark page offers the live harness (each change runs a real sweep: timed on the
    # device by its own tests, not swept here) instead of the CPU comparison.
    SWEEPS[script("bench")] = {key: values for key, values in SWEEPS[script("bench")].items()
                               if not key.startswith(("bench_cpu", "shape_gpu"))}
    CONDITIONAL[script("bench")] = ({}, {f"bench_{name}": [] for name in
                                                ("M", "dtype", "Nlo", "Nhi", "providers", "directions")})


def set_and_run(at: AppTest, key: str, value, expected_errors: tuple[str, ...] = ()) -> None:
    widget(at, key).set_value(value).run()
    assert_ok(at, expected_errors=expected_errors)


@pytest.mark.slow                           # a crawl over every page and every widget on it
@pytest.mark.parametrize("page", list(SWEEPS))
def test_every_widget_at_min_middle_and_max(page, recorded_dir):
    at = app_on(page)
    sweep = SWEEPS[page]
    conditional = CONDITIONAL.get(page, ({}, {}))
    expected = EXPECTED_ERRORS.get(page, ())
    assert widget_keys(at) <= set(sweep) | set(conditional[1]), widget_keys(at) - set(sweep)
    for key, values in sweep.items():
        before = widget(at, key).value
        for value in values:
            set_and_run(at, key, value, expected)
            assert widget(at, key).value == value
        set_and_run(at, key, before, expected)
    for key, value in conditional[0].items():
        set_and_run(at, key, value, expected)
    for key, values in conditional[1].items():
        for value in values:
            set_and_run(at, key, value, expected)


def test_padding_rows_shrinking_below_the_followed_row_is_clamped():
    at = app_on(script("padding"))
    set_and_run(at, "padding_rows", 8)
    set_and_run(at, "padding_row", 7)
    set_and_run(at, "padding_rows", 2)
    assert widget(at, "padding_row").value == 1


# -- animation -----------------------------------------------------------------------------------------------
# AppTest runs whole pages only, never a fragment on its own, so it cannot play an animation (each frame is a
# fragment run, explorer_ui/player.py): it checks what a full run does. Playing, pausing and stopping at the
# end are checked in a real browser (tests/browser/test_presentation_mode.py, test_pages_in_chromium.py).
@pytest.mark.parametrize("page, prefix", [(script("memory"), "memory"),
                                          (script("padding"), "padding"),
                                          (script("schedule"), "schedule")])
def test_animation_scrubs_and_a_full_run_pauses_it(page, prefix):
    at = app_on(page, {"rows": "20"} if prefix == "schedule" else None)
    step, play = f"{prefix}_step", f"{prefix}_play"
    assert widget(at, step).value == 0 and at.button(key=play).label == "Play"
    set_and_run(at, step, 2)
    assert at.query_params["step"] == "2"
    at.session_state[f"{prefix}_playing"] = True               # as if playing when another widget changes
    at.run()
    assert_ok(at)
    assert at.button(key=play).label == "Play" and widget(at, step).value == 2
    assert at.session_state[f"{prefix}_playing"] is False
    last = int(at.slider(key=step).proto.max)
    set_and_run(at, step, last)
    at.button(key=play).click().run()                           # Play at the last step starts over
    assert_ok(at)
    assert widget(at, step).value == 0


def test_player_steps_stop_at_the_last_frame_and_the_pause_grows_with_the_frame():
    from explorer_ui.player import MIN_PAUSE_S, next_frame, pause_after

    assert next_frame(0, 6) == (1, True)
    assert next_frame(5, 6) == (6, False)                       # the last frame is shown, then it stops
    assert next_frame(6, 6) == (6, False)
    assert pause_after(0.1, 0.9) == pytest.approx(0.8)          # a frame every 0.9 s on an idle server
    assert pause_after(2.0, 0.9) == 2.0                         # under load: slower, never queued up
    assert pause_after(0.9, 0.9) == 0.9 and pause_after(0.0, 0.01) == MIN_PAUSE_S


def test_animation_frames_keep_the_chart_spec_fixed():
    """Only data change between steps, so the browser updates the chart in place (no flicker)."""
    at = app_on(script("padding"))

    def spec() -> str:
        raw = at.get("arrow_vega_lite_chart")[0].proto.spec if at.get("arrow_vega_lite_chart") else \
            at.get("vega_lite_chart")[0].proto.spec
        return re.sub(r'"data-[0-9a-f]+"', '"data"', raw)

    first = spec()
    set_and_run(at, "padding_step", 3)
    assert spec() == first


# -- language ------------------------------------------------------------------------------------------------
def test_language_switch_translates_labels_nav_and_title():
    at = app_on(script("padding"))
    english = (at.title[0].value, widget(at, "padding_rows").label, [p.proto.label for p in at.get("page_link")])
    set_and_run(at, "sidebar_lang", "zh")
    chinese = (at.title[0].value, widget(at, "padding_rows").label, [p.proto.label for p in at.get("page_link")])
    assert chinese[0] == TEXT["padding_title"]["zh"] != english[0]
    assert chinese[1] == TEXT["padding_rows"]["zh"]
    assert TEXT["nav_memory"]["zh"] in chinese[2] and TEXT["nav_memory"]["en"] in english[2]
    assert at.query_params["lang"] == "zh"
    at.switch_page(script("gpu")).run()           # the choice follows the user to other pages
    assert at.title[0].value == TEXT["gpu_title"]["zh"]


def test_language_comes_from_the_link():
    at = app_on("app.py", {"lang": "zh"})
    assert at.title[0].value == TEXT["app_name"]["zh"]


# -- URL state -----------------------------------------------------------------------------------------------
def test_link_opens_the_page_in_that_state():
    at = app_on(script("padding"), {"N": "781", "step": "4", "break": "pad_zero"})
    assert widget(at, "padding_N").value == 781 and widget(at, "padding_step").value == 4
    assert widget(at, "padding_break").value == "pad_zero"
    assert not at.info or all("link" not in i.value for i in at.info)


def test_out_of_range_and_garbage_link_values_are_clamped_or_ignored_with_a_note():
    at = app_on(script("padding"), {"N": "999999", "rows": "abc", "break": "nonsense", "step": "-3"})
    assert widget(at, "padding_N").value == 16384
    assert widget(at, "padding_rows").value == 4
    assert widget(at, "padding_break").value == "correct"
    assert widget(at, "padding_step").value == 0
    notes = " ".join(i.value for i in at.info)
    assert "999999" in notes and "abc" in notes and "nonsense" in notes and "-3" in notes
    assert at.query_params["N"] == "16384"                     # the URL now says what is shown


def test_widget_changes_are_written_to_the_url():
    at = app_on(script("memory"))
    set_and_run(at, "memory_N", 2048)
    assert at.query_params["N"] == "2048"


def test_schedule_link_with_P_turns_the_plan_default_off():
    at = app_on(script("schedule"), {"rows": "30", "P": "7"})
    assert widget(at, "schedule_auto").value is False and widget(at, "schedule_P").value == 7


def test_benchmark_page_shows_a_recorded_run_with_its_provenance(recorded_dir):
    at = app_on(script("bench"))
    text = " ".join(m.value for m in at.markdown)
    assert "Test GPU 9000" in text and "2026-01-02" in text
    assert at.get("arrow_vega_lite_chart") or at.get("vega_lite_chart")
    assert any(b.proto.label == "Download CSV" for b in at.get("download_button"))
    set_and_run(at, "bench_run", 0)
    # the memory page puts the measured speedup beside the predicted one, at a shape that was measured
    at.switch_page(script("memory")).run()
    assert_ok(at)
    set_and_run(at, "memory_N", 1024)
    measured = [m.value for m in at.metric if m.label == TEXT["memory_measured"]["en"]]
    assert measured and measured[0] != "—"
    at.switch_page("app.py").run()
    assert any("Test GPU 9000" in m.value for m in at.markdown)


def test_benchmark_page_without_recordings_says_so(tmp_path, monkeypatch):
    monkeypatch.setenv("SOFTMAX_EXPLORER_RECORDED_DIR", str(tmp_path / "empty"))
    at = app_on(script("bench"))
    assert any("No recorded benchmark run" in i.value for i in at.info)


@pytest.mark.skipif(torch.cuda.is_available(), reason="the CPU comparison is the no-GPU page's section")
def test_cpu_comparison_runs_on_this_machine():
    at = app_on(script("bench"), {"cpuM": "16", "cpuN": "256"})
    at.button(key="bench_cpu_run").click().run()
    assert_ok(at)
    assert any(TEXT["bench_cpu_measured"]["en"] in df.value.columns for df in at.dataframe)


# -- code beside the pictures ------------------------------------------------------------------------------------
def test_every_kernel_anchor_finds_its_line():
    lines = code.kernel_source()
    for name, fragment in code.KERNEL_ANCHORS.items():
        assert code.find_line(lines, fragment), name
    assert not any("TRACE:" in line and line.strip().startswith("if") for line in lines)


def test_occupancy_highlights_find_their_lines():
    from softmax_core.hardware.occupancy import chapter_occupancy

    lines = code.source_lines(chapter_occupancy)
    for fragment in ("reg_occupancy = gpu.max_num_regs", "sram_occupancy = gpu.max_shared_mem",
                     "programs_per_sm = "):
        assert code.find_line(lines, fragment), fragment


def test_live_sweep_on_a_gpu_machine(monkeypatch, recorded_dir):
    """The GPU branch of the benchmark page, with the harness's sweep stood in for (no GPU here): the Run
    button, the wait message when another session holds the GPU, progress, then chart, table and CSV."""
    import softmax_core as sc
    import softmax_bench as bench

    calls = []

    def fake_sweep(M, Ns, dtype, providers, directions, progress=None, on_wait=None, **_):
        calls.append((M, tuple(Ns), dtype, tuple(providers), tuple(directions)))
        on_wait()
        rows = []
        for i, n in enumerate(Ns):
            for p in providers:
                rows.append(dict(provider=p, direction="forward", dtype=dtype, M=M, N=n, ms_median=0.1, ms_min=0.09,
                                 ms_max=0.12, gbps=100.0 + i, copy_ratio=0.9, status="ok", reason=""))
                progress(len(rows), len(Ns) * len(providers), f"{p} N={n}")
        return bench.BenchmarkRun(pd.DataFrame(rows, columns=bench.COLUMNS),
                                  {"gpu": "Pretend GPU", "M": M, "date": "2026-02-03"})

    monkeypatch.setattr(sc.runtime, "INTERPRETED", False)
    monkeypatch.setattr(sc.runtime, "backend", lambda: Coded.of(sc.runtime.Backend.GPU, name="pretend"))
    monkeypatch.setattr(bench, "run_sweep", fake_sweep)
    monkeypatch.setattr(bench, "available_providers", lambda: ["copy", "tuned", "tutorial", "torch", "naive"])
    monkeypatch.setattr(torch.cuda, "mem_get_info", lambda: (80 * 10**9, 80 * 10**9))   # the pretend GPU's memory
    at = app_on(script("bench"), {"Nlo": "1024", "Nhi": "4096", "providers": "naive,tutorial,bogus"})
    assert widget(at, "bench_providers").value == ["naive", "tutorial"]
    assert any("bogus" in i.value for i in at.info)              # the unknown provider in the link is named
    at.button(key="bench_go").click().run()
    assert_ok(at)
    assert calls == [(4096, (1024, 2048, 4096), "float32", ("naive", "tutorial"), ("forward",))]
    assert any("waited" in c.value for c in at.caption)
    assert any(b.proto.label == "Download CSV" for b in at.get("download_button"))
    at.switch_page(script("memory")).run()            # the live run feeds "measured" there
    assert any("Pretend GPU" in c.value for c in at.caption)


# -- pre-warm (explorer_ui/prewarm.py; off in the other tests, see conftest.py) ---------------------------------
def test_prewarm_starts_once_per_server_and_not_when_switched_off(monkeypatch):
    from explorer_ui import prewarm

    launched = []
    prewarm.forget_start()
    monkeypatch.setattr(prewarm, "launch", lambda defaults_only=False: launched.append(defaults_only) or "child")
    try:
        monkeypatch.setenv(prewarm.ENV, "0")
        app_on("app.py")
        assert launched == []
        monkeypatch.setenv(prewarm.ENV, "1")
        app_on("app.py")
        app_on(script("memory"))                     # a second session: nothing new starts
        assert launched == [False]
    finally:
        prewarm.forget_start()


# Every page at its defaults (each in a new session: links from one page don't carry over), the GPU page last,
# with its BLOCK_SIZE sweep and compiled code: every compile they ask for must be one the pre-warm made.
GPU_PAGE = script("gpu")
PREWARMED_PAGES = tuple(page for page in PAGE_FILES if page != GPU_PAGE) + (GPU_PAGE,)


def open_pages_at_their_defaults(asked: list) -> None:
    """`asked` (record_compiles' list) learns which page is open, for describe_compiles."""
    for page in PREWARMED_PAGES:
        asked.append(page)
        at = app_on(page)
    asked.append(f"{GPU_PAGE}: vary BLOCK_SIZE, show PTX/SASS")
    set_and_run(at, "gpu_vary", "block")
    set_and_run(at, "gpu_asm", True)
    assert not at.warning, [w.value for w in at.warning]      # no BLOCK_SIZE of the sweep failed


def record_compiles(monkeypatch) -> list:
    """From now on, every compile that reaches a compiler is recorded as (job, want_asm) and still answered,
    so that the pages carry on and one run lists every compile they needed. The answer is the offline compile
    of the same kernel for the same target (a job to load on the GPU included: this machine may have none)."""
    import dataclasses

    from softmax_core.hardware import compile as sc_compile
    from softmax_core.hardware import runtime

    compile_here = sc_compile.compiler_process.request if runtime.INTERPRETED else sc_compile.compile_for_target
    asked, answers = [], {}

    def record(job, want_asm=False):
        asked.append((job, want_asm))
        offline = (dataclasses.replace(job, on_device=False), want_asm)
        if offline not in answers:
            answers[offline] = compile_here(*offline)
        return answers[offline]

    def texts(job):                     # the compiler's TTGIR and assembly (the layouts page reads them)
        asked.append((job, "texts"))
        return compile_texts(job)

    compile_texts = sc_compile.compiler_texts
    monkeypatch.setattr(sc_compile.compiler_process, "request", record)
    monkeypatch.setattr(sc_compile, "compile_for_target", record)
    monkeypatch.setattr(sc_compile, "compiler_texts", texts)
    return asked


def compiles(asked: list) -> list:
    return [item for item in asked if not isinstance(item, str)]


def describe_compiles(asked: list) -> str:
    """Each compile (once) under the page that asked for it: which kernel, for which target, whether it was to
    be loaded on this machine's GPU, its launch options and constexprs."""
    lines, seen, page = [], set(), None
    for item in asked:
        if isinstance(item, str):
            page = item
            continue
        if item in seen:
            continue
        if page not in seen:
            seen.add(page)
            lines.append(f"{page}:")
        seen.add(item)
        job, want_asm = item
        constexprs = ", ".join(f"{k}={v}" for k, v in job.constexprs if v is not None)
        lines.append(f"  {job.kernel.split(':')[1]}({job.signature[0][1]}) target={job.target} "
                     f"on_device={job.on_device} num_warps={job.num_warps} num_stages={job.num_stages}"
                     f"{' +TTGIR/assembly' if want_asm == 'texts' else ' +PTX/SASS' if want_asm else ''}: {constexprs}")
    return f"{len(set(compiles(asked)))} compile(s) the pre-warm did not make:\n" + "\n".join(lines)


def forget_compiles() -> None:
    """Forget what this process already knows, so that only the disk cache can answer."""
    import streamlit as st

    from softmax_core.hardware import compile as sc_compile
    from softmax_core.plans import tutorial as tutorial_plan

    sc_compile.forget_in_memory()
    tutorial_plan.clear_plan_cache()
    st.cache_data.clear()


@pytest.mark.slow                           # a crawl over every page
def test_prewarm_compiles_what_the_pages_ask_for(tmp_path, monkeypatch):
    """The pre-warm's child fills an empty disk cache; then every page at its defaults (and the GPU page's
    BLOCK_SIZE sweep and compiled code) finds every plan there: no compile."""
    from explorer_ui import prewarm

    monkeypatch.setenv("SOFTMAX_EXPLORER_CACHE", str(tmp_path))
    child = prewarm.launch(defaults_only=True)
    assert child.wait(timeout=600) == 0, prewarm.log_path().read_text()
    report = prewarm.log_path().read_text()
    assert "failed" not in report and " done in " in report, report
    assert list((tmp_path / "compile").glob("*.json"))

    forget_compiles()
    asked = record_compiles(monkeypatch)
    from softmax_teaching import load_record

    recorded_here = []        # the layouts page's loads, recorded in the interpreter: the pre-warm's too
    record = load_record.record
    monkeypatch.setattr(load_record, "record", lambda *a, **k: recorded_here.append(a) or record(*a, **k))
    open_pages_at_their_defaults(asked)
    assert not compiles(asked), describe_compiles(asked)
    assert not recorded_here, recorded_here


def test_the_pages_imports_are_warmed_once_after_the_first_page_and_not_when_switched_off(monkeypatch):
    import threading

    from explorer_ui import prewarm

    ran = []
    prewarm.forget_start()
    monkeypatch.setattr(prewarm, "import_pages", lambda: ran.append(1))
    monkeypatch.setattr(prewarm, "launch", lambda defaults_only=False: None)
    try:
        monkeypatch.setenv(prewarm.ENV, "0")
        app_on("app.py")
        assert prewarm.import_pages_soon() is None and ran == []
        monkeypatch.setenv(prewarm.ENV, "1")
        app_on("app.py")                            # its page_end starts the thread
        threads = [t for t in threading.enumerate() if t.name == "prewarm-imports"]
        for thread in threads:
            thread.join(timeout=30)
        assert ran == [1]
        app_on(script("memory"))                     # a second session: nothing new starts
        assert prewarm.import_pages_soon() is None and ran == [1]
    finally:
        prewarm.forget_start()


def test_the_warmed_imports_are_every_page_s_own():
    from explorer_ui import pages_registry, prewarm

    blocks = dict(prewarm.page_import_blocks())
    assert list(blocks) == [p.script for p in pages_registry.PAGES]
    assert all(block.startswith("import explorer_ui.startup") for block in blocks.values())
    assert "from explorer_ui import charts" in " ".join(blocks.values())


def test_planting_the_compile_seed_fills_only_what_the_cache_lacks(tmp_path):
    from explorer_ui import prewarm

    seed, cache = tmp_path / "seed", tmp_path / "cache"
    seed.mkdir()
    cache.mkdir()
    (seed / "aaa.json").write_text('{"n_regs": 1}')
    (seed / "bbb.json").write_text('{"n_regs": 2}')
    (seed / prewarm.PROVENANCE_NAME).write_text("{}")
    (cache / "bbb.json").write_text('{"n_regs": 99}')          # already compiled here: it stays
    assert prewarm.plant_seed(seed, cache) == 1
    assert sorted(p.name for p in cache.iterdir()) == ["aaa.json", "bbb.json"]
    assert (cache / "bbb.json").read_text() == '{"n_regs": 99}'
    assert prewarm.plant_seed(seed, cache) == 0
    assert prewarm.plant_seed(tmp_path / "absent", cache) == 0


@pytest.mark.slow                           # a crawl over every page
def test_the_shipped_compile_seed_answers_every_page_at_its_defaults(tmp_path, monkeypatch):
    """assets/compile_seed/ planted in an empty cache, as a fresh clone's server does: every page at its defaults
    (and the GPU page's BLOCK_SIZE sweep) finds its plans there, no compile. Fails when a kernel, a default or
    the pre-warm's list changed after the seed was written: `python -m explorer_ui.prewarm --write-seed`."""
    import json

    import triton

    from explorer_ui import prewarm

    provenance = json.loads((prewarm.seed_dir() / prewarm.PROVENANCE_NAME).read_text())
    if provenance["versions"]["triton"] != triton.__version__:
        pytest.skip(f"the seed was compiled by triton {provenance['versions']['triton']}: its keys name that "
                    f"toolchain, so here (triton {triton.__version__}) it can only miss")
    if torch.cuda.is_available():
        pytest.skip("a real GPU is here: the pages compile on it, which no shipped seed holds")
    monkeypatch.setenv("SOFTMAX_EXPLORER_CACHE", str(tmp_path))
    assert prewarm.plant_seed() == provenance["files"]
    forget_compiles()
    asked = record_compiles(monkeypatch)
    open_pages_at_their_defaults(asked)
    # PTX/SASS texts are the pre-warm's to make (see prewarm.write_seed): every other compile must be in the seed
    missing = [(job, want_asm) for job, want_asm in compiles(asked) if not want_asm]
    assert not missing, describe_compiles(asked)


@pytest.mark.slow                           # a crawl over every page
def test_prewarm_on_a_machine_with_a_gpu_compiles_what_the_pages_ask_for(tmp_path, monkeypatch):
    """The same promise where the app finds a GPU (a teacher's H200): the pages then default to the live GPU
    (plans compiled and loaded on it, on_device=True), and some still compile offline for its architecture
    (the chapter notes compare the two ways). Here the live GPU is an H200 as the driver would describe it;
    kernels still run in the interpreter, and a compile to load on the GPU is answered by the offline compile
    (record_compiles). The pre-warm runs in this process, so that it sees the same GPU."""
    import dataclasses

    import softmax_core as sc
    import streamlit as st
    from explorer_ui import data, prewarm
    from softmax_core.hardware import gpu as sc_gpu

    if torch.cuda.is_available():
        pytest.skip("a real GPU is here: the test above runs the pre-warm against it")
    live = dataclasses.replace(sc.catalog_gpu("h200"), key="live-0", name="NVIDIA H200", live=True)

    def current_gpu(index: int = 0):
        return live if index == 0 else None

    monkeypatch.setenv("SOFTMAX_EXPLORER_CACHE", str(tmp_path))
    monkeypatch.setattr(sc_gpu, "current_gpu", current_gpu)
    monkeypatch.setattr(sc, "current_gpu", current_gpu)
    st.cache_resource.clear()          # data.live_gpu: probed once per server
    forget_compiles()
    try:
        assert data.live_gpu() == live and sc.default_gpu() == live
        asked = record_compiles(monkeypatch)
        for what, call in prewarm.work_items(defaults_only=True):
            call()
        assert any(job.on_device for job, _ in asked)          # the live GPU's own compiles are pre-warmed
        asked.clear()
        forget_compiles()
        open_pages_at_their_defaults(asked)
        assert not compiles(asked), describe_compiles(asked)
    finally:
        monkeypatch.undo()                 # no later test may meet this GPU in a cache
        st.cache_resource.clear()
        forget_compiles()


# -- the two clocks: eager (do_bench) and CUDA-graph (do_bench_cudagraph) records ------------------------------
def _shown_texts(at: AppTest) -> str:
    import json

    specs = [json.dumps({"spec": json.loads(c.proto.spec)}) for c in at.get("vega_lite_chart")]
    datasets = [str(d.data) for c in at.get("vega_lite_chart") for d in c.proto.datasets]
    frames = [f.value.to_string() for f in [*at.dataframe, *at.table]]
    return " ".join([*(m.value for m in at.markdown), *(c.value for c in at.caption), *specs, *datasets, *frames])


def test_the_timing_switch_shows_the_cuda_graph_record_with_its_provenance(graph_recorded_dir):
    at = app_on(script("bench"))
    switch = widget(at, "bench_timing")
    assert switch.value == "eager"                               # the eager record is the one shown first
    assert list(switch.options) == [TEXT["bench_timing_eager"]["en"], TEXT["bench_timing_cudagraph"]["en"]]
    assert TEXT["bench_timing_explain"]["en"].split("**")[0].strip() in _shown_texts(at)
    text = _shown_texts(at)
    assert "2026-01-02" in text and "2026-01-03" not in text and "QuACK" in text
    set_and_run(at, "bench_timing", "cudagraph")
    text = _shown_texts(at)
    assert "2026-01-03" in text and "do_bench_cudagraph" in text and "L2 not flushed" in text
    assert "QuACK" in text and "0.6.5" in text                   # the series, and its version in the provenance
    assert at.query_params["timing"] == "cudagraph"


def test_a_link_opens_the_graph_view_and_a_bad_value_falls_back(graph_recorded_dir):
    at = app_on(script("bench"), {"timing": "cudagraph"})
    assert widget(at, "bench_timing").value == "cudagraph" and "2026-01-03" in _shown_texts(at)
    at = app_on(script("bench"), {"timing": "sideways"})    # app_on asserts: no exception, no error box
    assert widget(at, "bench_timing").value == "eager" and "2026-01-02" in _shown_texts(at)


def test_no_timing_switch_without_a_graph_record(recorded_dir, tmp_path, monkeypatch):
    at = app_on(script("bench"), {"timing": "cudagraph"})
    assert "bench_timing" not in widget_keys(at)
    assert TEXT["bench_timing_explain"]["en"].split("**")[0].strip() not in _shown_texts(at)
    # a graph record of another dtype does not count for this one
    write_record(recorded_dir, "other-dtype", "do_bench_cudagraph", "2026-01-05T00:00:00+00:00", 0.01)
    other = pd.read_csv(recorded_dir / "other-dtype.csv").assign(dtype="bfloat16")
    other.to_csv(recorded_dir / "other-dtype.csv", index=False)
    import json
    info = json.loads((recorded_dir / "other-dtype.json").read_text())
    (recorded_dir / "other-dtype.json").write_text(json.dumps({**info, "dtype": "bfloat16"}))
    at = app_on(script("bench"))
    assert "bench_timing" not in widget_keys(at)


def test_the_graph_view_gives_no_ratio_where_the_graph_copy_ran_slower_than_eager():
    """The recorded H200 runs: from 512 MB per tensor the forward copy replayed from a graph ran slower than
    launched from Python; there the graph view shows no ratio and says why, with the sizes computed from the
    two records (the backward's roofline, an add kernel, is unaffected)."""
    from explorer_ui import data
    import softmax_bench as bench

    at = app_on(script("bench"), {"timing": "cudagraph"})
    eager = [r for r in data.recorded_runs() if r.provenance.get("dtype") == "float32"][-1]
    graph = data.graph_run_for(eager)
    assert graph is not None and widget(at, "bench_timing").value == "cudagraph"

    def rows(run, direction):
        return run.frame[run.frame["direction"] == direction].to_dict("records")

    slow = bench.slower_graph_roofline(rows(graph, "forward"), rows(eager, "forward"))
    assert slow and not bench.slower_graph_roofline(rows(graph, "backward"), rows(eager, "backward"))
    captions = " ".join(c.value for c in at.caption)
    assert "No ratios at N = " + ", ".join(f"{n:,}" for n in slow) in captions
    ratios = [f.value for f in at.dataframe if "tuned" in f.value.columns and "copy" not in f.value.columns][0]
    shown = dict(zip(ratios["N"], ratios["tuned"]))
    assert all(shown[f"{n:,}"] == "—" for n in slow)
    assert any(v != "—" for n, v in shown.items() if int(n.replace(",", "")) not in slow)
    at = app_on(script("bench"))                                  # the eager view: every ratio shown
    assert "No ratios at N" not in " ".join(c.value for c in at.caption)
