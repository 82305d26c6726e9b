"""Source code beside the pictures, with the line the picture is about highlighted.

The code is never pasted into the app: it is read from softmax_core with `inspect`, so what the page
shows is what runs. Lines are found by short anchors (a fragment of the line), so a comment added to
the kernel does not move a highlight; a test checks that every anchor still finds its line.
"""
from __future__ import annotations

import html
import inspect
import textwrap
import tomllib
from functools import lru_cache
from pathlib import Path

import streamlit as st
from pygments import highlight
from pygments.formatters import HtmlFormatter
from pygments.lexers import PythonLexer

from softmax_core.kernels import tutorial as tutorial_kernel
from softmax_core.launch import api as launchers

from .i18n import language

# Each English comment line of the shown code -> its Chinese line (the kernels' comments stay English in the
# library; the panels show them in the reader's language).
COMMENTS_ZH = Path(__file__).resolve().parent / "code_comments.zh.toml"

# anchor name -> a fragment that appears on exactly the line it names (the first match wins)
KERNEL_ANCHORS = {
    "signature": "def tutorial_softmax_kernel(",
    "program_id": "row_start = tl.program_id(0)",
    "num_programs": "row_step = tl.num_programs(0)",
    "range": "in tl.range(",
    "row_ptr": "row_start_ptr = input_ptr",
    "offsets": "col_offsets = tl.arange(0, BLOCK_SIZE)",
    "mask": "mask = col_offsets < n_cols",
    "load": "tl.load(",
    "max": "tl.max(",
    "subtract": "row_minus_max = row - row_max",
    "exp": "tl.exp(",
    "sum": "tl.sum(",
    "divide": "numerator / denominator",
    "out_ptr": "output_row_start_ptr = output_ptr",
    "store": "softmax_output, mask=mask)",
    "store_unmasked": "softmax_output)",
    "block_size": "BLOCK_SIZE: tl.constexpr",
    "num_stages": "num_stages: tl.constexpr",
    "pad_value": "PAD_VALUE: tl.constexpr",
    "store_masked": "STORE_MASKED: tl.constexpr",
}


def without_trace_block(lines: list[str]) -> list[str]:
    """Drop the `if TRACE:` block: it only feeds this app, and it compiles away when TRACE is False."""
    out, skipping, indent = [], False, 0
    for line in lines:
        stripped = line.strip()
        current = len(line) - len(line.lstrip())
        if skipping:
            if stripped and current <= indent:
                skipping = False
            else:
                continue
        if stripped == "if TRACE:":
            skipping, indent = True, current
            continue
        out.append(line)
    while out and not out[-1].strip():
        out.pop()
    return out


@lru_cache(maxsize=1)
def kernel_source() -> tuple[str, ...]:
    fn = tutorial_kernel.tutorial_softmax_kernel
    src = textwrap.dedent(inspect.getsource(getattr(fn, "fn", fn)))
    return tuple(without_trace_block(src.splitlines()))


@lru_cache(maxsize=1)
def naive_source() -> tuple[str, ...]:
    return tuple(textwrap.dedent(inspect.getsource(launchers.naive_softmax)).splitlines())


def find_line(lines: tuple[str, ...], fragment: str) -> int | None:
    """1-based number of the first line containing `fragment` (for stores: the unmasked one must not
    match the masked one, so a fragment ending in ')' matches only lines that end with it)."""
    for number, line in enumerate(lines, start=1):
        code = line.split("#")[0].rstrip()
        if fragment.endswith(")") and not fragment.startswith("def "):
            if code.endswith(fragment):
                return number
        elif fragment in code:
            return number
    return None


def kernel_lines(*anchors: str) -> list[int]:
    lines = kernel_source()
    found = (find_line(lines, KERNEL_ANCHORS[a]) for a in anchors)
    return [n for n in found if n is not None]


@lru_cache(maxsize=1)
def comment_table() -> dict[str, str]:
    """English comment line (the text after `# `) -> the same line in Chinese."""
    return tomllib.loads(COMMENTS_ZH.read_text(encoding="utf-8"))


def comment_start(line: str) -> int | None:
    """Index of the `#` that opens `line`'s comment (one inside a string literal does not), or None."""
    quote, i = None, 0
    while i < len(line):
        ch = line[i]
        if quote and ch == "\\":
            i += 1                      # an escaped character, even a quote
        elif quote and ch == quote:
            quote = None
        elif not quote and ch in "'\"":
            quote = ch
        elif not quote and ch == "#":
            return i
        i += 1
    return None


def comment_of(line: str) -> str | None:
    """`line`'s comment text without the `#` and the spaces around it, or None."""
    start = comment_start(line)
    return None if start is None else line[start + 1:].strip() or None


