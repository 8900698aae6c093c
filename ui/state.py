"""Every session-state key of the app, named once.

Pages, the frame and tests agree on these strings (tests and shared links read them), so they
never change; code in ``ui/``, ``app.py`` and ``pages/`` uses the names, never the literals.
"""
from __future__ import annotations

import zlib

import streamlit as st

#: the opened source: file path, the label shown under the picker, and how to reopen it
#: (``{"kind": "sample"|"upload"|"path", ...}``, what a shared link stores)
SOURCE_PATH = "source_path"
SOURCE_LABEL = "source_label"
SOURCE_REF = "source_ref"
#: the selected SQL execution (a string id), and the sidebar's query selectbox
QUERY_ID = "query_id"
QUERY_PICK = "query_pick"
#: the Compare page's chosen preset names (the Share page and links reuse them)
COMPARE_PRESETS = "compare_presets"
#: the What-if page's settings ``{key: value}``
WHATIF_OVERRIDES = "whatif_overrides"
#: the ``?report=`` id already applied in this session, and why it could not be
REPORT_APPLIED = "_report_applied"
REPORT_ERROR = "_report_error"
#: the bundled-sample selectbox (a widget key read in its on_change)
SAMPLE_PICK = "sample_pick"
#: the sidebar's Open choice ("Sample" | "Upload" | "Path on server"), kept across pages (widget
#: state is per page)
SOURCE_MODE = "source_mode_choice"
#: the sidebar's Open radio and path box (widget keys: set before drawing to follow the source)
SOURCE_MODE_PICK = "source_mode"
SERVER_PATH = "server_path"
#: the source path the sidebar's pickers were last set to show (a new source resets them)
PICKERS_SOURCE = "_pickers_source"
#: set by app.py: the page runs under its navigation (not Streamlit's legacy pages mode)
NAVIGATION = "_navigation"
#: the page a URL asked for before app.py had run in the session (app.py opens it after setting up)
NAV_TARGET = "_nav_target"
#: the Overview's triage table (its selection opens a row's query)
TRIAGE_TABLE = "triage_table"
#: the triage row already opened: ``(source path, query id)`` (the table keeps its selection, so a
#: selection is acted on once, when it changes; the Query picker may change the query after it)
TRIAGE_OPENED = "_triage_opened"
#: the query stages clicked open in Compare runs' final plans: ``{"before"|"after": {stage id}}``
RUNS_OPENED = "_runs_opened"
#: the Overview's query-groups table (its selection lists a group's executions)
GROUP_TABLE = "query_group_table"
#: a listed source's (issue 41) query table on the Overview, and its sidebar picker's widgets
LISTED_TABLE = "listed_query_table"
LISTED_GROUP = "listed_group"
LISTED_POSITION = "listed_position"
LISTED_ROW_POSITION = "listed_row_position"  # (the Overview's, per query)
#: the execution id the listed picker's widgets were last set to (from a pick, a link or a row)
LISTED_SYNCED = "_listed_synced"
#: the Overview's list choice ("Queries" | "Executions"), per source (:func:`overview_list_key`)
OVERVIEW_LIST = "overview_list"
#: the query stages clicked open in the plans: ``{"context": (source, query, version), side: {head path}}``
PLAN_EXPANDED = "_plan_expanded"
#: the Plans page's box mode control ("Query stages" | "Operators" | none: by the plan's size)
PLAN_BOXES = "plan_boxes"
#: the Run page's job id
RUN_JOB = "run_job"
#: Re-run for real: ``(job id, preset names, source path, query id)``
RERUN_JOB = "rerun_job"
#: Which key is skewed: ``{(source path, query id): run job id}`` of the count on Spark this session
HOT_KEYS = "hot_keys"
#: Verify of a fix: ``{fix key: job id}`` (a fix key names the source, query, stage and settings)
VERIFY_JOBS = "verify_jobs"
#: the id of the view the Share page saved last
SHARE_ID = "share_id"
#: the Fleet page: the scan result directory, and its executions table (a selection opens a row)
#: the "Compare runs" page: run b (a sample or a server path), the filter, the query opened
RUNS_SAMPLE = "runs_sample"
RUNS_PATH = "runs_path"
RUNS_ONLY_CHANGED = "runs_only_changed"
RUNS_QUERY = "runs_query"
FLEET_PATH = "fleet_path"
FLEET_TABLE = "fleet_table"
FLEET_QUERIES = "fleet_queries"  # its queries table (a selection opens the query's last execution)
#: the Fleet page's folder, kept across pages (the box's widget state is dropped on another page)
FLEET_DIR = "_fleet_dir"

#: presets the Compare and Share pages start from
DEFAULT_COMPARE_PRESETS = ["actual", "spark-3.0.1-defaults", "spark-4.x-defaults"]


def opened_key(job_id: str) -> str:
    """Set once a finished run's capture was opened, so it opens only once."""
    return f"_opened_{job_id}"


def query_pick_key(source_path: str) -> str:
    """The query selectbox's key for one source: a new source gets a new widget, so the old
    source's pick (and its label) never shows in it."""
    return f"{QUERY_PICK}-{zlib.crc32(source_path.encode('utf-8', 'replace')):08x}"


def overview_list_key(source_path: str) -> str:
    """The Overview's Queries / Executions choice for one source (each source starts on its default)."""
    return f"{OVERVIEW_LIST}-{zlib.crc32(source_path.encode('utf-8', 'replace')):08x}"


def listed_key(name: str, source_path: str) -> str:
    """A listed source's widget ``name`` (:data:`LISTED_GROUP`, ...) for one source."""
    return f"{name}-{zlib.crc32(source_path.encode('utf-8', 'replace')):08x}"


def group_executions_key(query: str) -> str:
    """The executions table of one query group (a selection in one group's table never opens a
    row of another's)."""
    return f"{GROUP_TABLE}-{query}"


def set_source(path: str, label: str, ref: dict) -> None:
    """Make ``path`` the source of every page; the query pick starts over."""
    st.session_state[SOURCE_PATH], st.session_state[SOURCE_LABEL] = path, label
    st.session_state[SOURCE_REF] = ref
    st.session_state.pop(QUERY_ID, None)
    if "q" in st.query_params:  # a query id of the old source must not pick one in the new source
        del st.query_params["q"]
