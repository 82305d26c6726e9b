"""The "Your kernel" page's pieces: the words for the library's codes, the per-GPU table, the what-if, the
assembly with its source lines, the measurement. softmax_core.authoring computes; this module only words
and lays out what it returns."""
from __future__ import annotations

import pandas as pd
import streamlit as st

from softmax_core.authoring import inspect as ki, measure, ptxlines
from softmax_core.authoring.worker import SOURCE_NAME

from .i18n import t

ASM_PREVIEW_LINES = 600


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
             "kernel_not_found": t("yk_refused_kernel_not_found")}
    figures = f" ({refusal.value:,} > {refusal.limit:,})" if refusal.value is not None else ""
    return t("yk_refused", line=refusal.line, rule=words.get(refusal.code, refusal.code),
             detail=(refusal.detail or "") + figures)


def hint_text(code: str) -> str:
    words = {"arange_power_of_two": t("yk_hint_arange"), "missing_constexpr": t("yk_hint_constexpr"),
             "tensor_too_large": t("yk_hint_too_large"), "dot_shape": t("yk_hint_dot"),
             "shape_mismatch": t("yk_hint_shape"), "undefined_name": t("yk_hint_undefined"),
             "type_mismatch": t("yk_hint_type"), "shared_memory": t("yk_hint_shared"),
             "unsupported_python": t("yk_hint_unsupported"), "argument_missing": t("yk_hint_argument"),
             "time_limit": t("yk_hint_time"), "memory_limit": t("yk_hint_memory"), "crashed": t("yk_hint_crashed"),
             "none": t("yk_hint_none")}
    return words.get(code, code)


def limiter_text(limiter: str | None) -> str:
    words = {"registers": t("yk_lim_registers"), "shared memory": t("yk_lim_shared"),
             "warp slots": t("yk_lim_warps"), "block slots": t("yk_lim_blocks"), "rows": t("yk_lim_rows")}
    return words.get(limiter, "—") if limiter else "—"


def _seconds(value: float | None) -> str:
    return "—" if value is None else f"{value * 1e6:,.1f} µs"


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
        t("yk_col_limiter"): [limiter_text(r.occupancy.limiter if r.occupancy else None) for r in rows],
        t("yk_col_memory_floor"): [_seconds(r.floors.memory_seconds) for r in rows],
        t("yk_col_compute_floor"): [_seconds(r.floors.compute_seconds) for r in rows],
    })
    st.dataframe(frame, hide_index=True, width="stretch")
    for r in rows:
        if r.variant.failure:
            f = r.variant.failure
            where = t("yk_error_line", line=f.line) if f.line else t("yk_error_no_line")
            st.error(t("yk_error", gpu=r.gpu.name, where=where, hint=hint_text(f.hint)))
            if f.message:
                st.code(f.message, language="text")
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
    st.dataframe(frame.rename_axis(t("yk_what_if_axis")), width="stretch")


def assembly(row: ki.Inspection, source: str) -> None:
    """The PTX (AMDGCN on AMD) with a source-line picker that marks that line's instructions; SASS beside."""
    asm = row.variant.resources.asm
    kind = "ptx" if "ptx" in asm else "amdgcn"
    text = asm.get(kind, "")
    links = ptxlines.link_lines(text, SOURCE_NAME)
    lines = source.splitlines()
    linked = sorted(links.source_to_asm)
    if not linked:
        st.code("\n".join(text.splitlines()[:ASM_PREVIEW_LINES]), language="text")
        return
    chosen = st.selectbox(t("yk_asm_line"), linked, key=f"yk_asm_line_{row.gpu.key}_{row.variant.config}",
                          format_func=lambda n: f"{n}: {lines[n - 1].strip()[:70] if n <= len(lines) else ''}")
    numbers = links.instructions_of(chosen)
    asm_lines = text.splitlines()
    st.caption(t("yk_asm_count", n=len(numbers), kind=kind.upper(), line=chosen))
    st.code("\n".join(f"{n:5d}  {asm_lines[n - 1]}" for n in numbers[:ASM_PREVIEW_LINES]), language="text")
    with st.expander(t("yk_asm_all", kind=kind.upper())):
        st.code("\n".join(asm_lines[:ASM_PREVIEW_LINES]), language="text")
    if "sass" in asm:
        with st.expander(t("yk_asm_sass")):
            st.code("\n".join(asm["sass"].splitlines()[:ASM_PREVIEW_LINES]), language="text")


def measurement(m: measure.Measurement) -> None:
    if not m.ok:
        st.error(t("yk_measure_failed", code=m.code, detail=m.detail[-500:]))
        return
    low, mid, high = m.achieved_gbps
    c_low, c_mid, c_high = m.copy_gbps
    st.metric(t("yk_measure_gbps"), f"{mid:,.0f} GB/s", help=t("yk_measure_spread", lo=low, hi=high))
    st.progress(min(m.fraction_of_copy or 0.0, 1.0),
                text=t("yk_measure_vs_copy", share=(m.fraction_of_copy or 0) * 100, copy=c_mid, lo=c_low, hi=c_high))
    if m.achieved_tflops:
        st.metric(t("yk_measure_tflops"), f"{m.achieved_tflops[1]:,.1f}")
