"""The fixes of one query view, whatever its source: replayed exactly on a capture or listener
log (:mod:`.recommend`), estimated on a plain event log (:mod:`.fix_estimate`)."""
from __future__ import annotations

import time
from typing import Sequence

from aqe_core.advise.fix_estimate import NO_CORES, recommend_estimated
from aqe_core.advise.recommend import Fix, recommend
from aqe_core.advise.session_replay import warm
from aqe_core.advise.whatif import QuerySizes
from aqe_core.model.evidence import Evidence

__all__ = ["PLAIN_NOTE", "WARM_BUDGET_S", "fix_notes", "fixes_for_view", "prepare_fixes"]

#: seconds a server spends after a read replaying the application under its queries' fixes
WARM_BUDGET_S = 3.0

PLAIN_NOTE = ("a plain event log shows only the partitions after AQE: fixes are estimates, and over-coalescing,"
              " broadcasts and shuffles AQE read as they were need exact statistics (a capture, or a log written"
              " with the listener: python -m aqe_core listener --spark-conf)")


def _exact(view: QuerySizes):
    m = view.model
    return m.raw if m is not None and m.raw is not None and m.evidence is Evidence.EXACT else None


def prepare_fixes(views: Sequence[QuerySizes], budget_s: float = WARM_BUDGET_S) -> None:
    """Make now what every later fix's "set for the session" line replays
    (:func:`aqe_core.advise.session_replay.warm`): the application's replays once, then its
    replays under every fix an exact query proposes, query by query in the order of ``views``
    (give them ranked), until ``budget_s`` is spent. A server calls it after loading a source,
    so that no later question waits for the application to be replayed (on the 60 exact
    queries of bench_mcp's log: 17 fixes, ~1 s). An application of hundreds of exact queries
    runs out of budget: the first question about a fix left out pays for its replays."""
    stop = time.perf_counter() + budget_s
    seen: set[int] = set()
    for raw in map(_exact, views):
        if raw is None:
            continue
        capture, index = raw
        if id(capture) not in seen:
            seen.add(id(capture))
            warm(capture)
        q = next((x for x in capture.queries if x.index == index), None)
        if q is not None and time.perf_counter() < stop:
            warm(capture, (fix.settings for fix in recommend(capture, q, application=False)))


def fix_notes(view: QuerySizes) -> list[str]:
    """What a plain log's fixes cannot see: its sizes, and its cores where it does not say them."""
    if _exact(view) is not None:
        return []
    return [PLAIN_NOTE] + ([NO_CORES] if view.default_parallelism is None else [])


def fixes_for_view(view: QuerySizes) -> list[Fix]:
    raw = _exact(view)
    if raw is not None:
        capture, index = raw
        q = next((x for x in capture.queries if x.index == index), None)
        return recommend(capture, q) if q is not None else []
    return recommend_estimated(view)
