"""What a listing reader hands each execution to when a source is opened (issue 41):
:class:`OneExecution` keeps one execution's view (``load_source(..., execution=N)``), and
:func:`handing` gives the query listing, charging the server's meter for each query it makes."""
from __future__ import annotations

from typing import Any, Optional

from aqe_core.readers.budget import LoadMeter
from aqe_core.views.from_eventlog import view_from_execution
from aqe_core.views.listed_queries import GROUP_BYTES
from aqe_core.views.query import QueryView
from aqe_core.views.query_listing import QueryListing

__all__ = ["OneExecution", "handing"]


class OneExecution:
    """A listing reader's consumer that keeps the view of one execution (built as the execution
    leaves the reader, its stages still there) and nothing of the others."""

    def __init__(self, execution: str, plans: bool):
        self.execution, self.plans = execution, plans
        self.views: list[QueryView] = []
        self.kept: Any = None  # the execution itself (the listener's statistics are read against it)

    def __call__(self, log: Any, ex: Any, floor: Optional[int]) -> None:
        if ex is not None and str(ex.id) == self.execution:
            self.views, self.kept = [view_from_execution(log, ex, plans=self.plans)], ex


def handing(one: Optional[OneExecution], lister: Optional[QueryListing], meter: Optional[LoadMeter]) -> Any:
    """The listing reader's sink (``one`` or ``lister``; None: not listing), charging ``meter`` for
    good :data:`GROUP_BYTES` a query group the listing makes (a log of a million distinct queries
    is stopped by the budget; an execution's id is in what :class:`ListingMeter` keeps of it)."""
    sink = one or lister
    if lister is None or meter is None:
        return sink

    def hand(log: Any, ex: Any, floor: Optional[int]) -> None:
        groups = len(lister.grouper)
        lister(log, ex, floor)
        if len(lister.grouper) > groups:
            meter.keep(GROUP_BYTES * (len(lister.grouper) - groups))
    return hand
