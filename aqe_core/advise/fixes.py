"""The fixes of one query view, whatever its source: replayed exactly on a capture or listener
log (:mod:`.recommend`), estimated on a plain event log (:mod:`.fix_estimate`)."""
from __future__ import annotations

from aqe_core.advise.fix_estimate import recommend_estimated
from aqe_core.advise.recommend import Fix, recommend
from aqe_core.advise.whatif import QuerySizes
from aqe_core.model.evidence import Evidence

__all__ = ["PLAIN_NOTE", "fixes_for_view"]

PLAIN_NOTE = ("a plain event log shows only the partitions after AQE: fixes are estimates, and over-coalescing,"
              " broadcasts and shuffles AQE read as they were need exact statistics (a capture, or a log written"
              " with the listener: python -m aqe_core listener --spark-conf)")


def fixes_for_view(view: QuerySizes) -> list[Fix]:
    m = view.model
    if m is not None and m.raw is not None and m.evidence is Evidence.EXACT:
        capture, index = m.raw
        q = next((x for x in capture.queries if x.index == index), None)
        return recommend(capture, q) if q is not None else []
    return recommend_estimated(view)
