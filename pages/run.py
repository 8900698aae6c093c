"""Run: run SQL or a built-in workload on Spark and open the result as a capture."""
import streamlit as st

from ui import frame
from ui.run import run_page

frame.sidebar_source()
st.title("Run a query on Spark")
run_page()
