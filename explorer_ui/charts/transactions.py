"""The transactions page's picture: one warp-level request lane by lane. x: the lane; y: the 32-byte sector
its element falls in, numbered in the order the request first touches them, plus where in that sector the
element starts (so a full sector's eight fp32 values stack up inside one band). A request of 16 sectors
used whole fills 16 bands; a column walk puts each lane in a band of its own, using 4 of its 32 bytes."""
from __future__ import annotations

import altair as alt
import pandas as pd

from .base import PROGRAM_COLORS, Figure, named


def request_lanes(frame: pd.DataFrame, name: str, *, warp_size: int, top_sectors: int, title: str, lane_title: str,
                  sector_title: str, address_title: str) -> Figure:
    """`frame`: transactions_view.lane_frame. The axes' domains are fixed by the caller (the most sectors any
    request of the page touches), so that the spec stays the same from frame to frame (no flicker)."""
    data = frame.assign(colour=(frame.sector_rank % len(PROGRAM_COLORS)).astype(str),
                        y=frame.sector_rank + frame.byte_in_sector / 32)
    points = alt.Chart(named(name)).mark_square(size=40).encode(
        x=alt.X("lane:Q", title=lane_title, scale=alt.Scale(domain=[-0.5, warp_size - 0.5]),
                axis=alt.Axis(tickCount=min(warp_size, 16), format="d")),
        y=alt.Y("y:Q", title=sector_title, scale=alt.Scale(domain=[0, max(top_sectors, 1)]),
                axis=alt.Axis(format="d")),
        color=alt.Color("colour:N", legend=None, scale=alt.Scale(domain=[str(i) for i in range(len(PROGRAM_COLORS))],
                                                               range=list(PROGRAM_COLORS))),
        tooltip=[alt.Tooltip("lane:Q", title=lane_title), alt.Tooltip("address:Q", title=address_title, format=","),
                 alt.Tooltip("sector_rank:Q", title=sector_title)])
    return Figure(points.properties(title=title), {name: data})
