"""The values the pages start from, in one place: the pages use them, and the pre-warm (prewarm.py)
compiles for exactly them, so a page opened at its defaults finds every plan already compiled.

Plain constants: the pre-warm's child process imports this without Streamlit.
"""
from __future__ import annotations

# The chapter's own sizes: its benchmark has M = 4096 rows, its test N = 781 columns.
CHAPTER_M = 4096
CHAPTER_N = 781
DTYPE = "float32"

# The occupancy chart's "vary BLOCK_SIZE" sweep: 32 ... 65536, each one a real compile.
BLOCK_SWEEP = tuple(2 ** k for k in range(5, 17))
# Block sizes below the sweep (rows of 1 to 16 values, on the padding chain): pre-warmed too.
SHORT_BLOCKS = tuple(2 ** k for k in range(0, 5))

# The GPU page's largest N: the longest row a teacher can ask about (the pre-warm compiles it for every GPU).
GPU_PAGE_MAX_N = 262_144
GPU_PAGE_MAX_M = 1_048_576       # the GPU page's rows box

# The row-schedule page starts with rows long enough that only a few programs fit on an SM (on the lesson's
# GPU, as every page: explorer_ui.layout.lesson_gpu_key).
SCHEDULE_N = 16384

# The long-rows pages' path map (and the tiled path's L2 chart): the chapter's 781 and powers of two up to 1M
# values per row, for M = CHAPTER_M rows.
LONG_ROWS_NS = tuple(sorted((CHAPTER_N,) + tuple(2 ** k for k in range(8, 21))))
# The long-rows page's L2 chart: the tiled path's traffic at the path map's sizes from 4096 values per row, on
# the page's GPU and on the GPU that its recorded tiled/split sweeps ran on (explorer_ui.long_row_frames.PATHS_CSVS).
LONG_ROWS_L2_NS = tuple(n for n in LONG_ROWS_NS if n >= 4096)
LONG_ROWS_RECORDED_GPU = "h200"
