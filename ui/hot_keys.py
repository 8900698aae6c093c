"""Partitions page: "Which key is skewed" beside a shuffle's bars (issue 42).

For a capture whose query kept its SQL, a button counts the skewed reducers' keys on Spark
(:func:`aqe_core.live.hot_keys.hot_keys`); for an event log whose plan reads as SQL that runs, the
same button runs that SQL on the tables this server's Spark has
(:func:`aqe_core.live.hot_keys_sql.count_side_sql`). Either way the count goes to the server's run
queue (:meth:`aqe_core.live.jobs.RunManager.submit_count`: one Spark run at a time, the run time
limit, guarded unless the server is trusted), so the page never waits on Spark; the job stays in
the session for the source and query. The SQL for the user's own cluster is shown where no key
was counted, labelled as code for them; the fixes per key come with the entries
(:mod:`aqe_core.views.hot_key_entries`).
"""
from __future__ import annotations

from typing import Any, Optional

import pandas as pd
import streamlit as st

from aqe_core.plain_text import md_text
from aqe_core.views.hot_key_entries import capture_of, hot_key_entries, hot_key_targets, side_sql_targets
from aqe_core.views.hot_keys import skewed_shuffles
from aqe_core.views.query import QueryView, ShuffleView
from ui import state
from ui.run import run_manager


def _submit(view: QueryView, skewed: list) -> Optional[str]:
    """Queue the count of ``view``'s skewed reducers' keys; the job's result is ``(found, by_sql)``
    for :func:`hot_key_entries`. None when there is nothing Spark could count here."""
    got = capture_of(view)
    if got is not None and got[0].sql_of(got[1]) and hot_key_targets(skewed):
        capture, q, targets = got[0], got[1], hot_key_targets(skewed)

        def count(spark: Any, limit: float, trusted: bool) -> Any:
            from aqe_core.live.hot_keys import hot_keys

            return hot_keys(capture, q, targets, spark=spark, trusted=trusted, time_limit_s=limit), None
    else:
        sides = side_sql_targets(view, skewed)
        if not sides:
            return None

        def count(spark: Any, limit: float, trusted: bool) -> Any:
            from aqe_core.live.hot_keys_sql import count_side_sql

            return None, {i: count_side_sql(s, spark=spark, trusted=trusted, time_limit_s=limit)
                          for i, s in sides.items()}
    return run_manager().submit_count(f"hot keys of query {view.query_id}", count).job_id


def _counted(key: tuple) -> tuple[Any, Any]:
    """(found, by_sql) of the session's finished count for ``key``; (None, None) before one."""
    job_id = st.session_state.get(state.HOT_KEYS, {}).get(key)
    job = run_manager().status(job_id) if job_id else None
    return job.result if job is not None and job.state == "done" and job.result else (None, None)


@st.fragment(run_every=1.0)
def _progress(job_id: str) -> None:
    """The count's place in the queue; reruns the page once when it ends."""
    job = run_manager().status(job_id)
    if job is None or not job.active:
        st.rerun(scope="app")
        return
    ahead = run_manager().ahead(job_id)
    st.info(f"Counting the keys on Spark: {job.state}" + (f" ({ahead} run(s) before it)" if ahead else ""))


def _entry(e: dict) -> None:
    what = "reducer" if e["reducer"] is not None else "reducers (the log does not name them)"
    size = f", {e['bytes']:,} B ({e['bytes_evidence']})" if e["bytes"] is not None else ""
    split = f", split into {e['splits']}" if e["splits"] else ""
    st.markdown(f"**{what} {e['reducer'] if e['reducer'] is not None else ''}**{md_text(size + split)}")
    if e["error"]:
        st.caption(f"Keys not counted: {md_text(e['error'])}")
    if e["keys"] is not None:
        trust = "verified against Spark's record" if e["verified"] else "UNVERIFIED: a check failed"
        st.caption(f"{e['rows']:,} rows ({e['rows_evidence']}), {trust}; keys: {md_text(', '.join(e['key_names']))}")
        st.dataframe(pd.DataFrame(e["keys"]).rename(columns={"bytes_estimate": "bytes (estimate)"}),
                     hide_index=True, width="stretch")
        for c in e["checks"]:
            st.caption(f"{'✓' if c['passed'] else '✗'} {md_text(c['detail'])}")
        for n in e["notes"]:
            st.caption(md_text(n))
    for f in e["fixes"]:
        st.markdown(f"- *{f['kind']}*: {md_text(f['text'])}"
                    + "".join(f" `{k}={v}`" for s in f["settings"] for k, v in s.items()))
        if f["code"]:
            st.code(f["code"], language="python")
    if e["code_for_your_cluster"]:
        st.caption(md_text(e["code_for_your_cluster"]["label"] + ": " + e["code_for_your_cluster"]["note"]))
        st.code(e["code_for_your_cluster"]["sql"], language="sql")


def _count_button(view: QueryView, skewed: list, sv: ShuffleView, key: tuple) -> None:
    """A button that queues the count where Spark could count here (a capture's query planned
    again, or a log's plan that reads as SQL); nothing otherwise."""
    got = capture_of(view)
    replannable = got is not None and bool(got[0].sql_of(got[1])) and bool(hot_key_targets(skewed))
    if not replannable and not side_sql_targets(view, skewed):
        return
    label = "Count the keys on Spark" if replannable else "Count the keys on this server's tables"
    if st.button(label, key=f"hot-keys-{sv.key}",
                 help="plans the captured query again (or runs the SQL written from the log's plan on the tables of"
                      " the same names) and counts each skewed reducer's keys with the exchange's own partitioning,"
                      " in the background (the SQL guard and the run time limit apply)"):
        try:
            job_id = _submit(view, skewed)
        except ValueError as exc:  # the server's default master is not allowed
            st.error(f"Could not count the keys: {md_text(exc)}")
            return
        if job_id is not None:
            st.session_state[state.HOT_KEYS][key] = job_id


def hot_keys_box(src: Any, view: QueryView, sv: ShuffleView) -> None:
    """The shuffle's skewed reducers with their keys (counted on request, in the background) and fixes."""
    skewed = skewed_shuffles(view)
    if not any(s.view is sv for s in skewed):
        return
    jobs = st.session_state.setdefault(state.HOT_KEYS, {})
    key = (getattr(src, "path", ""), view.query_id)
    with st.expander("Which key is skewed"):
        job = run_manager().status(jobs[key]) if key in jobs else None
        if job is not None and job.state not in ("queued", "running", "done"):
            st.error(f"Could not count the keys: {md_text(job.state + ': ' + job.message)}")
        if job is None or job.state not in ("queued", "running", "done"):
            _count_button(view, skewed, sv, key)
            job = run_manager().status(jobs[key]) if key in jobs else None
        if job is not None and job.active:
            _progress(job.job_id)
        found, by_sql = _counted(key)
        label = next(s.label for s in skewed if s.view is sv)
        for e in hot_key_entries(view, skewed, found, by_sql):
            if e["stage"] == sv.stage_id and e["side"] == label:
                _entry(e)


def hot_key_report_entries(src: Any, view: QueryView) -> list:
    """The report's "Which key is skewed": with the keys counted in this session, if any."""
    found, by_sql = _counted((getattr(src, "path", ""), view.query_id))
    return hot_key_entries(view, skewed_shuffles(view), found, by_sql)
