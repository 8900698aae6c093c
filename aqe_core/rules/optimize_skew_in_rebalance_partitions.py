"""Spark's ``OptimizeSkewInRebalancePartitions`` (3.2+): split skewed REBALANCE partitions.

Mirrors ``org.apache.spark.sql.execution.adaptive.OptimizeSkewInRebalancePartitions.apply`` /
``tryOptimizeSkewedPartitions`` (3.2.0 - 4.3.0): for a shuffle whose origin is
``REBALANCE_PARTITIONS_BY_NONE`` / ``_BY_COL``, every partition larger than the advisory size is
split by its per-map sizes (threshold = target = advisory), with the
``rebalancePartitionsSmallPartitionFactor`` (3.3+; 0.2 in 3.2). The rule applies when the
number of specs changed; coalescing then merges the small rest.

Worked example: an advisory size of 100 B; partition 1 (300 B, three maps of 100 B) is split
in three, the others stay whole:

    >>> conf = {config.ADVISORY_PARTITION_SIZE_IN_BYTES: "100"}
    >>> res = optimize_skew_in_rebalance([10, 300, 20], lambda reducer: [100, 100, 100], conf, spark_version="3.5.1")
    >>> res.applied, res.splits, len(res.specs)
    (True, {1: 3}, 5)
    >>> res.reasons[0].message
    'rebalance partition 1 (300 B) is larger than the advisory size 100 B: split into 3 parts'
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Mapping, Optional, Sequence

from aqe_core import config
from aqe_core.config import AQEConf, as_conf
from aqe_core.model.reasons import Reason
from aqe_core.model.vocabulary import Vocabulary
from aqe_core.model import shared_vocabulary as shared
from aqe_core.units import mib
from aqe_core.rules.shuffle_partitions_util import MapSizesFor, optimize_skewed_partitions
from aqe_core.model.specs import PartialReducerPartitionSpec, ShufflePartitionSpec
from aqe_core.model.stage import Fragment, SpecState, StageStats
from aqe_core.versions import SparkVersion, as_version

REBALANCE_ORIGINS = frozenset({"REBALANCE_PARTITIONS_BY_NONE", "REBALANCE_PARTITIONS_BY_COL"})

# -- vocabulary (:mod:`aqe_core.model.vocabulary`): its reason codes, sentences and trace
V = Vocabulary("OptimizeSkewInRebalancePartitions", __name__)
NOT_IN_VERSION = V.reuse(shared.NOT_IN_VERSION, "Spark {v} has no OptimizeSkewInRebalancePartitions")
NOT_REBALANCE = V.code("not_rebalance", "The shuffle is not a REBALANCE: the rule leaves it alone.",
                       "shuffle origin {origin} is not a rebalance")
DISABLED = V.reuse(shared.DISABLED, "{key} is false")
NO_LARGE_PARTITION = V.code("no_large_partition", "No partition is over the advisory size: nothing to split.",
                            "no partition exceeds the advisory size {advisory}")
SPLIT = V.reuse(shared.SPLIT, "rebalance partition {i} ({size}) is larger than the advisory size {advisory}: split"
                " into {n} parts")
DISTRIBUTION_BROKEN = V.reuse(shared.DISTRIBUTION_BROKEN, "rebalance split dropped: it would break the plan's"
                              " distribution ({broken})")

ENABLED = V.condition("rebalance.enabled", "skew handling of REBALANCE shuffles is enabled", "The rule's switch.",
                      settings=(config.ADAPTIVE_OPTIMIZE_SKEWS_IN_REBALANCE_PARTITIONS_ENABLED,), fails=(DISABLED,))
IS_REBALANCE = V.condition("rebalance.is_rebalance", "the shuffle is a REBALANCE", "Its origin is a rebalance.",
                           fails=(NOT_REBALANCE,), meets=(SPLIT, NO_LARGE_PARTITION))
RUNS_ON_STAGE = V.condition("rebalance.runs_on_stage", "the rule runs on this stage", "The final-stage filter.",
                            settings=(config.ADAPTIVE_APPLY_FINAL_STAGE_SHUFFLE_OPTIMIZATIONS,),
                            fails=(shared.FINAL_STAGE_RULE_EXCLUDED, shared.FINAL_STAGE_RULES_OFF))
OVER_ADVISORY = V.condition("rebalance.over_advisory", "a partition is over the advisory size",
                            "Threshold and target are both the advisory size.",
                            settings=(config.ADVISORY_PARTITION_SIZE_IN_BYTES,
                                      config.ADAPTIVE_REBALANCE_PARTITIONS_SMALL_PARTITION_FACTOR),
                            fails=(NO_LARGE_PARTITION,), meets=(SPLIT, shared.NOT_SPLITTABLE))
#: ``marks``: the codes only this rule gives on a read, so such a read is traced as a rebalance
TRACE = V.trace("OptimizeSkewInRebalancePartitions", ENABLED, IS_REBALANCE, RUNS_ON_STAGE, OVER_ADVISORY,
                shared.MAP_OUTPUTS_CUT, marks=(DISABLED, NOT_REBALANCE, NO_LARGE_PARTITION),
                verdicts={"changed": "split", "applied": "not split; the other side's splits each read these partitions"
                          " again", "unchanged": "not split"})


@dataclass
class RebalanceSkewResult:
    applied: bool
    specs: Optional[list[ShufflePartitionSpec]] = None
    advisory_size: int = 0
    splits: dict[int, int] = field(default_factory=dict)
    reasons: list[Reason] = field(default_factory=list)


def optimize_skew_in_rebalance(
    bytes_by_partition_id: Sequence[int],
    map_sizes_for: Optional[MapSizesFor],
    conf: "Mapping[str, Any] | AQEConf | None" = None,
    *,
    spark_version: "str | SparkVersion",
    origin: str = "REBALANCE_PARTITIONS_BY_NONE",
    advisory_override: Optional[int] = None,
) -> RebalanceSkewResult:
    """``OptimizeSkewInRebalancePartitions.tryOptimizeSkewedPartitions`` for one stage.

    ``advisory_override`` is the rebalance hint's advisory size (3.5+)."""
    v = as_version(spark_version)
    c = as_conf(conf, v)
    if v < SparkVersion(3, 2, 0):
        return RebalanceSkewResult(False, reasons=[NOT_IN_VERSION.reason(v=v)])
    if origin not in REBALANCE_ORIGINS:
        return RebalanceSkewResult(False, reasons=[NOT_REBALANCE.reason(origin=origin)])
    if not c.get(config.ADAPTIVE_OPTIMIZE_SKEWS_IN_REBALANCE_PARTITIONS_ENABLED):
        key = config.ADAPTIVE_OPTIMIZE_SKEWS_IN_REBALANCE_PARTITIONS_ENABLED
        return RebalanceSkewResult(False, reasons=[DISABLED.reason(config_keys=(key,), key=key)])
    advisory = advisory_override if (advisory_override is not None and v >= SparkVersion(3, 5, 0)) else c.advisory_partition_size
    small = c.get_or(config.ADAPTIVE_REBALANCE_PARTITIONS_SMALL_PARTITION_FACTOR, 0.2)
    res = RebalanceSkewResult(False, advisory_size=advisory)
    if not any(b > advisory for b in bytes_by_partition_id):
        res.reasons.append(NO_LARGE_PARTITION.reason(numbers={"advisory": advisory}, advisory=mib(advisory),
                                                     config_keys=(config.ADVISORY_PARTITION_SIZE_IN_BYTES,)))
        return res
    specs = optimize_skewed_partitions(bytes_by_partition_id, map_sizes_for or (lambda _i: None), advisory, advisory,
                                       spark_version=v, small_partition_factor=small)
    for s in specs:
        if isinstance(s, PartialReducerPartitionSpec):
            res.splits[s.reducer_index] = res.splits.get(s.reducer_index, 0) + 1
    for r, n in sorted(res.splits.items()):
        res.reasons.append(SPLIT.reason(numbers={"size": bytes_by_partition_id[r], "advisory": advisory, "splits": n},
                                        config_keys=(config.ADVISORY_PARTITION_SIZE_IN_BYTES,
                                                     config.ADAPTIVE_REBALANCE_PARTITIONS_SMALL_PARTITION_FACTOR),
                                        subject={"partition": r}, i=r, size=mib(bytes_by_partition_id[r]),
                                        advisory=mib(advisory), n=n))
    if len(specs) != len(bytes_by_partition_id):
        res.applied, res.specs = True, specs
    return res


