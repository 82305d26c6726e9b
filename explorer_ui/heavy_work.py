"""One student cannot stall the class: heavy work a page starts waits its turn.

Heavy work is what a click can start that takes seconds of CPU (or the GPU): the CPU timing and the live GPU
sweep of the benchmark page, a slide export, a pasted kernel's compile (`turn_once`: only the first time). Each server process (a replica)
lets at most `slots()` of them run at once, SOFTMAX_EXPLORER_HEAVY_SLOTS (default: half the CPU cores, at least
one), so the students who are only reading and clicking keep the rest of the machine. The others wait in one
line, first come first served; a waiting student sees their place and a Cancel button.

    with heavy_work.turn("bench_cpu"):       # in a page, around the work a button started
        result = run_it()

Leaving the line is Streamlit's own interruption: a click on Cancel (or on anything else) asks for a new run,
and the waiting script stops at its next screen update, raising Streamlit's rerun exception through
`turn`, which gives the place up. `Line` is the part without Streamlit, tested on its own.
"""
from __future__ import annotations

import contextlib
import itertools
import os
import threading
from typing import Hashable, Iterator

SLOTS_ENV = "SOFTMAX_EXPLORER_HEAVY_SLOTS"
POLL_S = 0.5          # how often a waiting page refreshes its place in line (and notices a Cancel)


def slots() -> int:
    """The bound: SOFTMAX_EXPLORER_HEAVY_SLOTS when it is a positive whole number, else half the cores (>= 1)."""
    raw = os.environ.get(SLOTS_ENV, "").strip()
    if raw.isdigit() and int(raw) > 0:
        return int(raw)
    return max(1, (os.cpu_count() or 2) // 2)


class Line:
    """At most `slots` holders at once; the rest wait in arrival order."""

    def __init__(self, slots: int):
        self.slots = slots
        self._cond = threading.Condition()
        self._running: set[int] = set()
        self._waiting: list[int] = []
        self._tickets = itertools.count(1)

    def join(self) -> int:
        with self._cond:
            ticket = next(self._tickets)
            self._waiting.append(ticket)
            return ticket

    def place(self, ticket: int) -> int:
        """1 for the first in line, 2 for the next...; 0 when `ticket` is running (or gone)."""
        with self._cond:
            return self._waiting.index(ticket) + 1 if ticket in self._waiting else 0

    @property
    def running(self) -> int:
        with self._cond:
            return len(self._running)

    @property
    def waiting(self) -> int:
        with self._cond:
            return len(self._waiting)

    def wait_turn(self, ticket: int, timeout: float | None = None) -> bool:
        """Block until `ticket` holds a slot (True) or `timeout` passes (False)."""
        with self._cond:
            started = self._cond.wait_for(lambda: ticket in self._running or self._may_start(ticket), timeout)
            if started and ticket not in self._running:
                self._waiting.remove(ticket)
                self._running.add(ticket)
                self._cond.notify_all()
            return bool(started)

    def leave(self, ticket: int) -> None:
        """Give up the slot or the place in line (either is fine; twice is fine)."""
        with self._cond:
            self._running.discard(ticket)
            if ticket in self._waiting:
                self._waiting.remove(ticket)
            self._cond.notify_all()

    def _may_start(self, ticket: int) -> bool:
        return len(self._running) < self.slots and bool(self._waiting) and self._waiting[0] == ticket


LINE = Line(slots())          # one per server process: every session's script thread shares it


def _cancelled(key: str) -> None:
    import streamlit as st

    st.session_state[f"{key}__cancelled"] = True


_DONE: dict = {}           # work this process has finished (and a page caches): answered without queueing
_DONE_LIMIT = 256


@contextlib.contextmanager
def turn_once(key: str, work: Hashable) -> Iterator[None]:
    """`turn`, the first time this process does `work` (a hashable description of it); later, when the page's
    cache answers, no wait. For cached heavy calls (a pasted kernel's compile) that a page re-runs often."""
    if work in _DONE:
        yield
        return
    with turn(key):
        yield
    if len(_DONE) >= _DONE_LIMIT:
        _DONE.pop(next(iter(_DONE)))
    _DONE[work] = True


def say_if_cancelled(key: str) -> None:
    """In the run that a Cancel click started: say that `key`'s work was not started."""
    import streamlit as st

    from .i18n import t

    if st.session_state.pop(f"{key}__cancelled", False):
        st.caption(t("heavy_cancelled"))


@contextlib.contextmanager
def turn(key: str, line: Line | None = None) -> Iterator[None]:
    """Hold one of this server's heavy-work slots for the `with` block; while waiting, show the place in line
    and a Cancel button (`key` names them)."""
    import streamlit as st

    from .i18n import t

    line = line or LINE
    ticket = line.join()
    try:
        if not line.wait_turn(ticket, timeout=0):
            box = st.empty()
            with box.container():
                status = st.empty()
                st.button(t("heavy_cancel"), key=f"{key}__cancel", on_click=_cancelled, args=(key,))
            while not line.wait_turn(ticket, timeout=POLL_S):
                # written every poll, changed or not: a screen update is where Streamlit stops a script
                # whose student clicked meanwhile (Cancel, or anything else)
                status.info(t("heavy_waiting", place=line.place(ticket), running=line.running, slots=line.slots),
                            icon="⏳")
            box.empty()
        yield
    finally:
        line.leave(ticket)


def gpu_sweep_fits(M: int, Ns, dtype, directions) -> bool:
    """True when the live GPU has the memory a benchmark sweep needs (softmax_bench.harness.sweep_bytes);
    otherwise the page says how much it needs and how much there is, and nothing starts."""
    import streamlit as st
    import torch

    from softmax_bench.harness import sweep_bytes

    from .fmt import fmt_bytes
    from .i18n import t

    need = sweep_bytes(M, Ns, dtype, directions)
    free, total = torch.cuda.mem_get_info()
    if need <= free:
        return True
    st.error(t("heavy_gpu_memory", need=fmt_bytes(need), n=max(Ns), free=fmt_bytes(free), total=fmt_bytes(total)),
             icon="🚫")
    return False
