"""Altair charts for the pages, one module per family: base (the Figure, `show`, colours), rows (row and lane
pictures), speed (bytes, speedups, GB/s), occupancy (programs per SM), long_rows (the long-rows pages). Each
builder takes a DataFrame and already-translated labels. Pages call them as `charts.<builder>`."""
from .base import (ITERATION_RAMP, LABEL_FONT_SIZE, PALETTE, PHASE_ALPHA, PHASE_TEXT_ALPHA, PROGRAM_COLORS, SAFE, Figure, iteration_color, named,  # noqa: F401
                   program_color, program_color_groups, show, with_program_colors)
from .long_rows import (PATH_COLORS, chunk_chart, cliff_chart, l2_chart, path_map_chart, paths_chart,  # noqa: F401
                        row_chart, slots_chart)
from .occupancy import compare_bars, occupancy_curve, occupancy_y_top  # noqa: F401
from .rows import (PROGRAM_GRID_LABELLED_UP_TO, gantt, lanes, memory_strip, program_grid, row_grid,  # noqa: F401
                   sm_slots)
from .speed import (PROVIDER_COLORS, gbps_chart, provider_scale, speedup_lines, speedup_y_top,  # noqa: F401
                    stacked_traffic, sweep_lines)
