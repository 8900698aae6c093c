"""Spark's AQE rule order per release, as data: what runs on a stage fragment, in which order.

Mirrors ``AdaptiveSparkPlanExec``'s rule lists (``queryStagePreparationRules``,
``queryStageOptimizerRules`` and the final-stage filter of ``optimizeQueryStage`` /
``finalStageOptimizerRules``) for the rules that change shuffle reads. Rules that do not touch
a read (``ReuseAdaptiveSubquery``, ``PlanAdaptiveDynamicPruningFilters``, ``EnsureRequirements``
...) are left out; the join rules of the AQE optimizer (``DemoteBroadcastHashJoin`` /
``DynamicJoinSelection``) and the planner are :mod:`aqe_core.engine.replan_joins`, run before
the fragments because a changed join changes the fragments' shape.

The order matters: from 3.2, ``OptimizeSkewedJoin`` runs *before* ``CoalesceShufflePartitions``
(coalescing keeps the skew sections), in 3.0/3.1 after it (skew is judged on coalesced sizes);
``OptimizeShuffleWithLocalRead`` always comes last because it reads the specs coalescing made.

    >>> [s.rule for s in pipeline_for("3.0.1").steps]
    ['CoalesceShufflePartitions', 'OptimizeSkewedJoin', 'OptimizeLocalShuffleReader']
    >>> [s.rule for s in pipeline_for("3.5.1").steps]
    ['OptimizeSkewedJoin', 'OptimizeSkewInRebalancePartitions', 'CoalesceShufflePartitions', 'OptimizeShuffleWithLocalRead']
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Sequence

from aqe_core.engine.stage_plan import Context, all_origins
from aqe_core.model.stage import Fragment as StageFragment, SpecState, StageStats
from aqe_core.rules import (
    coalesce_shuffle_partitions,
    optimize_shuffle_with_local_read,
    optimize_skew_in_rebalance_partitions,
    optimize_skewed_join_plan,
    optimize_skewed_join_stream,
)
from aqe_core.rules.optimize_skewed_join import splits_join
from aqe_core.versions import SparkVersion, as_version

#: a rule's ``apply`` sees the stage through the model's protocols (Context, Fragment and
#: FragmentState of the stage plan are what the engine passes)
StepFn = Callable[[StageStats, StageFragment, SpecState], None]

#: final-stage filters (``Pipeline.final_stage``)
ALL_RULES = "all"  # every rule runs on the final stage too (3.0, 3.2 - 3.4.1)
SUPPORTED_ORIGINS_3_1 = "supported_origins"  # 3.1 finalStageOptimizerRules
APPLY_FINAL_STAGE_FLAG = "apply_final_stage_shuffle_optimizations"  # 3.4.2+ optimizeQueryStage


@dataclass(frozen=True)
class Step:
    """One Spark rule as the engine runs it on a fragment."""

    rule: str  # Spark's class name
    run: StepFn  # the rule module's ``apply``: its plan-shape check, then its math
    phase: str  # "preparation" (queryStagePreparationRules) or "query_stage" (queryStageOptimizerRules)
    shuffle_read_rule: bool = True  # an AQEShuffleReadRule (3.1: CustomShuffleReaderRule)


@dataclass(frozen=True)
class Pipeline:
    """The rules of one release range, in Spark's order (preparation rules first)."""

    since: SparkVersion
    steps: tuple[Step, ...]
    final_stage: str = ALL_RULES

    @property
    def rules(self) -> tuple[str, ...]:
        return tuple(s.rule for s in self.steps)


def _prep(rule: str, run: StepFn) -> Step:
    return Step(rule, run, "preparation", shuffle_read_rule=False)


def _opt(rule: str, run: StepFn) -> Step:
    return Step(rule, run, "query_stage")


# 3.0.x queryStageOptimizerRules = Seq(ReuseAdaptiveSubquery, CoalesceShufflePartitions,
#   OptimizeSkewedJoin, OptimizeLocalShuffleReader): skew after coalescing (post-coalesce sizes).
_STEPS_3_0 = (
    _opt("CoalesceShufflePartitions", coalesce_shuffle_partitions.apply_3_0),
    _opt("OptimizeSkewedJoin", optimize_skewed_join_plan.apply),
    _opt("OptimizeLocalShuffleReader", optimize_shuffle_with_local_read.apply),
)
# 3.2.x queryStageOptimizerRules = Seq(PlanAdaptiveDynamicPruningFilters, ReuseAdaptiveSubquery,
#   OptimizeSkewedJoin, OptimizeSkewInRebalancePartitions, CoalesceShufflePartitions,
#   OptimizeShuffleWithLocalRead): skew first, on raw sizes; local read after coalescing.
_STEPS_3_2 = (
    _opt("OptimizeSkewedJoin", optimize_skewed_join_plan.apply),
    _opt("OptimizeSkewInRebalancePartitions", optimize_skew_in_rebalance_partitions.apply),
    _opt("CoalesceShufflePartitions", coalesce_shuffle_partitions.apply),
    _opt("OptimizeShuffleWithLocalRead", optimize_shuffle_with_local_read.apply),
)
# 3.3+ OptimizeSkewedJoin(ensureRequirements) is the last queryStagePreparationRule (it sees the
#   whole plan; forceOptimizeSkewedJoin); queryStageOptimizerRules = Seq(
#   PlanAdaptiveDynamicPruningFilters, ReuseAdaptiveSubquery, OptimizeSkewInRebalancePartitions,
#   CoalesceShufflePartitions, OptimizeShuffleWithLocalRead). Unchanged through 4.3.0 (4.3 adds
#   ConvertSortMergeJoinToShuffledHashJoin to the preparation rules: see replan_joins).
_STEPS_3_3 = (
    _prep("OptimizeSkewedJoin", optimize_skewed_join_plan.apply),
    _opt("OptimizeSkewInRebalancePartitions", optimize_skew_in_rebalance_partitions.apply),
    _opt("CoalesceShufflePartitions", coalesce_shuffle_partitions.apply),
    _opt("OptimizeShuffleWithLocalRead", optimize_shuffle_with_local_read.apply),
)

