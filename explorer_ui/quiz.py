"""Predict, then reveal: a question the student answers before the page shows the answer.

Every question is built from the page's current settings and the numbers softmax_core computed for them
(the builders below take those objects), never typed in: change N and the question and its answer change.
The student enters a guess, presses Reveal, and gets the real answer with the reason, and how far off the
guess was. A question whose answer changes (new settings) starts unrevealed again.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from .i18n import sentences, t

NUMBER_TOLERANCE = 0.15          # a numeric guess within 15 % of the answer counts as right


@dataclass(frozen=True)
class Question:
    key: str                     # unique on its page: "<page>_<what>"
    prompt: str                  # translated, with the current settings in it
    answer: float | str          # a number, or one of `options`
    explain: str                 # translated: why the answer is what it is, with the figures
    options: tuple[str, ...] = ()        # multiple choice when given (shown translated by `option_label`)
    option_labels: tuple[str, ...] = ()
    unit: str = ""
    digits: int = 0              # how the numeric answer is printed

    @property
    def signature(self) -> str:
        """Changes whenever the answer or the question does: a revealed answer is forgotten then."""
        return f"{self.prompt}|{self.answer}"

    def answer_text(self) -> str:
        if self.options:
            return self.option_labels[self.options.index(self.answer)] if self.option_labels else str(self.answer)
        return f"{self.answer:,.{self.digits}f}{self.unit}"


@dataclass(frozen=True)
class Verdict:
    right: bool
    factor: float | None         # guess / answer for numbers (None for choices, or an answer of 0)


def grade(question: Question, guess) -> Verdict:
    if question.options:
        return Verdict(guess == question.answer, None)
    answer = float(question.answer)
    guess = float(guess)
    if answer == 0:
        return Verdict(abs(guess) < 1e-12, None)
    factor = guess / answer
    return Verdict(abs(factor - 1) <= NUMBER_TOLERANCE, factor)


def verdict_text(question: Question, guess, verdict: Verdict) -> str:
    answer = question.answer_text()
    if question.options:
        labels = dict(zip(question.options, question.option_labels or question.options))
        chosen = labels.get(guess, str(guess))
        if verdict.right:
            return t("predict_choice_right", guess=chosen, answer=answer)
        return t("predict_choice_wrong", guess=chosen, answer=answer)
    shown = f"{float(guess):,.{question.digits}f}{question.unit}"
    if verdict.right:
        return t("predict_number_close", guess=shown, answer=answer, tol=round(NUMBER_TOLERANCE * 100))
    if verdict.factor is None:
        return t("predict_number_off", guess=shown, answer=answer)
    if verdict.factor > 1:
        return t("predict_number_high", guess=shown, answer=answer, factor=f"{verdict.factor:.2g}")
    return t("predict_number_low", guess=shown, answer=answer, factor=f"{1 / verdict.factor:.2g}"
             if verdict.factor > 0 else "∞")


# -- the questions, one builder per page ---------------------------------------------------------------------
def fused_speedup(key: str, traffic, M: int, N: int, dtype: str) -> Question:
    """How many times fewer bytes does the fused kernel move? (softmax_core.traffic's own ratio)"""
    return Question(key, t("predict_speedup_q", M=f"{M:,}", N=f"{N:,}", dtype=dtype), float(traffic.predicted_speedup),
                    t("predict_speedup_explain", naive=f"{traffic.naive_bytes:,}", fused=f"{traffic.fused_bytes:,}",
                      ratio=f"{traffic.predicted_speedup:.3f}", extra=f"{traffic.predicted_speedup - 4:.3f}"),
                    unit="×", digits=3)


def _lane_kind(value: float) -> str:
    if np.isnan(value):
        return "nan"
    if np.isneginf(value):
        return "neg_inf"
    if value == 0:
        return "zero"
    if value == 1:
        return "one"
    return "other"


LANE_KINDS = ("zero", "one", "neg_inf", "nan", "other")


def padded_lane_after_exp(trace, row: int) -> Question | None:
    """What does the first padded lane of `row` hold after exp? From the kernel's own trace; None when the
    row needs no padding (N is a power of two)."""
    N, B = trace.n_cols, trace.block_size
    if N >= B:
        return None
    loaded, minus, exp = (float(trace.stage(row, s)[N]) for s in ("loaded", "minus_max", "exp"))

    def show(v: float) -> str:
        return "NaN" if math.isnan(v) else ("−inf" if v == -math.inf else f"{v:.4g}")

    return Question("padding_lane", t("predict_lane_q", lane=N, N=N, B=B, row=row), _lane_kind(exp),
                    t("predict_lane_explain", loaded=show(loaded), max=show(float(trace.row_max[row])),
                      minus=show(minus), exp=show(exp)),
                    options=LANE_KINDS, option_labels=tuple(t(f"predict_lane_{k}") for k in LANE_KINDS))


def rows_of_program(key: str, n_rows: int, num_programs: int, program: int = 0) -> Question:
    """How many rows does one persistent program handle? tl.range(pid, n_rows, num_programs) visits them."""
    count = len(range(program, n_rows, num_programs))
    return Question(key, t("predict_rows_q", rows=f"{n_rows:,}", programs=f"{num_programs:,}", program=program),
                    float(count), t("predict_rows_explain", rows=f"{n_rows:,}", programs=f"{num_programs:,}",
                                    program=program, count=count, last=program + (count - 1) * num_programs))


def programs_per_sm(key: str, plan) -> Question:
    """How many programs of the tutorial kernel fit on one SM by the chapter's formula? The answer says what the
    GPU itself runs beside it (the hardware's rules: softmax_core.hardware.occupancy)."""
    gpu = plan.gpu
    shared = (t("predict_occ_no_shared") if plan.sram_occupancy is None else
              t("predict_occ_shared", smem=f"{gpu.max_shared_mem:,}", shared=f"{plan.shared_bytes:,}",
                allow=plan.sram_occupancy))
    hardware = plan.hardware_programs_per_sm
    figures = dict(hardware=hardware, per_sm=plan.programs_per_sm)
    note = (t("predict_occ_hw_same", **figures) if hardware == plan.programs_per_sm else
            t("predict_occ_hw_differs", **figures))
    return Question(key, t("predict_occ_q", gpu=gpu.name, N=f"{plan.n_cols:,}"), float(plan.programs_per_sm),
                    sentences(t("predict_occ_explain", regs=f"{gpu.max_num_regs:,}", n_regs=plan.n_regs,
                      threads=plan.num_warps * gpu.warp_size, reg_allow=plan.reg_occupancy, shared=shared,
                      per_sm=plan.programs_per_sm), note))


def measured_speedup(key: str, measured: dict, predicted: float) -> Question:
    """How much faster was the fused kernel than the naive one, measured? (a recorded benchmark run)"""
    return Question(key, t("predict_bench_q", gpu=measured["gpu"], M=f"{measured['M']:,}", N=f"{measured['N']:,}"),
                    float(measured["speedup"]),
                    t("predict_bench_explain", speedup=f"{measured['speedup']:.2f}", predicted=f"{predicted:.2f}",
                      lo=f"{measured['lo']:.2f}", hi=f"{measured['hi']:.2f}",
                      date=measured["date"]), unit="×", digits=2)


def shared_for_stages(key: str, costs, n_cols: int, gpu_name: str) -> Question:
    """How much shared memory does the most-staged compile reserve per program? (real compiles)"""
    top, one = costs[-1], costs[0]
    return Question(key, t("predict_stages_q", stages=top.num_stages, N=f"{n_cols:,}", gpu=gpu_name),
                    float(top.shared_bytes),
                    t("predict_stages_explain", stages=top.num_stages, row=f"{top.row_bytes:,}",
                      base=f"{one.shared_bytes:,}", total=f"{top.shared_bytes:,}", extra=top.num_stages - 1),
                    unit=" B")


def bandwidth_floor(key: str, gpu, M: int, N: int, moved_bytes: int) -> Question | None:
    """How long at least does one read and one write of the matrix take at the GPU's bandwidth?"""
    if not gpu.memory_bandwidth_gbps:
        return None
    us = moved_bytes / (gpu.memory_bandwidth_gbps * 1e9) * 1e6
    return Question(key, t("predict_floor_q", gpu=gpu.name, M=f"{M:,}", N=f"{N:,}"), us,
                    t("predict_floor_explain", bytes=f"{moved_bytes:,}", bw=f"{gpu.memory_bandwidth_gbps:,.0f}",
                      us=f"{us:.1f}"), unit=" µs", digits=1)


def tiles_in_row(key: str, n_cols: int, tile: int, n_tiles: int) -> Question:
    """How many tiles does the tiled kernel walk for one row? (the kernel's own trace counts them)"""
    return Question(key, t("predict_tiles_q", N=f"{n_cols:,}", tile=f"{tile:,}"), float(n_tiles),
                    t("predict_tiles_explain", N=f"{n_cols:,}", tile=f"{tile:,}", tiles=n_tiles,
                      pad=f"{n_tiles * tile - n_cols:,}"))


def chunk_per_program(key: str, n_cols: int, split: int, chunk: int) -> Question:
    """How many of the row's values does each program of a split row load? (the split plan's chunk)"""
    return Question(key, t("predict_chunk_q", N=f"{n_cols:,}", split=split), float(chunk),
                    t("predict_chunk_explain", N=f"{n_cols:,}", split=split, chunk=f"{chunk:,}"))


# -- the widget -----------------------------------------------------------------------------------------------
def ask(question: Question | None) -> None:
    """A bordered box: the question, a guess, Reveal; then the answer, the verdict and the reason."""
    if question is None:
        return
    import streamlit as st

    base = f"predict_{question.key}"
    revealed_key = f"{base}_revealed"
    with st.container(border=True, key=f"{base}_box"):
        st.markdown(f"🤔 **{t('predict_title')}** {question.prompt}")
        if question.options:
            labels = dict(zip(question.options, question.option_labels or question.options))
            guess = st.radio(t("predict_choose"), question.options, index=None, key=f"{base}_guess",
                             horizontal=True, format_func=labels.get)
        else:
            guess = st.number_input(t("predict_guess"), value=None, min_value=0.0, step=1.0,
                                    key=f"{base}_guess", format="%g", placeholder=t("predict_placeholder"))
        if st.button(t("predict_reveal"), key=f"{base}_reveal", disabled=guess is None):
            st.session_state[revealed_key] = question.signature
        if st.session_state.get(revealed_key) == question.signature and guess is not None:
            verdict = grade(question, guess)
            (st.success if verdict.right else st.warning)(verdict_text(question, guess, verdict))
            st.markdown(question.explain)
