"""Overview: the source's SQL executions and what AQE did to each."""
import pandas as pd
import streamlit as st

from ui import frame, state
from ui.listed_source import listed_overview
from ui.query_groups import grouped_overview
from ui.trace import decision_trace
from ui.triage import open_row
from aqe_core.views.engine_view import counts_text
from aqe_core.views.query import single_partition_sentence
from aqe_core.views.triage import FINDINGS, triage
from aqe_core.plain_text import md_text

src, view = frame.current()
st.title("AQE Lens")
if src is None:
    st.stop()
st.caption(md_text(src.label))
if src.listing is not None:  # a log past max_executions: its queries, each execution opened on demand
    listed_overview(src)
else:
    search, found = st.columns([2, 3])
    text = search.text_input("Search", key="triage_search", placeholder="description, SQL, outcome ... e.g. skew")
    chosen = found.multiselect("Findings", list(FINDINGS), format_func=lambda f: FINDINGS[f][0], key="triage_findings")
    rows = triage(src.views, text, chosen)
    if not grouped_overview(src, rows):  # a source whose queries repeat: one row per query, if chosen
        open_row(st.session_state.get(state.TRIAGE_TABLE), rows, src.path, [v.query_id for v in src.views])  # a row picked: open it before drawing the rest
        st.caption(f"{len(rows)} of {len(src.views)} SQL executions, ranked by what AQE did and what it cost;"
                   " select a row to open it on the page that shows its finding.")
        with st.container(key="executions"):
            st.dataframe(pd.DataFrame([r.to_dict() for r in rows]), hide_index=True, width="stretch",
                         on_select="rerun", selection_mode="single-row", key=state.TRIAGE_TABLE)
if view is not None:
    st.subheader(f"Query {md_text(view.query_id)}: {md_text(view.description, 100)}")
    c1, c2, c3 = st.columns(3)
    c1.metric("Plan versions", len(view.plan_versions))
    c2.metric("Adaptive shuffle reads", len(view.shuffles))
    c3.metric("Spark", str(view.spark_version) if view.release_known else "unknown")
    if view.release and view.release != f"Spark {view.spark_version}":
        st.caption(md_text(view.release))
    if view.engine:  # the vendor runtime or native engine that ran it (its renames are not AQE's decisions)
        st.caption(md_text(f"Engine: {view.engine}" + "".join(f"; {c}" for c in view.engine_changes)))
    if view.parallelism_how:
        st.caption("Default parallelism: " + md_text(view.parallelism_how))
    if view.spark_ids():
        st.caption(md_text(view.spark_ids()))
    for retry in view.stage_retries:
        st.info(md_text(retry))
    if not view.adaptive and view.adaptive_reason:
        st.info("Why AQE did not apply: " + md_text(view.adaptive_reason))
    if view.join_decisions:
        st.markdown("**Join strategies**")
        st.caption("Sizes are exact: the runtime statistics Spark re-planned each join with, recorded in the capture.")
        for i, sentence in enumerate(view.join_decisions):
            st.write(f"- {md_text(sentence)}")
            if i < len(view.join_traces):
                decision_trace(view.join_traces[i], title="Join decision trace")
    else:
        for change in view.join_changes:
            st.write(f"Join strategy: {md_text(change)}")
    for s in view.shuffles:
        st.write(f"- {md_text(s.label)}: {md_text(counts_text(s.partitions_before, s.partitions_after, s.engine_numbers))}")
    if view.single_partition_exchanges:
        st.caption(md_text(single_partition_sentence(view.single_partition_exchanges)))
for w in src.warnings[:20]:
    st.warning(md_text(w))
for n in src.notes[:10]:
    st.caption(md_text(n))
