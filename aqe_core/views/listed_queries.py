"""A log too long to hold, listed by query: what the app keeps of it (issue 41).

A long-running application's log holds 10^5-10^6 SQL executions; a view each would take
gigabytes. Past the server's ``max_executions`` the app reads the log in listing mode instead
and keeps only its query groups (:class:`~aqe_core.views.query_groups.QueryGroup`: counters, the
change points and eight bytes an execution id). An execution picked is read again from the log
(``opener``: the reader in listing mode reading that one execution's events alone, the others'
skipped unparsed: :mod:`aqe_core.readers.eventlog.focus`), and the last
:data:`KEEP` views opened stay, so moving between pages does not read the log again.
"""
from __future__ import annotations

import threading
from collections import OrderedDict
from typing import Callable, Optional

from aqe_core.views.query import QueryView
from aqe_core.views.query_groups import QueryGroup

__all__ = ["GROUP_BYTES", "KEEP", "ListedQueries"]

#: views of a listed source kept once opened (each is one execution's: tens of KB to a few MB)
KEEP = 4
#: what a group costs beyond its ids, eight bytes each (name, counters, up to 20 change points per
#: decision): what a listing load charges per group it makes
GROUP_BYTES = 16 * 1024

#: ``opener(execution id, progress, owner)``: that execution's view read from the log, or None
Opener = Callable[..., Optional[QueryView]]


class ListedQueries:
    """A listed log's groups, and its executions' views built on demand (see the module)."""

    def __init__(self, groups: list[QueryGroup], executions: int, opener: Opener) -> None:
        self.groups = groups
        self.executions = executions
        self.opener = opener
        self._views: "OrderedDict[str, QueryView]" = OrderedDict()
        self._lock = threading.Lock()

    def group_of(self, query_id: str) -> Optional[int]:
        """The index of the group holding execution ``query_id`` (None: not in this log)."""
        return next((i for i, g in enumerate(self.groups) if str(query_id) in g.execution_ids), None)

    def is_open(self, query_id: str) -> bool:
        """Whether the view of ``query_id`` is kept (opening it again reads nothing)."""
        with self._lock:
            return str(query_id) in self._views

    def view(self, query_id: str, progress: Optional[Callable[[int, Optional[int]], None]] = None,
             owner: Optional[str] = None) -> Optional[QueryView]:
        """Execution ``query_id``'s view: kept, else read from the log again (its events, the
        rest skipped: seconds for a long log; ``progress`` and ``owner`` as the opener takes them). None for an id the
        listing does not hold, without reading anything."""
        qid = str(query_id)
        with self._lock:
            got = self._views.get(qid)
            if got is not None:
                self._views.move_to_end(qid)
                return got
        if self.group_of(qid) is None:
            return None
        view = self.opener(qid, progress, owner)
        if view is not None:
            with self._lock:
                self._views[qid] = view
                while len(self._views) > KEEP:
                    self._views.popitem(last=False)
        return view
