"""The "Your kernel" page's pieces: the words for the library's codes, the per-GPU table, the what-if, the
assembly with its source lines, the measurement. kernel_inspector computes; this module only words
and lays out what it returns."""
from __future__ import annotations

import re
import zlib
from dataclasses import dataclass, field

import pandas as pd
import streamlit as st

from kernel_inspector import argspec, inspect as ki, interpret, measure, ptxlines
from kernel_inspector.worker import SOURCE_NAME

from . import fmt
from .i18n import limits_said, say, t

ASM_PREVIEW_LINES = 600
ASM_PANEL_HEIGHT = 420          # px: a long listing scrolls inside its panel instead of pushing the page down
# The source and argument boxes read as code: fixed-width, lines not wrapped (indentation is the syntax).
CODE_BOX_KEYS = ("yk_source", "yk_args", "yk_sizes")
CODE_BOX_CSS = ("font-family:monospace", "font-size:0.85rem", "white-space:pre", "overflow-wrap:normal",
                "overflow-x:auto", "tab-size:4")


# -- the boxes as typed: every line read, or the first one that cannot be, named -----------------------------
BOXES = ("args", "sizes", "grid")
BOX_PROBLEMS = ("no_equals", "bad_name", "unknown_type", "bad_value", "unknown_argument", "duplicate_argument",
                "missing_value", "size_no_equals", "size_bad_shape", "size_unknown", "size_not_pointer",
                "size_duplicate", "grid_bad", "grid_too_many_dims")
MAX_GRID_DIMS = 3          # a Triton grid has at most three axes
MISSING_VALUE_EXAMPLE = 1024   # the value a missing constexpr's suggested line gives it (any power of two would do)


@dataclass(frozen=True)
class BoxProblem:
    """What is wrong in one of the page's boxes: which box, which line (1-based; 0 for the grid's one line),
    the line as typed, the name or value at fault, and the kernel's parameters where a name is unknown."""

    box: str                       # one of BOXES
    code: str                      # one of BOX_PROBLEMS
    line: int
    typed: str
    detail: str = ""
    known: tuple[str, ...] = ()    # the names this kernel does have (a name it lacks)
    first_line: int = 0            # where the name was given first (a name given twice)


class BoxError(ValueError):
    def __init__(self, problem: BoxProblem):
        super().__init__(f"{problem.box} line {problem.line}: {problem.code} ({problem.detail})")
        self.problem = problem


@dataclass(frozen=True)
class Boxes:
    """The Arguments, Sizes and Grid boxes, read: the specs laid over the kernel's own, each tensor's shape,
    the grid and the bytes the sized tensors hold (None: no sizes given)."""

    specs: tuple
    sizes: dict = field(default_factory=dict)
    grid: tuple = (1,)
    moved: int | None = None


def _lines(text: str):
    return [(i, line.strip()) for i, line in enumerate(text.splitlines(), 1) if line.strip()]


