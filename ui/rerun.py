"""Re-run for real (Compare page, captures only): run the captured query on Spark under each
chosen preset and set Spark's outcome next to the simulation's."""
from __future__ import annotations

import pandas as pd
import streamlit as st

from aqe_core.views.query import QueryView
from aqe_core.opening import views_from_capture_file
from aqe_core.advise.verify import rerun_rows
from aqe_core.plain_text import md_text
from aqe_core.opening import LoadedSource
from ui import state
from ui.run import run_manager


def rerun_for_real(src: LoadedSource, view: QueryView, presets: list, outcomes: list) -> None:
    """Compare page: run the captured query under each preset on Spark, next to the simulation."""
    mgr = run_manager()
    with st.container(border=True, key="rerun"):
        st.markdown("**Re-run for real** — run this query on Spark under each preset and compare with the simulation")
        if st.button("Re-run for real", key="rerun_start"):
            try:
                job = mgr.submit_rerun(src.path, int(view.query_id), presets)
                st.session_state[state.RERUN_JOB] = (job.job_id, [p.name for p in presets], src.path, view.query_id)
            except (ValueError, StopIteration) as exc:
                st.error(f"Cannot re-run: {md_text(exc)}")
        info = st.session_state.get(state.RERUN_JOB)
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
        _comparison(job.result_path, info[1], outcomes)


def _comparison(result_path: str, names: list, outcomes: list) -> None:
    """One row per preset: the simulation's partitions, splits and joins beside Spark's."""
    rerun = views_from_capture_file(result_path)
    st.dataframe(pd.DataFrame(rerun_rows(names, outcomes, rerun.views)), hide_index=True, width="stretch")
    st.caption("exact: yes only where the simulation is what Spark did in the re-run (every read's partitions and"
               " sizes, the skew splits, the joins). Presets naming another Spark release are simulated with that"
               " release's rules but re-run on this Spark with their settings.")


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
        st.text("\n".join(_preset_lines(p, names)))
    if st.button("Cancel", key="rerun_cancel"):
        mgr.cancel(job_id)


def _preset_lines(p, names: list) -> list[str]:
    lines = []
    for i, name in enumerate(names):
        if p is None or i > p.query_index:
            lines.append(f"{name}: waiting")
        elif i < p.query_index or p.phase == "done":
            lines.append(f"{name}: done")
        else:
            lines.append(f"{name}: {p.phase}, stages {p.stages_done}/{p.stages_total}, tasks {p.tasks_done}/{p.tasks_total}")
    return lines
