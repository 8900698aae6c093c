"""The Fleet page's pieces: open a scan result, the executions table (a selected row opens its
log and query on the page of its finding), and a preset's impact across the fleet."""
from __future__ import annotations

from typing import Optional

import pandas as pd
import streamlit as st

from aqe_core.figures.fleet_trend import trend_figure
from aqe_core.fleet.history import app_runs, log_names, worse_since_last
from aqe_core.fleet.result import FleetScan, Unopenable, load_scan, local_path, unopenable
from aqe_core.plain_text import md_text
from aqe_core.opening import SourceError
from aqe_core.views.triage import FINDINGS
from ui import state

_PAGES = {"partitions": "pages/partitions.py", "plans": "pages/plans.py"}
_SHOWN = ["file", "execution_id", "description", "findings", "read_stage_tasks", "wasted_task_ms", "duration_ms",
          "partitions_before", "partitions_after", "evidence", "outcome"]


@st.cache_data(max_entries=4, show_spinner="Reading the scan result ...")
def _load(path: str) -> FleetScan:
    return load_scan(path)


def open_scan() -> Optional[FleetScan]:
    """The scan result the folder box names. The folder is kept apart from the box: Streamlit
    drops a widget's value once a run draws another page (a Fleet row opened), so coming back
    would find the box empty."""
    kept = st.session_state.get(state.FLEET_DIR)
    if state.FLEET_PATH not in st.session_state and kept:
        st.session_state[state.FLEET_PATH] = kept
    path = st.text_input("Scan result directory on this server (`python -m aqe_core scan ... -o DIR`)",
                         key=state.FLEET_PATH, placeholder="/data/aqe-scans/2026-11-24")
    st.session_state[state.FLEET_DIR] = path
    if not path:
        st.info("Run `python -m aqe_core scan SOURCE... -o DIR` (locally or with `--master`), then give DIR here.")
        return None
    try:
        scan = _load(path.strip())
    except SourceError as e:
        st.error(md_text(str(e)))
        return None
    cannot = _unopenable(scan.path, tuple(scan.executions["file"].dropna().unique()))
    if cannot:
        st.warning("Rows of these logs are listed but open nothing here: "
                   + "; ".join(cannot.sentences(quote=md_text)) + ".")
    return scan


@st.cache_data(max_entries=4, show_spinner=False)
def _unopenable(path: str, files: tuple[str, ...]) -> Unopenable:
    return unopenable(list(files))


def table(scan: FleetScan, rows: pd.DataFrame) -> None:
    """The executions; a selected row opens its log on the page that shows its first finding."""
    shown = rows[[c for c in _SHOWN if c in rows.columns]].copy()
    shown["file"] = log_names(shown["file"])
    shown["findings"] = shown["findings"].fillna("").apply(
        lambda fs: ", ".join(FINDINGS[f][0] for f in fs.split(",") if f in FINDINGS))
    event = st.dataframe(shown, hide_index=True, width="stretch", on_select="rerun", selection_mode="single-row",
                         key=state.FLEET_TABLE)
    picked = getattr(getattr(event, "selection", None), "rows", None) or []
    if picked and picked[0] < len(rows):
        _open(rows.iloc[picked[0]])


_QUERY_SHOWN = {"file": "log", "name": "query", "executions": "executions", "span_s": "span (s)",
                "decisions": "AQE's decisions over the executions", "changes": "changes",
                "change_sentences": "where a decision changed"}


def queries_table(scan: FleetScan) -> None:
    """Each log's queries run more than once (the scan's queries table), one row per query: its
    executions, their span, each decision's outcomes and where one changed; a selected row
    opens the log on its query's last execution."""
    rows = scan.repeated_queries()
    if rows.empty:
        st.caption("No log of this scan runs a query more than once"
                   + ("." if scan.queries is not None else " (or the scan predates its queries table: scan again)."))
        return
    shown = rows.assign(file=log_names(rows["file"]), span_s=(rows["span_ms"] / 1000).round(1))
    shown = shown[list(_QUERY_SHOWN)].rename(columns=_QUERY_SHOWN)
    event = st.dataframe(shown, hide_index=True, width="stretch", on_select="rerun", selection_mode="single-row",
                         key=state.FLEET_QUERIES)
    picked = getattr(getattr(event, "selection", None), "rows", None) or []
    if picked and picked[0] < len(rows):
        row = rows.iloc[picked[0]]
        st.session_state.pop(state.FLEET_QUERIES, None)
        _open(pd.Series({"file": row["file"], "execution_id": row["last_execution"], "findings": ""}))


def _open(row: pd.Series) -> None:
    path = local_path(str(row["file"]))
    if path is None:
        st.warning(f"{md_text(row['file'])} is not on this server's file system: open it where it is.")
        return
    eid = row["execution_id"]
    qid = str(int(eid)) if pd.notna(eid) else None
    st.session_state.pop(state.FLEET_TABLE, None)  # a kept selection would reopen it on every run
    state.set_source(path, path, {"kind": "path", "path": path})
    st.session_state[state.SOURCE_MODE] = "Path on server"
    if qid is not None:
        st.session_state[state.QUERY_ID] = qid
        st.query_params["q"] = qid
    first = str(row["findings"] or "").split(",")[0]
    st.switch_page(_PAGES.get(FINDINGS.get(first, ("", "overview"))[1], "pages/overview.py"))


def trend(scan: FleetScan) -> None:
    """Each application's runs over time, and the ones that got worse in the latest scan."""
    history = scan.history if scan.history is not None else scan.executions
    runs = app_runs(history)
    if runs.empty or runs["app"].value_counts().max() < 2:
        st.caption(f"{len(scan.scans)} scan{'s' if len(scan.scans) != 1 else ''} so far: a trend appears once an"
                   " application has two runs (scan the same OUT again after its next run; only new or changed logs"
                   " are read).")
        return
    st.plotly_chart(trend_figure(runs), width="stretch", key="fleet_trend")
    worse = worse_since_last(history)
    if not worse:
        st.caption("No application got worse in the latest scan than in its run before.")
        return
    st.markdown(f"**{len(worse)} application{'s' if len(worse) != 1 else ''} got worse in the latest scan** than in"
                " their run before:")
    st.dataframe(pd.DataFrame([{"application": c.app, "wasted task time before (s)": c.wasted_before_s,
                                "now (s)": c.wasted_after_s, "findings before": c.findings_before,
                                "now": c.findings_after, "log": c.after_file} for c in worse]),
                 hide_index=True, width="stretch")
