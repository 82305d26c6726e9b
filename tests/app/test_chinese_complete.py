"""中文 complete: every page, opened in 简体中文 under AppTest, shows no English sentence outside code.

Every text the page shows is collected (prose, captions, titles, metrics, alerts, expander and widget labels,
widget options, table headers and string cells, chart titles / axis titles / legend entries / tooltip data,
and the comments of the code panels); code spans, code blocks, URLs, file paths and identifiers (anything
with `_`, `.`, `()`, `/`) are stripped, and a run of five or more English words fails the test. Short labels
(legend entries, table headers, axis titles, metric labels, widget options) are held tighter: two English
words in a row fail there, since a label is a phrase and "naive (five torch ops)" is English all the same.

Pages are discovered from app.py and pages/*.py; the widget states that change the text (padding variants, an
AMD GPU, the split path, ...) are set on top of each page's defaults.
"""
from __future__ import annotations

import html as html_lib
import io
import json
import re
from pathlib import Path

import pandas as pd
import pytest
from streamlit.testing.v1 import AppTest

from tests.support.apptest import open_page
from explorer_ui import pages_registry
from explorer_ui.pages_registry import script

ROOT = Path(__file__).resolve().parents[2]
PAGES = [page.script for page in pages_registry.PAGES]

# A word: letters with at least one lower-case letter (acronyms such as SM, DRAM, HBM are terms, not prose).
_WORD = r"[A-Za-z]*[a-z][A-Za-z]*(?:'[a-z]+)?"
_SEP = r"[ \t\n,;:!?'\"()\[\]–—-]+"
PROSE_RUN = 5          # words in a row that make an English sentence in prose
LABEL_RUN = 2          # ... in a short label (legend entry, column header, axis title, option)
# English that is a name, not prose: product and project names, shown as they are in both languages
NAMES = ("Liger-Kernel", "Streamlit", "Triton", "PyTorch", "Tensor Core", "Infinity Cache", "Instinct", "Tesla", "Radeon",
         "Hopper", "Ampere", "Turing", "Volta", "Blackwell", "CDNA", "GeForce", "RTX", "Playwright", "Chromium",
         "Pygments", "Altair", "Pillow", "Vega-Lite", "vl-convert", "Google Colab", "Colab", "Python")


def strip_code(text: str) -> str:
    """`text` without code blocks, code spans, HTML tags, URLs, file paths and identifiers."""
    text = re.sub(r"```.*?```", " ", text, flags=re.S)
    text = re.sub(r"^\s*[A-Za-z_]\w*\s*=\s.*$", " ", text, flags=re.M)      # a line of code: `out = ...`
    text = re.sub(r"<pre.*?</pre>", " ", text, flags=re.S)
    text = re.sub(r"<style.*?</style>", " ", text, flags=re.S)              # the app's CSS is not prose
    text = re.sub(r"`[^`]*`", " ", text)
    text = re.sub(r"<[^>]+>", " ", text)
    text = html_lib.unescape(text)
    text = re.sub(r"\]\([^)]*\)", "] ", text)                       # markdown link targets
    text = re.sub(r"https?://\S+", " ", text)
    text = re.sub(r":[a-z_]+\[", "[", text)                          # :blue[...] colour markup
    for name in NAMES:
        text = text.replace(name, " ")
    # identifiers, paths, calls, indexing, command-line flags: a token holding _ . () / \ = [ ] " or a digit
    # next to letters, or starting with - and a letter
    text = re.sub(r'\S*(?:[_/\\=\[\]"]|\w\.\w|\w\(|\(\)|\d[A-Za-z]|[A-Za-z]\d)\S*', " ", text)
    text = re.sub(r"(?<!\S)--?[A-Za-z]\S*", " ", text)
    return text


def english_runs(text: str, run: int) -> list[str]:
    """Runs of `run` or more English words in `text` outside code. In a short label (run < 5) a word has two
    letters at least: a lone letter there is a variable (`o / d`), not English."""
    word = _WORD if run >= PROSE_RUN else rf"(?=[A-Za-z]{{2}}){_WORD}"
    pattern = rf"(?<![A-Za-z]){word}(?:{_SEP}{word}){{{run - 1},}}(?![A-Za-z])"
    return [m.group(0) for m in re.finditer(pattern, strip_code(text))]


