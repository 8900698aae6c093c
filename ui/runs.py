"""The "Compare runs" page's pieces: picking run b, and drawing a :class:`RunDiff` (issue 28).
The comparison itself is :func:`aqe_core.api.diff_sources`; this module only lays it out."""
from __future__ import annotations

from typing import TYPE_CHECKING, Optional

import streamlit as st

from aqe_core.figures.run_diff import partition_overlay
from aqe_core.model.run_diff import QueryDiff, RunDiff
from aqe_core.opening import LoadedSource, sample_sources
from aqe_core.plain_text import md_text
from aqe_core.report import build_diff_report
from aqe_core.figures.plan_map import plan_map_data
from aqe_core.figures.plan_numbers import box_numbers
from aqe_core.views.diff_groups import group_diff_rows
from aqe_core.views.diff_runs import cause_rows, diff_rows, diff_views, setting_rows, shuffle_rows
from aqe_core.views.plan_diff import diff_plans
from aqe_core.views.query import QueryView
from ui import frame, state
from ui.figure_cache import cached_figure
from ui.plan_map import plan_map
from ui.plans import expansion, plan_text_rows
from ui.tables import text_table

if TYPE_CHECKING:
    import pandas as pd


def pick_run_b(a: LoadedSource) -> Optional[LoadedSource]:
    """Run b: a bundled sample or a path on the server (run a is the sidebar's source)."""
    samples = [s for s in sample_sources() if s.path != a.path]
    col1, col2 = st.columns(2)
    with col1:
        sample = st.selectbox("Run b: a bundled sample", samples, index=None, format_func=lambda s: s.label,
                              placeholder="pick the run to compare with", key=state.RUNS_SAMPLE)
    with col2:
        typed = st.text_input("or a path on the server", key=state.RUNS_PATH)
    path = typed.strip() if typed and typed.strip() else (sample.path if sample is not None else None)
    return frame.load_with_progress(path) if path else None


def _query_label(q: QueryDiff) -> str:
    pct = q.duration_change_pct
    return f"#{q.a.query_id} -> #{q.b.query_id} {q.b.description[:60]}" + (f" ({pct:+.0f}%)" if pct is not None else "")


def show_diff(a: LoadedSource, b: LoadedSource) -> None:
    """The aligned list ranked by time lost (filterable), then one query's diff."""
    # the comparison replays every matched query: once per pair of sources, not on every rerun
    d: RunDiff = cached_figure(a, ("run-diff",), lambda: diff_views(
        a.views, b.views, source_a=a.path, source_b=b.path, kind=(a.kind, b.kind),
        release=(a.spark_version or "", b.spark_version or "")), partner=b)
    st.caption(md_text(f"run a: Spark {d.release[0] or '?'} ({d.kind[0]}); run b: Spark {d.release[1] or '?'}"
                       f" ({d.kind[1]}); {len(d.matched)} queries matched, {len(d.only_a)} only in a,"
                       f" {len(d.only_b)} only in b"))
    for note in d.notes:
        st.warning(md_text(note))
    only_changed = st.toggle("Only queries that changed or got slower", key=state.RUNS_ONLY_CHANGED)
    rows = diff_rows(d, only_changed=only_changed)
    if rows:
        with st.container(key="runs-table"):
            st.dataframe(text_table(rows), hide_index=True, width="stretch")
    for side, refs in (("a", d.only_a), ("b", d.only_b)):
        if refs:
            st.caption(md_text(f"only in run {side}: " + "; ".join(f"#{r.query_id} {r.description[:50]}" for r in refs)))
    if d.groups:  # (a streaming job's micro-batches, a Thrift server's statements: each query once)
        st.markdown("**Queries run more than once** (each run's executions grouped by query, side by side)")
        with st.container(key="runs-groups"):
            st.dataframe(text_table(group_diff_rows(d.groups)), hide_index=True, width="stretch")
    if d.matched and st.button("Build the shareable report", key="runs-report"):
        st.download_button("Download the report (HTML)", build_diff_report(d), file_name="aqe-lens-run-diff.html",
                           mime="text/html", key="runs-report-download")
    if not d.matched:
        return
    q = st.selectbox("Query", d.matched, format_func=_query_label, key=state.RUNS_QUERY)
    if q is not None:
        show_query(q, a.view(q.a.query_id), b.view(q.b.query_id))


