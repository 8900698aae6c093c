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