def code_comments(body: str) -> list[str]:
    """The comments and docstrings of the code in an HTML code panel (Pygments output) or an st.code block."""
    text = html_lib.unescape(re.sub(r"<[^>]+>", "", body))
    docstrings = re.findall(r'"""(.*?)"""', text, flags=re.S)
    text = re.sub(r'""".*?"""', " ", text, flags=re.S)
    return [line.split("#", 1)[1] for line in text.splitlines() if "#" in line] + docstrings


def _arrow_frame(data: bytes) -> pd.DataFrame:
    import pyarrow as pa
    return pa.ipc.open_stream(io.BytesIO(data)).read_all().to_pandas()


def _spec_labels(node, out: list[str]) -> None:
    """Chart titles, axis and legend titles and scale domains (legend entries) of a Vega-Lite spec."""
    if isinstance(node, dict):
        for key, value in node.items():
            if key in ("title", "subtitle", "text") and isinstance(value, (str, list)):
                out.extend([value] if isinstance(value, str) else [v for v in value if isinstance(v, str)])
            elif key == "domain" and isinstance(value, list):
                out.extend(v for v in value if isinstance(v, str))
            elif key == "datasets" and isinstance(value, dict):
                for rows in value.values():
                    for row in rows if isinstance(rows, list) else []:
                        out.extend(v for v in row.values() if isinstance(v, str))
            else:
                _spec_labels(value, out)
    elif isinstance(node, list):
        for item in node:
            _spec_labels(item, out)


def _frame_texts(frame: pd.DataFrame, labels: list[str], prose: list[str]) -> None:
    labels.extend(str(c) for c in frame.columns)
    for column in frame.columns:
        for v in dict.fromkeys(frame[column].tolist()):
            if isinstance(v, str):
                (prose if len(v.split()) > 4 else labels).append(v)


def page_texts(at: AppTest) -> tuple[list[str], list[str]]:
    """(prose, labels): every text the page shows, as AppTest sees it."""
    prose: list[str] = []
    labels: list[str] = []
    for kind in ("markdown", "caption", "title", "header", "subheader", "info", "warning", "success", "error",
                 "latex", "toast"):
        prose.extend(e.value for e in getattr(at, kind))
    for kind in ("expander", "tabs"):
        for e in getattr(at, kind, []):
            prose.append(getattr(e, "label", "") or "")
    for m in at.metric:
        labels.append(m.label)
        prose.extend(x for x in (m.value, getattr(m, "delta", None), m.proto.help) if isinstance(x, str))
    for kind in ("button", "selectbox", "radio", "slider", "select_slider", "number_input", "toggle", "checkbox",
                 "multiselect", "text_input", "text_area", "color_picker", "date_input", "time_input"):
        for w in getattr(at, kind, []):
            prose.append(w.label)
            help_text = getattr(w.proto, "help", "")
            if help_text:
                prose.append(help_text)
            for option in getattr(w, "options", None) or []:
                labels.append(str(option))
    for e in at.get("page_link"):
        prose.append(e.proto.label)
    for frame in at.dataframe:
        _frame_texts(frame.value, labels, prose)
    for e in at.table:
        _frame_texts(e.value, labels, prose)
    for chart in at.get("vega_lite_chart"):
        spec_texts: list[str] = []
        _spec_labels(json.loads(chart.proto.spec), spec_texts)
        labels.extend(spec_texts)
        for dataset in chart.proto.datasets:
            frame = _arrow_frame(dataset.data.data)
            for column in frame.columns:
                labels.extend(v for v in dict.fromkeys(frame[column].tolist()) if isinstance(v, str))
    for e in at.get("html"):
        body = e.proto.body
        prose.append(body)
        prose.extend(code_comments(body[body.find("<pre"):]) if "<pre" in body else [])
    for e in at.code:
        prose.extend(code_comments(e.value))
    return prose, labels


def findings(at: AppTest) -> list[str]:
    prose, labels = page_texts(at)
    found = {f"{run!r}  in  {text[:160]!r}" for text in prose for run in english_runs(text, PROSE_RUN)}
    found |= {f"{run!r}  (label)  {text[:160]!r}" for text in labels for run in english_runs(text, LABEL_RUN)}
    return sorted(found)


