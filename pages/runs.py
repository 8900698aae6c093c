"""Compare runs: two runs of one job aligned query by query, what AQE did differently and why."""
import streamlit as st

from ui import frame
from ui.runs import pick_run_b, show_diff

src, _view = frame.current()
st.title("Compare runs")
if src is None:
    st.stop()
st.caption("Run a is the source in the sidebar; pick run b, the run to compare with it.")
other = pick_run_b(src)
if other is None:
    st.info("Pick run b: a bundled sample or a path on the server.")
    st.stop()
show_diff(src, other)
