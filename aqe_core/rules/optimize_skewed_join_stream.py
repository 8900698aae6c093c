"""Spark's ``OptimizeSkewedJoin``, its broadcast case (SPARK-44065, 4.2.0 - 4.3.0): the streamed
side of a broadcast hash join is split when local shuffle read is off. A part of
:mod:`aqe_core.rules.optimize_skewed_join`, in its own file for room.

From 4.2.0 ``OptimizeSkewedJoin.optimizeSkewJoin`` reads ``spark.sql.adaptive.localShuffleReader.enabled``;
when it is false, a ``BroadcastHashJoinExec`` whose streamed child is a bare shuffle stage has
that stage's skewed partitions split by ``OptimizeSkewedJoin.tryOptimizeBroadcastHashJoinStreamedPlan``
(``ShufflePartitionsUtil.optimizeSkewedPartitions`` with a join side's skew threshold and
target), and the join is marked ``isSkewJoin`` (``BroadcastHashJoin(skew=true)``, the read
``coalesced and skewed``). With local read on, the streamed stage is read locally (whole map
outputs, no reducer partitions to split). Releases before 4.2.0 have no broadcast case (4.1.4's
``OptimizeSkewedJoin`` names no broadcast join; 4.2.1's has ``tryOptimizeBroadcastHashJoinStreamedPlan``:
``javap`` on the released jars); real runs of the catalogue's ``runtime_broadcast/local_read_off``
on every release split only from 4.2 (tests/rules/test_optimize_skewed_join_stream.py).

This module owns the case's vocabulary (:mod:`aqe_core.model.vocabulary`): its reason codes and
sentences, the conditions a decision trace lists and the sentence the release comparison gives
for the change, so the replay, the trace, the views and ``releases`` word it alike.

    >>> conf = {"spark.sql.adaptive.skewJoin.skewedPartitionThresholdInBytes": "100",
    ...         "spark.sql.adaptive.advisoryPartitionSizeInBytes": "60",
    ...         "spark.sql.adaptive.localShuffleReader.enabled": "false"}
    >>> from aqe_core.rules.optimize_skewed_join import SkewJoinSide, optimize_broadcast_stream_side
    >>> stream = SkewJoinSide([10, 20, 30, 400], lambda reducer: [100, 100, 100, 100])
    >>> specs, _, reasons = optimize_broadcast_stream_side(stream, conf, spark_version="4.2.1", side="left")
    >>> len(specs), reasons[0].message
    (7, 'left partition 3 is skewed: 400 B > 5 x median 25 B and > 100 B; split into 4 parts of about 60 B (split because local shuffle read is off; from Spark 4.2.0, SPARK-44065)')
    >>> optimize_broadcast_stream_side(stream, conf, spark_version="4.1.4", side="left")[2][0].code
    'broadcast_stream_not_in_release'
"""
from __future__ import annotations

from typing import Any, Mapping, Optional, Sequence

from aqe_core import config
from aqe_core.config import AQEConf, as_conf as _conf
from aqe_core.model.reasons import Reason
from aqe_core.model.specs import PartialReducerPartitionSpec, ShufflePartitionSpec
from aqe_core.model.vocabulary import Vocabulary
from aqe_core.model import shared_vocabulary as shared
from aqe_core.rules.shuffle_partitions_util import MapSizesFor, optimize_skewed_partitions
from aqe_core.units import mib, num
from aqe_core.versions import SparkVersion, as_version

#: the first release that splits a broadcast join's streamed side, and the change that did it
SINCE = SparkVersion(4, 2, 0)
JIRA = "SPARK-44065"

#: why a streamed-side split happened, in the rule's words (the sentences append it)
SPLIT_WHY = f"split because local shuffle read is off; from Spark {SINCE}, {JIRA}"