def show_query(q: QueryDiff, va: Optional[QueryView] = None, vb: Optional[QueryView] = None) -> None:
    """One matched query: the sentence, the causes, both runs' final plans with what differs
    marked, the settings, each shuffle side by side."""
    st.markdown(f"**{md_text(q.sentence)}**")
    for note in q.notes:
        st.caption(md_text(note))
    if q.causes:
        st.dataframe(text_table(cause_rows(q)), hide_index=True, width="stretch")
    if va is not None and vb is not None and va.final_plan is not None and vb.final_plan is not None:
        show_plans(va, vb)
    if q.settings:
        st.markdown("**Settings that differ** (effective values, each release's defaults included)")
        st.dataframe(text_table(setting_rows(q)), hide_index=True, width="stretch")
    for i, s in enumerate(q.shuffles):
        with st.container(border=True):
            st.markdown(md_text(s.label))
            st.dataframe(text_table(shuffle_rows(s)), hide_index=True)
            if any(s.sizes_after):
                st.plotly_chart(partition_overlay(s), key=f"runs-overlay-{i}", theme=None)


def show_plans(va: QueryView, vb: QueryView) -> None:
    """Run a's and run b's final plans side by side: what run b's plan has that run a's lacks is
    marked on b, what only run a's has on a (the Plans page's matcher, across the two runs)."""
    changes = cached_figure(va, ("runs-plan-diff",), lambda: diff_plans(va.final_plan, vb.final_plan), partner=vb)
    st.markdown("**Final plans** (marked: where the two runs' plans differ)")
    st.caption("The marks name what run b's plan has that run a's lacks (on b) and its partner in run a's (on a),"
               " in the Plans page's words; between two releases Spark's own plan text also differs (an"
               " exchange's options, the read's name), so some operators show as removed and new.")
    col_a, col_b = st.columns(2)
    for col, view, side, title in ((col_a, va, "before", "Run a: final plan"), (col_b, vb, "after", "Run b: final plan")):
        other = vb if view is va else va
        opened: set = st.session_state.setdefault(state.RUNS_OPENED, {}).setdefault(side, set())
        exp = expansion(view.final_plan, "auto", opened)
        data = cached_figure(view, ("runs-map", side, exp), lambda view=view, side=side, title=title, exp=exp: plan_map_data(
            view.final_plan, changes=changes, change_side=side, title=title, expanded=exp, numbers=box_numbers(),
            text=plan_text_rows(view.final_plan, view.spark_version), source_kind=view.source_kind), partner=other)
        with col:
            plan_map(data, f"runs-map-{side}", on_expand=opened.add)


def runs_by_app(runs: "pd.DataFrame") -> dict[str, list[str]]:
    """Each application with two runs or more (:func:`aqe_core.fleet.history.app_runs`): its
    logs, oldest first."""
    out: dict[str, list[str]] = {}
    for app, file in zip(runs["app"], runs["file"]):
        out.setdefault(str(app), []).append(str(file))
    return {app: files for app, files in sorted(out.items()) if len(files) >= 2}


def compare_app_runs(runs: "pd.DataFrame") -> None:
    """The Fleet page's diff of one application across two scans: two of its runs (the last two
    by default) opened and compared."""
    from aqe_core.fleet.history import log_names
    from aqe_core.fleet.result import local_path

    apps = runs_by_app(runs)
    if not apps:
        st.caption("An application needs two runs in the scans to be compared.")
        return
    app = st.selectbox("Application", list(apps), index=None, placeholder="pick an application", key="fleet_diff_app")
    if app is None:
        return
    files = apps[app]
    import pandas as pd

    names = dict(zip(files, log_names(pd.Series(files))))
    c1, c2 = st.columns(2)
    a = c1.selectbox("Run a", files, index=len(files) - 2, format_func=names.get, key="fleet_diff_a")
    b = c2.selectbox("Run b", files, index=len(files) - 1, format_func=names.get, key="fleet_diff_b")
    if a == b:
        st.info("Pick two different runs.")
        return
    paths = [local_path(f) for f in (a, b)]
    if None in paths:
        st.warning("A log of these runs is not on this server's file system: compare them where they are"
                   " (`python -m aqe_core diff A B`).")
        return
    sa, sb = (frame.load_with_progress(p) for p in paths)  # type: ignore[arg-type]
    if sa is not None and sb is not None:
        show_diff(sa, sb)
