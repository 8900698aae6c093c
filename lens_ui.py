"""Streamlit glue shared by the pages: source picker, cached loading, the selected query.

Only UI wiring lives here; anything worth testing lives in ``aqe_core``.
"""
from __future__ import annotations

import os
import time
from typing import Optional

import streamlit as st

from aqe_core.analysis import QueryView
from aqe_core.plain_text import md_text
from aqe_core.server_settings import SettingsError, server_settings
from aqe_core.share import ShareError, load_view_state, store_upload, upload_path
from aqe_core.sources import (
    LoadedSource, SourceError, default_sample, open_on_server, resolve_in_roots, sample_sources,
)


@st.cache_data(show_spinner=False, max_entries=8)
def _load_cached(path: str, mtime: float) -> LoadedSource:
    return open_on_server(path)


def _mtime(path: str) -> float:
    try:
        return os.stat(path).st_mtime
    except OSError:
        return 0.0


def load_with_progress(path: str) -> Optional[LoadedSource]:
    """Load a source (cached by path and mtime), with a progress bar for big files. Only
    paths inside the server's roots open, within the server's decoding limits."""
    try:
        real = str(resolve_in_roots(path))  # before anything looks at the file
        size = os.path.getsize(real) if os.path.isfile(real) else None
        if size and size > 20 * 1024 * 1024:
            bar = st.progress(0.0, text=f"reading {md_text(os.path.basename(real))}")
            src = open_on_server(real, progress=lambda done, total: bar.progress(
                min(1.0, done / (total or size)), text=f"read {done // 2**20} of {(total or size) // 2**20} MiB"))
            bar.empty()
            return src
        return _load_cached(real, _mtime(real))
    except SourceError as exc:
        st.error(f"Could not open this source: {md_text(exc)}")
    except Exception as exc:  # the app must never crash on a bad input (and never echo it)
        st.error(f"Could not open this source (internal error: {type(exc).__name__})")
    return None


def _apply_report_link() -> None:
    """``?report=<id>``: restore a shared view once per session."""
    rid = st.query_params.get("report")
    if not rid or st.session_state.get("_report_applied") == rid:
        return
    st.session_state["_report_applied"] = rid
    try:
        state = load_view_state(rid)
    except ShareError as exc:
        st.session_state["_report_error"] = str(exc)
        return
    src = state.get("source", {})
    if src.get("kind") == "upload":
        p = upload_path(src.get("digest", ""))
        if p is not None:
            st.session_state["source_path"] = str(p)
            st.session_state["source_label"] = f"shared upload {p.name}"
    elif src.get("kind") == "sample":
        for s in sample_sources():
            if s.key == src.get("key"):
                st.session_state["source_path"], st.session_state["source_label"] = s.path, s.label
                st.session_state["source_ref"] = {"kind": "sample", "key": s.key}
    elif src.get("kind") == "path":
        try:  # a shared link opens only what Path on server would
            real = str(resolve_in_roots(src.get("path")))
        except SourceError as exc:
            st.session_state["_report_error"] = str(exc)
            src = {}
        else:
            st.session_state["source_path"] = real
            st.session_state["source_label"] = src.get("path")
    if state.get("query_id") is not None:
        st.session_state["query_id"] = str(state["query_id"])
    if state.get("presets"):
        st.session_state["compare_presets"] = list(state["presets"])
    if state.get("overrides"):
        st.session_state["whatif_overrides"] = dict(state["overrides"])
    st.session_state["source_ref"] = src


def _set_source(path: str, label: str, ref: dict) -> None:
    st.session_state["source_path"], st.session_state["source_label"] = path, label
    st.session_state["source_ref"] = ref
    st.session_state.pop("query_id", None)


def _on_sample_pick() -> None:
    """Only an actual change of the sample widget switches the source (a run's capture stays)."""
    x = st.session_state.get("sample_pick")
    if x is not None:
        _set_source(x.path, x.label, {"kind": "sample", "key": x.key})


def ensure_navigation() -> None:
    """A page opened by URL on a fresh server runs without app.py (Streamlit's legacy pages/
    mode); send it through app.py so navigation, layout and the sidebar are set up."""
    if not st.session_state.get("_navigation"):
        st.switch_page("app.py")