# -- vocabulary: the case's reason codes (a split is "split", as for a shuffled join, so the
# trace reads it alike) and its trace conditions
V = Vocabulary("OptimizeSkewedJoin", __name__)
_SKEWED = "{name} is skewed"
SPLIT = V.reuse(shared.SPLIT, _SKEWED + ": {size} {cond}; split into {n} parts of about {target}{why}")
NO_SPLIT = V.reuse(shared.NO_SPLIT, "no partition was split: {why}")
NOT_SPLITTABLE = V.reuse(shared.NOT_SPLITTABLE, _SKEWED + " ({size}) but its map outputs cannot be cut into two or"
                         " more parts of about {target}")
MAP_SIZES_UNKNOWN = V.reuse(shared.MAP_SIZES_UNKNOWN, _SKEWED + " ({size}) but its per-map sizes are unknown, so the"
                            " split cannot be computed")
NOT_IN_RELEASE = V.code(
    "broadcast_stream_not_in_release", "The release is older than 4.2.0: OptimizeSkewedJoin never splits a broadcast"
    " join's streamed side.", f"not split: before Spark {SINCE} OptimizeSkewedJoin never splits a broadcast join's"
    f" streamed side (it does from {SINCE} when local shuffle read is off, {JIRA})")
LOCAL_READ_ON = V.code(
    "broadcast_stream_local_read_on", "Local shuffle read is on: the streamed side is read locally (whole map"
    " outputs), so there are no reducer partitions to split.",
    f"not split: local shuffle read is on ({config.LOCAL_SHUFFLE_READER_ENABLED}=true), so the streamed side is read"
    f" locally; from Spark {SINCE} it is split when that setting is false ({JIRA})")
#: codes that say why the streamed side was not split at all (the skew table writes them after each partition)
BLOCKING_CODES = (NOT_IN_RELEASE, LOCAL_READ_ON)
#: every code only this case gives: a read with one of them is traced with :data:`TRACE_CONDITIONS`
CODES = frozenset(BLOCKING_CODES)
#: what changed in 4.2.0, for the release comparison
CHANGE = (f"OptimizeSkewedJoin splits the skewed partitions of a broadcast hash join's streamed side when"
          f" {config.LOCAL_SHUFFLE_READER_ENABLED}=false ({JIRA}, from Spark {SINCE})")

#: the decision trace of a streamed side, between "the rule runs on this stage" and the "no extra
#: shuffle" check of a join's trace (:mod:`aqe_core.rules.optimize_skewed_join` declares the whole trace)
IN_RELEASE = V.condition("skew.stream.in_release", f"the release splits a broadcast join's streamed side (from Spark"
                         f" {SINCE}, {JIRA})", "Only 4.2.0+ split a broadcast hash join's streamed side.",
                         fails=(NOT_IN_RELEASE,))
LOCAL_READ_OFF = V.condition("skew.stream.local_read_off", "local shuffle read is off (a locally read side has no"
                             " reducer partitions to split)", "A locally read streamed side has no reducer partitions.",
                             settings=(config.LOCAL_SHUFFLE_READER_ENABLED,), fails=(LOCAL_READ_ON,))
OVER_THRESHOLD = V.condition("skew.stream.over_threshold", "a partition is over the skew threshold",
                             "A streamed partition over the skew threshold (as for a shuffled join's side).",
                             settings=(config.SKEW_JOIN_SKEWED_PARTITION_FACTOR,
                                       config.SKEW_JOIN_SKEWED_PARTITION_THRESHOLD),
                             fails=(NO_SPLIT,), meets=(SPLIT, NOT_SPLITTABLE))
TRACE_CONDITIONS = (IN_RELEASE, LOCAL_READ_OFF, OVER_THRESHOLD, shared.MAP_OUTPUTS_CUT)


def changed_between(before: "str | SparkVersion", after: "str | SparkVersion", joins: Sequence[str] = ()) -> list[str]:
    """The change, when one release has it and the other does not and the query has a broadcast
    hash join (``joins``: its join strategies under either release).

    >>> changed_between("4.1.4", "4.2.1", ["BroadcastHashJoin"]) == [CHANGE]
    True
    >>> changed_between("4.2.1", "4.3.0", ["BroadcastHashJoin"]), changed_between("4.1.4", "4.2.1", ["SortMergeJoin"])
    ([], [])
    """
    a, b = as_version(before), as_version(after)
    broadcast = any(j.startswith("BroadcastHashJoin") for j in joins)
    return [CHANGE] if broadcast and min(a, b) < SINCE <= max(a, b) else []


