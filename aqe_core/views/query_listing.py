"""A log's queries listed as it is read: the consumer a listing reader hands each ended
execution to (issue 41).

A streaming job that ran for a week writes 10^5-10^6 SQL executions. To list its queries we keep
nothing of an execution but its :class:`~aqe_core.views.execution_summary.ExecutionSummary`
while it waits for its turn, and of a query only :class:`~aqe_core.views.query_groups.QueryGroup`'s
counters: the reader (``load(..., hand_over=listing)``) forgets each execution once it is handed
over, so memory does not grow with the log. The reader hands executions over as they end; groups
take them in id order (a change point names the execution before it), so a summary waits here
until the reader says no lower id can come.
"""
from __future__ import annotations

import heapq
from typing import Any, Optional

from aqe_core.views.execution_summary import SUMMARY_METRICS, ExecutionSummary, summary_of_execution
from aqe_core.views.query_groups import QueryGroup, QueryGrouper

__all__ = ["QueryListing"]


class QueryListing:
    """Called with (log, execution or None, lowest id still to come or None at the end)."""

    #: the SQL metrics the reader aggregates for a listing (the rest of an execution's are skipped)
    metrics = SUMMARY_METRICS

    def __init__(self) -> None:
        self.grouper = QueryGrouper()
        self.executions = 0
        self._waiting: list[tuple[int, int, ExecutionSummary]] = []
        self._seq = 0

    def __call__(self, log: Any, ex: Any, floor: Optional[int]) -> None:
        if ex is not None:
            self.executions += 1
            self._seq += 1
            heapq.heappush(self._waiting, (ex.id, self._seq, summary_of_execution(log, ex)))
        waiting = self._waiting
        while waiting and (floor is None or waiting[0][0] < floor):
            self.grouper.add(heapq.heappop(waiting)[2])

    def groups(self) -> list[QueryGroup]:
        """The groups, most executions first."""
        return self.grouper.groups()
