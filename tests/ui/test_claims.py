"""Claims the pages make are computed from the figures they compare: the speedup split into byte ratio and
efficiencies, which L2 prediction a measurement is nearer, where the tiled path falls off against the L2 line,
the benchmark's ceiling, dips and impossible CPU timings (softmax_core.traffic / bench_reading,
explorer_ui.long_row_frames)."""
from __future__ import annotations

import math

import pandas as pd
import pytest

from softmax_teaching import bench_reading as br
from softmax_core.traffic import speedup_parts


def test_the_speedup_is_the_byte_ratio_times_the_efficiencies_ratio():
    # the recorded H200 fp32 figures at N = 2048 (naive 638, fused 3026, copy 3057 GB/s in the baseline table)
    parts = speedup_parts(4.001, 638.0, 3026.0, 3057.0)
    assert math.isclose(parts.speedup, 3026.0 / 638.0)                  # = naive time / fused time
    assert math.isclose(parts.naive_efficiency, 4.001 * 638 / 3057) and parts.naive_efficiency < 0.9
    assert math.isclose(parts.fused_efficiency, 3026 / 3057)
    assert parts.speedup > parts.byte_ratio           # above the byte ratio: naive reaches less of copy than fused
    with pytest.raises(ValueError):
        speedup_parts(4.0, 0.0, 1.0, 1.0)


def test_the_ceiling_is_the_best_copy_far_beyond_l2():
    l2 = 60 * 2**20
    copies = [(512, 8 * 2**20, 1300.0), (8192, 134 * 2**20, 3900.0), (16384, 268 * 2**20, 4131.0),
              (262144, 4 * 2**30, 4267.0)]
    c = br.copy_ceiling(copies, l2, 4800.0)
    assert (c.far_gbps, c.far_n) == (4267.0, 262144) and math.isclose(c.of_spec, 4267 / 4800)
    assert br.copy_ceiling(copies[:2], l2, 4800.0).far_gbps is None      # 134 MiB is not 4x a 60 MiB L2
    assert br.copy_ceiling(copies, None, None).far_gbps is None


def test_a_dip_is_below_both_neighbours():
    series = [(256, 530.0, 1.1), (781, 400.0, 1.47), (1024, 671.0, 1.05), (2048, 1240.0, 1.02)]
    found = br.dips(series)
    assert [d.n for d in found] == [781] and found[0].spread == 1.47
    assert br.dips([(1, 100.0, None), (2, 90.0, None), (3, 95.0, None)]) == ()       # 90 is not below 0.8 x 95
    assert br.dips(series[:2]) == ()


def test_cpu_timings_no_machine_could_produce_are_not_results():
    assert br.impossible_cpu_timing(0.5, 2.0, 1.0, 0.4) == "copy_stalled"
    assert br.impossible_cpu_timing(8.0, 0.04, 1.0, 1.0) == "naive_beats_fused"       # "naive 25x faster"
    assert br.impossible_cpu_timing(8.0, 4.0, 1.0, 20.0) == "beats_copy"
    assert br.impossible_cpu_timing(8.0, 4.0, 1.0, 6.0) is None


def test_falloff_is_placed_against_the_line_by_the_records():
    from explorer_ui import long_row_frames as lr

    table = pd.DataFrame({"N": [16384, 32768, 65536, 131072], "copy_ratio": [1.00, 0.98, 0.81, 0.72]})
    assert lr.falloff(table, 65536).where == "at" and lr.falloff(table, 65536).n == 65536
    assert lr.falloff(table, 131072).where == "before"
    assert lr.falloff(table, 32768).where == "after"
    flat = pd.DataFrame({"N": [1, 2, 3], "copy_ratio": [0.95, 0.97, 0.96]})
    assert lr.falloff(flat, 2).where == "none" and lr.falloff(flat, 2).best == 0.97
