"""Spark's ``SizeInBytesOnlyStatsPlanVisitor`` over ``LogicalQueryStage`` leaves: the size (and
the runtime flag) AQE re-plans a join side with.

When AQE re-optimizes, every materialized query stage becomes a ``LogicalQueryStage`` leaf of
the logical plan. ``LogicalQueryStage.computeStats`` returns the first query stage's runtime
statistics (``QueryStageExec.computeStats``: the exchange's ``dataSize`` metric, with
``isRuntime = true`` from 3.2), even when the leaf also holds a final aggregate above the stage.
The logical operators above a leaf get their statistics from the size-only visitor (CBO off,
the default): ``SizeInBytesOnlyStatsPlanVisitor.visitUnaryNode`` scales the child's size by output / child row width
(``EstimationUtils.getSizePerRow``), ``visitUnion`` sums, ``visitJoin`` keeps the left side of a
semi / anti join and otherwise multiplies the non-empty sides, ``visitSort`` (``default``) keeps
the size. None of them carries ``isRuntime``, so from 3.2 the adaptive broadcast threshold
applies only to a side that *is* a query stage; above a filter, a project or a union the static
``spark.sql.autoBroadcastJoinThreshold`` decides. The same in 3.0.1 - 4.3.0 for these operators
(read in the released ``spark-catalyst`` jars, and shown by the ``broadcast_aggregate*`` and
``broadcast_union`` workloads on real runs).

    >>> stage = logical_query_stage(3_200, "4.3.0")
    >>> stage
    SizeStats(size=3200, is_runtime=True)
    >>> unary_node(stage, output_row=16, child_row=24)      # Project [k] over [k, w]
    SizeStats(size=2133, is_runtime=False)
    >>> union([stage, logical_query_stage(1_000, "4.3.0")])
    SizeStats(size=4200, is_runtime=False)
    >>> join("LeftSemi", stage, SizeStats(10**9))           # never bigger than its left side
    SizeStats(size=3200, is_runtime=True)
    >>> join("Inner", stage, SizeStats(0))                  # the product skips empty sides
    SizeStats(size=3200, is_runtime=False)
    >>> logical_query_stage(3_200, "3.1.3").is_runtime      # no runtime flag before 3.2
    False
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

from aqe_core.rules.join_type import normalize_join_type
from aqe_core.versions import SparkVersion, as_version


@dataclass(frozen=True)
class SizeStats:
    """``Statistics`` reduced to what join selection reads: ``sizeInBytes`` and ``isRuntime``."""

    size: int
    is_runtime: bool = False


def logical_query_stage(stage_size: int, spark_version: "str | SparkVersion") -> SizeStats:
    """``LogicalQueryStage.computeStats`` of a materialized stage (``dataSize`` clamped at 0)."""
    return SizeStats(max(0, stage_size), as_version(spark_version) >= SparkVersion(3, 2, 0))


def unary_node(child: SizeStats, output_row: int, child_row: int) -> SizeStats:
    """``visitUnaryNode``: ``child * outputRowSize / childRowSize`` (BigInt division), never 0."""
    size = (child.size * output_row) // child_row if child_row else child.size
    return SizeStats(size if size != 0 else 1)


def union(children: Sequence[SizeStats]) -> SizeStats:
    """``visitUnion``: the sum of the children's sizes."""
    return SizeStats(sum(c.size for c in children))


def default(children: Sequence[SizeStats]) -> SizeStats:
    """``default`` for a non-leaf node: the product of the non-empty children's sizes."""
    size = 1
    for c in children:
        if c.size > 0:
            size *= c.size
    return SizeStats(size)


def join(join_type: str, left: SizeStats, right: SizeStats) -> SizeStats:
    """``visitJoin``: a left semi / anti join keeps its left side's statistics (runtime flag
    included); every other join type is ``default``."""
    if normalize_join_type(join_type) in ("LeftSemi", "LeftAnti"):
        return left
    return default([left, right])
