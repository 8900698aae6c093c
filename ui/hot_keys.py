"""Partitions page: "Which key is skewed" beside a shuffle's bars (issue 42).

For a capture whose query kept its SQL, a button counts the skewed reducers' keys on Spark
(:func:`aqe_core.live.hot_keys.hot_keys`: guarded unless the server is trusted, under the server's
run time limit); the counted keys stay in the session for the source and query. Elsewhere (an
event log) the SQL for the user's own cluster is shown, labelled as code for them. The fixes per
key come with the entries (:mod:`aqe_core.views.hot_key_entries`).
"""
from __future__ import annotations

from typing import Any

import pandas as pd
import streamlit as st

from aqe_core.plain_text import md_text
from aqe_core.views.hot_key_entries import capture_of, hot_key_entries, hot_key_targets
from aqe_core.views.hot_keys import skewed_shuffles
from aqe_core.views.query import QueryView, ShuffleView
from ui import state


def _count(view: QueryView, skewed: list) -> Any:
    from aqe_core.live.hot_keys import hot_keys
    from aqe_core.server_settings import server_settings

    got = capture_of(view)
    if got is None:
        return None
    return hot_keys(got[0], got[1], hot_key_targets(skewed), time_limit_s=server_settings().run_time_limit_s or 600.0)


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


def hot_keys_box(src: Any, view: QueryView, sv: ShuffleView) -> None:
    """The shuffle's skewed reducers with their keys (counted on request) and fixes."""
    skewed = skewed_shuffles(view)
    if not any(s.view is sv for s in skewed):
        return
    store = st.session_state.setdefault(state.HOT_KEYS, {})
    key = (getattr(src, "path", ""), view.query_id)
    with st.expander("Which key is skewed"):
        got = capture_of(view)
        if key not in store and got is not None and got[0].sql_of(got[1]) and hot_key_targets(skewed):
            if st.button("Count the keys on Spark", key=f"hot-keys-{sv.key}",
                         help="plans the captured query again and counts each skewed reducer's keys with the"
                              " exchange's own partitioning (the SQL guard and the run time limit apply)"):
                try:
                    with st.spinner("Counting on Spark ..."):
                        store[key] = _count(view, skewed)
                except Exception as exc:  # noqa: BLE001 - the guard, Spark or the time limit: one line
                    from aqe_core.exception_text import reason_line

                    st.error(f"Could not count the keys: {md_text(reason_line(exc))}")
        for e in hot_key_entries(view, skewed, store.get(key)):
            if e["stage"] == sv.stage_id and e["side"] == next(s.label for s in skewed if s.view is sv):
                _entry(e)


def hot_key_report_entries(src: Any, view: QueryView) -> list:
    """The report's "Which key is skewed": with the keys counted in this session, if any."""
    found = st.session_state.get(state.HOT_KEYS, {}).get((getattr(src, "path", ""), view.query_id))
    return hot_key_entries(view, skewed_shuffles(view), found)
