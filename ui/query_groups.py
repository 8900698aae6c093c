"""The Overview's queries: a source's executions grouped by query (issue 41).

Where a query ran more than once, the Overview offers one row per query (its executions, their
span, what AQE decided across them); picking a query lists its executions, each opening as a
row of the executions table does. A long-running application's log (a query run
:data:`~aqe_core.views.query_groups.LONG_RUNNING` times or more) opens on its queries.
"""
from __future__ import annotations

import weakref
from typing import Any, Optional

import streamlit as st

from aqe_core.opening import LoadedSource
from aqe_core.plain_text import md_text
from aqe_core.views.query_groups import QueryGroup, group_views, long_running, repeated
from ui import state
from ui.tables import text_table
from ui.triage import open_row, selected_row

_QUERIES, _EXECUTIONS = "Queries", "Executions"
#: id(source) -> (a weak reference to it, its groups): grouped once per loaded source
_GROUPS: dict[int, tuple[Any, list[QueryGroup]]] = {}


def group_columns() -> dict:
    """The query column wide enough for what tells two queries of one description apart (a
    stream's two statements: "streaming query 986ef544 (from batch 0): Inner join on ...")."""
    return {"query": st.column_config.TextColumn(width="large")}


def groups_of(src: LoadedSource) -> list[QueryGroup]:
    """The source's query groups, computed once per loaded source (sources are shared, read-only)."""
    got = _GROUPS.get(id(src))
    if got is not None and got[0]() is src:
        return got[1]
    groups = group_views(src.views)
    for key in [k for k, (ref, _) in _GROUPS.items() if ref() is None]:
        del _GROUPS[key]
    _GROUPS[id(src)] = (weakref.ref(src), groups)
    return groups


def _executions_table(src: LoadedSource, group: QueryGroup, rows: list) -> None:
    ids = set(group.execution_ids)
    mine = [r for r in rows if r.query_id in ids]
    key = state.group_executions_key(group.query)
    open_row(st.session_state.get(key), mine, src.path, [v.query_id for v in src.views])
    st.caption(f"{len(mine)} of its {group.count} executions, ranked by what AQE did and what it cost;"
               " select a row to open it.")
    with st.container(key="group_executions"):
        st.dataframe(text_table([r.to_dict() for r in mine]), hide_index=True, width="stretch",
                     on_select="rerun", selection_mode="single-row", key=key)


def _group(src: LoadedSource, group: QueryGroup, rows: list) -> None:
    group_decisions(group)
    _executions_table(src, group, rows)


def group_decisions(group: QueryGroup) -> None:
    """A group's name, count and span, each decision's outcomes and where one changed."""
    span = group.span_text()
    st.markdown(f"**{md_text(group.name, 100)}**: {group.count:,} executions" + (f" over {span}" if span else ""))
    for d in group.shown_decisions():
        st.write(f"- {md_text(d.label)}: {md_text(d.distribution_text())}")
    changes = group.changes()
    if changes:
        with st.expander(f"Where a decision changed ({sum(d.changed for d in group.decisions.values())})",
                         expanded=any(c.kind == "join" for c in changes)):
            for c in changes:
                st.write(f"- {md_text(c.sentence)}")


def grouped_overview(src: LoadedSource, rows: list) -> bool:
    """Draw the queries of a source whose queries repeat (when the list chosen is Queries); False
    when the page should draw its executions table instead. ``rows``: the triage rows (filtered)."""
    groups = groups_of(src)
    if not repeated(groups):
        return False
    choice = st.radio("List", [_QUERIES, _EXECUTIONS], index=0 if long_running(groups) else 1, horizontal=True,
                      key=state.overview_list_key(src.path),
                      help="Queries: the executions of one query (the same plan, join strategies aside) in one row")
    if choice != _QUERIES:
        return False
    st.caption(f"{len(groups)} queries over {len(src.views)} SQL executions, most executions first; select a query"
               " to list its executions.")
    with st.container(key="query_groups"):
        st.dataframe(text_table([g.row() for g in groups]), hide_index=True, width="stretch", on_select="rerun",
                     selection_mode="single-row", key=state.GROUP_TABLE, column_config=group_columns())
    index: Optional[int] = selected_row(st.session_state.get(state.GROUP_TABLE))
    if index is not None and index < len(groups):
        _group(src, groups[index], rows)
    return True
