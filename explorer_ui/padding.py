"""The padding-chain page's logic: which state each lane and each memory address is in, and the figures each
frame's sentence quotes. Pure functions of a trace (softmax_teaching.tutorial_trace); the page only draws them."""
from __future__ import annotations

import numpy as np

from .fmt import number

# (frame name, traced stage drawn, kernel lines it is about)
FRAMES = (("load", "loaded", ("offsets", "mask", "load")), ("max", "loaded", ("max",)),
          ("subtract", "minus_max", ("subtract",)), ("exp", "exp", ("exp",)), ("sum", "exp", ("sum",)),
          ("divide", "output", ("divide",)), ("store", "output", ("out_ptr", "store")))
FRAME_NAMES = tuple(name for name, _, _ in FRAMES)
# A lane's state in the strip, in legend order.
LANE_STATES = ("real", "pad_neg_inf", "pad_zero", "pad_nonzero", "nan", "stored", "not_stored", "stray")
# An address's state after the whole launch, in legend order.
MEMORY_STATES = ("right", "nan_like_torch", "wrong", "past_end", "unwritten")


def trace_stage(frame: str) -> str:
    """The traced stage a frame draws."""
    return next(stage for name, stage, _ in FRAMES if name == frame)


def lane_states(lanes: np.ndarray, values: np.ndarray, n_cols: int, frame: str, variant: str) -> list[str]:
    """Each lane's state (one of LANE_STATES) at `frame`: lanes below `n_cols` are the row's own values,
    the rest padding; at "store", whether the lane was written (and whether it should have been)."""
    out = []
    for lane, v in zip(lanes, values):
        real = lane < n_cols
        if frame == "store":
            if real:
                out.append("nan" if np.isnan(v) else "stored")
            else:
                out.append("stray" if variant == "no_store_mask" else "not_stored")
        elif np.isnan(v):
            out.append("nan")
        elif real:
            out.append("real")
        elif np.isneginf(v):
            out.append("pad_neg_inf")
        else:
            out.append("pad_zero" if v == 0 else "pad_nonzero")
    return out


def runs(states) -> list[tuple[int, int]]:
    """[start, end) of each run of equal neighbours: one rectangle per run keeps a strip light to draw."""
    cuts = [0] + [i for i in range(1, len(states)) if states[i] != states[i - 1]] + [len(states)]
    return list(zip(cuts[:-1], cuts[1:]))


def frame_facts(trace, footprint, row: int, frame: str) -> dict:
    """The figures a frame's sentence (padding_frame_<frame>, and its variant's addition) quotes."""
    n_cols, block = trace.n_cols, trace.block_size
    n_pad = block - n_cols
    exp = trace.stage(row, "exp")
    out = trace.stage(row, "output")
    facts = dict(N=n_cols, B=block, pad=n_pad, row=row, max=number(trace.row_max[row]), sum=number(trace.row_sum[row]),
                 real_max=number(trace.x[row].max()), pad_sum=number(float(exp[n_cols:].sum())) if n_pad else "0",
                 out_sum=number(float(out[:n_cols].sum())),
                 err=f"{float(np.nanmax(np.abs(trace.output[row] - trace.reference[row]))):.1e}"
                 if not np.isnan(trace.reference[row]).all() else "NaN",
                 pad_value=number(trace.stage(row, trace_stage(frame))[n_cols]) if n_pad else "—")
    if frame == "store":
        stray = footprint.stray
        facts.update(n_stray=len(stray), first=int(stray.min()) if len(stray) else 0,
                     last=int(stray.max()) if len(stray) else 0, hit=", ".join(map(str, footprint.rows_hit())),
                     past=len(footprint.past_matrix), start=footprint.row_start, end=footprint.row_end - 1)
    return facts


# Claims a frame's sentence makes only when the traced values bear them out (an all −inf row has NaN
# everywhere: no lane is in [0, 1], and nothing became 0).
CLAIMS = ("subtract_max_zero", "exp_in_unit")


def frame_claim(trace, row: int, frame: str) -> str | None:
    """The claim (one of CLAIMS) the frame's sentence may add for this row, or None when the values do not
    support it: after "subtract" the largest value is 0 and none is above it; after "exp" every lane lies in
    [0, 1] and the largest is exactly 1."""
    if frame == "subtract":
        values = trace.stage(row, "minus_max")
        if not np.isnan(values).any() and np.max(values) == 0.0:
            return "subtract_max_zero"
    if frame == "exp":
        values = trace.stage(row, "exp")
        if not np.isnan(values).any() and values.min() >= 0.0 and values.max() == 1.0:
            return "exp_in_unit"
    return None


def memory_status(trace) -> np.ndarray:
    """Each address of the launch's buffer (the matrix, then the guard past its end), as one of
    MEMORY_STATES: written and right, NaN where torch gives NaN too, wrong, written past the end, unwritten."""
    buf, written = trace.buffer, trace.written
    n_addr = len(buf)
    status = np.full(n_addr, "unwritten", dtype=object)
    inside = np.arange(n_addr) < trace.guard_start
    same = np.zeros(n_addr, dtype=bool)
    same[: trace.guard_start] = trace.right_elements().ravel()
    status[inside & written & same & ~np.isnan(buf)] = "right"
    status[inside & written & same & np.isnan(buf)] = "nan_like_torch"
    status[inside & written & ~same] = "wrong"
    status[inside & ~written] = "wrong"
    status[~inside & written] = "past_end"
    return status


def memory_segments(status: np.ndarray, n_cols: int, guard_start: int) -> list[tuple[int, int, str, int]]:
    """Run-length encoding of `status`: (start, end, state, row) per stretch of equal state within one
    row; row -1 is the guard past the matrix."""
    n_addr = len(status)
    address = np.arange(n_addr)
    row_of = np.where(address < guard_start, address // n_cols, -1)
    change = np.flatnonzero((status[1:] != status[:-1]) | (row_of[1:] != row_of[:-1])) + 1
    starts = np.concatenate([[0], change]).astype(int)
    ends = np.concatenate([change, [n_addr]]).astype(int)
    return [(int(s), int(e), str(status[s]), int(row_of[s])) for s, e in zip(starts, ends)]