def read_boxes(prefilled: tuple, args_text: str, sizes_text: str, grid_text: str) -> Boxes:
    """Every line of the three boxes checked against the kernel chosen (its prefilled specs): raises BoxError
    for the first line that cannot be used: malformed, naming no parameter of this kernel (a line left from
    another kernel), given twice, or a constexpr left without a value."""
    params = tuple(s.name for s in prefilled)
    given, where = [], {}
    for number, line in _lines(args_text):
        try:
            spec = argspec.parse_arg(line)
        except argspec.ArgSpecError as err:
            raise BoxError(BoxProblem("args", err.code, number, line, err.text)) from None
        if spec.name not in params:
            raise BoxError(BoxProblem("args", "unknown_argument", number, line, spec.name, params))
        if spec.name in where:
            raise BoxError(BoxProblem("args", "duplicate_argument", number, line, spec.name,
                                      first_line=where[spec.name]))
        where[spec.name] = number
        given.append(spec)
    specs = argspec.merge(prefilled, given)
    for spec in specs:
        if spec.kind == "constexpr" and spec.needs_value and spec.name not in where:
            raise BoxError(BoxProblem("args", "missing_value", 0, "", spec.name))
    by_name = {s.name: s for s in specs}
    sizes, sized_at = {}, {}
    for number, line in _lines(sizes_text):
        name, equals, value = (part.strip() for part in line.partition("="))
        if not equals:
            raise BoxError(BoxProblem("sizes", "size_no_equals", number, line, line))
        if name not in by_name:
            raise BoxError(BoxProblem("sizes", "size_unknown", number, line, name,
                                      tuple(s.name for s in specs if s.kind == "pointer")))
        if by_name[name].kind != "pointer":
            raise BoxError(BoxProblem("sizes", "size_not_pointer", number, line, name))
        if name in sized_at:
            raise BoxError(BoxProblem("sizes", "size_duplicate", number, line, name, first_line=sized_at[name]))
        try:
            sizes[name] = ki.parse_shape(value)
        except ValueError:
            raise BoxError(BoxProblem("sizes", "size_bad_shape", number, line, value)) from None
        sized_at[name] = number
    grid = (1,)
    if grid_text.strip():
        try:
            grid = ki.parse_shape(grid_text.strip())
        except ValueError:
            raise BoxError(BoxProblem("grid", "grid_bad", 0, grid_text.strip(), grid_text.strip())) from None
        if len(grid) > MAX_GRID_DIMS:
            raise BoxError(BoxProblem("grid", "grid_too_many_dims", 0, grid_text.strip(), str(len(grid))))
    return Boxes(specs, sizes, grid, ki.bytes_moved(specs, sizes))


def own_args_text(prefilled: tuple) -> str:
    """The Arguments box for the kernel chosen: one line per argument its own source settles (a constexpr
    with no default is left out, so the page asks for it by name)."""
    return "\n".join(spec.text() for spec in prefilled if not (spec.needs_value or spec.tuned))


def reset_args(prefilled: tuple) -> None:
    st.session_state["yk_args"] = own_args_text(prefilled)


def box_problem_text(problem: BoxProblem, tr=t) -> str:
    """The problem in the page's language: the box and line, the line as typed (as code, so that no name
    loses its underscores to markdown), and what is wrong with it."""
    where = (tr("yk_box_line", box=tr(f"yk_box_{problem.box}"), line=problem.line) if problem.line
             else tr("yk_box_whole", box=tr(f"yk_box_{problem.box}")))
    what = tr(f"yk_problem_{problem.code}", name=code_span(problem.detail), first=problem.first_line,
              known=", ".join(code_span(k) for k in problem.known) or "—",
              line=code_span(f"{problem.detail}={MISSING_VALUE_EXAMPLE}"))
    if problem.typed:
        return tr("yk_box_problem", where=where, typed=code_span(problem.typed), what=what)
    return tr("yk_box_problem_untyped", where=where, what=what)


def code_span(text: str) -> str:
    """`text` as inline code in markdown, whatever backticks it holds."""
    text = str(text)
    fence = "`" * (max((len(m) for m in re.findall(r"`+", text)), default=0) + 1)
    pad = " " if text.startswith("`") or text.endswith("`") else ""
    return f"{fence}{pad}{text}{pad}{fence}"


def code_boxes_style() -> None:
    boxes = ",".join(f".st-key-{key} textarea" for key in CODE_BOX_KEYS)
    # one rule per property, written tight: CSS, not words of a sentence (the 中文 page tests look for those)
    rules = "".join(f"{boxes}{{{rule}}}" for rule in CODE_BOX_CSS)
    st.html(f"<style>{rules}</style>")


