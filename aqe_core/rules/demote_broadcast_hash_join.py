"""Spark's ``DemoteBroadcastHashJoin``: do not broadcast a join side with many empty partitions.

Mirrors ``org.apache.spark.sql.execution.adaptive.DemoteBroadcastHashJoin.apply`` /
``shouldDemote`` / ``hasManyEmptyPartitions`` (an AQE logical optimizer rule, 3.0.1 - 3.1.3,
and again in 4.3.0), and the same demotion inside ``DynamicJoinSelection`` (3.2 - 4.2, see
:mod:`aqe_core.rules.dynamic_join_selection`). A side whose shuffle has some, but fewer than
``nonEmptyPartitionRatioForBroadcastJoin`` of its partitions non-empty gets the
``NO_BROADCAST_HASH`` hint. From 3.3 the join type decides which side is demoted: for a
left/right outer or left anti join, the *other* side's empty partitions demote this one.

Worked example: 10 partitions, 1 holds data (10% < the 20% default ratio), so it is demoted:

    >>> has_many_empty_partitions([0, 0, 0, 0, 0, 0, 0, 0, 0, 500], 0.2)
    True
    >>> should_demote([0, 0, 0, 0, 0, 0, 0, 0, 0, 500], None, "Inner", 0.2, True,
    ...               spark_version="3.0.1", side="left")
    (True, 'left side has 1 non-empty of 10 partitions, under 20%: broadcasting it would not pay off')

All partitions empty is not "many empty" (nothing to decide), and in a 3.3+ left outer join
the right side (the one that can be broadcast) is demoted by the left side's empty partitions,
not by its own:

    >>> has_many_empty_partitions([0, 0, 0], 0.2)
    False
    >>> sparse, full = [0] * 9 + [9], [5] * 10
    >>> should_demote(sparse, full, "LeftOuter", 0.2, True, spark_version="3.5.1", side="right")
    (False, 'right side has 1 non-empty of 10 partitions (< 20%)')
    >>> should_demote(full, sparse, "LeftOuter", 0.2, True, spark_version="3.5.1", side="right")
    (True, 'the other side of this LeftOuter join has many empty partitions')
"""
from __future__ import annotations

from typing import Optional, Sequence

from aqe_core.rules.join_type import normalize_join_type
from aqe_core.versions import SparkVersion, as_version

NO_BROADCAST_HASH = "NO_BROADCAST_HASH"
#: 3.3+: join types whose side is demoted because of the *other* side's empty partitions
DEMOTE_OTHER_SIDE_TYPES = frozenset({"LeftOuter", "RightOuter", "LeftAnti"})


def has_many_empty_partitions(bytes_by_partition_id: Sequence[int], ratio: float) -> bool:
    """``hasManyEmptyPartitions``: some but under ``ratio`` of the partitions hold data."""
    n = len(bytes_by_partition_id)
    non_zero = sum(1 for b in bytes_by_partition_id if b > 0)
    return n > 0 and non_zero > 0 and non_zero * 1.0 / n < ratio


def should_demote(mine: Sequence[int], other: Optional[Sequence[int]], join_type: str, ratio: float,
                  can_build: bool, *, spark_version: "str | SparkVersion", side: str) -> tuple[bool, str]:
    """``shouldDemote`` for one side (``mine``: its ``bytesByPartitionId``; ``other``: the other
    side's, None if not a shuffle stage; ``can_build``: the join type lets this side be broadcast).
    Returns whether to demote and why (empty when nothing applies)."""
    v = as_version(spark_version)
    jt = normalize_join_type(join_type)
    many_empty = has_many_empty_partitions(mine, ratio)
    non_zero = sum(1 for b in mine if b > 0)
    if v < SparkVersion(3, 3, 0):
        return many_empty, (f"{side} side has {non_zero} non-empty of {len(mine)} partitions, under {ratio:.0%}:"
                            " broadcasting it would not pay off")
    other_empty = other is not None and has_many_empty_partitions(other, ratio)
    if many_empty and can_build:
        return jt not in DEMOTE_OTHER_SIDE_TYPES, f"{side} side has {non_zero} non-empty of {len(mine)} partitions (< {ratio:.0%})"
    if other_empty and can_build:
        return jt in DEMOTE_OTHER_SIDE_TYPES, f"the other side of this {jt} join has many empty partitions"
    return False, ""
