"""Sentences the views write about a rule's decision, rendered from the :class:`Reason`'s code
and numbers (never by editing the rule's wording), in the tense the evidence allows.

``hypothetical``: the rule would have decided this, but the recorded run did not do it (a capture
whose query Spark ran under other settings, or a what-if); the sentence says "would".
"""
from __future__ import annotations

import re
from typing import Mapping, Optional

from aqe_core import config
from aqe_core.versions import SparkVersion, as_version

from aqe_core.engine.adaptive import AdaptiveVerdict
from aqe_core.engine.results import DIFFERS, UNDECIDED, JoinResult
from aqe_core.model.evidence import Evidence
from aqe_core.model.reasons import Reason
from aqe_core.engine.trace import STREAM_BLOCKING_CODES, stream_split_why
from aqe_core.engine.results import UNDECIDED_INITIAL, UNDECIDED_NEW_STAGE, UNDECIDED_SHAPE
from aqe_core.engine.codes import (
    BROADCAST_BEFORE_STAGE, BROADCAST_OFF, CONVERT_TO_SHJ, DEMOTED, DISTRIBUTION_BROKEN, FINAL_STAGE_RULES_OFF,
    PLANNED_BROADCAST, PREFER_SHUFFLED_HASH, RUNTIME_BROADCAST, SIZE_UNKNOWN, SKEW_JOIN_DISABLED, SKEW_JOIN_ERROR, SPLIT,
    TOO_BIG_TO_BROADCAST)
from aqe_core.units import mib, num

__all__ = ["ADAPTIVE_DISAGREES", "BLOCKING_CODES", "Sentence", "adaptive_reason", "join_decision_sentence",
           "skew_split_sentence", "skew_row_sentence", "streaming_batch", "streaming_reason"]

#: reasons that stop every skew split of a join (their sentence follows each partition's)
BLOCKING_CODES = (DISTRIBUTION_BROKEN, SKEW_JOIN_DISABLED, FINAL_STAGE_RULES_OFF, SKEW_JOIN_ERROR,
                  *STREAM_BLOCKING_CODES)

_SPLIT_NUMBERS = ("size", "factor", "median", "threshold_bytes", "splits", "target")


class Sentence(str):
    """A sentence with how its numbers are known (``evidence``); it is the text itself, so pages
    and tables show it unchanged."""

    evidence: Evidence

    def __new__(cls, text: str, evidence: Evidence = Evidence.EXACT) -> "Sentence":
        out = super().__new__(cls, text)
        out.evidence = evidence
        return out

    def __reduce__(self):  # pickled by the app's cache: keep the evidence
        return (Sentence, (str(self), self.evidence))


def skew_split_sentence(reason: Reason, *, hypothetical: bool = False) -> Optional[str]:
    """OptimizeSkewedJoin's split of one partition, from the reason's numbers: "left partition 3 is
    skewed: 300 MiB > 5 x median 10 MiB and > 256 MiB; split into 4 parts of about 64 MiB" (or
    "would split into"). None when ``reason`` is not such a split (other rules word their own)."""
    n, s = reason.numbers, reason.subject or {}
    if reason.code != SPLIT or "side" not in s or "partition" not in s or any(k not in n for k in _SPLIT_NUMBERS):
        return None
    cond = f"> {num(n['factor'])} x median {mib(n['median'])} and > {mib(n['threshold_bytes'])}"
    verb = "would split into" if hypothetical else "split into"
    return (f"{s['side']} partition {s['partition']} is skewed: {mib(n['size'])} {cond}; {verb}"
            f" {n['splits']} parts of about {mib(n['target'])}{stream_split_why(s)}")


def skew_row_sentence(reason: Optional[Reason], fallback: str, *, done: bool, blocking: Optional[Reason],
                      evidence: Evidence = Evidence.EXACT) -> Sentence:
    """The skewed-partitions table's sentence for one partition: the rule's reason (``fallback``,
    the skew analysis' sentence, when the rule gave none); when the recorded run did not split it
    (``done`` False) a split is written as hypothetical and a blocking reason is added."""
    text = reason.message if reason is not None else fallback
    if not done:
        if reason is not None:
            text = skew_split_sentence(reason, hypothetical=True) or text
        if blocking is not None:
            text = f"{text}; {blocking.message}"
    return Sentence(text, evidence)