def refusal_text(refusal) -> str:
    """A gate refusal, worded: which rule, on which line, about what."""
    words = {"too_large": t("yk_refused_too_large"), "syntax_error": t("yk_refused_syntax"),
             "too_complex": t("yk_refused_too_complex"), "import_not_allowed": t("yk_refused_import"),
             "statement_not_allowed": t("yk_refused_statement"), "decorator_not_allowed": t("yk_refused_decorator"),
             "function_not_jit": t("yk_refused_not_jit"), "default_not_constant": t("yk_refused_default"),
             "annotation_not_allowed": t("yk_refused_annotation"), "dunder_name": t("yk_refused_dunder"),
             "private_attribute": t("yk_refused_private"), "forbidden_name": t("yk_refused_forbidden"),
             "unknown_name": t("yk_refused_unknown"), "module_as_value": t("yk_refused_module"),
             "attribute_not_allowed": t("yk_refused_attribute"), "expression_not_allowed": t("yk_refused_expression"),
             "constant_not_allowed": t("yk_refused_constant"), "no_kernel": t("yk_refused_no_kernel"),
             "kernel_not_found": t("yk_refused_kernel_not_found"), "name_rebound": t("yk_refused_name_rebound")}
    figures = f" ({refusal.value:,} > {refusal.limit:,})" if refusal.value is not None else ""
    detail = (code_span(refusal.detail) if refusal.detail else "") + figures
    return t("yk_refused", line=refusal.line, rule=words.get(refusal.code, refusal.code), detail=detail or "—")


def hint_text(code: str) -> str:
    words = {"arange_power_of_two": t("yk_hint_arange"), "missing_constexpr": t("yk_hint_constexpr"),
             "tensor_too_large": t("yk_hint_too_large"), "dot_shape": t("yk_hint_dot"),
             "shape_mismatch": t("yk_hint_shape"), "undefined_name": t("yk_hint_undefined"),
             "type_mismatch": t("yk_hint_type"), "shared_memory": t("yk_hint_shared"),
             "unsupported_python": t("yk_hint_unsupported"), "argument_missing": t("yk_hint_argument"),
             "time_limit": t("yk_hint_time"), "memory_limit": t("yk_hint_memory"), "crashed": t("yk_hint_crashed"),
             "output_limit": t("yk_hint_output"),
             "none": t("yk_hint_none")}
    return words.get(code, code)


def specialisation_caption(specialisation: argspec.Specialisation | None) -> None:
    """Which values the compile assumed, as Triton's JIT specialises a launch with them."""
    if specialisation is None:
        return
    none = t("yk_spec_none")
    st.caption(t("yk_specialisation", ones=", ".join(specialisation.equal_to_one) or none,
                 divisible=", ".join(specialisation.divisible_by_16) or none))
    if specialisation.no_value:
        st.caption(t("yk_spec_no_value", names=", ".join(specialisation.no_value)))


def results_table(rows: list[ki.Inspection]) -> None:
    frame = pd.DataFrame({
        t("yk_col_gpu"): [r.gpu.name for r in rows],
        t("yk_col_config"): ["—" if r.variant.config is None else str(r.variant.config) for r in rows],
        t("yk_col_warps"): [r.variant.num_warps for r in rows],
        t("yk_col_registers"): [r.variant.resources.n_regs if r.variant.resources else None for r in rows],
        t("yk_col_spills"): [r.variant.resources.n_spills if r.variant.resources else None for r in rows],
        t("yk_col_shared"): [r.variant.resources.shared_bytes if r.variant.resources else None for r in rows],
        t("yk_col_per_sm"): [r.occupancy.programs_per_sm if r.occupancy else None for r in rows],
        t("yk_col_chapter"): [r.occupancy.chapter_programs_per_sm if r.occupancy else None for r in rows],
        t("yk_col_limiter"): [limits_said(r.occupancy.limiters) if r.occupancy else "—" for r in rows],
        t("yk_col_memory_floor"): [fmt.duration(r.floors.memory_seconds) for r in rows],
        t("yk_col_compute_floor"): [fmt.duration(r.floors.compute_seconds) for r in rows],
    })
    # A static table: a projector shows every header whole (wrapped), and a class has a handful of rows.
    st.table(frame.set_index(t("yk_col_gpu")))
    for r in rows:
        if r.variant.failure:
            f = r.variant.failure
            where = t("yk_error_line", line=f.line) if f.line else t("yk_error_no_line")
            st.error(t("yk_error", gpu=r.gpu.name, where=where, hint=hint_text(f.hint)))
            if f.message:
                st.code(f.message, language="text", wrap_lines=True)
        elif r.exceeds_shared:
            st.warning(t("yk_exceeds_shared", gpu=r.gpu.name, shared=r.variant.resources.shared_bytes,
                         limit=r.gpu.max_shared_mem))
    toolchains = sorted({r.variant.resources.toolchain for r in rows if r.variant.resources})
    if toolchains:
        st.caption(t("yk_toolchain", toolchains="; ".join(toolchains)))


