"""The "Your kernel" page's record from the H200: for the four examples, the page's offline compile beside the
registers and shared memory Triton's JIT allocated there and the programs per SM the driver answered
(kernel_inspector.record reads it; this module only words and lays it out)."""
from __future__ import annotations

import pandas as pd
import streamlit as st

from kernel_inspector.record import RECORD, RECORD_COMMAND, H200Record

from .i18n import t


def record_table(record: H200Record | None) -> None:
    if record is None:
        st.caption(t("yk_record_missing", path=f"assets/{RECORD.as_posix()}"))
        return
    rows = record.examples
    frame = pd.DataFrame({
        t("yk_rcol_example"): [r.example for r in rows],
        t("yk_rcol_ours"): [t("yk_rcell_resources", regs=r.ours_registers, spills=r.ours_spills,
                              shared=r.ours_shared_bytes) for r in rows],
        t("yk_rcol_jit"): [t("yk_rcell_resources", regs=r.jit_registers, spills=r.jit_local_bytes // 4,
                             shared=r.jit_shared_bytes) for r in rows],
        t("yk_rcol_ours_per_sm"): [r.ours_programs_per_sm for r in rows],
        t("yk_rcol_driver"): [r.driver_programs_per_sm for r in rows],
        t("yk_rcol_same"): [t("yk_yes") if r.same_compile else t("yk_no") for r in rows],
    })
    st.table(frame.set_index(t("yk_rcol_example")))
    p = record.provenance
    st.caption(t("yk_record_provenance", gpu=p.gpu, date=p.date[:16].replace("T", " "), torch=p.torch,
                 triton=p.triton, commit=p.commit[:7], path=f"assets/{RECORD.as_posix()}", command=RECORD_COMMAND))
    differing = [r.example for r in rows if not r.same_compile]
    if differing:
        st.caption(t("yk_record_differs", examples=", ".join(differing), commit=p.commit[:7]))
