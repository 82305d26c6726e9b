"""The recorded run of the chapter's Step 5 sweep (M = 4096, N = 256…12672 step 128), loaded once per
process, and its GB/s by N and provider for the page's chart."""
from __future__ import annotations

import pandas as pd
import streamlit as st

from softmax_bench import chapter_claims as cc

from .recorded import provider_label


@st.cache_resource(show_spinner=False)
def chapter_runs() -> cc.ChapterRuns | None:
    """softmax_bench.chapter_claims' record of the chapter's sweep, or None when none is recorded."""
    return cc.load_chapter_runs()


def chapter_sweep_frame() -> pd.DataFrame | None:
    """One row per provider and N of the main run that measured: N, gbps, ms (median), copy_ratio,
    provider (its label in the reader's language), provider_key. None without a record."""
    runs = chapter_runs()
    if runs is None:
        return None
    f = runs.main.frame[runs.main.frame.status == "ok"]
    return pd.DataFrame({"N": f["N"].astype(int), "gbps": f["gbps"], "ms": f["ms_median"],
                         "copy_ratio": f["copy_ratio"], "provider_key": f["provider"],
                         "provider": [provider_label(k) for k in f["provider"]]}).reset_index(drop=True)
