"""Run: run SQL or a built-in workload on Spark and open the result as a capture."""
import streamlit as st

import lens_ui

lens_ui.sidebar_source()
st.title("Run a query on Spark")
lens_ui.run_page()
