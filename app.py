"""AQE Lens: Streamlit entry point (``streamlit run app.py``).

Pages live in ``pages/``; every piece of logic lives in ``aqe_core``.
"""
import streamlit as st

from aqe_core.config import default_conf
from aqe_core.versions import NEWEST

st.set_page_config(page_title="AQE Lens", layout="wide")
st.title("AQE Lens")
st.write(
    "See what Spark's Adaptive Query Execution did to a query, and why: coalesced shuffle "
    "partitions, split skewed join partitions, demoted or promoted joins."
)
st.info(
    "Coming next: load an event log or a capture, run a query on Spark, plans as graphs, "
    "partition histograms with AQE's own lines, and presets side by side."
)
st.subheader(f"AQE settings and their defaults in Spark {NEWEST}")
conf = default_conf(NEWEST)
st.dataframe(
    [{"key": k, "default": conf.raw(k), "meaning": e.doc} for k, e in conf.keys.items()],
    width="stretch",
    hide_index=True,
)
