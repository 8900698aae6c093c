"""The Overview's triage table: a selected row opens its query on the page of its finding."""
from __future__ import annotations

import streamlit as st

from ui import state

_PAGES = {"partitions": "pages/partitions.py", "plans": "pages/plans.py"}


def open_row(event, rows: list, source_path: str) -> None:
    """``event``: the triage table's state (its selection); ``rows``: the triage rows it
    shows, in order."""
    try:
        selected = event.selection.rows  # type: ignore[union-attr]
    except AttributeError:
        try:
            selected = event["selection"]["rows"]
        except (KeyError, TypeError):
            return
    if not selected or selected[0] >= len(rows):
        return
    row = rows[selected[0]]
    target = _PAGES.get(row.page)
    if target is None and st.session_state.get(state.QUERY_ID) == row.query_id:
        return  # already shown here (the table keeps its selection: rerunning again would loop)
    st.session_state[state.QUERY_ID] = row.query_id
    st.session_state.pop(state.query_pick_key(source_path), None)
    st.query_params["q"] = row.query_id
    if target:
        st.switch_page(target)
    st.rerun()
