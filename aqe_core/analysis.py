"""Compatibility path (issue 9): split into :mod:`aqe_core.views.query` (the view dataclasses,
join reads, lines filled in from :mod:`aqe_core.engine.lines`) and
:mod:`aqe_core.views.from_eventlog` (event-log executions as views)."""
# compat shim (issue 9)
from __future__ import annotations

from typing import Any, Callable

from aqe_core.views.from_eventlog import view_from_execution, views_from_eventlog
from aqe_core.views.query import (
    JoinRead, Line, QueryView, ShuffleView, SkewRow, _is_read, compute_group_lines, compute_lines,
    default_parallelism_from_properties, join_keys as _join_keys, join_reads, join_type_of, read_join_context,
    regroup_coalesce_lines,
)

__all__ = ["JoinRead", "Line", "QueryView", "ShuffleView", "SkewRow", "compute_group_lines", "compute_lines",
           "default_parallelism_from_properties", "join_reads", "join_type_of", "read_join_context",
           "regroup_coalesce_lines", "view_from_execution", "views_from_eventlog"]
_KEEP = (_is_read, _join_keys)


def _outcome(ex: Any, outcome_line: Callable[[Any], str]) -> str:
    """The old slice of the CLI's one-line summary by column (the views use
    :func:`aqe_core.views.eventlog_summary.outcome_text`, equal on every sample log)."""
    line = outcome_line(ex)
    head = len(f"#{ex.id:<4} {ex.status:<9} ") + 40 + 2
    return line[head:].strip() if len(line) > head else "no AQE"