# -- the check itself ------------------------------------------------------------------------------------------
def test_the_check_finds_english_and_passes_chinese():
    assert english_runs("This sentence is plainly written in English.", 5)
    assert english_runs("每行一个程序。The rows are spread over programs.", 5)
    assert not english_runs("每个程序读一行:`tl.load(input_ptrs, mask=mask)` 然后写回。", 5)
    assert not english_runs("NVIDIA H200 有 132 个 SM,每个 SM 有 65,536 个寄存器。", 5)
    assert not english_runs("见 https://triton-lang.org/main/getting-started/tutorials/02-fused-softmax.html", 5)
    assert not english_runs("```python\n# load the row into registers\nx = tl.load(p)\n```", 5)
    assert english_runs("naive (five torch ops)", 2)
    assert not english_runs("out = numerator / denominator[:, None]", 2)
    assert not english_runs("z = x - x_max[:, None]", 2) and not english_runs("o / d", 2)
    assert not english_runs("python -m softmax_core --benchmark --sweep full --dtypes float32 --out /root/out", 5)
    assert not english_runs("朴素实现(五个 torch 运算)", 2)
    assert not english_runs("torch.compile(torch.softmax)", 2)
    assert code_comments('<pre><span>x = 1</span>  <span># load the whole row</span></pre>') == [" load the whole row"]
    assert code_comments('<pre>def f():\n    """Read the row and\n    write it back."""</pre>') == [
        "Read the row and\n    write it back."]


# -- every page, in 中文 --------------------------------------------------------------------------------------
# page -> widget states that change the text, each set on top of the page's defaults
STATES = {
    script("padding"): [{"padding_break": v} for v in ("pad_zero", "no_store_mask", "all_neg_inf")]
    + [{"padding_step": 6}],
    script("gpu"): [{"gpu_gpu": "mi300x"}, {"gpu_gpu": "t4"}, {"gpu_kernel": "tutorial"},
                                 {"gpu_compare": True}, {"gpu_vary": "regs"}, {"gpu_N": 262_144}],
    script("schedule"): [{"schedule_gpu": "mi300x"}, {"schedule_auto": False}, {"schedule_step": 3}],
    script("memory"): [{"memory_gpu": "mi300x"}, {"memory_step": 5}],
    script("chapter"): [{"chapter_view": "transposed"}, {"chapter_view": "column_slice"},
                                 {"chapter_gpu": "mi300x"}],
    script("glossary"): [{"glossary_gpu": "mi300x"}],
    script("bench"): [{"bench_recdir": "backward"}],
    script("longrows"): [{"longrows_gpu": "mi300x"}, {"longrows_dtype": "bfloat16"}, {"longrows_N": 1_000_000}]
    + [{"longrows_pattern": p} for p in ("rising", "neg_inf_tiles", "all_neg_inf")] + [{"longrows_step": 1}],
    script("sharing"): [{"sharing_gpu": "mi300x"}, {"sharing_dtype": "bfloat16"}, {"sharing_split": 16}]
    + [{"sharing_pattern": p} for p in ("rising", "neg_inf_tiles", "all_neg_inf")] + [{"sharing_step": 3}],
}


def _widget(at: AppTest, key: str):
    for kind in ("slider", "number_input", "selectbox", "radio", "toggle", "select_slider", "checkbox"):
        for w in getattr(at, kind):
            if w.key == key:
                return w
    return None


# a radio question's answer, as its value (AppTest's radio options are the shown labels, not the values)
RADIO_GUESSES = {"predict_padding_lane_guess": "zero"}


def reveal_guesses(at: AppTest) -> bool:
    """Answer every predict-then-reveal question on the page (3, or RADIO_GUESSES' choice) and press Reveal:
    the answer and its explanation are text the page shows only then. False when the page asks nothing."""
    guesses = [w for w in [*at.number_input, *at.radio] if w.key and w.key.startswith("predict_")
               and w.key.endswith("_guess")]
    for w in guesses:
        w.set_value(RADIO_GUESSES[w.key] if w.type == "radio" else 3.0)
    if not guesses:
        return False
    at.run()
    for button in at.button:
        if button.key and button.key.startswith("predict_") and button.key.endswith("_reveal"):
            button.click()
    at.run()
    return True


