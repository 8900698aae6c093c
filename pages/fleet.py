"""Fleet: a scan of many event logs (python -m aqe_core scan), filtered, sorted and opened."""
import pandas as pd
import streamlit as st

from aqe_core.fleet.history import app_runs
from aqe_core.fleet.result import SORTS, preset_impact
from aqe_core.fleet.rows import PRESETS
from aqe_core.plain_text import md_text
from aqe_core.views.triage import FINDINGS
from ui import frame
from ui.fleet import open_scan, queries_table, table, trend
from ui.runs import compare_app_runs

frame.current()
st.title("Fleet")
scan = open_scan()
if scan is None:
    st.stop()
counts = scan.finding_counts()
c1, c2, c3, c4 = st.columns(4)
c1.metric("Logs", scan.executions["file"].nunique())
c2.metric("SQL executions", int(scan.executions["error"].isna().sum()))
c3.metric("Wasted task time (s)", round(float(scan.executions["wasted_task_ms"].fillna(0).sum()) / 1000, 1),
          help="per execution: the slowest read stage's slowest task minus its median task, summed")
c4.metric("Unreadable", len(scan.errors))
with st.expander("Over time", expanded=len(scan.scans) > 1):
    trend(scan)
with st.expander("Compare two runs of an application"):
    compare_app_runs(app_runs(scan.history if scan.history is not None else scan.executions))
f1, f2, f3 = st.columns([3, 2, 1])
chosen = f1.multiselect("Findings", list(counts), format_func=lambda f: f"{FINDINGS[f][0]} ({counts[f]})",
                        key="fleet_findings")
text = f2.text_input("Search", key="fleet_search", placeholder="file, description, outcome")
sort = f3.selectbox("Sort by", list(SORTS), key="fleet_sort")
rows = scan.rows(chosen, text, sort)
st.caption(f"{len(rows)} executions; select one to open its log and query on the page of its finding.")
table(scan, rows)
repeated = scan.repeated_queries()
with st.expander(f"Queries run more than once ({len(repeated)})", expanded=len(repeated) > 0):
    queries_table(scan)
with st.expander("A preset across the fleet"):
    preset = st.selectbox("Preset", [p.name for p in PRESETS], key="fleet_preset")
    impact, changed = preset_impact(scan, preset)
    st.markdown(f"Under **{md_text(preset)}**, {impact['changed']} of {impact['executions']} executions change:"
                f" partitions in {impact['partitions']}, skew splits in {impact['skew splits']}, join strategy in"
                f" {impact['join strategy']} (replayed exactly where a log has exact statistics, estimated elsewhere).")
    st.dataframe(changed, hide_index=True, width="stretch")
if len(scan.errors):
    with st.expander(f"Unreadable files ({len(scan.errors)})"):
        st.dataframe(pd.DataFrame(scan.errors[["file", "error"]]), hide_index=True, width="stretch")
