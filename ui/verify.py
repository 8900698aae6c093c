"""Verify on the Partitions page: run the query again on Spark with a fix's settings, then score
the prediction against what Spark did (:mod:`aqe_core.advise.verify`)."""
from __future__ import annotations

import pandas as pd
import streamlit as st

from aqe_core.plain_text import md_text
from aqe_core.opening import load_exact
from aqe_core.views.query import QueryView
from aqe_core.advise.recommend import Fix
from aqe_core.advise.verify import score_fix
from ui import state
from ui.run import run_manager


def _key(view: QueryView, fix: Fix) -> str:
    return f"{view.query_id}|{fix.stage_id}|{sorted(fix.settings.items())}|{id(view.model)}"


def verify_box(view: QueryView, fix: Fix, key: str) -> None:
    """A "Verify on Spark" button, the run's progress, then the score (exact fixes only)."""
    if not fix.exact or view.model is None or view.model.raw is None:
        return
    capture, index = view.model.raw
    q = next((x for x in capture.queries if x.index == index), None)
    jobs = st.session_state.setdefault(state.VERIFY_JOBS, {})
    mgr = run_manager()
    if st.button("Verify on Spark", key=f"verify-{key}",
                 help="run this query again on Spark with the change and compare with the prediction"):
        try:
            jobs[_key(view, fix)] = mgr.submit_verify(capture, index, fix.settings).job_id
        except (ValueError, StopIteration) as exc:
            st.error(f"Cannot verify: {md_text(exc)}")
            return
    job_id = jobs.get(_key(view, fix))
    job = mgr.status(job_id) if job_id else None
    if job is None or q is None:
        return
    if job.active:
        _progress(job_id)
        return
    if job.state != "done" or not job.result_path:
        st.error(md_text(f"{job.label}: {job.state}: {job.message}"))
        return
    got = score_fix(fix, q, load_exact(job.result_path))
    (st.success if got.exact else st.warning)(md_text(got.summary()))
    st.dataframe(pd.DataFrame([r.to_dict() for r in got.reads]), hide_index=True, width="stretch")


@st.fragment(run_every=1.0)
def _progress(job_id: str) -> None:
    """The verify run's progress; reruns the page once when the run ends."""
    job = run_manager().status(job_id)
    if job is None or not job.active:
        st.rerun(scope="app")
        return
    p = job.progress
    frac = (p.tasks_done / p.tasks_total) if p and p.tasks_total else 0.0
    st.progress(min(1.0, frac), text=f"verifying on Spark: {job.state}")