def open_in_chinese(page: str) -> AppTest:
    return open_page(page, {"lang": "zh"})


@pytest.mark.slow                           # a crawl over every page
@pytest.mark.parametrize("page", PAGES)
def test_page_in_chinese_has_no_english_sentence(page):
    at = open_in_chinese(page)
    found = [f"[default] {f}" for f in findings(at)]
    if reveal_guesses(at):
        assert not at.exception, [e.value for e in at.exception]
        found += [f"[revealed] {f}" for f in findings(at)]
    for state in STATES.get(page, []):
        fresh = open_in_chinese(page)
        for key, value in state.items():
            widget = _widget(fresh, key)
            assert widget is not None, f"{page}: no widget {key}"
            widget.set_value(value)
        fresh.run()
        assert not fresh.exception, [e.value for e in fresh.exception]
        found += [f"[{state}] {f}" for f in findings(fresh)]
    assert not found, f"{page} in 中文 shows English:\n" + "\n".join(dict.fromkeys(found))


# -- the tables that carry the library's English into 中文 -----------------------------------------------------
def shown_sources() -> dict[str, tuple[str, ...]]:
    """Every code the pages show in a code panel (explorer_ui.code), by name."""
    from explorer_ui import code
    from explorer_ui import long_row_frames as lr
    from softmax_core.kernels.shared_rows import softmax_split_kernel

    return {"tutorial kernel": code.kernel_source(), "naive_softmax": code.naive_source(),
            "tiled kernel": lr.tiled_kernel_lines(), "split kernel": lr.kernel_lines_of(softmax_split_kernel),
            **{name: code.source_lines(fn) for name, fn in code.shown_functions().items()}}


def test_a_page_shows_no_source_but_the_chapters_and_the_kernels():
    """Plumbing (compile_for_target, the launchers) is not shown, so a better comment there needs no 中文 line."""
    from explorer_ui import code
    from softmax_core.hardware.compile import compile_for_target

    with pytest.raises(ValueError, match="not one of the functions pages show"):
        code.source_panel(compile_for_target, ())


def test_every_comment_and_docstring_line_of_the_shown_code_has_its_chinese_line_and_every_line_is_used():
    from explorer_ui import code

    table = code.comment_table()
    comments = {name: code.prose_of(lines) for name, lines in shown_sources().items()}
    missing = {name: [c for c in found if c not in table] for name, found in comments.items()}
    assert not {k: v for k, v in missing.items() if v}, missing
    used = {c for found in comments.values() for c in found}
    assert set(table) <= used, f"entries that match no shown comment: {set(table) - used}"
    assert all(not english_runs(zh, PROSE_RUN) for zh in table.values())
    lines = shown_sources()["tutorial kernel"]
    chinese = code.translate_comments(lines, "zh")
    assert len(chinese) == len(lines) and code.translate_comments(lines, "en") == lines
    assert all(a.split("#")[0] == b.split("#")[0] for a, b in zip(lines, chinese))   # the code itself unchanged
    assert chinese != lines and not any(english_runs(c, PROSE_RUN) for c in code.prose_of(chinese))


def test_every_gpu_source_has_its_chinese_citation():
    from explorer_ui import recorded_text
    from softmax_core.hardware.gpu import catalog_sources

    assert set(recorded_text.source_table()) == set(catalog_sources())
    assert all(not english_runs(zh, PROSE_RUN) for zh in recorded_text.source_table().values())


def _read_in(language: str, monkeypatch) -> None:
    """The app's sentences in `language`, outside a Streamlit session (both modules ask `language()`)."""
    from explorer_ui import i18n, recorded_text

    for module in (i18n, recorded_text):
        monkeypatch.setattr(module, "language", lambda: language)


@pytest.mark.parametrize("source, figures", [
    ("driver", {}), ("cuobjdump", {"target": "sm_90"}), ("amdgcn_metadata", {"target": "gfx942"}),
    ("cuobjdump", {"target": "sm_90", "refused": "out of resource: shared memory, Required: 262144, "
                                                  "Hardware limit: 232448"}),
])
def test_where_registers_come_from_is_said_in_chinese(source, figures, monkeypatch):
    from explorer_ui.i18n import say
    from softmax_core.hardware.compile import RegisterSource
    from softmax_core.words import Coded, describe

    how = Coded.of(RegisterSource(source), **figures)
    _read_in("zh", monkeypatch)
    text = say(how)
    said = text.split("(")[0] if "驱动拒绝" in text else text       # the driver's own message is quoted as it is
    assert text != describe(how) and not english_runs(said, PROSE_RUN), text
    _read_in("en", monkeypatch)
    assert say(how) == describe(how)