def sidebar_source() -> Optional[LoadedSource]:
    """The source picker shown on every page; returns the loaded source."""
    ensure_navigation()
    try:
        server_settings()  # a broken server.toml stops every page with one clear line
    except SettingsError as exc:
        st.error(f"The server's settings cannot be used: {md_text(exc)}")
        st.stop()
    _apply_report_link()
    if "source_path" not in st.session_state:
        d = default_sample()
        if d is not None:
            st.session_state["source_path"], st.session_state["source_label"] = d.path, d.label
            st.session_state["source_ref"] = {"kind": "sample", "key": d.key}
    with st.sidebar:
        st.markdown("### Source")
        if st.session_state.get("_report_error"):
            st.error(md_text(st.session_state["_report_error"]))
        mode = st.radio("Open", ["Sample", "Upload", "Path on server"], key="source_mode", horizontal=True)
        if mode == "Sample":
            samples = sample_sources()
            keys = [x.key for x in samples]
            current = (st.session_state.get("source_ref") or {}).get("key")
            if samples:
                st.selectbox("Bundled sample", samples, index=keys.index(current) if current in keys else 0,
                             format_func=lambda x: x.label, key="sample_pick", on_change=_on_sample_pick)
        elif mode == "Upload":
            max_mb = server_settings().max_upload_mb
            up = st.file_uploader("Event log, zipped log directory, or capture", key="upload",
                                  help=f"up to {max_mb:g} MB; any Spark codec (zstd, lz4, snappy, lzf), .zip/.gz")
            if up is not None:
                try:
                    if up.size > server_settings().max_upload_bytes:
                        raise ShareError(f"this file is over the server's upload limit of {max_mb:g} MB")
                    digest = store_upload(up.name, up.getvalue())
                except ShareError as exc:
                    st.error(md_text(exc))
                else:
                    path = str(upload_path(digest))
                    if path != st.session_state.get("source_path"):
                        _set_source(path, up.name, {"kind": "upload", "digest": digest})
        else:
            typed = st.text_input("Path to an event log, log directory or capture", key="server_path")
            if typed and st.button("Open", key="open_path"):
                _set_source(typed, typed, {"kind": "path", "path": typed})
        path = st.session_state.get("source_path")
        if not path:
            st.info("No source yet: pick a sample, upload a log, or run a query.")
            return None
        src = load_with_progress(path)
        if src is None:
            return None
        st.caption(md_text(src.label))
        return src


def pick_query(src: LoadedSource) -> Optional[QueryView]:
    """Sidebar selector of the SQL execution that drives every page."""
    views = [v for v in src.views if v.shuffles or v.adaptive] or src.views
    if not views:
        st.sidebar.warning("This source holds no SQL executions.")
        return None
    ids = [v.query_id for v in views]
    qp = st.query_params.get("q")
    wanted = st.session_state.get("query_id") or qp
    if wanted not in ids:
        wanted = next((v.query_id for v in views if v.shuffles), ids[0])
    choice = st.sidebar.selectbox(
        "Query", ids, index=ids.index(wanted), key="query_pick",
        format_func=lambda i: _query_label(next(v for v in views if v.query_id == i)))
    st.session_state["query_id"] = choice
    if st.query_params.get("q") != choice:
        st.query_params["q"] = choice
    return next(v for v in views if v.query_id == choice)


def _query_label(v: QueryView) -> str:
    desc = v.description.replace("\n", " ")
    return f"#{v.query_id} {desc[:40]}" + (" (no AQE)" if not v.adaptive else "")


def current() -> tuple[Optional[LoadedSource], Optional[QueryView]]:
    src = sidebar_source()
    if src is None:
        return None, None
    return src, pick_query(src)


def approx_note(view: QueryView) -> None:
    if view.source_kind == "eventlog":
        st.caption("From an event log: partition sizes are those after AQE; lines that need pre-AQE or per-map sizes are "
                   "approximate (the log does not hold them). Run the query or load a capture for exact numbers.")


def plan_figures_for(view: QueryView):
    """(title, figure) for the initial and final plans, and the rows of the AQE-change table."""
    from aqe_core.plan_graph import diff_plans, plan_figure

    figs, rows = [], []
    if view.initial_plan is not None:
        figs.append(("Initial plan", plan_figure(view.initial_plan, title="Initial plan")))
    if view.final_plan is not None:
        diff = diff_plans(view.initial_plan, view.final_plan)
        figs.append(("Final plan", plan_figure(view.final_plan, changes=diff, title="Final plan")))
        rows = diff.table()
    return figs, rows


def _selected_path(event) -> Optional[str]:
    try:
        points = event.selection.points  # type: ignore[union-attr]
    except AttributeError:
        return None
    for p in points or []:
        cd = p.get("customdata")
        if isinstance(cd, list):
            cd = cd[0] if cd else None
        if isinstance(cd, str):
            return cd
    return None


