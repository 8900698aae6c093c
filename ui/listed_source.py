"""A log listed by query (issue 41): the Overview's query table and the sidebar's picker.

A log of more than the server's ``max_executions`` executions opens as a listing
(:class:`~aqe_core.views.listed_queries.ListedQueries`): its query groups, no view per execution.
The picker chooses a query, then an execution of it by its place among the query's executions (a
number input: a query run a million times cannot be a selectbox), and opens it on request, as
opening one reads the log again (that execution's events, every other line skipped unparsed:
seconds to a few tens of seconds for gigabytes); the last few opened stay (pages switch at once).
"""
from __future__ import annotations

import os
from typing import Any, Optional

import streamlit as st

from aqe_core.opening import LoadedSource, SourceError
from aqe_core.plain_text import md_text
from aqe_core.server_settings import server_settings
from aqe_core.views.listed_queries import ListedQueries
from aqe_core.views.query import QueryView
from ui import state
from ui.query_groups import group_columns, group_decisions
from ui.tables import text_table
from ui.triage import selected_row


def listed_overview(src: LoadedSource) -> None:
    """The Overview of a listed source: one row per query; a query picked shows its decisions
    and opens one of its executions."""
    listing = _listing(src)
    st.caption(f"This log holds {listing.executions:,} SQL executions, more than the server keeps"
               f" (max_executions = {server_settings().max_executions:,}), so it is listed by query:"
               f" {len(listing.groups):,} queries, most executions first. An execution opens on demand, here or in"
               " the sidebar, by reading its events from the log again (the other executions' are skipped: far"
               " quicker than listing it).")
    with st.container(key="listed_queries"):
        st.dataframe(text_table([g.row() for g in listing.groups]), hide_index=True, width="stretch",
                     on_select="rerun", selection_mode="single-row", key=state.LISTED_TABLE, column_config=group_columns())
    index = selected_row(st.session_state.get(state.LISTED_TABLE))
    if index is None or index >= len(listing.groups):
        return
    group = listing.groups[index]
    group_decisions(group)
    key = state.listed_key(state.LISTED_ROW_POSITION, src.path) + f"-{index}"
    pos = st.number_input(f"Execution of this query: its place among them (1 to {group.count:,})", min_value=1,
                          max_value=max(1, group.count), step=1, key=key)
    eid = group.execution_ids[int(pos) - 1]
    st.button(f"Open execution {eid}", key="listed_open_row", on_click=_open, args=(eid,),
              help="reads this execution's events from the log again to build its view")


def _listing(src: LoadedSource) -> ListedQueries:
    assert src.listing is not None
    return src.listing


def _open(eid: str) -> None:
    """An execution asked for (a button): the query of every page from this run on."""
    st.session_state[state.QUERY_ID] = eid
    st.query_params["q"] = eid


def _sync(src: LoadedSource, wanted: Optional[str]) -> None:
    """Set the picker's query and place to ``wanted`` (a pick, a link, an Overview button) once
    it changes, or when a page draws the picker first (widget state is per page)."""
    listing = _listing(src)
    gkey, pkey = state.listed_key(state.LISTED_GROUP, src.path), state.listed_key(state.LISTED_POSITION, src.path)
    synced = state.listed_key(state.LISTED_SYNCED, src.path)
    g, p = st.session_state.get(gkey), st.session_state.get(pkey)
    # (a log still written to, read again, may hold other groups: a stale pick is reset)
    fits = isinstance(g, int) and 0 <= g < len(listing.groups) and isinstance(p, (int, float)) \
        and 1 <= p <= listing.groups[g].count
    if fits and st.session_state.get(synced) == wanted:
        return
    st.session_state[synced] = wanted
    index = listing.group_of(wanted) if wanted else None
    if index is None:
        if not fits:
            st.session_state[gkey], st.session_state[pkey] = 0, 1
        return
    st.session_state[gkey] = index
    st.session_state[pkey] = listing.groups[index].execution_ids.index(wanted) + 1


def _group_changed(pkey: str) -> None:
    st.session_state[pkey] = 1  # (the place may be past the new query's executions)


def pick_listed(src: LoadedSource, where: Any, owner: Optional[str]) -> Optional[QueryView]:
    """The sidebar's picker for a listed source, drawn in ``where``: a query, an execution of it
    by its place, a button that opens it. Returns the view of the execution opened (the query of
    every page), or None until one is."""
    listing = _listing(src)
    if not listing.groups:
        where.warning("This source holds no SQL executions.")
        return None
    wanted = st.session_state.get(state.QUERY_ID) or st.query_params.get("q")
    _sync(src, wanted)
    gkey, pkey = state.listed_key(state.LISTED_GROUP, src.path), state.listed_key(state.LISTED_POSITION, src.path)
    groups = listing.groups
    index = where.selectbox("Query", range(len(groups)), key=gkey, on_change=_group_changed, args=(pkey,),
                            format_func=lambda i: f"{groups[i].name[:50]} ({groups[i].count:,} executions)")
    group = groups[index]
    pos = where.number_input(f"Execution: its place among this query's {group.count:,}", min_value=1,
                             max_value=max(1, group.count), step=1, key=pkey)
    eid = group.execution_ids[min(int(pos), group.count) - 1]
    where.button(f"Open execution {eid}", key="listed_open", on_click=_open, args=(eid,),
                 help="reads this execution's events from the log again to build its view")
    if not wanted or listing.group_of(wanted) is None:
        where.caption("This log is listed by query: pick an execution and open it.")
        return None
    return _opened(src, str(wanted), owner)


def _opened(src: LoadedSource, qid: str, owner: Optional[str]) -> Optional[QueryView]:
    """Execution ``qid``'s view: kept, else read from the log again with a progress bar."""
    listing = _listing(src)
    try:
        if listing.is_open(qid):
            return listing.view(qid, owner=owner)
        size = os.path.getsize(src.path) if os.path.isfile(src.path) else None
        text = (f"Opening execution {qid}: this log holds {listing.executions:,} SQL executions, more than the app"
                " keeps, so its events are read from the log again (the other executions' are skipped)")
        bar = st.progress(0.0, text=text)

        def show(done: int, total: Optional[int]) -> None:
            whole = total or size
            bar.progress(min(1.0, done / whole) if whole else 0.0, text=f"{text}: read {done // 2**20:,} MiB")

        with st.spinner(text):
            view = listing.view(qid, progress=show, owner=owner)
        bar.empty()
    except SourceError as exc:
        st.error(f"Could not open execution {md_text(qid)}: {md_text(exc)}")
        return None
    if view is None:
        st.warning(f"Execution {md_text(qid)} is not in this log.")
    else:
        st.session_state[state.QUERY_ID] = qid
    return view