# ------------------------------------------------------------------------------------------
# OptimizeSkewInRebalancePartitions's plan-shape check on a stage fragment (the engine's stage plan, seen
# through the protocols of :mod:`aqe_core.model.stage`)


def apply(ctx: StageStats, fr: Fragment, state: SpecState) -> None:
    """``OptimizeSkewInRebalancePartitions.apply`` on a fragment: the rebalance stage at the root
    (3.3+: every rebalance stage), split unless that breaks the plan's distribution."""
    v = ctx.v
    candidates = fr.stages if v >= SparkVersion(3, 3, 0) else ([fr.root] if fr.root.is_shuffle_stage else [])
    for st in candidates:
        if not st.is_shuffle_stage or st.idx in state.specs:
            continue
        origin = ctx.origin(st)
        if origin not in REBALANCE_ORIGINS:
            continue
        b = ctx.bytes(st)
        if b is None:
            continue
        sc = ctx.stage(st)
        res = optimize_skew_in_rebalance(b, ctx.map_sizes_for(st), ctx.conf, spark_version=v, origin=origin,
                                         advisory_override=sc.advisory_partition_size if sc else None)
        state.why(st, res.reasons)
        if not res.applied or res.specs is None:
            continue
        trial = state.copy()
        trial.put(st, res.specs, "OptimizeSkewInRebalancePartitions")
        broken = ctx.breaks_distribution(fr, [st], trial.skew_joins)
        if broken:
            state.why(st, [DISTRIBUTION_BROKEN.reason(broken=broken)])
            continue
        state.adopt(trial)
