"""Why AQE added no adaptive read over a shuffle, computed from the log's own numbers.

A plain log holds no map statistics, only what each reduce task read (task ``i`` reads reducer
``i`` of a shuffle read as planned) and the bytes the exchange wrote. From those and the conf,
``CoalesceShufflePartitions``' target is computed the way Spark computes it (the minimum number of
partitions: ``minPartitionNum``, else the cores with ``parallelismFirst=true``, else 1), and the
skew-join rule's threshold the way ``OptimizeSkewedJoin`` does. A number the log lacks (the cores)
is said to be unknown and no reason is built on a default.
"""
from __future__ import annotations

from typing import Optional, Sequence

from aqe_core import config
from aqe_core.config import AQEConf
from aqe_core.rules.coalesce_shuffle_partitions import min_num_from_parallelism, min_num_partitions, min_partition_size
from aqe_core.rules.optimize_skewed_join import analyze_side, can_split_left, can_split_right, splits_join
from aqe_core.rules.shuffle_partitions_util import coalesce_partitions, coalesce_target
from aqe_core.units import mib
from aqe_core.versions import SparkVersion

__all__ = ["coalesce_why", "skew_why"]

_TASK_SIZES = "each reduce task's read, not the map statistics AQE used"


def coalesce_why(partitions: int, written: Optional[int], sizes: Optional[Sequence[int]], conf: AQEConf,
                 v: SparkVersion, cores: Optional[int], group: Optional[Sequence[Sequence[int]]] = None) -> tuple[str, dict]:
    """Coalescing was on and allowed to change this shuffle: the target Spark aimed at, and
    whether the shuffle's sizes could merge toward it (returns the clause and its numbers).
    ``group``: the sizes of every shuffle coalesced with this one (a join's two sides), which
    share one target over their total, as ``CoalesceShufflePartitions`` does.

    >>> c = AQEConf.resolve("4.3.0", [{"spark.sql.adaptive.coalescePartitions.minPartitionSize": "1"}])
    >>> print(coalesce_why(128, 128 * 10 * 1024, [10 * 1024] * 128, c, c.spark_version, 128)[0])
    the coalescing target is 10 KiB (128 partitions' 1.2 MiB over at least 128 partitions, the 128 cores with spark.sql.adaptive.coalescePartitions.parallelismFirst=true): the average partition, so no two neighbours fit in one and nothing merges
    >>> print(coalesce_why(128, None, None, c, c.spark_version, None)[0])
    coalescing is on with spark.sql.adaptive.coalescePartitions.parallelismFirst=true, so its target is the shuffle's size over the cluster's cores: the log does not say how many cores, so why nothing merged is not known
    """
    explicit = conf.get_or(config.COALESCE_PARTITIONS_MIN_PARTITION_NUM, None)
    by_cores = min_num_from_parallelism(conf, spark_version=v)
    if by_cores and cores is None:
        key = config.COALESCE_PARTITIONS_PARALLELISM_FIRST
        how = f"with {key}=true" if v >= SparkVersion(3, 2, 0) else f"(Spark {v} aims at the cores)"
        return (f"coalescing is on {how}, so its target is the shuffle's size over the cluster's cores: the log does"
                " not say how many cores, so why nothing merged is not known", {"cores": None})
    min_num, _ = min_num_partitions(conf, spark_version=v, default_parallelism=cores or 1)
    whence = (f"{config.COALESCE_PARTITIONS_MIN_PARTITION_NUM}={explicit}" if explicit is not None else
              f"the {cores} cores with {config.COALESCE_PARTITIONS_PARALLELISM_FIRST}=true" if by_cores and
              v >= SparkVersion(3, 2, 0) else f"the {cores} cores" if by_cores else
              f"{config.COALESCE_PARTITIONS_PARALLELISM_FIRST}=false")
    advisory = conf.advisory_partition_size
    min_size = min_partition_size(conf, spark_version=v, advisory=advisory)
    stats = ([list(g) for g in group] if group and len(group) > 1 and all(len(g) == partitions for g in group) else
             [list(sizes)] if sizes and len(sizes) == partitions else None)
    total = sum(map(sum, stats)) if stats else written
    shared = f"the {len(stats)} shuffles coalesced together: " if stats and len(stats) > 1 else ""
    if total is None:
        return (f"coalescing is on (at least {min_num} partitions: {whence}), but the log has no sizes for this"
                " shuffle, so why nothing merged is not known", {"min_num_partitions": min_num, "cores": cores})
    tgt = coalesce_target(stats or [[total]], advisory_target_size=advisory, min_num_partitions=min_num,
                          min_partition_size=min_size, spark_version=v).target_size
    numbers = {"target": tgt, "min_num_partitions": min_num, "cores": cores, "total": total}
    source = ("the advisory size" if tgt == advisory else "the minimum partition size" if tgt == min_size and
              tgt != -(-total // min_num) else f"{shared}{partitions} partitions' {mib(total)} over at least {min_num}"
              f" partitions, {whence}")
    head = f"the coalescing target is {mib(tgt)} ({source})"
    avg = total // partitions  # (a group's: the reducers' summed sizes, as the rule merges them)
    if stats is None:
        if avg >= tgt:
            return f"{head}: the partitions average {mib(avg)}, at or above it, so nothing merges", numbers
        return (f"{head}; the partitions average {mib(avg)}: the log has no per-partition sizes, so why nothing"
                " merged is not known", numbers)
    result = coalesce_partitions(stats, advisory_target_size=advisory, min_num_partitions=min_num,
                                 min_partition_size=min_size, spark_version=v)
    if not result:
        what = ("the average partition, so no two neighbours fit in one" if tgt <= -(-total // partitions) + 1 else
                f"with these sizes ({_TASK_SIZES}) no two neighbours fit in one")
        return f"{head}: {what} and nothing merges", numbers
    numbers["would_be"] = len(result[0])
    return (f"{head}: over these sizes ({_TASK_SIZES}) it would merge {partitions} partitions into"
            f" {len(result[0])}, yet Spark added no read: the log does not say why (e.g. a stage AQE did not"
            " re-optimise, or map statistics unlike these sizes)", numbers)


def skew_why(sizes: Optional[Sequence[int]], conf: AQEConf, v: SparkVersion, join: Optional[str],
             side: Optional[str], join_type: Optional[str]) -> str:
    """Why no reducer of this shuffle was split, from where it sits and its sizes.

    >>> c = AQEConf.resolve("4.3.0", [])
    >>> skew_why([1024] * 8, c, c.spark_version, "SortMergeJoin", "left", "Inner")[:60]
    'no reducer was split: the largest left partition, 1 KiB, is '
    >>> skew_why(None, c, c.spark_version, None, None, None)
    'no reducer was split: the skew-join rule splits only the sides of a sort-merge or shuffled hash join, and this shuffle is not one'
    """
    if not conf.get_or(config.SKEW_JOIN_ENABLED, True):
        return f"skew-join handling is off ({config.SKEW_JOIN_ENABLED}=false)"
    if not join or not splits_join(join, v):
        joins = "sort-merge join" if v < SparkVersion(3, 2, 0) else "sort-merge or shuffled hash join"
        where = f"this shuffle feeds a {join.split('(')[0]}" if join else "this shuffle is not one"
        return f"no reducer was split: the skew-join rule splits only the sides of a {joins}, and {where}"
    if join_type and side in ("left", "right") and not (can_split_left if side == "left" else can_split_right)(join_type):
        return f"no reducer was split: the {side} side of a {join_type} join cannot be split (OptimizeSkewedJoin)"
    if not sizes:
        return "no reducer was split; the log has no per-partition sizes to say whether one was over the skew threshold"
    a = analyze_side(list(sizes), conf, spark_version=v, side=side or "")
    why = a.why_not_skewed(side or "")
    if why:
        return f"no reducer was split: {why.replace('  ', ' ')} ({_TASK_SIZES})"
    big = max(sizes)
    return (f"no reducer was split, though a reduce task read {mib(big)}, over the skew threshold"
            f" {mib(a.effective_threshold)} ({_TASK_SIZES}): the log does not say why (e.g. splitting would need an"
            " extra shuffle, or the map statistics differ)")
