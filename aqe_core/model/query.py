"""One query as every source gives it: the common handle views keep and the engine works on.

A capture (file or live run) and an event-log execution both become a :class:`Query`; the engine
dispatches on :attr:`Query.evidence` (exact statistics: replay Spark's rules; Spark's metrics
after AQE: estimate and say so). It is a downward reference from views to the model, so no view
needs to know where its data came from.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal

from aqe_core.model.evidence import Evidence


@dataclass
class Query:
    """``raw`` is the source's own record (``(Capture, index)`` for a capture, the
    ``SQLExecution`` for an event log), kept out of equality and repr."""

    kind: Literal["capture", "eventlog"]
    spark_version: str
    conf: dict[str, str]
    evidence: Evidence
    default_parallelism: int | None = None
    raw: Any = field(default=None, repr=False, compare=False)


def query_from_capture(capture: Any, index: int) -> Query:
    """The query ``index`` of a :class:`~aqe_core.model.capture.Capture`: exact pre-AQE statistics,
    so the engine replays Spark's rules on it (``raw`` = ``(capture, index)``)."""
    q = next(x for x in capture.queries if x.index == index)
    return Query("capture", capture.spark_version, dict(q.conf), Evidence.EXACT, q.default_parallelism,
                 raw=(capture, index))


def query_from_execution(ex: Any, spark_version: str, default_parallelism: int | None = None) -> Query:
    """An event log's SQL execution: only Spark's metrics after AQE, so the engine estimates.
    ``spark_version``: the release whose rules replay it (the log's own evidence, never the
    installed PySpark: :mod:`aqe_core.model.log_release`).

    The conf is the execution's layers merged (later wins). ``raw`` stays None: views are pickled
    by the app's cache and the estimate works on the view's post-AQE sizes, not the execution."""
    conf: dict[str, str] = {}
    for layer in getattr(ex, "conf_layers", None) or []:
        conf.update({str(k): str(v) for k, v in layer.items()})
    return Query("eventlog", spark_version, conf, Evidence.SPARK_METRIC, default_parallelism)