def docstring_lines(lines: tuple[str, ...]) -> dict[int, str]:
    """Index -> text of each line inside a triple-quoted docstring, without its quotes and indent."""
    out, inside = {}, False
    for i, line in enumerate(lines):
        quotes = line.count('"""')
        if inside or quotes:
            text = line.strip().replace('"""', "").strip()
            if text:
                out[i] = text
        if quotes == 1:
            inside = not inside
    return out


def prose_of(lines: tuple[str, ...]) -> list[str]:
    """The English a reader reads in `lines`: each comment and each docstring line (the table's keys)."""
    docs = docstring_lines(lines)
    return [docs[i] if i in docs else comment_of(line) for i, line in enumerate(lines)
            if i in docs or comment_of(line)]


def translate_comments(lines: tuple[str, ...], lang: str) -> tuple[str, ...]:
    """`lines` with each comment and docstring line in `lang` (zh: from code_comments.zh.toml; a line with no
    entry stays as it is, and tests/app/test_chinese_complete.py fails on it). Line for line, so highlights keep their
    numbers; the code itself is untouched."""
    if lang != "zh":
        return lines
    table, docs, out = comment_table(), docstring_lines(lines), []
    for i, line in enumerate(lines):
        if i in docs:
            text = docs[i]
            out.append(line.replace(text, table[text], 1) if text in table else line)
            continue
        start, text = comment_start(line), comment_of(line)
        out.append(f"{line[:start]}# {table[text]}" if text in table else line)
    return tuple(out)


def render_code(lines: tuple[str, ...], highlighted: list[int], caption: str | None = None,
                max_height: int | None = None, context: int | None = None) -> None:
    """Syntax-coloured code with the given lines highlighted (st.code cannot highlight a line), its comments in
    the reader's language. With `context`, only the highlighted lines and that many lines around them are shown."""
    st.html(code_html(translate_comments(tuple(lines), language()), tuple(highlighted), caption, max_height, context))


# An animation redraws its code panel every frame with one of a handful of highlights; colouring the code
# (Pygments) took about a fifth of a frame's time, so each panel's HTML is made once.
@lru_cache(maxsize=256)
def _indent(line: str) -> int:
    return len(line) - len(line.lstrip())


def _is_comment(line: str) -> bool:
    return line.lstrip().startswith("#")


BLOCK_CONTINUATIONS = ("else:", "elif ", "except", "finally:")


def excerpt_span(lines: tuple[str, ...], first: int, last: int) -> tuple[int, int]:
    """Lines first…last (1-based) widened to whole statements: a comment cut at the top is shown from its
    first line, a block header at the bottom (`else:`) with its body, and an `if` whose header is shown with
    its `elif` / `else` branches."""
    while first > 1 and _is_comment(lines[first - 1]) and _is_comment(lines[first - 2]):
        first -= 1
    while True:
        header = lines[last - 1].split("#")[0].rstrip()
        following = lines[last] if last < len(lines) else None
        if header.endswith(":") and following is not None and _indent(following) > _indent(lines[last - 1]):
            body_indent = _indent(following)            # a header's body, up to where it dedents
            while last < len(lines) and (not lines[last].strip() or _indent(lines[last]) >= body_indent):
                last += 1
            continue
        if following is not None and following.strip().startswith(BLOCK_CONTINUATIONS) and any(
                _indent(lines[n]) == _indent(following) and lines[n].lstrip().startswith(("if ", "elif ", "try:"))
                for n in range(first - 1, last)):
            last += 1                                   # the next branch of an `if` (or `try`) shown above
            continue
        while last > first and not lines[last - 1].strip():
            last -= 1
        return first, last


# A code line longer than the panel wraps, hanging under its own indentation plus HANG more columns, so a
# continuation never starts at column 0 under the block it belongs to, and no panel scrolls sideways (the kernel's
# comments are written for an editor's width; the pages show its real source, so the wrapping is the panel's).
HANG = 4
LINE_STYLE = "white-space:pre-wrap;overflow-wrap:anywhere;margin:0"
HIGHLIGHT = "#ffe58a"


