"""The fixes of one query view, whatever its source: replayed exactly on a capture or listener
log (:mod:`.recommend`), estimated on a plain event log (:mod:`.fix_estimate`)."""
from __future__ import annotations

from aqe_core.advise.fix_estimate import recommend_estimated
from aqe_core.advise.recommend import Fix, recommend
from aqe_core.advise.session_replay import warm
from aqe_core.advise.whatif import QuerySizes
from aqe_core.model.evidence import Evidence

__all__ = ["PLAIN_NOTE", "fixes_for_view", "prepare_fixes"]

PLAIN_NOTE = ("a plain event log shows only the partitions after AQE: fixes are estimates, and over-coalescing,"
              " broadcasts and shuffles AQE read as they were need exact statistics (a capture, or a log written"
              " with the listener: python -m aqe_core listener --spark-conf)")


def _exact(view: QuerySizes):
    m = view.model
    return m.raw if m is not None and m.raw is not None and m.evidence is Evidence.EXACT else None


def prepare_fixes(views: list[QuerySizes]) -> None:
    """Make now what every later fix's "set for the session" line replays once per application
    (:func:`aqe_core.advise.session_replay.warm`): a server calls it after loading a source."""
    for capture in {id(raw[0]): raw[0] for raw in map(_exact, views) if raw is not None}.values():
        warm(capture)


def fixes_for_view(view: QuerySizes) -> list[Fix]:
    raw = _exact(view)
    if raw is not None:
        capture, index = raw
        q = next((x for x in capture.queries if x.index == index), None)
        return recommend(capture, q) if q is not None else []
    return recommend_estimated(view)
