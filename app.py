"""Fused Softmax Explorer: home page. `streamlit run app.py`"""
import streamlit as st

import softmax_core as sc

st.set_page_config(page_title="Fused Softmax Explorer", page_icon="⚡", layout="wide")
st.title("Fused Softmax Explorer")
st.caption(sc.runtime.backend_description())
traffic = sc.memory_traffic(4096, 1024)
st.write(f"A naive softmax of a 4096 x 1024 float32 matrix moves {traffic.naive_bytes / 1e6:,.1f} MB through "
         f"DRAM; the fused kernel moves {traffic.fused_bytes / 1e6:,.1f} MB: "
         f"{traffic.predicted_speedup:.2f}x less.")
