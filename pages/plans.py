"""Plans: the initial and final adaptive plans as graphs, side by side, AQE's changes marked."""
import pandas as pd
import streamlit as st

from ui import frame
from ui.plans import plan_page
from aqe_core.views.plan_timeline import plan_timeline

src, view = frame.current()
st.title("Plans")
if view is None:
    st.stop()
if not view.plan_versions and view.initial_plan is None:
    st.info("This query has no plan in the source.")
    st.stop()
versions = view.plan_versions or [view.initial_plan]
n = len(versions)
step = st.slider("Plan version", 1, n, n, key="plan_version", help="every adaptive plan Spark produced, in order") if n > 1 else 1
if n > 1:
    with st.expander("Plan versions: what each re-plan followed and changed"):
        st.dataframe(pd.DataFrame([x.to_dict() for x in plan_timeline(view.initial_plan, versions)]),
                     hide_index=True, width="stretch")
search = st.text_input("Search nodes", key="plan_search", placeholder="e.g. AQEShuffleRead, SortMergeJoin")
plan_page(view, step - 1, search, src.path)