def test_a_bold_term_that_becomes_a_link_stays_bold_next_to_chinese():
    """"多少**[寄存器](…)**" shows its stars (CommonMark does not open bold between a letter and `[`)."""
    from explorer_ui import glossary

    linked = glossary.link_terms("每个线程要多少**registers**,再除")
    assert "**[" not in linked and "[**registers**](" in linked, linked


@pytest.mark.parametrize("timer", ["DoBenchTimer", "WallClockTimer", "CudaGraphTimer"])
def test_the_timers_description_is_said_in_chinese(timer, monkeypatch):
    """The benchmark provenance's `timer` entry, as the harness records it today, reads as Chinese."""
    from explorer_ui import recorded_text
    from softmax_bench import timers

    clock = getattr(timers, timer)()
    info = {"timer": clock.kind.value, "timer_figures": timers.timer_figures(clock)}
    _read_in("zh", monkeypatch)
    said = recorded_text.provenance_value(info, "timer")
    assert said != timers.describe_timer(clock) and not english_runs(said, PROSE_RUN), said


@pytest.mark.parametrize("view", ["eager", "cudagraph"])
def test_the_timing_switch_and_the_graph_record_read_as_chinese(view, graph_recorded_dir):
    """With a CUDA-graph record beside the eager one, the benchmark page in 中文 offers the switch in Chinese,
    and either view (QuACK's series, the graph timer's provenance) shows no English sentence."""
    from explorer_ui.i18n import TEXT

    at = open_in_chinese(script("bench"))
    switch = _widget(at, "bench_timing")
    assert switch is not None, "no timing switch although a CUDA-graph record exists"
    assert list(switch.options) == [TEXT["bench_timing_eager"]["zh"], TEXT["bench_timing_cudagraph"]["zh"]]
    switch.set_value(view)
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    prose, labels = page_texts(at)
    assert any(TEXT["bench_timing_explain"]["zh"].strip()[:12] in text for text in prose)
    assert any("QuACK" in text for text in labels)
    if view == "cudagraph":
        assert any("从 CUDA 图中重放,没有 CPU 启动开销" in text for text in labels + prose)
    found = findings(at)
    assert not found, "\n".join(found)


def _recorded_reasons():
    """Every distinct reason a committed record gives for a row it did not time (codes and figures)."""
    import softmax_bench as bench

    seen = {}
    for path in sorted(bench.RECORDED_DIR.rglob("*.json")):
        try:
            run = bench.load_run(path)
        except (KeyError, ValueError, TypeError):
            continue                       # a tuning table of another shape, not a benchmark record
        for reason in run.frame["reason"]:
            if reason is not None:
                seen.setdefault((reason.code, tuple(name for name, _ in reason.figures)), reason)
    return list(seen.values())


def test_why_a_recorded_row_was_not_timed_is_said_in_chinese(monkeypatch):
    """Every kind of reason the committed records give reads as Chinese."""
    from explorer_ui import recorded_text

    _read_in("zh", monkeypatch)
    reasons = _recorded_reasons()
    assert len(reasons) >= 5
    for reason in reasons:
        said = recorded_text.reason_text(reason)
        assert not english_runs(said, PROSE_RUN) and "?" not in said, (reason, said)


def test_the_wall_clock_is_said_in_chinese(monkeypatch):
    """provenance["timer"]: do_bench and do_bench_cudagraph are identifiers; "wall clock" is English words."""
    from explorer_ui import recorded_text
    import softmax_bench as bench

    _read_in("zh", monkeypatch)
    said = recorded_text.provenance_value({"timer": bench.WALL_CLOCK.value, "timer_figures": bench.timer_figures(
        bench.WallClockTimer())}, "timer")
    assert not english_runs(said, LABEL_RUN) and "time.perf_counter" in said, said
