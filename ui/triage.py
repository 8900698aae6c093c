"""The Overview's triage table: a selected row opens its query on the page of its finding."""
from __future__ import annotations

from typing import Optional

import streamlit as st

from aqe_core.plain_text import md_text
from ui import state

_PAGES = {"partitions": "pages/partitions.py", "plans": "pages/plans.py"}


def selected_row(event) -> Optional[int]:
    """The index of the table's selected row, or None."""
    try:
        rows = event.selection.rows  # type: ignore[union-attr]
    except AttributeError:
        try:
            rows = event["selection"]["rows"]
        except (KeyError, TypeError):
            return None
    return rows[0] if rows else None


def open_row(event, rows: list, source_path: str, query_ids: Optional[list[str]] = None) -> None:
    """``event``: the triage table's state (its selection); ``rows``: the triage rows it
    shows, in order; ``query_ids``: the queries the Query picker lists.

    A selection is acted on once, when it changes: the table keeps its selection across runs,
    and acting on it at every run either loops (a picker that cannot show the query resets it,
    the row sets it again: issue 38) or undoes the picker's later choice. A row whose query
    cannot be shown says so in one line."""
    index = selected_row(event)
    if index is None or index >= len(rows):
        st.session_state.pop(state.TRIAGE_OPENED, None)  # nothing ticked: the next tick opens
        return
    row = rows[index]
    opened = (source_path, row.query_id)
    if st.session_state.get(state.TRIAGE_OPENED) == opened:
        return
    st.session_state[state.TRIAGE_OPENED] = opened
    if query_ids is not None and row.query_id not in query_ids:
        st.warning(f"Query {md_text(row.query_id)} cannot be opened: the source no longer lists it.")
        return
    target = _PAGES.get(row.page)
    if target is None and st.session_state.get(state.QUERY_ID) == row.query_id:
        return  # already shown here
    st.session_state[state.QUERY_ID] = row.query_id
    st.query_params["q"] = row.query_id
    if target:
        st.switch_page(target)
    st.rerun()
