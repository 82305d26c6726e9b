"""What every recorded trace shares: the matrix the kernel read, held as the field `x`, and its shape."""
from __future__ import annotations


class TracedMatrix:
    """Base of the trace dataclasses (tutorial_trace.Trace, long_row_trace.OnlineTrace and SplitTrace): each has
    a field `x`, the (n_rows, n_cols) input as the kernel read it, and these read the shape from it."""

    __slots__ = ()

    @property
    def n_rows(self) -> int:
        return self.x.shape[0]

    @property
    def n_cols(self) -> int:
        return self.x.shape[1]
