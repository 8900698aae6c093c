"""Spark's ``CoalesceShufflePartitions`` rule: which shuffles are coalesced together, and how.

Mirrors ``org.apache.spark.sql.execution.adaptive.CoalesceShufflePartitions.apply`` /
``collectCoalesceGroups`` / ``isSupported`` (3.0.1 - 4.3.0), calling
:mod:`aqe_core.rules.shuffle_partitions_util` for the packing:

* applicability: all leaves of the stage plan are query stages; every shuffle's origin can
  change its partition count (3.0: no user-specified partition count at all; 3.1: origin
  ENSURE_REQUIREMENTS or REPARTITION; 3.2+: origin in ENSURE_REQUIREMENTS / REPARTITION_BY_COL /
  REBALANCE_*), never a SinglePartition;
* coalesce groups (3.3+): shuffles under different children of a Union, Cartesian product,
  broadcast hash / nested-loop join are coalesced independently, and ``minNumPartitions`` is
  shared between groups by their size; a Union that reports its children's partitioning
  (4.1+, ``spark.sql.unionOutputPartitioning``) is one group from 4.3
  (``childrenNeedCompatiblePartitioning`` of a non-plain ``UnionExec``, see
  :mod:`aqe_core.rules.union_exec`); 4.1 and 4.2 still coalesce its children apart;
* ``minNumPartitions``: ``minPartitionNum`` if set, else ``defaultParallelism`` (3.0/3.1
  always, 3.2+ only with ``parallelismFirst``), else 1;
* ``numShufflePartitions`` with ``initialPartitionNum``.

Worked example (3.5): the two shuffles of ``ShufflePartitionsUtil``'s example, read by one
stage, with a 128 MiB advisory size. With ``parallelismFirst=false`` at least 1 partition is
asked for, so the target is the advisory size and 5 partitions become 4:

    >>> MiB = 1024 * 1024
    >>> a = StageInput(1, [100 * MiB, 20 * MiB, 100 * MiB, 10 * MiB, 30 * MiB])
    >>> b = StageInput(2, [10 * MiB, 10 * MiB, 70 * MiB, 5 * MiB, 5 * MiB])
    >>> conf = {config.ADVISORY_PARTITION_SIZE_IN_BYTES: "128m", config.COALESCE_PARTITIONS_PARALLELISM_FIRST: "false"}
    >>> d = coalesce_group([a, b], conf, spark_version="3.5.1", default_parallelism=8)
    >>> d.applied, d.partitions_before, d.partitions_after, d.target_size // MiB
    (True, 5, 4, 128)
    >>> [(s.start_reducer_index, s.end_reducer_index) for s in d.specs_by_stage[1]]
    [(0, 1), (1, 2), (2, 3), (3, 5)]

With the default ``parallelismFirst=true`` the 8 cores ask for 8 partitions: the target drops
to 360 MiB / 8 = 45 MiB and nothing is merged. A user's ``repartition(n)`` is never coalesced:

    >>> coalesce_group([a, b], {config.ADVISORY_PARTITION_SIZE_IN_BYTES: "128m"}, spark_version="3.5.1",
    ...                default_parallelism=8).reasons[-1].message
    'coalescing towards 45 MiB would not reduce the 5 partitions'
    >>> coalesce_group([StageInput(3, [1, 2, 3], origin="REPARTITION_BY_NUM")], {}, spark_version="3.5.1",
    ...                default_parallelism=8).applied
    False
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Mapping, Optional, Sequence

from aqe_core import config
from aqe_core.config import AQEConf, as_conf as _conf
from aqe_core.model.reasons import Reason
from aqe_core.model.vocabulary import Vocabulary
from aqe_core.model import shared_vocabulary as shared
from aqe_core.rules.dynamic_join_selection import USER_HINT
from aqe_core.units import mib
from aqe_core.rules.shuffle_partitions_util import INT_MAX, coalesce_partitions, coalesce_target
from aqe_core.model.specs import ShufflePartitionSpec
from aqe_core.model.stage import Fragment, SpecState, StageNode, StageStats
from aqe_core.versions import SparkVersion, as_version

# -- vocabulary (:mod:`aqe_core.model.vocabulary`): its reason codes, sentences and trace
V = Vocabulary("CoalesceShufflePartitions", __name__)
COALESCE_DISABLED = V.code("coalesce_disabled", "Coalescing is off (its ``coalescePartitions.enabled`` setting is false).",
                           "{key} is false")
UNSUPPORTED_SHUFFLE = V.code(
    "unsupported_shuffle", "A shuffle of the group must keep its partition count (its origin, a single partition or"
    " a user's count), so no stage of the group is coalesced.", "stage {stage} has {why}, so its partition count must"
    " not change: no stage of this group is coalesced", plan="not coalesced: stage {stage} has {what}")
MIN_NUM_FROM_CONF = V.code("min_num_from_conf", "``minPartitionNum`` is set: at least that many partitions.",
                           "at least {n} partitions ({key})")
MIN_NUM_FROM_PARALLELISM = V.code("min_num_from_parallelism", "At least the default parallelism (before 3.2, or"
                                  " with ``parallelismFirst=true``).", "at least {n} partitions (the default"
                                  " parallelism{because}")
MIN_NUM_ONE = V.code("min_num_one", "``parallelismFirst=false``: at least 1 partition, the advisory size decides.",
                     "{key}=false: coalescing aims at the advisory size only (minimum 1 partition)")
PARTITION_COUNTS_DIFFER = V.code("partition_counts_differ", "3.0/3.1: the group's shuffles have different partition"
                                 " counts (or no statistics), so nothing is coalesced.", "the shuffles have different"
                                 " partition counts (or no statistics): not coalesced")
NO_CHANGE = V.code("no_change", "Coalescing towards the target would not reduce the number of partitions.",
                   "coalescing towards {target} would not reduce the {before} partitions")
COALESCED = V.code("coalesced", "Partitions of the read are merged into coalesced ranges.",
                   "{before} partitions{split} coalesced into {after}: target {target} ({why}; advisory {advisory},"
                   " at least {min_num} partitions, minimum size {min_size})")

ENABLED = V.condition("coalesce.enabled", "coalescing is enabled", "The rule's switch.",
                      settings=(config.COALESCE_PARTITIONS_ENABLED,), fails=(COALESCE_DISABLED,))
RUNS_ON_STAGE = V.condition("coalesce.runs_on_stage", "the rule runs on this stage", "The final-stage filter.",
                            settings=(config.ADAPTIVE_APPLY_FINAL_STAGE_SHUFFLE_OPTIMIZATIONS,),
                            fails=(shared.FINAL_STAGE_RULE_EXCLUDED, shared.FINAL_STAGE_RULES_OFF))
MAY_CHANGE = V.condition("coalesce.may_change", "the shuffle may change its number of partitions",
                         "``isSupported``: its origin lets AQE change the count.", fails=(UNSUPPORTED_SHUFFLE, USER_HINT),
                         meets=(COALESCED, NO_CHANGE))
MIN_NUM = V.condition("coalesce.min_num", "the minimum number of partitions", "Information: where the minimum comes"
                      " from.", informs=(MIN_NUM_FROM_PARALLELISM, MIN_NUM_FROM_CONF, MIN_NUM_ONE))
FEWER = V.condition("coalesce.fewer", "coalescing towards the target gives fewer partitions",
                    "The target from the advisory size, the minimum size and the minimum number.",
                    settings=(config.ADVISORY_PARTITION_SIZE_IN_BYTES, config.COALESCE_PARTITIONS_MIN_PARTITION_SIZE,
                              config.COALESCE_PARTITIONS_PARALLELISM_FIRST, config.COALESCE_PARTITIONS_MIN_PARTITION_NUM),
                    fails=(NO_CHANGE,), meets=(COALESCED,))
TRACE = V.trace("CoalesceShufflePartitions", ENABLED, RUNS_ON_STAGE, MAY_CHANGE, MIN_NUM, FEWER,
                verdicts={"changed": "coalesced", "applied": "not coalesced: every partition stays on its own",
                          "unchanged": "not coalesced"})


#: ShuffleOrigin values (``ShuffleExchangeLike.shuffleOrigin``) coalescing accepts, 3.2+.
SUPPORTED_ORIGINS = frozenset(
    {"ENSURE_REQUIREMENTS", "REPARTITION_BY_COL", "REBALANCE_PARTITIONS_BY_NONE", "REBALANCE_PARTITIONS_BY_COL"}
)
#: 3.1.x: ``REPARTITION`` (by expression, no number) was renamed REPARTITION_BY_COL in 3.2.
SUPPORTED_ORIGINS_3_1 = frozenset({"ENSURE_REQUIREMENTS", "REPARTITION"})




def num_shuffle_partitions(conf: "Mapping[str, Any] | AQEConf | None" = None, *, spark_version: "str | SparkVersion") -> int:
    """``SQLConf.numShufflePartitions``: ``initialPartitionNum`` when AQE and coalescing are on
    and it is set, else ``spark.sql.shuffle.partitions`` (all releases)."""
    v = as_version(spark_version)
    c = _conf(conf, v)
    initial = c.get(config.COALESCE_PARTITIONS_INITIAL_PARTITION_NUM)
    if c.get(config.ADAPTIVE_EXECUTION_ENABLED) and c.get(config.COALESCE_PARTITIONS_ENABLED) and initial is not None:
        return initial
    return c.get(config.SHUFFLE_PARTITIONS)


def min_num_partitions(conf: "Mapping[str, Any] | AQEConf | None" = None, *, spark_version: "str | SparkVersion",
                       default_parallelism: int) -> tuple[int, Reason]:
    """The ``minNumPartitions`` CoalesceShufflePartitions passes on, with where it came from."""
    v = as_version(spark_version)
    c = _conf(conf, v)
    explicit = c.get(config.COALESCE_PARTITIONS_MIN_PARTITION_NUM)
    if explicit is not None:
        return explicit, MIN_NUM_FROM_CONF.reason(numbers={"min_num_partitions": explicit},
                                                  config_keys=(config.COALESCE_PARTITIONS_MIN_PARTITION_NUM,),
                                                  n=explicit, key=config.COALESCE_PARTITIONS_MIN_PARTITION_NUM)
    if _parallelism_first(c, v):
        keys = (config.COALESCE_PARTITIONS_PARALLELISM_FIRST,) if v >= SparkVersion(3, 2, 0) else ()
        return default_parallelism, MIN_NUM_FROM_PARALLELISM.reason(
            numbers={"min_num_partitions": default_parallelism, "default_parallelism": default_parallelism},
            config_keys=keys, n=default_parallelism,
            because=f", because {config.COALESCE_PARTITIONS_PARALLELISM_FIRST}=true)" if keys else ")")
    key = config.COALESCE_PARTITIONS_PARALLELISM_FIRST
    return 1, MIN_NUM_ONE.reason(numbers={"min_num_partitions": 1}, config_keys=(key,), key=key)


def _parallelism_first(c: AQEConf, v: SparkVersion) -> bool:
    """Without ``minPartitionNum``: the minimum comes from the default parallelism (always
    before 3.2; from 3.2 when ``parallelismFirst`` is true)."""
    return v < SparkVersion(3, 2, 0) or bool(c.get(config.COALESCE_PARTITIONS_PARALLELISM_FIRST))


def min_num_from_parallelism(conf: "Mapping[str, Any] | AQEConf | None" = None, *,
                             spark_version: "str | SparkVersion") -> bool:
    """Whether :func:`min_num_partitions` takes the default parallelism (the cluster's cores):
    a source that does not know the cores cannot compute the target then.

    >>> min_num_from_parallelism({}, spark_version="4.3.0")
    True
    >>> min_num_from_parallelism({"spark.sql.adaptive.coalescePartitions.minPartitionNum": "8"}, spark_version="4.3.0")
    False
    """
    v = as_version(spark_version)
    c = _conf(conf, v)
    return c.get(config.COALESCE_PARTITIONS_MIN_PARTITION_NUM) is None and _parallelism_first(c, v)


def min_partition_size(conf: "Mapping[str, Any] | AQEConf | None" = None, *, spark_version: "str | SparkVersion",
                       advisory: Optional[int] = None, testing: bool = False) -> int:
    """``minPartitionSize`` passed to coalescing (3.2+; 0 before). When Spark runs in testing
    mode (``spark.testing`` / ``SPARK_TESTING``) it is ``min(conf, advisory / 5)``."""
    v = as_version(spark_version)
    if v < SparkVersion(3, 2, 0):
        return 0
    c = _conf(conf, v)
    size = c.get(config.COALESCE_PARTITIONS_MIN_PARTITION_SIZE)
    if testing:
        adv = advisory if advisory is not None else c.advisory_partition_size
        size = min(size, adv // 5)
    return size


def is_supported_shuffle(origin: str, output_single_partition: bool = False, *, spark_version: "str | SparkVersion",
                         user_specified_num_partitions: bool = False) -> bool:
    """``CoalesceShufflePartitions.isSupported``: 3.0 ``canChangeNumPartitions`` (no user
    repartition of any kind, not a single partition); 3.1 origin ENSURE_REQUIREMENTS or
    REPARTITION (3.1's name for a repartition by expression without a number; checked in the
    3.1.3 release, whose rule lists exactly these two); 3.2+ by :data:`SUPPORTED_ORIGINS`."""
    v = as_version(spark_version)
    if output_single_partition:
        return False
    if v < SparkVersion(3, 1, 0):
        return not user_specified_num_partitions and origin == "ENSURE_REQUIREMENTS"
    if v < SparkVersion(3, 2, 0):
        return not user_specified_num_partitions and origin in SUPPORTED_ORIGINS_3_1
    return origin in SUPPORTED_ORIGINS


def split_min_num_across_groups(min_num: int, group_sizes: Sequence[int]) -> list[int]:
    """3.3+: each coalesce group gets ``max(round(minNum x size_g / total), 1)``; a single group
    ``max(minNum, 1)``; all groups ``minNum`` when the total is 0."""
    if len(group_sizes) == 1:
        return [max(min_num, 1)]
    total = sum(group_sizes)
    if total == 0:
        return [min_num for _ in group_sizes]
    # Scala's math.round on a double: floor(x + 0.5)
    import math

    return [max(int(math.floor(min_num * float(s) / float(total) + 0.5)), 1) for s in group_sizes]


@dataclass
class StageInput:
    """One shuffle query stage of a coalesce group."""

    stage_id: int
    bytes_by_partition_id: Optional[Sequence[int]]
    origin: str = "ENSURE_REQUIREMENTS"
    existing_specs: Optional[Sequence[ShufflePartitionSpec]] = None  # from skew handling
    single_partition: bool = False
    user_specified_num_partitions: bool = False  # 3.0/3.1 canChangeNumPartitions
    advisory_partition_size: Optional[int] = None  # 3.5+ rebalance hint


@dataclass
class CoalesceDecision:
    """What ``CoalesceShufflePartitions`` did to one group of shuffles."""

    applied: bool
    specs_by_stage: dict[int, list[ShufflePartitionSpec]] = field(default_factory=dict)
    target_size: Optional[int] = None
    advisory_size: Optional[int] = None
    min_num_partitions: Optional[int] = None
    min_partition_size: int = 0
    partitions_before: Optional[int] = None
    partitions_after: Optional[int] = None
    reasons: list[Reason] = field(default_factory=list)

    def to_numbers(self) -> dict[str, Any]:
        return {"target": self.target_size, "advisory": self.advisory_size, "min_num_partitions": self.min_num_partitions,
                "min_partition_size": self.min_partition_size, "before": self.partitions_before, "after": self.partitions_after}


def coalesce_group(
    stages: Sequence[StageInput],
    conf: "Mapping[str, Any] | AQEConf | None" = None,
    *,
    spark_version: "str | SparkVersion",
    default_parallelism: int,
    group_min_num: Optional[int] = None,
    testing: bool = False,
    advisory_override: Optional[int] = None,
) -> CoalesceDecision:
    """``CoalesceShufflePartitions.apply`` for one coalesce group (the whole stage plan before 3.3).

    ``group_min_num`` is this group's share of ``minNumPartitions`` (3.3+ with several groups;
    see :func:`split_min_num_across_groups`). ``advisory_override``: 3.5+ rebalance-hint advisory
    (single-stage group) or 4.3's ``minPartitionSize`` under an exploding join.
    """
    v = as_version(spark_version)
    c = _conf(conf, v)
    d = CoalesceDecision(False)
    if not c.get(config.COALESCE_PARTITIONS_ENABLED):
        key = config.COALESCE_PARTITIONS_ENABLED
        d.reasons.append(COALESCE_DISABLED.reason(config_keys=(key,), key=key))
        return d
    unsupported = [s for s in stages if not is_supported_shuffle(s.origin, s.single_partition, spark_version=v,
                                                                  user_specified_num_partitions=s.user_specified_num_partitions)]
    if unsupported:
        s = unsupported[0]
        why = ("a user-specified partition count" if v < SparkVersion(3, 2, 0) and s.user_specified_num_partitions
               else "a single output partition" if s.single_partition else f"shuffle origin {s.origin}")
        d.reasons.append(UNSUPPORTED_SHUFFLE.reason(numbers={"stage": s.stage_id, "origin": s.origin}, stage=s.stage_id,
                                                    why=why))
        return d
    min_num, why_min = min_num_partitions(c, spark_version=v, default_parallelism=default_parallelism)
    if group_min_num is not None:
        min_num = group_min_num
    advisory = advisory_override if advisory_override is not None else c.advisory_partition_size
    min_size = min_partition_size(c, spark_version=v, advisory=advisory, testing=testing)
    max_red = c.get_or(config.COALESCE_PARTITIONS_MAX_REDUCER_PARTITIONS_PER_TASK, INT_MAX)
    d.min_num_partitions, d.min_partition_size, d.advisory_size = min_num, min_size, advisory
    d.reasons.append(why_min)
    stats = [s.bytes_by_partition_id for s in stages]
    if v < SparkVersion(3, 2, 0):
        stats_valid = [(s, b) for s, b in zip(stages, stats) if b is not None]
        if not stats_valid or len({len(b) for _, b in stats_valid}) != 1:
            d.reasons.append(PARTITION_COUNTS_DIFFER.reason())
            return d
    tgt = coalesce_target(stats, advisory_target_size=advisory, min_num_partitions=min_num,
                          min_partition_size=min_size, spark_version=v)
    d.target_size = tgt.target_size
    result = coalesce_partitions(stats, [s.existing_specs for s in stages], advisory_target_size=advisory,
                                 min_num_partitions=min_num, min_partition_size=min_size, spark_version=v,
                                 max_reducer_partitions_per_task=max_red)
    before = max((len(s.existing_specs) if s.existing_specs is not None else len(b) if b is not None else 0)
                 for s, b in zip(stages, stats)) if stages else 0
    d.partitions_before = before
    if not result:
        d.reasons.append(NO_CHANGE.reason(numbers=tgt.__dict__, config_keys=(config.ADVISORY_PARTITION_SIZE_IN_BYTES,),
                                          target=mib(tgt.target_size), before=before))
        return d
    d.applied = True
    d.specs_by_stage = {s.stage_id: list(r) for s, r in zip(stages, result)}
    d.partitions_after = len(result[0])
    target_why = ("the advisory size" if tgt.target_size == advisory else
                  f"total {mib(tgt.total_size)} / {min_num} partitions" if tgt.target_size == tgt.max_target_size else
                  "the minimum partition size")
    # the shuffle's reducers (what its chart draws); a skew split's parts are counted apart
    reducers = max((len(b) for b in stats if b is not None), default=before)
    split = f" ({before} with the skew split's parts)" if before != reducers else ""
    d.reasons.append(COALESCED.reason(
        numbers={"before": reducers, "specs_before": before, "after": d.partitions_after, **tgt.__dict__},
        config_keys=(config.ADVISORY_PARTITION_SIZE_IN_BYTES, config.COALESCE_PARTITIONS_MIN_PARTITION_SIZE,
                     config.COALESCE_PARTITIONS_MIN_PARTITION_NUM, config.COALESCE_PARTITIONS_PARALLELISM_FIRST),
        before=reducers, split=split, after=d.partitions_after, target=mib(tgt.target_size), why=target_why,
        advisory=mib(advisory),
        min_num=min_num, min_size=mib(min_size)))
    return d


# ------------------------------------------------------------------------------------------
# Coalesce groups over a physical plan (3.3+)


@dataclass
class PlanShape:
    """A minimal physical-plan node for group finding: Spark node name, children, and the
    stage it is (for ``ShuffleQueryStage``) or reads (``AQEShuffleRead``)."""

    name: str
    children: list["PlanShape"] = field(default_factory=list)
    stage: Optional[StageInput] = None
    #: a Union reporting ``UnknownPartitioning`` (every union before 4.1): its children are coalesced
    #: apart; one reporting its children's partitioning (4.1+) keeps them in one group
    plain_union: bool = True


_SEPARATING = {"Union", "CartesianProduct", "BroadcastHashJoin", "BroadcastNestedLoopJoin"}
_STAGE_NAMES = {"ShuffleQueryStage", "BroadcastQueryStage", "TableCacheQueryStage", "ResultQueryStage", "QueryStage"}


def _shuffle_stages(node: PlanShape) -> list[StageInput]:
    if node.name == "ShuffleQueryStage" and node.stage is not None:
        return [node.stage]
    if node.name in _STAGE_NAMES:
        return []
    out: list[StageInput] = []
    for ch in node.children:
        out.extend(_shuffle_stages(ch))
    return out


def _all_leaves_are_stages(node: PlanShape) -> bool:
    if node.name in _STAGE_NAMES:
        return True
    if not node.children:
        return False
    return all(_all_leaves_are_stages(ch) for ch in node.children)


def coalesce_groups(plan: PlanShape, *, spark_version: "str | SparkVersion") -> list[list[StageInput]]:
    """``CoalesceShufflePartitions.collectCoalesceGroups`` (3.3+); before 3.3 one group of every
    shuffle stage. Groups whose leaves are not all query stages are dropped, as in Spark."""
    v = as_version(spark_version)
    if v < SparkVersion(3, 3, 0):
        return [_shuffle_stages(plan)] if _all_leaves_are_stages(plan) else []
    groups: list[list[StageInput]] = []

    def visit(node: PlanShape) -> None:
        if node.name == "AQEShuffleRead" and node.children and node.children[0].name == "ShuffleQueryStage":
            groups.append(_shuffle_stages(node))
            return
        if len(node.children) == 1 and node.name not in _STAGE_NAMES:
            visit(node.children[0])
            return
        # a Union reports its children's partitioning from 4.1, but only 4.3 coalesces them as one
        # group (recorded: 4.1.4 and 4.2.1 coalesce them apart, as 3.5 does)
        separating = node.name in _SEPARATING and (node.name != "Union" or node.plain_union or v < SparkVersion(4, 3, 0))
        if separating:
            for ch in node.children:
                visit(ch)
            return
        if node.name == "ShuffleQueryStage" or node.children:
            if _all_leaves_are_stages(node):
                stages = _shuffle_stages(node)
                if stages:
                    groups.append(stages)

    visit(plan)
    return groups



# ------------------------------------------------------------------------------------------
# CoalesceShufflePartitions's plan-shape check on a stage fragment (the engine's stage plan, seen
# through the protocols of :mod:`aqe_core.model.stage`)


def apply(ctx: StageStats, fr: Fragment, state: SpecState) -> None:
    """``CoalesceShufflePartitions.apply`` (3.2+) on a fragment: find the coalesce groups, skip
    those with an unsupported shuffle, share ``minNumPartitions`` (3.3+) and coalesce each group."""
    v, conf = ctx.v, ctx.conf
    if not conf.get(config.COALESCE_PARTITIONS_ENABLED):
        for st in fr.stages:
            if st.is_shuffle_stage:
                state.why(st, [COALESCE_DISABLED.reason(config_keys=(config.COALESCE_PARTITIONS_ENABLED,),
                                                        key="coalescePartitions.enabled")])
        return
    shape = _shape(ctx, fr.root, state)
    groups = coalesce_groups(shape, spark_version=v)
    supported = []
    for g in groups:
        ok = all(is_supported_shuffle(s.origin, s.single_partition, spark_version=v,
                                      user_specified_num_partitions=s.user_specified_num_partitions) for s in g)
        if ok and g:
            supported.append(g)
        elif g:
            bad = next(s for s in g if not is_supported_shuffle(s.origin, s.single_partition, spark_version=v,
                                                                 user_specified_num_partitions=s.user_specified_num_partitions))
            for s in g:
                state.reasons.setdefault(s.stage_id, []).append(UNSUPPORTED_SHUFFLE.reason(
                    numbers={"origin": bad.origin}, form="plan", stage=ctx.stage_at(bad.stage_id).stage_id,
                    what="a single output partition" if bad.single_partition else "shuffle origin " + bad.origin))
    if not supported:
        return
    min_num, _ = min_num_partitions(conf, spark_version=v, default_parallelism=ctx.default_parallelism)
    if v >= SparkVersion(3, 3, 0):
        sizes = [sum(sum(s.bytes_by_partition_id) for s in g if s.bytes_by_partition_id is not None) for g in supported]
        per_group = split_min_num_across_groups(min_num, sizes)
    else:
        per_group = [min_num]
    for g, gmin in zip(supported, per_group):
        advisory = None
        if v >= SparkVersion(3, 5, 0) and len(g) == 1 and g[0].advisory_partition_size is not None:
            advisory = g[0].advisory_partition_size
        if v >= SparkVersion(4, 3, 0) and _under_exploding_join(fr, g):
            advisory = conf.get(config.COALESCE_PARTITIONS_MIN_PARTITION_SIZE)
        d = coalesce_group(g, conf, spark_version=v, default_parallelism=ctx.default_parallelism,
                           group_min_num=gmin if v >= SparkVersion(3, 3, 0) else None, advisory_override=advisory)
        for s in g:
            state.reasons.setdefault(s.stage_id, []).extend(d.reasons)
        if d.applied:
            for s in g:
                state.specs[s.stage_id] = d.specs_by_stage[s.stage_id]
                state.rules.setdefault(s.stage_id, []).append("CoalesceShufflePartitions")


def _stage_input(ctx: StageStats, st: StageNode, state: SpecState) -> StageInput:
    sc = ctx.stage(st)
    return StageInput(stage_id=st.idx, bytes_by_partition_id=ctx.bytes(st), origin=ctx.origin(st),
                      existing_specs=state.specs.get(st.idx), single_partition=ctx.single_partition(st),
                      user_specified_num_partitions=bool(sc and sc.can_change_num_partitions is False),
                      advisory_partition_size=sc.advisory_partition_size if sc else None)


def _shape(ctx: StageStats, n: StageNode, state: SpecState) -> PlanShape:
    """The fragment as CoalesceShufflePartitions sees it: stages (with a read above those that
    already have specs)."""
    if n.is_stage:
        inp = _stage_input(ctx, n, state) if n.is_shuffle_stage else None
        shape = PlanShape(n.name, [], inp)
        if n.is_shuffle_stage and n.idx in state.specs:
            return PlanShape("AQEShuffleRead", [shape], inp)
        return shape
    plain = not (n.name == "Union" and ctx.union_reports_partitioning(n))
    return PlanShape(n.name.split("(")[0], [_shape(ctx, c, state) for c in n.children], None, plain)


def _under_exploding_join(fr: Fragment, group: list[StageInput]) -> bool:
    ids = {s.stage_id for s in group}
    for st in fr.stages:
        if st.idx not in ids:
            continue
        p = st.parent
        while p is not None:
            if p.name.startswith(("BroadcastNestedLoopJoin", "CartesianProduct")):
                return True
            p = p.parent
    return False


def apply_3_0(ctx: StageStats, fr: Fragment, state: SpecState) -> None:
    """3.0/3.1 CoalesceShufflePartitions: all leaves query stages, every shuffle can change its
    partition count; one spec list for every stage, put on every stage even when unchanged."""
    conf, v = ctx.conf, ctx.v
    stages = [s for s in fr.stages if s.is_shuffle_stage]
    if not conf.get(config.COALESCE_PARTITIONS_ENABLED):
        return
    if not _all_leaves_stages(fr.root) or not stages:
        return
    inputs = [_stage_input(ctx, s, state) for s in stages]
    d = coalesce_group(inputs, conf, spark_version=v, default_parallelism=ctx.default_parallelism)
    for s in stages:
        state.why(s, d.reasons)
    if d.applied:
        for s in stages:
            state.put(s, d.specs_by_stage[s.idx], "CoalesceShufflePartitions")
            state.descriptions[s.idx] = "coalesced"


def _all_leaves_stages(n: StageNode) -> bool:
    if n.is_stage:
        return True
    if not n.children:
        return False
    return all(_all_leaves_stages(c) for c in n.children)
