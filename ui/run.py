"""The Run page's view: SQL or a built-in workload run on Spark in the background, its
progress, and the server's past runs. A finished run's capture becomes the source."""
from __future__ import annotations

import time

import streamlit as st

from aqe_core.live import workloads
from aqe_core.live.jobs import MasterNotAllowed, RunManager
from aqe_core.live.sql_guard import UnsafeSQL
from aqe_core.plain_text import md_text
from aqe_core.model.presets import BUILTIN_PRESETS
from aqe_core.server_settings import server_settings
from aqe_core.storage import CorruptFile
from ui import state
from ui.state import set_source as _set_source

_DEFAULT_SQL = "SELECT id % 10 AS k, count(*) AS n FROM range(0, 1000000, 1, 8) GROUP BY id % 10"


@st.cache_resource
def run_manager() -> RunManager:
    """One run queue per server process (shared by every session)."""
    return RunManager()


def run_page() -> None:
    """SQL editor or workload picker, preset, master URL; runs in the background with progress."""
    mgr = run_manager()
    settings = server_settings()
    kind = st.segmented_control("What to run", ["Workload", "SQL"], default="Workload", key="run_kind")
    master = st.selectbox("Master", list(settings.allowed_masters), key="run_master",
                          help="the Spark masters this server allows (allowed_masters in server.toml); the first run "
                               f"fixes the master for this server process. Runs stop after {settings.run_time_limit_s:g} s.")
    if kind == "SQL":
        _sql_form(mgr, master)
    else:
        _workload_form(mgr, master)
    _run_status(mgr)
    _past_runs(mgr)


def _sql_form(mgr: RunManager, master: str) -> None:
    sql = st.text_area("SQL (one read-only query)", key="run_sql", height=160, value=_DEFAULT_SQL)
    names = [p.name for p in BUILTIN_PRESETS if p.name != "actual"]
    preset = st.selectbox("Preset", ["(Spark defaults)"] + names, key="run_preset")
    start = st.button("Run", type="primary", key="run_start")
    if start:
        conf = {} if preset == "(Spark defaults)" else dict(next(p for p in BUILTIN_PRESETS if p.name == preset).settings)
        try:
            job = mgr.submit_sql(sql, conf, master=master, label="sql")
            st.session_state[state.RUN_JOB] = job.job_id
        except (UnsafeSQL, MasterNotAllowed) as exc:
            st.error(f"Not run: {md_text(exc)}")


def _workload_form(mgr: RunManager, master: str) -> None:
    names = list(workloads.WORKLOADS)
    name = st.selectbox("Workload", names, key="run_workload",
                        format_func=lambda n: f"{n}: {workloads.WORKLOADS[n].doc}")
    w = workloads.WORKLOADS[name]
    scale = st.slider("Scale", 0.25, 20.0, 1.0, 0.25, key="run_scale", help="1 = seconds on a laptop")
    chosen = st.multiselect("Presets", [p.name for p in w.presets], default=[p.name for p in w.presets][:2],
                            key="run_presets", help="; ".join(f"{p.name}: {p.doc}" for p in w.presets))
    if st.button("Run", type="primary", key="run_start"):
        try:
            job = mgr.submit_workload(name, scale=scale, presets=chosen or None, master=master)
            st.session_state[state.RUN_JOB] = job.job_id
        except MasterNotAllowed as exc:
            st.error(f"Not run: {md_text(exc)}")


def run_label(job_id: str, what: str) -> str:
    """How the sidebar names a run's capture when it is the source."""
    return f"capture of run {job_id} ({what})"


def _past_runs(mgr: RunManager) -> None:
    """The server's finished runs (from the run index on disk, so they outlive a restart)."""
    try:
        entries = mgr.past_runs(20)
    except (OSError, CorruptFile) as exc:
        st.warning(f"Past runs cannot be listed: {md_text(exc)}")
        return
    if mgr.index.note:
        st.warning(md_text(mgr.index.note))
    if not entries:
        return
    st.subheader("Past runs")
    for e in entries:
        path = mgr.index.file_of(e)
        when = time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(e.started))
        left, right = st.columns([5, 1], vertical_alignment="center")
        left.text(f"{when}  {e.label}  [{e.state}]" + (f"  {e.message}" if e.message else ""))
        if path is not None and right.button("Open", key=f"open_run_{e.job_id}"):
            _set_source(str(path), run_label(e.job_id, e.label), {"kind": "path", "path": str(path)})
            st.rerun()


@st.fragment(run_every=1.0)
def _run_status(mgr: RunManager) -> None:
    job_id = st.session_state.get(state.RUN_JOB)
    job = mgr.status(job_id) if job_id else None
    if job is None:
        return
    with st.container(border=True, key="run-status"):
        if job.active:
            _active_progress(mgr, job)
        elif job.state == "done":
            st.success(md_text(f"{job.label}: {job.message}"))
            opened = state.opened_key(job.job_id)
            if st.session_state.get(state.SOURCE_PATH) != job.result_path and not st.session_state.get(opened):
                st.session_state[opened] = True
                _set_source(job.result_path, run_label(job.job_id, job.label), {"kind": "path", "path": job.result_path})
                st.rerun(scope="app")
            st.caption("The capture is now the source of every page (Plans, Partitions, Compare ...).")
        else:
            st.error(md_text(f"{job.label}: {job.state}: {job.message}"))


def _active_progress(mgr: RunManager, job) -> None:
    """A running or queued job: one progress bar and Cancel."""
    p = job.progress
    ahead = mgr.ahead(job.job_id)
    if ahead:
        st.progress(0.0, text=f"queued: {ahead} run(s) ahead")
    elif p is not None and p.tasks_total:
        st.progress(min(1.0, p.tasks_done / max(p.tasks_total, 1)),
                    text=f"{md_text(job.label)}: query {p.query_index + 1}/{p.query_count}, {p.phase}: jobs "
                         f"{p.jobs_done}/{p.jobs_total}, stages {p.stages_done}/{p.stages_total}, tasks "
                         f"{p.tasks_done}/{p.tasks_total}")
    else:
        st.progress(0.0, text=f"{md_text(job.label)}: {job.state} (starting Spark can take a few seconds)")
    if st.button("Cancel", key="run_cancel"):
        mgr.cancel(job.job_id)