#: release ranges, oldest first: a release uses the last entry whose ``since`` is not after it
PIPELINES: tuple[Pipeline, ...] = (
    Pipeline(SparkVersion(3, 0, 0), _STEPS_3_0),
    # 3.1.x: same rules; finalStageOptimizerRules keeps a CustomShuffleReaderRule on the final
    # stage only if it supports the origin of every shuffle in the input plan
    Pipeline(SparkVersion(3, 1, 0), _STEPS_3_0, SUPPORTED_ORIGINS_3_1),
    Pipeline(SparkVersion(3, 2, 0), _STEPS_3_2),
    Pipeline(SparkVersion(3, 3, 0), _STEPS_3_3),
    # 3.4.2+ optimizeQueryStage: on the final stage, applyFinalStageShuffleOptimizations=false
    # drops every AQEShuffleReadRule from queryStageOptimizerRules
    Pipeline(SparkVersion(3, 4, 2), _STEPS_3_3, APPLY_FINAL_STAGE_FLAG),
)


def pipeline_for(spark_version: "str | SparkVersion") -> Pipeline:
    """The rule pipeline of a release."""
    v = as_version(spark_version)
    chosen = PIPELINES[0]
    for p in PIPELINES:
        if p.since <= v:
            chosen = p
    return chosen


def skew_join_splits(join: str, spark_version: "str | SparkVersion") -> bool:
    """Whether ``OptimizeSkewedJoin`` may split the sides of ``join`` (an operator's name) in this
    release: a sort-merge join always, a shuffled hash join from 3.2
    (:func:`aqe_core.rules.optimize_skewed_join.splits_join`).

    >>> skew_join_splits("ShuffledHashJoin", "3.1.3"), skew_join_splits("ShuffledHashJoin", "3.2.4")
    (False, True)
    """
    return splits_join(join, spark_version)


def skew_after_coalescing(spark_version: "str | SparkVersion") -> bool:
    """Whether the release runs ``OptimizeSkewedJoin`` after ``CoalesceShufflePartitions`` (3.0,
    3.1): skew is then judged on each join side's coalesced partitions, so the lines drawn for a
    join side are over its own coalesced sizes; from 3.2 the skew rule comes first, on the raw
    sizes, and the two sides of a join share one coalescing target.

    >>> skew_after_coalescing("3.1.3"), skew_after_coalescing("3.2.4"), skew_after_coalescing("4.3.0")
    (True, False, False)
    """
    rules = pipeline_for(spark_version).rules
    return rules.index("CoalesceShufflePartitions") < rules.index("OptimizeSkewedJoin")


#: 3.1.x ``CustomShuffleReaderRule.supportedShuffleOrigins`` (checked in the 3.1.3 release)
RULE_ORIGINS_3_1 = {
    "CoalesceShufflePartitions": frozenset({"ENSURE_REQUIREMENTS", "REPARTITION"}),
    "OptimizeSkewedJoin": frozenset({"ENSURE_REQUIREMENTS"}),
    "OptimizeLocalShuffleReader": frozenset({"ENSURE_REQUIREMENTS"}),
}


def final_stage_rules_3_1(ctx: Context) -> set[str]:
    """3.1 ``AdaptiveSparkPlanExec.finalStageOptimizerRules``: a shuffle-reader rule runs on the
    final stage only if it supports the origin of *every* shuffle of the input plan, so a
    user repartition keeps the partitioning it asked for (3.2 replaced this by validating the
    required distribution)."""
    origins = all_origins(ctx)
    return {name for name, ok in RULE_ORIGINS_3_1.items() if origins <= ok}


def rule_changes(before: "str | SparkVersion", after: "str | SparkVersion", joins: Sequence[str] = ()) -> list[str]:
    """What a rule does differently between two releases beyond the rule order (each rule module
    words its own change), for a query with these join strategies.

    >>> rule_changes("4.1.4", "4.2.1", ["BroadcastHashJoin"])[0][:62]
    'OptimizeSkewedJoin splits the skewed partitions of a broadcast'
    """
    return optimize_skewed_join_stream.changed_between(before, after, joins)


def streaming_without_aqe(spark_version: "str | SparkVersion") -> bool:
    """Whether the release runs streaming micro-batches without AQE (the rule's answer:
    :func:`aqe_core.rules.insert_adaptive_spark_plan.streaming_runs_without_aqe`)."""
    from aqe_core.rules.insert_adaptive_spark_plan import streaming_runs_without_aqe

    return streaming_runs_without_aqe(spark_version)
