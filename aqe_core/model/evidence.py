"""How a number is known. Every line, sentence and table cell carries one of these, so an
estimate is never written in Spark's voice (see docs/architecture.md, "Evidence")."""
from __future__ import annotations

from enum import Enum


class Evidence(str, Enum):
    """``EXACT``: what AQE itself saw (a capture, listener events). ``SPARK_METRIC``: Spark's own
    metric after AQE (an event log's AQEShuffleRead metrics, accumulator updates). ``ESTIMATE``:
    inferred by us, always shown with its assumption."""

    EXACT = "exact"
    SPARK_METRIC = "spark-metric"
    ESTIMATE = "estimate"

    @property
    def label(self) -> str:
        return {"exact": "exact", "spark-metric": "Spark's metric", "estimate": "estimate"}[self.value]
