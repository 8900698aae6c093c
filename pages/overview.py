"""Overview: the source's SQL executions and what AQE did to each."""
import pandas as pd
import streamlit as st

import lens_ui

src, view = lens_ui.current()
st.title("AQE Lens")
if src is None:
    st.stop()
st.caption(f"{src.label}")
rows = [{"query": v.query_id, "description": v.description[:80], "status": v.status,
         "AQE outcome": v.outcome if v.adaptive else "no AQE",
         "duration (ms)": v.duration_ms} for v in src.views]
with st.container(key="executions"):
    st.dataframe(pd.DataFrame(rows), hide_index=True, width="stretch")
if view is not None:
    st.subheader(f"Query {view.query_id}: {view.description[:100]}")
    c1, c2, c3 = st.columns(3)
    c1.metric("Plan versions", len(view.plan_versions))
    c2.metric("Adaptive shuffle reads", len(view.shuffles))
    c3.metric("Spark", str(view.spark_version))
    for change in view.join_changes:
        st.write(f"Join strategy: {change}")
    for s in view.shuffles:
        st.write(f"- {s.label}: {s.partitions_before or '?'} -> {s.partitions_after or '?'} partitions")
for w in src.warnings[:20]:
    st.warning(w)
for n in src.notes[:10]:
    st.caption(n)
