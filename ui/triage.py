"""The Overview's triage table: a selected row opens its query on the page of its finding."""
from __future__ import annotations

import streamlit as st

from ui import state

_PAGES = {"partitions": "pages/partitions.py", "plans": "pages/plans.py"}


def open_row(event, rows: list, source_path: str) -> None:
    """``event``: the dataframe's selection; ``rows``: the triage rows it shows, in order."""
    try:
        selected = event.selection.rows  # type: ignore[union-attr]
    except AttributeError:
        return
    if not selected or selected[0] >= len(rows):
        return
    row = rows[selected[0]]
    st.session_state[state.QUERY_ID] = row.query_id
    st.session_state.pop(state.query_pick_key(source_path), None)
    st.query_params["q"] = row.query_id
    target = _PAGES.get(row.page)
    if target:
        st.switch_page(target)
    st.rerun()