def what_if_table(row: ki.Inspection) -> None:
    cells = ki.what_if(row.gpu, row.variant.resources.shared_bytes)
    registers = sorted({r for r, _ in cells})
    warps = sorted({w for _, w in cells})
    frame = pd.DataFrame([[cells.get((r, w), (None,))[0] for w in warps] for r in registers],
                         index=[str(r) for r in registers], columns=[str(w) for w in warps])
    st.caption(t("yk_what_if_caption", gpu=row.gpu.name, regs=row.variant.resources.n_regs,
                 warps=row.variant.num_warps))
    st.table(frame.rename_axis(t("yk_what_if_axis")))


def _tight(text: str) -> str:
    """A SASS line without nvdisasm's column padding: `/*0290*/  IMAD ...` fits a half-width panel."""
    return re.sub(r"(\*/)\s+", r"\1  ", text.strip())


def _line_listing(kind: str, asm_lines: list[str], numbers: tuple[int, ...], line: int) -> None:
    st.caption(t("yk_asm_count", n=len(numbers), kind=kind, line=line))
    shown = (_tight(asm_lines[n - 1]) if kind == "SASS" else asm_lines[n - 1] for n in numbers[:ASM_PREVIEW_LINES])
    st.code("\n".join(f"{n:5d}  {text}" for n, text in zip(numbers, shown)), language="text",
            height=ASM_PANEL_HEIGHT if len(numbers) > 20 else "content", wrap_lines=True)


def assembly(row: ki.Inspection, source: str) -> None:
    """A source-line picker, and that line's instructions: in the PTX and (from nvdisasm -g) the SASS on
    NVIDIA, in the AMDGCN on AMD; the whole listings below."""
    asm = row.variant.resources.asm
    kind = "ptx" if "ptx" in asm else "amdgcn"
    text = asm.get(kind, "")
    links = ptxlines.link_lines(text, SOURCE_NAME)
    lines = source.splitlines()
    linked = sorted(n for n in links.source_to_asm if n <= len(lines))
    if not linked:
        st.code("\n".join(text.splitlines()[:ASM_PREVIEW_LINES]), language="text", wrap_lines=True)
        return
    busiest = max(linked, key=lambda n: len(links.instructions_of(n)))   # the line most instructions come from
    chosen = st.selectbox(t("yk_asm_line"), linked, index=linked.index(busiest),
                          # a new source starts a new picker: its lines are other lines
                          key=f"yk_asm_line_{row.gpu.key}_{row.variant.config}_{zlib.crc32(source.encode()):08x}",
                          format_func=lambda n: f"{n}: {lines[n - 1].strip()[:70] if n <= len(lines) else ''}")
    sass = asm.get("sass", "")
    sass_links = ptxlines.link_sass(sass, SOURCE_NAME)
    asm_lines = text.splitlines()
    for name, found in ((kind.upper(), links), ("SASS", sass_links)):
        if dropped := found.outside(len(lines)):
            st.caption(t("yk_asm_outside", n=dropped, kind=name))
    if sass_links.source_to_asm:            # NVIDIA: the line's PTX and its machine code side by side
        left, right = st.columns(2)
        with left:
            _line_listing(kind.upper(), asm_lines, links.instructions_of(chosen), chosen)
        with right:
            _line_listing("SASS", sass.splitlines(), sass_links.instructions_of(chosen), chosen)
    else:
        _line_listing(kind.upper(), asm_lines, links.instructions_of(chosen), chosen)
        if sass:
            st.caption(t("yk_asm_sass_no_lines"))
    with st.expander(t("yk_asm_all", kind=kind.upper())):
        st.code("\n".join(asm_lines[:ASM_PREVIEW_LINES]), language="text", height=ASM_PANEL_HEIGHT,
                wrap_lines=True)
    if "sass" in asm:
        with st.expander(t("yk_asm_sass")):
            st.code("\n".join(asm["sass"].splitlines()[:ASM_PREVIEW_LINES]), language="text",
                    height=ASM_PANEL_HEIGHT, wrap_lines=True)