def plan_page(view: QueryView, version_index: int, search: str) -> None:
    """Initial plan and plan version ``version_index`` side by side, AQE changes marked."""
    import pandas as pd

    from aqe_core.plan_graph import diff_plans, node_details, plan_figure, plan_search, zoom_to_node

    versions = view.plan_versions or [view.final_plan]
    later = versions[max(0, min(version_index, len(versions) - 1))]
    earlier = view.initial_plan
    diff = diff_plans(earlier, later) if later is not None else None
    hits = plan_search(later, search) if (search and later is not None) else []
    left, right = st.columns(2, border=True)
    with left:
        if earlier is not None:
            fig = plan_figure(earlier, changes=diff, change_side="before", title="Initial plan",
                              highlight=plan_search(earlier, search) if search else None)
            ev_l = st.plotly_chart(fig, key="plan_initial", on_select="rerun", selection_mode="points", theme=None,
                                   config={"scrollZoom": True, "displaylogo": False})
            sel = _selected_path(ev_l)
            if sel:
                st.session_state["plan_selected"] = ("initial", sel)
        else:
            st.info("The source has no initial plan for this query.")
    with right:
        if later is not None:
            title = "Final plan" if later is versions[-1] else f"Plan version {version_index + 1} of {len(versions)}"
            fig = plan_figure(later, changes=diff, title=title, highlight=hits or None)
            if hits:
                zoom_to_node(fig, hits[0])
            ev_r = st.plotly_chart(fig, key="plan_final", on_select="rerun", selection_mode="points", theme=None,
                                   config={"scrollZoom": True, "displaylogo": False})
            sel = _selected_path(ev_r)
            if sel:
                st.session_state["plan_selected"] = ("final", sel)
    if search:
        st.caption(f"{len(hits)} node(s) match '{md_text(search)}'" + (" (view zoomed to the first)" if hits else ""))
    if diff is not None and len(diff):
        st.subheader("What AQE changed")
        st.dataframe(pd.DataFrame([{"kind": c.kind, "node": c.node_name, "what": c.explanation} for c in diff]),
                     hide_index=True, width="stretch")
    picked = st.session_state.get("plan_selected")
    if picked:
        which, path = picked
        plan = earlier if which == "initial" else later
        det = node_details(plan, path) if plan is not None else None
        if det:
            with st.container(border=True, key="node-details"):
                st.markdown(f"**{md_text(det['name'])}** ({which} plan, node {det['id'] if det['id'] is not None else '-'})")
                st.code(det["description"] or det["name"], language=None)
                if det["metrics"]:
                    st.dataframe(pd.DataFrame([{"metric": m["name"], "value": m["value"]} for m in det["metrics"]]),
                                 hide_index=True, width="stretch")


@st.cache_resource
def run_manager():
    from aqe_core.run_jobs import RunManager

    return RunManager()


def run_page() -> None:
    """SQL editor or workload picker, preset, master URL; runs in the background with progress."""
    from aqe_core.capture import workloads
    from aqe_core.presets import BUILTIN_PRESETS
    from aqe_core.sql_guard import UnsafeSQL

    from aqe_core.run_jobs import MasterNotAllowed
    from aqe_core.server_settings import SettingsError, server_settings

    mgr = run_manager()
    settings = server_settings()
    kind = st.segmented_control("What to run", ["Workload", "SQL"], default="Workload", key="run_kind")
    master = st.selectbox("Master", list(settings.allowed_masters), key="run_master",
                          help="the Spark masters this server allows (allowed_masters in server.toml); the first run "
                               f"fixes the master for this server process. Runs stop after {settings.run_time_limit_s:g} s.")
    if kind == "SQL":
        sql = st.text_area("SQL (one read-only query)", key="run_sql", height=160,
                           value="SELECT id % 10 AS k, count(*) AS n FROM range(0, 1000000, 1, 8) GROUP BY id % 10")
        names = [p.name for p in BUILTIN_PRESETS if p.name != "actual"]
        preset = st.selectbox("Preset", ["(Spark defaults)"] + names, key="run_preset")
        start = st.button("Run", type="primary", key="run_start")
        if start:
            conf = {} if preset == "(Spark defaults)" else dict(next(p for p in BUILTIN_PRESETS if p.name == preset).settings)
            try:
                job = mgr.submit_sql(sql, conf, master=master, label="sql")
                st.session_state["run_job"] = job.job_id
            except (UnsafeSQL, MasterNotAllowed) as exc:
                st.error(f"Not run: {md_text(exc)}")
    else:
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
                st.session_state["run_job"] = job.job_id
            except MasterNotAllowed as exc:
                st.error(f"Not run: {md_text(exc)}")
    _run_status(mgr)
    _past_runs(mgr)