def code_html(lines: tuple[str, ...], highlighted: tuple[int, ...], caption: str | None, max_height: int | None,
               context: int | None) -> str:
    highlighted = list(highlighted)
    first = 1
    if context is not None and highlighted:
        first, last = excerpt_span(lines, max(1, min(highlighted) - context),
                                   min(len(lines), max(highlighted) + context))
        lines = lines[first - 1: last]
        highlighted = [n - first + 1 for n in highlighted]
    # Pygments closes its spans at every line end, so each line's HTML stands alone
    coloured = highlight("\n".join(lines), PythonLexer(), HtmlFormatter(noclasses=True, nowrap=True, style="default"))
    shown = coloured.split("\n")
    width = len(str(first + len(lines) - 1))
    rows = []
    for n, (line, text) in enumerate(zip(lines, shown), start=1):
        hang = _indent(line) + HANG
        background = f"background:{HIGHLIGHT};" if n in highlighted else ""
        number = f'<span style="color:#999;user-select:none;flex:none;width:{width + 1}ch">{first + n - 1}</span>'
        rows.append(f'<div style="display:flex;{background}">{number}<div style="{LINE_STYLE};flex:1;min-width:0;'
                    f'padding-left:{hang}ch;text-indent:-{hang}ch">{text or " "}</div></div>')
    head = f'<div style="font-size:0.8rem;color:#555;margin-bottom:0.2rem">{html.escape(caption)}</div>' \
        if caption else ""
    limit = f"max-height:{max_height}px;overflow-y:auto;" if max_height else ""
    return (f'{head}<pre class="code-panel" style="white-space:normal;font-family:monospace;font-size:0.74rem;'
            f'line-height:1.3;overflow-x:hidden;{limit}border:1px solid #e3e6ee;border-radius:6px;padding:0.3rem;'
            f'margin:0;background:#fff">\n{chr(10).join(rows)}\n</pre>')


def constexpr_text(value) -> str:
    """A constexpr value as Python source: float("-inf"), 0.0, True."""
    if isinstance(value, float) and value in (float("inf"), float("-inf")):
        return 'float("-inf")' if value < 0 else 'float("inf")'
    return repr(value)


@lru_cache(maxsize=16)
def kernel_source_as_launched(flags: tuple[tuple[str, object], ...]) -> tuple[str, ...]:
    """The kernel's source as one launch ran it: each constexpr parameter in `flags` ((name, value) pairs,
    e.g. softmax_teaching.tutorial_trace.launch_flags) shows the value that launch passed instead of its default."""
    lines = list(kernel_source())
    for name, value in flags:
        number = find_line(tuple(lines), f"{name}: tl.constexpr")
        if number is None:
            raise LookupError(f"the kernel has no constexpr parameter {name}")
        line = lines[number - 1]
        indent = line[: len(line) - len(line.lstrip())]
        lines[number - 1] = f"{indent}{name}: tl.constexpr = {constexpr_text(value)},"
    return tuple(lines)


def kernel_panel(*anchors: str, caption: str | None = None, max_height: int | None = None,
                 context: int | None = None, flags: dict | None = None) -> None:
    """The tutorial kernel with `anchors`' lines highlighted; with `flags` (constexpr name -> value), as the
    launch that passed them ran it."""
    lines = kernel_source_as_launched(tuple(flags.items())) if flags else kernel_source()
    render_code(lines, [n for n in (find_line(lines, KERNEL_ANCHORS[a]) for a in anchors) if n is not None],
                caption, max_height, context)


def naive_panel(fragment: str | None, caption: str | None = None) -> None:
    lines = naive_source()
    number = None
    if fragment:  # memory.py names the last step `out = ...`; the function returns the expression directly
        number = find_line(lines, fragment) or find_line(lines, fragment.split(" = ", 1)[-1])
    render_code(lines, [number] if number else [], caption)


@lru_cache(maxsize=16)
def source_lines(obj) -> tuple[str, ...]:
    return tuple(textwrap.dedent(inspect.getsource(obj)).splitlines())


def shown_functions() -> dict[str, object]:
    """The functions a page may show in a source panel, by name: the chapter's own code and the library's
    model of it, never the app's plumbing. Their comments (with the kernels') are the ones
    code_comments.zh.toml translates and tests/app/test_chinese_complete.py checks, so a better comment
    anywhere else never needs a Chinese line."""
    from softmax_core.hardware.occupancy import chapter_occupancy
    from softmax_teaching.chapter_notes import chapter_unit_test, warmup_resources

    return {"chapter_occupancy": chapter_occupancy, "warmup_resources": warmup_resources,
            "chapter_unit_test": chapter_unit_test}


def source_panel(obj, fragments: tuple[str, ...], caption: str | None = None, max_height: int | None = None) -> None:
    """One of `shown_functions()`'s sources (read with inspect) with the lines containing `fragments`
    highlighted. Any other function is refused: its comments have no Chinese lines."""
    if obj not in shown_functions().values():
        raise ValueError(f"{getattr(obj, '__qualname__', obj)} is not one of the functions pages show")
    lines = source_lines(obj)
    numbers = [n for n in (find_line(lines, f) for f in fragments) if n is not None]
    render_code(lines, numbers, caption, max_height)