def measurement(m: measure.Measurement) -> None:
    """A jailed run on the GPU: what the example's outputs hold against its reference, the bandwidth beside a
    copy's; or why nothing ran (the sandbox does not work here, or cannot reach the GPU)."""
    if m.code == "no_sandbox":
        st.warning(t("yk_measure_no_sandbox"))
        return
    if m.code == "jail_no_gpu":
        st.warning(t("yk_measure_jail_no_gpu", detail=(m.detail.strip().splitlines() or ["-"])[-1][-300:]))
        return
    if not m.ok:
        st.error(t("yk_measure_failed", code=m.code, detail=m.detail[-500:]))
        return
    st.caption(t("yk_measure_jailed"))
    if m.tensors:
        tensor_table(m.tensors)
    low, mid, high = m.achieved_gbps
    c_low, c_mid, c_high = m.copy_gbps
    st.metric(t("yk_measure_gbps"), f"{mid:,.0f} GB/s", help=t("yk_measure_spread", lo=low, hi=high))
    st.progress(min(m.fraction_of_copy or 0.0, 1.0),
                text=t("yk_measure_vs_copy", share=(m.fraction_of_copy or 0) * 100, copy=c_mid, lo=c_low, hi=c_high))
    if m.achieved_tflops:
        st.metric(t("yk_measure_tflops"), f"{m.achieved_tflops[1]:,.1f}")


def _figure(value: float | None) -> str:
    return "—" if value is None else f"{value:.4g}"


def reference_text(summary: interpret.TensorSummary) -> str:
    if summary.matches_reference is None:
        return "—"
    figures = {"error": summary.reference_error, "tolerance": summary.reference_tolerance}
    return t("yk_ref_match", **figures) if summary.matches_reference else t("yk_ref_differs", **figures)


def interpreter_run(run: interpret.InterpreterRun) -> None:
    """One launch in the interpreter: its wall time (the CPU's, said so) and what each tensor holds after it."""
    if not run.ok:
        st.error(t("yk_interpret_failed", code=run.code, detail=run.detail[-500:]))
        return
    st.metric(t("yk_interpret_wall"), f"{run.wall_seconds * 1e3:,.0f} ms", help=t("yk_interpret_not_gpu"))
    st.caption(t("yk_interpret_not_gpu"))
    tensor_table(run.tensors)


def tensor_table(tensors: tuple[interpret.TensorSummary, ...]) -> None:
    """What each tensor holds after one launch (in the interpreter or on the GPU), with the reference check."""
    frame = pd.DataFrame({
        t("yk_tcol_name"): [s.name for s in tensors],
        t("yk_tcol_shape"): [" × ".join(map(str, s.shape)) for s in tensors],
        t("yk_tcol_dtype"): [s.dtype for s in tensors],
        t("yk_tcol_written"): [t("yk_yes") if s.written else t("yk_no") for s in tensors],
        t("yk_tcol_nan_inf"): [f"{s.nan:,} / {s.inf:,}" for s in tensors],
        t("yk_tcol_min"): [_figure(s.minimum) for s in tensors],
        t("yk_tcol_max"): [_figure(s.maximum) for s in tensors],
        t("yk_tcol_mean"): [_figure(s.mean) for s in tensors],
        t("yk_tcol_reference"): [reference_text(s) for s in tensors],
    })
    st.table(frame.set_index(t("yk_tcol_name")))


def compile_allowed() -> bool:
    """Say, in the page's words, what pasted code is compiled in on this server (kernel_inspector/policy.py),
    and whether compiling is on at all."""
    from kernel_inspector import policy

    decided = policy.compile_policy(st.get_option("server.address"))
    if decided.code == "sandboxed":
        st.caption(t("yk_sandbox_jail"))
    elif decided.code == "unsandboxed_local":
        st.caption(t("yk_sandbox_none_local"))
    elif decided.code == "unsandboxed_allowed":
        st.warning(t("yk_sandbox_none_allowed", env=policy.ALLOW_UNSANDBOXED_ENV))
    else:
        st.warning(t("yk_sandbox_off", env=policy.ALLOW_UNSANDBOXED_ENV))
    return decided.allowed
