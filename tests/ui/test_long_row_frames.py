"""explorer_ui.long_row_frames: the helpers pages 7 and 8 build on (the cliff, the online frames, the recorded paths,
the split kernel's slot table)."""

import numpy as np
import pandas as pd
import pytest
import torch

import softmax_core as sc
from softmax_teaching import long_row_trace as lrt
from softmax_teaching.tutorial_trace import trace_online, trace_split

D_RTOL = 2e-5        # d is a float32 sum of up to 2^20 terms, accumulated tile by tile


def test_cliff_is_the_first_block_that_does_not_fit():
    from explorer_ui import long_row_frames as lr

    plans = [sc.plan_launch(1, b, torch.float32, sc.catalog_gpu("h200")) for b in (4096, 8192, 16384, 32768)]
    table = lr.cliff_table(plans)
    cliff = lr.find_cliff(table)
    first_bad = next(p for p in plans if not p.fits)
    assert cliff.fail_block == first_bad.block_size and cliff.fail_n == first_bad.block_size // 2 + 1
    assert not sc.plan_launch(1, cliff.fail_n, torch.float32, sc.catalog_gpu("h200")).fits
    assert sc.plan_launch(1, cliff.fail_n - 1, torch.float32, sc.catalog_gpu("h200")).fits
    synthetic = table.assign(fits=True, spills=[0, 0, 3, 9])
    assert lr.find_cliff(synthetic) == lr.Cliff(None, None, None, 16384, None, top_spills=9)


def test_online_frames_and_tile_phases():
    from explorer_ui import long_row_frames as lr

    tr = trace_online(lr.example_row(5000, "neg_inf_tiles", 0, 1024), tile=1024)
    steps = lr.online_steps(tr)
    assert steps[: tr.n_tiles] == [("pass1", t) for t in range(tr.n_tiles)]
    assert [t for k, t in steps if k == "pass2"] == list(range(tr.n_tiles - 1, -1, -1)) and steps[-1] == ("check", -1)
    phases = lr.tile_phases(tr, tr.n_tiles + 1)          # pass 2's second tile
    assert phases["phase"].tolist() == ["done1", "done1", "done1", "now2", "done2"]
    assert lr.running_max(tr, 0, 0).empty               # the first tile is all -inf: no max to draw yet
    check = lr.online_check(tr, 0)
    assert check.m_kernel == check.m_torch and check.d_rel_err < D_RTOL and check.y_err < 1e-6
    env = lr.envelope(tr.x[0], bins=10)
    assert env["neg_inf"].sum() == np.isneginf(tr.x[0]).sum() and env["end"].iloc[-1] == 5000
    with pytest.raises(ValueError, match="pattern"):
        lr.example_row(10, "nope")


def test_recorded_paths_are_the_best_of_each_path_in_the_csv():
    from explorer_ui import long_row_frames as lr

    rec = lr.recorded_paths()
    for (dtype, n, path), best in rec.set_index(["dtype", "N", "path"])["gbps"].items():
        raw = pd.read_csv(lr.PATHS_CSVS[dtype])
        raw = raw[(raw.dtype == dtype) & (raw.N == n) & raw.ok]
        named = raw[(raw.kind == path) | ((raw.kind == "default") & raw.variant.str.startswith(path + " "))]
        assert best == named["gbps"].max()
        assert set(rec[(rec.dtype == dtype) & (rec.N == n) & (rec.path == path)]["source"]) == {lr.PATHS_CSVS[dtype].name}
    for dtype in ("float32", "bfloat16"):
        assert {"tiled", "split", "copy"} <= set(rec[rec.dtype == dtype]["path"])
    # bf16 at 262144 values: the split path ahead of the tiled one in the v8 sweep
    at = rec[(rec.dtype == "bfloat16") & (rec.N == 262144)].set_index("path")["copy_ratio"]
    assert at["split"] > at["tiled"]


def test_the_path_map_reads_the_recorded_h200_run():
    from explorer_ui import data
    from explorer_ui import long_row_frames as lr

    record, provenance = data.recorded_tuned("float32")
    assert not record.empty and "H200" in provenance["gpu"]
    plans = [sc.plan_softmax(4096, n, torch.float32, sc.catalog_gpu("h200")) for n in (1024, 65536)]
    table = lr.path_table(plans, record)
    for plan, ratio in zip(plans, table["recorded_ratio"]):
        assert ratio == float(record[record["N"] == plan.n_cols]["copy_ratio"].iloc[0])


def test_slot_table_fills_in_program_order():
    from explorer_ui import long_row_frames as lr

    tr = trace_split(lr.example_row(8192, "random"), split=4)
    steps = lr.split_steps(tr)
    assert [lr.slot_table(tr, 0, s)["published"].sum() for s in range(len(steps))] == [0, 1, 2, 3, 4, 4, 4]
    merged = lr.slot_table(tr, 0, len(steps) - 2)
    assert merged["word"].tolist() == [lrt.word_hex(w) for w in tr.words[0]]