def _past_runs(mgr) -> None:
    """The server's finished runs (from the run index on disk, so they outlive a restart)."""
    from aqe_core.storage import CorruptFile

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
            _set_source(str(path), f"run {e.job_id}", {"kind": "path", "path": str(path)})
            st.rerun()


@st.fragment(run_every=1.0)
def _run_status(mgr) -> None:
    job_id = st.session_state.get("run_job")
    job = mgr.status(job_id) if job_id else None
    if job is None:
        return
    with st.container(border=True, key="run-status"):
        p = job.progress
        ahead = mgr.ahead(job.job_id)
        if job.active:
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
        elif job.state == "done":
            st.success(md_text(f"{job.label}: {job.message}"))
            if st.session_state.get("source_path") != job.result_path and not st.session_state.get(f"_opened_{job.job_id}"):
                st.session_state[f"_opened_{job.job_id}"] = True
                _set_source(job.result_path, f"run {job.job_id}", {"kind": "path", "path": job.result_path})
                st.rerun(scope="app")
            st.caption("The capture is now the source of every page (Plans, Partitions, Compare ...).")
        else:
            st.error(md_text(f"{job.label}: {job.state}: {job.message}"))


def rerun_for_real(src: LoadedSource, view: QueryView, presets: list, outcomes: list) -> None:
    """Compare page: run the captured query under each preset on Spark, next to the simulation."""
    import pandas as pd

    from aqe_core.capture_view import views_from_capture_file
    from aqe_core.compare import simulate_preset

    mgr = run_manager()
    with st.container(border=True, key="rerun"):
        st.markdown("**Re-run for real** — run this query on Spark under each preset and compare with the simulation")
        if st.button("Re-run for real", key="rerun_start"):
            try:
                job = mgr.submit_rerun(src.path, int(view.query_id), presets)
                st.session_state["rerun_job"] = (job.job_id, [p.name for p in presets], src.path, view.query_id)
            except (ValueError, StopIteration) as exc:
                st.error(f"Cannot re-run: {md_text(exc)}")
        info = st.session_state.get("rerun_job")
        if not info:
            return
        job = mgr.status(info[0])
        if job is None:
            return
        if job.active:
            _rerun_progress(mgr, info[0], info[1])
            return
        if job.state != "done":
            st.error(md_text(f"{job.label}: {job.state}: {job.message}"))
            return
        rerun = views_from_capture_file(job.result_path)
        rows = []
        for name, sim, real in zip(info[1], outcomes, rerun.views):
            actual = simulate_preset(real, _actual_preset())
            rows.append({"preset": name, "simulated partitions": sim.partitions_after,
                         "Spark partitions": actual.partitions_after,
                         "simulated splits": sim.splits, "Spark splits": actual.splits,
                         "simulated joins": "; ".join(sim.join_strategies), "Spark joins": "; ".join(actual.join_strategies),
                         "Spark duration (ms)": real.duration_ms,
                         "agree": "yes" if (sim.partitions_after == actual.partitions_after and sim.splits == actual.splits) else "no"})
        st.dataframe(pd.DataFrame(rows), hide_index=True, width="stretch")
        st.caption("Presets naming another Spark release are simulated with that release's rules but re-run on this "
                   "Spark with their settings, so only same-release rows must agree.")


@st.fragment(run_every=1.0)
def _rerun_progress(mgr, job_id: str, names: list) -> None:
    """Re-run for real's progress, one line per preset; redraws itself until the run ends,
    then reruns the page once so the comparison table appears."""
    job = mgr.status(job_id)
    if job is None or not job.active:
        st.rerun(scope="app")
        return
    p = job.progress
    ahead = mgr.ahead(job_id)
    if ahead:
        st.progress(0.0, text=f"queued: {ahead} run(s) ahead")
    else:
        done = (p.query_index + (1.0 if p.phase == "done" else (p.tasks_done / max(p.tasks_total, 1) if p.tasks_total else 0.0))
                if p else 0.0)
        st.progress(min(1.0, done / max(len(names), 1)),
                    text=f"{job.state}: preset {p.query_index + 1} of {p.query_count}" if p else job.state)
        lines = []
        for i, name in enumerate(names):
            if p is None or i > p.query_index:
                lines.append(f"{name}: waiting")
            elif i < p.query_index or p.phase == "done":
                lines.append(f"{name}: done")
            else:
                lines.append(f"{name}: {p.phase}, stages {p.stages_done}/{p.stages_total}, tasks {p.tasks_done}/{p.tasks_total}")
        st.text("\n".join(lines))
    if st.button("Cancel", key="rerun_cancel"):
        mgr.cancel(job_id)


def _actual_preset():
    from aqe_core.presets import get_preset

    return get_preset("actual")
