"""Plans: the initial and final adaptive plans as graphs, side by side, AQE's changes marked."""
import streamlit as st

from ui import frame, state
from ui.plans import BOX_MODES, collapse_all, plan_page, plan_versions_table

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
        st.dataframe(plan_versions_table(view), hide_index=True, width="stretch")
left, mid, right = st.columns([3, 2, 1], vertical_alignment="bottom")
search = left.text_input("Search nodes", key="plan_search", placeholder="e.g. AQEShuffleRead, SortMergeJoin")
boxes = mid.segmented_control(
    "Boxes", list(BOX_MODES), key=state.PLAN_BOXES,
    help="A box per query stage (click one to open its operators), or a box per operator. Unset: "
         "operators for small plans, query stages for big ones. Drag to pan, scroll to zoom, double-click to fit.")
right.button("Collapse stages", key="collapse_stages", on_click=collapse_all, args=((src.path, view.query_id, step - 1),),
             help="Close the query stages opened by a click")
plan_page(view, step - 1, search, src.path, BOX_MODES.get(boxes, "auto"))