#: said when our InsertAdaptiveSparkPlan check and the recorded plan disagree (no reason claimed)
ADAPTIVE_DISAGREES = ("the recorded plan is not adaptive, but our InsertAdaptiveSparkPlan check says AQE would apply"
                      " under this configuration, so the reason is not known")


def adaptive_reason(verdict: AdaptiveVerdict) -> str:
    """Why AQE did not apply to a query whose recorded plan is not adaptive: the rule's first
    reason, or, when our verdict disagrees with the recorded plan, that we do not know."""
    if verdict.plan_shows_adaptive:
        return ""
    if verdict.applies:
        return ADAPTIVE_DISAGREES
    return verdict.reasons[0].message if verdict.reasons else ""


#: StreamExecution.getBatchDescriptionString, which a micro-batch's SQL execution takes as its description
_BATCH_DESCRIPTION = re.compile(r"(?:^|\n)id = [0-9a-f-]{36}\nrunId = [0-9a-f-]{36}\nbatch = (\d+|init)$")


def streaming_batch(description: Optional[str], job_properties: Mapping[str, str]) -> Optional[str]:
    r"""The micro-batch an execution belongs to (its number), from the ``streaming.sql.batchId``
    property of its jobs or the description Spark gives a micro-batch; None for a batch query.

    >>> streaming_batch("\nid = 2f0e0a2c-0000-4000-8000-000000000001\nrunId = 2f0e0a2c-0000-4000-8000-000000000002\nbatch = 3", {})
    '3'
    >>> streaming_batch("count at <stdin>:1", {}) is None
    True
    """
    if job_properties.get("streaming.sql.batchId"):
        return job_properties["streaming.sql.batchId"]
    m = _BATCH_DESCRIPTION.search(description or "")
    return m.group(1) if m else None


def streaming_reason(spark_version: "str | SparkVersion", batch: str) -> str:
    """Why a streaming micro-batch's execution is not adaptive before 4.1 (checked on a 3.5.9
    log: tests/streaming/test_streaming_logs.py; the Spark sources that do it, StreamExecution
    and IncrementalExecution: :mod:`aqe_core.rules.insert_adaptive_spark_plan`'s docstring)."""
    v = as_version(spark_version)
    return (f"Spark {v.major}.{v.minor} runs a streaming micro-batch without AQE (this execution is part of batch"
            f" {batch}): the streaming query sets {config.ADAPTIVE_EXECUTION_ENABLED}=false on its own session, which"
            f" foreachBatch's batch DataFrames share (adaptive execution of stateless streaming arrived in 4.1:"
            f" {config.ADAPTIVE_EXECUTION_ENABLED_IN_STATELESS_STREAMING})")


#: join reasons that say which size (or setting) decided the strategy
_JOIN_DECIDING = (RUNTIME_BROADCAST, BROADCAST_BEFORE_STAGE, PLANNED_BROADCAST, TOO_BIG_TO_BROADCAST,
                  BROADCAST_OFF, DEMOTED, PREFER_SHUFFLED_HASH, CONVERT_TO_SHJ, SIZE_UNKNOWN,
                  UNDECIDED_SHAPE, UNDECIDED_INITIAL, UNDECIDED_NEW_STAGE)


def join_decision_sentence(j: JoinResult, evidence: Evidence = Evidence.EXACT) -> Sentence:
    """One join's strategy in words: what Spark did, the sizes that decided it (each side's
    runtime size against its threshold), and whether our rules re-made the decision: "Inner join
    on k = k: SortMergeJoin -> BroadcastHashJoin: the right side's size 1.6 KiB (shuffle stage 1
    below the aggregate) fits the static broadcast threshold 256 KiB ...; our rules agree"."""
    what = f"{j.join_type or 'join'} join on {j.keys}" if j.keys else "join"
    strategy = f"{j.initial} -> {j.spark}" if j.initial and j.initial != j.spark else j.spark
    why = [r.message for r in j.reasons if r.code in _JOIN_DECIDING]
    if j.outcome == UNDECIDED:
        verdict = "not re-decided by our rules (not counted as agreement)"
    elif j.outcome == DIFFERS:
        verdict = f"our rules say {j.simulated}{' (skew)' if j.simulated_skew else ''} instead"
    else:
        verdict = "our rules agree"
    return Sentence(f"{what}: {strategy}" + (": " + "; ".join(dict.fromkeys(why)) if why else "") + f"; {verdict}",
                    evidence)
