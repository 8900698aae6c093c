"""Spark's ``InsertAdaptiveSparkPlan``: whether AQE applies to a query at all, and why not.

Mirrors ``org.apache.spark.sql.execution.adaptive.InsertAdaptiveSparkPlan.applyInternal`` /
``shouldApplyAQE`` / ``supportAdaptive`` (3.0.1 - 4.3.0). The plan facts are supplied by the
caller (:func:`aqe_core.engine.adaptive.adaptive_verdict` reads them from a captured or logged plan).

Worked example: a plan with an exchange is wrapped when AQE is on (3.2+'s default, not 3.0's);
a command, or a plan with nothing to re-optimise, is not:

    >>> adaptive_applies(PlanFacts(has_exchange=True), {}, spark_version="3.5.1")[0]
    True
    >>> adaptive_applies(PlanFacts(has_exchange=True), {}, spark_version="3.0.1")[1][0].code
    'aqe_disabled'
    >>> adaptive_applies(PlanFacts(is_command=True), {}, spark_version="3.5.1")[1][0].code
    'command'
    >>> ok, reasons = adaptive_applies(PlanFacts(), {}, spark_version="3.5.1")
    >>> ok, reasons[0].code
    (False, 'nothing_to_adapt')
    >>> adaptive_applies(PlanFacts(), {config.ADAPTIVE_EXECUTION_FORCE_APPLY: "true"}, spark_version="3.5.1")[0]
    True

**Streaming** (:func:`streaming_runs_without_aqe`, and the ``is_streaming`` facts above). Each
micro-batch is planned by ``IncrementalExecution`` (apache/spark
``sql/core/src/main/scala/org/apache/spark/sql/execution/streaming/IncrementalExecution.scala``
in 3.5, ``.../execution/streaming/runtime/IncrementalExecution.scala`` in 4.3), whose
``preparations`` put its ``state`` rule in front of ``QueryExecution``'s own, so
``InsertAdaptiveSparkPlan`` sees every micro-batch with the session of the stream. What differs is
that session and this rule:

* up to 4.0, ``StreamExecution.runStream``
  (``.../execution/streaming/StreamExecution.scala`` in 3.5) sets ``spark.sql.adaptive.enabled=false``
  on the stream's cloned session (``sparkSessionForStream``) before running any batch, with the
  comment that adaptive execution could change the number of shuffle partitions; the rule's
  first case (``!conf.adaptiveExecutionEnabled``) then leaves every micro-batch's plan alone, and
  its ``supportAdaptive`` refuses any plan whose logical link is streaming besides. A
  ``foreachBatch`` function's DataFrame belongs to that session too, so its actions run without
  AQE unless the function sets ``spark.sql.adaptive.enabled`` back;
* from 4.1, ``StreamExecution.runStream``
  (``.../execution/streaming/runtime/StreamExecution.scala`` in 4.3) turns AQE off only for a continuous
  trigger (SPARK-53941), and the rule's ``applyInternal`` lets a streaming plan through when
  ``SQLConf.adaptiveExecutionEnabledInStatelessStreaming``
  (``spark.sql.adaptive.streaming.stateless.enabled``, default true) holds and the plan has no
  ``StatefulOperator``: a stateless micro-batch is adaptive, a stateful one is not.

Checked against the released jars (``javap -c`` of ``spark-sql_2.12-3.5.9.jar`` and
``spark-sql_2.13-4.3.0.jar``: which of these classes read ``ADAPTIVE_EXECUTION_ENABLED``, the
stateless-streaming setting and ``ContinuousTrigger``) and against the recorded logs
(tests/fixtures/eventlogs/streaming, tools/record_streaming.py: 3.5.9's micro-batches and the
``foreachBatch`` aggregation on the stream's session are not adaptive, 4.3.0's are).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Mapping

from aqe_core import config
from aqe_core.config import AQEConf, as_conf
from aqe_core.model.reasons import Reason
from aqe_core.model.vocabulary import Vocabulary
from aqe_core.versions import SparkVersion, as_version

# -- vocabulary (:mod:`aqe_core.model.vocabulary`): whether AQE applies, in the rule's words
V = Vocabulary("InsertAdaptiveSparkPlan", __name__)
AQE_DISABLED = V.code("aqe_disabled", "AQE is off (its ``adaptive.enabled`` setting is false).",
                      "{key} is false (default in Spark {v}: {default})")
COMMAND = V.code("command", "The plan is a command: AQE wraps only a query inside a write command.",
                 "the plan is a command; AQE only wraps the query inside a write command")
NOTHING_TO_ADAPT = V.code("nothing_to_adapt", "No exchange, required distribution or subquery (and not forced).",
                          "the plan has no exchange, no required distribution and no subquery: nothing for AQE to"
                          " re-optimise")
NO_LOGICAL_LINK = V.code("no_logical_link", "A plan node has no logical link: AQE cannot re-plan it.",
                         "a plan node has no logical link, so AQE cannot re-plan it")
STREAMING = V.code("streaming", "A streaming query: AQE does not apply (before 4.1, or a stateful one).",
                   "AQE applies only to stateless streaming queries",
                   release="AQE does not apply to streaming queries in this Spark release")
DYNAMIC_PRUNING = V.code("dynamic_pruning", "3.0 does not run AQE on plans with dynamic partition pruning.",
                         "Spark 3.0 does not run AQE on plans with dynamic partition pruning")
ADAPTIVE = V.code("adaptive", "AQE applies: the plan is wrapped in ``AdaptiveSparkPlanExec``.",
                  "AQE applies: the plan is wrapped in AdaptiveSparkPlan")


@dataclass(frozen=True)
class PlanFacts:
    """What ``InsertAdaptiveSparkPlan`` looks at in a physical plan."""

    is_command: bool = False  # ExecutedCommandExec (and, 3.5+, CommandResultExec / V2CommandExec)
    is_subquery: bool = False
    has_exchange: bool = False
    requires_child_distribution: bool = False  # a node requires a distribution other than Unspecified
    has_subquery_expression: bool = False
    has_aqe_cached_plan: bool = False  # InMemoryTableScan over an AQE cached plan (3.5+)
    is_streaming: bool = False
    is_stateless_streaming: bool = False
    has_dynamic_pruning_subquery: bool = False
    all_nodes_have_logical_link: bool = True


def adaptive_applies(
    facts: PlanFacts,
    conf: "Mapping[str, Any] | AQEConf | None" = None,
    *,
    spark_version: "str | SparkVersion",
    can_change_cached_plan_output_partitioning: bool = False,
) -> tuple[bool, list[Reason]]:
    """Whether the plan is wrapped in ``AdaptiveSparkPlanExec``, with the reasons."""
    v = as_version(spark_version)
    c = as_conf(conf, v)
    reasons: list[Reason] = []
    if not c.get(config.ADAPTIVE_EXECUTION_ENABLED):
        default = "false" if v < SparkVersion(3, 2, 0) else "true"
        key = config.ADAPTIVE_EXECUTION_ENABLED
        return False, [AQE_DISABLED.reason(config_keys=(key,), key=key, v=v, default=default)]
    if facts.is_command:
        return False, [COMMAND.reason()]
    should = (c.get(config.ADAPTIVE_EXECUTION_FORCE_APPLY) or facts.is_subquery or facts.has_exchange or facts.requires_child_distribution
              or facts.has_subquery_expression)
    if facts.has_aqe_cached_plan and v >= SparkVersion(3, 5, 0):
        if v >= SparkVersion(4, 3, 0) or can_change_cached_plan_output_partitioning:
            should = True
    if not should:
        reasons.append(NOTHING_TO_ADAPT.reason(config_keys=(config.ADAPTIVE_EXECUTION_FORCE_APPLY,)))
        return False, reasons
    if not facts.all_nodes_have_logical_link:
        return False, [NO_LOGICAL_LINK.reason()]
    if facts.is_streaming:
        if v < SparkVersion(4, 1, 0):
            return False, [STREAMING.reason(form="release")]
        if not facts.is_stateless_streaming or not c.get_or(config.ADAPTIVE_EXECUTION_ENABLED_IN_STATELESS_STREAMING, True):
            return False, [STREAMING.reason()]
    if v < SparkVersion(3, 1, 0) and facts.has_dynamic_pruning_subquery:
        return False, [DYNAMIC_PRUNING.reason()]
    return True, [ADAPTIVE.reason()]


def streaming_runs_without_aqe(spark_version: "str | SparkVersion") -> bool:
    """Whether a release runs a streaming query's micro-batches without AQE: before 4.1,
    ``StreamExecution.runStream`` sets ``spark.sql.adaptive.enabled=false`` on the stream's own
    session (adaptive stateless streaming arrived in 4.1: see the module's docstring for the
    Spark sources, and tests/fixtures/eventlogs/streaming for the recorded 3.5.9 and 4.3.0 runs).

    >>> streaming_runs_without_aqe("3.5.9"), streaming_runs_without_aqe("4.1.0")
    (True, False)
    """
    return as_version(spark_version) < SparkVersion(4, 1, 0)
