"""The row-schedule page's logic: where each row stands at a step of the animation, and short row lists.
Pure functions of a trace's recorded iterations; the page only draws them."""
from __future__ import annotations

import numpy as np

# A row's phase at one step of the animation: not reached yet, handled in this loop trip, handled before.
ROW_PHASES = ("later", "now", "done")
# The phases of one loop trip in softmax_teaching.schedule.pipeline_timeline, in drawing order.
PIPELINE_PHASES = ("load", "compute", "store")


def phase_of(step: int, n_frames: int, iteration: np.ndarray) -> np.ndarray:
    """Each row's phase at `step`: frame 0 is the launch (all later), the last frame is the end (all done),
    frame k in between is loop trip k - 1 (`iteration` holds the trip each row was handled in)."""
    if step == 0:
        return np.full(len(iteration), "later", dtype=object)
    if step == n_frames - 1:
        return np.full(len(iteration), "done", dtype=object)
    it = step - 1
    return np.where(iteration < it, "done", np.where(iteration == it, "now", "later")).astype(object)


def row_list(rows, limit: int) -> str:
    """The first `limit` rows, comma-separated, with an ellipsis when there are more."""
    return ", ".join(map(str, rows[:limit])) + (" …" if len(rows) > limit else "")
