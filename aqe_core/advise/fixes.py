"""The fixes of one query view, whatever its source: replayed exactly on a capture or listener
log (:mod:`.recommend`), estimated on a plain event log (:mod:`.fix_estimate`)."""
from __future__ import annotations

from aqe_core.advise.fix_estimate import recommend_estimated
from aqe_core.advise.recommend import Fix, recommend
from aqe_core.advise.session_replay import warm
from aqe_core.advise.whatif import QuerySizes
from aqe_core.model.capture import Capture
from aqe_core.model.evidence import Evidence

__all__ = ["PLAIN_NOTE", "fixes_for_view", "prepare_fixes"]

PLAIN_NOTE = ("a plain event log shows only the partitions after AQE: fixes are estimates, and over-coalescing,"
              " broadcasts and shuffles AQE read as they were need exact statistics (a capture, or a log written"
              " with the listener: python -m aqe_core listener --spark-conf)")


def _exact(view: QuerySizes):
    m = view.model
    return m.raw if m is not None and m.raw is not None and m.evidence is Evidence.EXACT else None


def prepare_fixes(views: list[QuerySizes]) -> None:
    """Make now what every later fix's "set for the session" line replays
    (:func:`aqe_core.advise.session_replay.warm`): the application's replays once, and its
    replays under every fix an exact query proposes, so that no later question waits for the
    application to be replayed (on the 60 exact queries of bench_mcp's log: 17 fixes, ~1 s once
    per read). A server calls it after loading a source."""
    captures: dict[int, tuple[Capture, set[int]]] = {}
    for raw in map(_exact, views):
        if raw is not None:
            captures.setdefault(id(raw[0]), (raw[0], set()))[1].add(raw[1])
    for capture, indexes in captures.values():
        warm(capture, (fix.settings for q in capture.queries if q.index in indexes
                       for fix in recommend(capture, q, application=False)))


def fixes_for_view(view: QuerySizes) -> list[Fix]:
    raw = _exact(view)
    if raw is not None:
        capture, index = raw
        q = next((x for x in capture.queries if x.index == index), None)
        return recommend(capture, q) if q is not None else []
    return recommend_estimated(view)