def split_why(subject: Mapping[str, Any]) -> str:
    """What a split sentence adds for a streamed-side split ("" for any other split)."""
    return f" ({SPLIT_WHY})" if subject.get("stream") else ""


def split_streamed_side(
    bytes_by_partition_id: Sequence[int],
    map_sizes_for: Optional[MapSizesFor],
    analysis: Any,
    conf: "Mapping[str, Any] | AQEConf | None" = None,
    *,
    spark_version: "str | SparkVersion",
    side: str = "",
) -> tuple[Optional[list[ShufflePartitionSpec]], list[Reason]]:
    """``tryOptimizeBroadcastHashJoinStreamedPlan`` on the streamed stage, whose skew ``analysis``
    (an ``optimize_skewed_join.SideAnalysis``) the caller made; ``side``: which join side it is,
    for the sentences. Returns the new specs (None = unchanged) and the reasons: one per skewed
    partition, or why the release does not split this side."""
    v = as_version(spark_version)
    c = _conf(conf, v)
    a = analysis
    if v < SINCE:
        return None, [NOT_IN_RELEASE.reason(config_keys=(config.LOCAL_SHUFFLE_READER_ENABLED,))]
    if c.get(config.LOCAL_SHUFFLE_READER_ENABLED):
        return None, [LOCAL_READ_ON.reason(config_keys=(config.LOCAL_SHUFFLE_READER_ENABLED,))]
    sizes_for = map_sizes_for or (lambda _i: None)
    specs = optimize_skewed_partitions(bytes_by_partition_id, sizes_for, a.effective_threshold, a.target_size,
                                       spark_version=v)
    parts: dict[int, int] = {}
    for s in specs:
        if isinstance(s, PartialReducerPartitionSpec):
            parts[s.reducer_index] = parts.get(s.reducer_index, 0) + 1
    reasons = [_partition_reason(a, i, parts.get(i), sizes_for(i) is not None, side) for i in a.skewed_indices]
    if not parts:
        why = a.why_not_skewed(f"{side} (streamed)" if side else "streamed")
        return None, reasons + [NO_SPLIT.reason(numbers={"median": a.median, "threshold": a.skew_threshold},
                                                why=why or "the streamed side is unchanged")]
    return specs, reasons


def _partition_reason(a: Any, i: int, n: Optional[int], maps_known: bool, side: str) -> Reason:
    size = a.sizes[i]
    subject = {"partition": i, "side": side, "stream": True} if side else {"partition": i, "stream": True}
    name = f"{side} partition {i}" if side else f"streamed partition {i}"
    if n:
        cond = f"> {num(a.factor)} x median {mib(a.median)} and > {mib(a.threshold_bytes)}"
        return SPLIT.reason(numbers={"size": size, "median": a.median, "threshold": a.skew_threshold, "factor": a.factor,
                                     "threshold_bytes": a.threshold_bytes, "target": a.target_size, "splits": n},
                            config_keys=(config.SKEW_JOIN_SKEWED_PARTITION_FACTOR,
                                         config.SKEW_JOIN_SKEWED_PARTITION_THRESHOLD,
                                         config.ADVISORY_PARTITION_SIZE_IN_BYTES, config.LOCAL_SHUFFLE_READER_ENABLED),
                            subject=subject, name=name, size=mib(size), cond=cond, n=n, target=mib(a.target_size),
                            why=split_why(subject))
    if not maps_known:
        return MAP_SIZES_UNKNOWN.reason(numbers={"size": size}, subject=subject, name=name, size=mib(size))
    return NOT_SPLITTABLE.reason(numbers={"size": size, "target": a.target_size},
                                 config_keys=(config.ADVISORY_PARTITION_SIZE_IN_BYTES,), subject=subject, name=name,
                                 size=mib(size), target=mib(a.target_size))
