"""Spark's ``ShufflePartitionsUtil``: coalescing and skew splitting of shuffle partitions.

Mirrors ``org.apache.spark.sql.execution.adaptive.ShufflePartitionsUtil.coalescePartitions`` /
``splitSizeListByTargetSize`` / ``createSkewPartitionSpecs`` / ``optimizeSkewedPartitions``
(3.0.1 - 4.3.0; in 3.0.x the skew helpers live in ``OptimizeSkewedJoin``). Behaviour per
release profile:

* 3.0.x  one shared spec list, 16-byte target floor, zero-byte ranges emitted, no data sizes;
* 3.1.x  as 3.0 but zero-byte ranges skipped (one spec if all empty), specs carry data sizes;
* 3.2+   one list per shuffle, ``minPartitionSize`` packing, skew-spec aware coalescing,
         no 16-byte floor; invalid skew layouts assert up to 3.4, return "no change" from 3.5;
* 4.3    ``maxReducerPartitionsPerTask`` caps the reducers one coalesced task reads.

All arithmetic follows Java ``long``/``double`` semantics (truncating division, long-to-double
widening in comparisons), because a one-byte difference moves a split point.

Worked example (Spark's own, from ``coalescePartitions``' doc comment): two shuffles of five
partitions, ``[100, 20, 100, 10, 30]`` and ``[10, 10, 70, 5, 5]`` MiB, and a 128 MiB target
give four coalesced partitions: 0 (110 MiB), 1 (30 MiB), 2 (170 MiB, alone: it is already
over the target) and 3-4 (50 MiB):

    >>> MiB = 1024 * 1024
    >>> shuffles = [[100 * MiB, 20 * MiB, 100 * MiB, 10 * MiB, 30 * MiB], [10 * MiB, 10 * MiB, 70 * MiB, 5 * MiB, 5 * MiB]]
    >>> specs = coalesce_partitions(shuffles, advisory_target_size=128 * MiB, min_num_partitions=1,
    ...                             spark_version="3.5.1")
    >>> [(s.start_reducer_index, s.end_reducer_index) for s in specs[0]]
    [(0, 1), (1, 2), (2, 3), (3, 5)]
    >>> [s.data_size // MiB for s in specs[1]]  # each shuffle's own share (3.1+ carry data sizes)
    [10, 10, 70, 10]

A skewed partition is split by its per-map sizes into parts of about the target: maps
``[10, 10, 10, 50, 10]`` with a target of 30 start splits at maps 0, 3 and 4:

    >>> split_size_list_by_target_size([10, 10, 10, 50, 10], 30, spark_version="3.5.1")
    [0, 3, 4]
    >>> [(s.start_map_index, s.end_map_index) for s in create_skew_partition_specs(7, [10, 10, 10, 50, 10], 30,
    ...                                                                            spark_version="3.5.1")]
    [(0, 3), (3, 4), (4, 5)]
"""
from __future__ import annotations

import math
from collections.abc import Sequence as SequenceABC
from dataclasses import dataclass
from typing import Callable, Optional, Sequence

from aqe_core.model.specs import (
    CoalescedMapperPartitionSpec,
    CoalescedPartitionSpec,
    PartialMapperPartitionSpec,
    PartialReducerPartitionSpec,
    ShufflePartitionSpec,
)
from aqe_core.versions import SparkVersion, as_version

__all__ = [
    "SMALL_PARTITION_FACTOR",
    "MERGED_PARTITION_FACTOR",
    "INT_MAX",
    "CoalescedPartitionSpec",
    "PartialReducerPartitionSpec",
    "PartialMapperPartitionSpec",
    "CoalescedMapperPartitionSpec",
    "ShufflePartitionSpec",
    "CoalesceTarget",
    "coalesce_target",
    "coalesce_partitions",
    "split_size_list_by_target_size",
    "create_skew_partition_specs",
    "optimize_skewed_partitions",
]

SMALL_PARTITION_FACTOR = 0.2
MERGED_PARTITION_FACTOR = 1.2
INT_MAX = 2**31 - 1
LONG_MAX = 2**63 - 1

BytesByPartitionId = Optional[Sequence[int]]


def _java_double_to_long(x: float) -> int:
    """``(long) x`` in Java: NaN -> 0, saturating at the long range, truncation toward zero."""
    if math.isnan(x):
        return 0
    if x >= 9.223372036854775807e18:
        return LONG_MAX
    if x <= -9.223372036854775808e18:
        return -(2**63)
    return int(x)


def _ceil_div_as_double(total: int, divisor: int) -> int:
    """``math.ceil(total / divisor.toDouble).toLong`` with Java's double semantics."""
    num = float(total)
    den = float(divisor)
    if den == 0.0:
        q = math.nan if num == 0.0 else math.copysign(math.inf, num)
    else:
        q = num / den
    if math.isnan(q) or math.isinf(q):
        return _java_double_to_long(q)
    return _java_double_to_long(float(math.ceil(q)))


@dataclass(frozen=True)
class CoalesceTarget:
    """How ``coalescePartitions`` chose its target size (the numbers the UI draws)."""

    total_size: int
    max_target_size: int
    advisory_target_size: int
    min_partition_size: int
    target_size: int
    min_num_partitions: int


def coalesce_target(
    bytes_by_partition_id: Sequence[BytesByPartitionId],
    *,
    advisory_target_size: int,
    min_num_partitions: int,
    min_partition_size: int = 0,
    spark_version: "str | SparkVersion",
) -> CoalesceTarget:
    """The target size of ``ShufflePartitionsUtil.coalescePartitions`` (all releases).

    3.0/3.1: ``min(max(ceil(total/minNum), 16), advisory)``;
    3.2+:    ``max(min(ceil(total/minNum), advisory), minPartitionSize)`` (no 16-byte floor).
    """
    v = as_version(spark_version)
    total = sum(sum(b) for b in bytes_by_partition_id if b is not None)
    max_target = _ceil_div_as_double(total, min_num_partitions)
    if v < SparkVersion(3, 2, 0):
        max_target = max(max_target, 16)
        target = min(max_target, advisory_target_size)
        min_size = 0
    else:
        target = max(min(max_target, advisory_target_size), min_partition_size)
        min_size = min_partition_size
    return CoalesceTarget(total, max_target, advisory_target_size, min_size, target, min_num_partitions)


def _target_and_cap(stats: Sequence[BytesByPartitionId], advisory: int, min_num: int, min_size: int,
                    max_reducers: int, v: SparkVersion) -> tuple[int, int]:
    """3.2+: the target size, and the reducers-per-task cap (4.3 only; unlimited before)."""
    target = coalesce_target(stats, advisory_target_size=advisory, min_num_partitions=min_num,
                             min_partition_size=min_size, spark_version=v).target_size
    return target, (max_reducers if v >= SparkVersion(4, 3, 0) else INT_MAX)


def _pack(
    start: int,
    end: int,
    stats: Sequence[Sequence[int]],
    target: int,
    *,
    min_size: int,
    max_reducers: int,
    allow_empty: bool,
    skip_empty: bool = True,
) -> list[list[int]]:
    """The private ``coalescePartitions(start, end, ...)`` packing loop (3.2+; 4.3's
    ``coalescePartitionsAndGetSpecs``), with the 3.0/3.1 variants as flags.

    Returns ``[start, end)`` reducer ranges. ``skip_empty=False`` is 3.0.x (zero-byte ranges
    are emitted); ``min_size=0`` and ``max_reducers=INT_MAX`` disable the 3.2/4.3 additions.
    """
    out: list[list[int]] = []
    acc = 0
    latest = start
    last_size = 0

    def emit(i: int, force: bool = False) -> None:
        if acc > 0 or force or not skip_empty:
            out.append([latest, i])

    if len(stats) == 1:
        totals = stats[0][start:end]
    else:  # the i-th partitions of all shuffles are read by one task
        totals = list(map(sum, zip(*(b[start:end] for b in stats))))
    i = start
    for cur in totals:
        if i > latest and i - latest >= max_reducers:
            emit(i)
            latest = i
            last_size = acc
            acc = cur
        elif i > latest and acc + cur > target:
            if acc < min_size:
                if last_size > 0 and last_size < cur and i - out[-1][0] <= max_reducers:
                    # glue the too-small range onto the previous spec (the smaller neighbour)
                    out[-1][1] = i
                    latest = i
                    last_size += acc
                    acc = cur
                else:
                    acc += cur
            else:
                emit(i)
                latest = i
                last_size = acc
                acc = cur
        else:
            acc += cur
        i += 1
    if acc < min_size and last_size > 0 and end - out[-1][0] <= max_reducers:
        out[-1][1] = end
    else:
        emit(end, force=(not allow_empty) and not out)
    return out


def _attach_data_size(
    stats: Sequence[BytesByPartitionId], ranges: Sequence[Sequence[int]]
) -> list[list[ShufflePartitionSpec]]:
    """``attachDataSize``: per shuffle, each range with the bytes it holds (0 for absent stats)."""
    result: list[list[ShufflePartitionSpec]] = []
    for b in stats:
        if b is None:
            result.append([CoalescedPartitionSpec(s, e, 0) for s, e in ranges])
        else:
            result.append([CoalescedPartitionSpec(s, e, sum(b[s:e])) for s, e in ranges])
    return result


def _spec_reducer_index(spec: ShufflePartitionSpec) -> int:
    if isinstance(spec, CoalescedPartitionSpec) and spec.start_reducer_index + 1 == spec.end_reducer_index:
        return spec.start_reducer_index
    if isinstance(spec, PartialReducerPartitionSpec):
        return spec.reducer_index
    return -1


def coalesce_partitions(
    bytes_by_partition_id: Sequence[BytesByPartitionId],
    input_partition_specs: Optional[Sequence[Optional[Sequence[ShufflePartitionSpec]]]] = None,
    *,
    advisory_target_size: int,
    min_num_partitions: int,
    min_partition_size: int = 0,
    spark_version: "str | SparkVersion",
    max_reducer_partitions_per_task: int = INT_MAX,
) -> list[list[ShufflePartitionSpec]]:
    """``ShufflePartitionsUtil.coalescePartitions`` (3.0.0 - 4.3.0).

    ``bytes_by_partition_id[k]`` is ``MapOutputStatistics.bytesByPartitionId`` of shuffle k, or
    ``None`` where Spark has no map stats (input RDD with 0 partitions).
    ``input_partition_specs[k]`` are specs already put on shuffle k by skew handling (3.2+).

    Returns one spec list per input shuffle; ``[]`` means "no coalescing" (3.2+). In 3.0/3.1
    Spark returns one list shared by every shuffle: it is repeated for each input (3.0's
    caller drops shuffles without stats first; so do we). Raises ``AssertionError`` where the
    release asserts.
    """
    v = as_version(spark_version)
    stats = list(bytes_by_partition_id)
    if v < SparkVersion(3, 2, 0):
        return _coalesce_3_0(stats, advisory_target_size, min_num_partitions, v)

    specs: list[Optional[Sequence[ShufflePartitionSpec]]] = (
        list(input_partition_specs) if input_partition_specs is not None else [None] * len(stats))
    if len(specs) != len(stats):
        raise AssertionError("mapOutputStatistics and inputPartitionSpecs differ in length")
    if not stats:
        return []
    target, max_red = _target_and_cap(stats, advisory_target_size, min_num_partitions, min_partition_size,
                                      max_reducer_partitions_per_task, v)
    if all(sp is None for sp in specs):
        return _coalesce_without_skew(stats, target, min_partition_size, max_red)
    return _coalesce_with_skew(stats, specs, target, min_partition_size, max_red, v)


def _coalesce_3_0(
    stats: list[BytesByPartitionId], advisory: int, min_num: int, v: SparkVersion
) -> list[list[ShufflePartitionSpec]]:
    """3.0.x/3.1.x ``coalescePartitions(Array[MapOutputStatistics], advisory, minNum)``."""
    valid = [list(b) for b in stats if b is not None]
    lengths = {len(b) for b in valid}
    if len(lengths) != 1:
        raise AssertionError(
            "There should be only one distinct value of the number pre-shuffle partitions "
            f"among registered Exchange operators, got {sorted(lengths)}"
        )
    n = lengths.pop()
    target = coalesce_target(
        valid, advisory_target_size=advisory, min_num_partitions=min_num, spark_version=v
    ).target_size
    skip_empty = v >= SparkVersion(3, 1, 0)
    ranges = _pack(0, n, valid, target, min_size=0, max_reducers=INT_MAX, allow_empty=False, skip_empty=skip_empty)
    shared: list[ShufflePartitionSpec] = [CoalescedPartitionSpec(s, e) for s, e in ranges]
    return [list(shared) for _ in stats]


def _coalesce_without_skew(
    stats: list[BytesByPartitionId], target: int, min_size: int, max_red: int
) -> list[list[ShufflePartitionSpec]]:
    valid = [b for b in stats if b is not None]
    if not valid:
        return [[CoalescedPartitionSpec(0, 0, 0)] for _ in stats]
    if len({len(b) for b in valid}) > 1:
        return []
    n = len(valid[0])
    ranges = _pack(0, n, valid, target, min_size=min_size, max_reducers=max_red, allow_empty=False)
    return _attach_data_size(stats, ranges) if len(ranges) < n else []


SkewSections = dict  # reducer index -> per-shuffle lists of the specs that replace it


def _coalesce_with_skew(
    stats: list[BytesByPartitionId],
    specs: list[Optional[Sequence[ShufflePartitionSpec]]],
    target: int,
    min_size: int,
    max_red: int,
    v: SparkVersion,
) -> list[list[ShufflePartitionSpec]]:
    """``coalescePartitionsWithSkew``: validate the layout, then coalesce around the skew sections."""
    if any(b is None for b in stats) or any(sp is None for sp in specs):
        return []  # Spark logs a warning: missing map stats or partition specs
    spec_lists = [list(sp) for sp in specs if sp is not None]
    index_seqs = [[_spec_reducer_index(s) for s in sp] for sp in spec_lists]
    first = index_seqs[0]
    if any(seq != first for seq in index_seqs) or any(x < 0 for x in first):
        if v < SparkVersion(3, 5, 0):
            raise AssertionError(f"Invalid shuffle partition specs: {specs}")
        return []
    if not first or first[0] != 0:
        raise AssertionError("the first partition index must be 0")
    n = len(first)
    sections: SkewSections = {}
    i = 1
    while i < n:
        if first[i - 1] == first[i]:
            r = i + 1
            while r < n and first[r] == first[i]:
                r += 1
            sections[first[i]] = [sp[i - 1 : r] for sp in spec_lists]
            i = r  # the element after a section starts a new plain stretch
        else:
            if first[i - 1] + 1 != first[i]:
                raise AssertionError("partition indices outside skew sections must increase by 1")
            i += 1
    return coalesce_around_skew_sections(stats, sections, first[-1] + 1, n, target, min_size, max_red)  # type: ignore[arg-type]


def coalesce_partitions_with_skew_sections(
    bytes_by_partition_id: Sequence[Sequence[int]],
    sections: SkewSections,
    num_input_specs: int,
    *,
    advisory_target_size: int,
    min_num_partitions: int,
    min_partition_size: int = 0,
    spark_version: "str | SparkVersion",
    max_reducer_partitions_per_task: int = INT_MAX,
) -> list[list[ShufflePartitionSpec]]:
    """:func:`coalesce_partitions` (3.2+) for skew-handled shuffles given as skew sections (see
    :func:`coalesce_around_skew_sections`) instead of full spec lists: same result, same rule."""
    v = as_version(spark_version)
    if v < SparkVersion(3, 2, 0):
        raise ValueError(f"Spark {v} coalesces before skew handling; there are no skew sections to keep")
    target, max_red = _target_and_cap(bytes_by_partition_id, advisory_target_size, min_num_partitions,
                                      min_partition_size, max_reducer_partitions_per_task, v)
    return coalesce_around_skew_sections(bytes_by_partition_id, sections, len(bytes_by_partition_id[0]),
                                         num_input_specs, target, min_partition_size, max_red)


def coalesce_around_skew_sections(
    stats: Sequence[Sequence[int]],
    sections: SkewSections,
    num_reducers: int,
    num_input_specs: int,
    target: int,
    min_size: int = 0,
    max_red: int = INT_MAX,
) -> list[list[ShufflePartitionSpec]]:
    """The coalescing half of ``coalescePartitionsWithSkew`` (3.2+) on a compact layout.

    ``sections[r]`` holds, per shuffle, the specs that replace reducer ``r`` (a skew section:
    two or more specs, copied verbatim); every other reducer of ``[0, num_reducers)`` is plain
    and coalesced with its plain neighbours, never across a section. ``num_input_specs`` is the
    length of the uncompressed spec list (for Spark's "did it shrink?" check). Lets a what-if
    skip materialising one spec per unchanged partition.
    """
    new: list[list[ShufflePartitionSpec]] = [[] for _ in stats]

    def add_coalesced(lo: int, hi: int) -> None:
        ranges = _pack(lo, hi, stats, target, min_size=min_size, max_reducers=max_red, allow_empty=True)
        for k, part in enumerate(_attach_data_size(stats, ranges)):
            new[k].extend(part)

    start = 0
    for r in sorted(sections):
        if r > start:
            add_coalesced(start, r)
        for k, sec in enumerate(sections[r]):
            new[k].extend(sec)
        start = r + 1
    if start < num_reducers:
        add_coalesced(start, num_reducers)
    return new if len(new[0]) < num_input_specs else []


def split_size_list_by_target_size(
    sizes: Sequence[int],
    target_size: int,
    *,
    spark_version: "str | SparkVersion",
    small_partition_factor: float = SMALL_PARTITION_FACTOR,
) -> list[int]:
    """``ShufflePartitionsUtil.splitSizeListByTargetSize`` (3.0.x: ``OptimizeSkewedJoin``).

    Start indices of the splits of a skewed partition's per-map sizes. A finished split is
    merged into the previous one when together they stay under 1.2 x target or either is
    below ``small_partition_factor`` x target. The factor is a parameter from 3.3 (rebalance
    passes its own); 3.0-3.2 hard-code 0.2, so other values are ignored there.
    """
    v = as_version(spark_version)
    small = small_partition_factor if v >= SparkVersion(3, 3, 0) else SMALL_PARTITION_FACTOR
    merged_limit = target_size * MERGED_PARTITION_FACTOR
    small_limit = target_size * small
    starts = [0]
    current = 0
    last = -1

    def try_merge() -> None:
        nonlocal last
        if last > -1 and (
            float(current + last) < merged_limit or float(current) < small_limit or float(last) < small_limit
        ):
            starts.pop()
            last += current
        else:
            last = current

    for i, s in enumerate(sizes):
        if i > 0 and current + s > target_size:
            try_merge()
            starts.append(i)
            current = s
        else:
            current += s
    try_merge()
    return starts


def create_skew_partition_specs(
    reducer_index: int,
    map_sizes: Sequence[Optional[int]],
    target_size: int,
    *,
    spark_version: "str | SparkVersion",
    small_partition_factor: float = SMALL_PARTITION_FACTOR,
) -> Optional[list[PartialReducerPartitionSpec]]:
    """``ShufflePartitionsUtil.createSkewPartitionSpecs`` (3.0.x: ``OptimizeSkewedJoin``).

    ``map_sizes`` are ``MapStatus.getSizeForBlock(reducer)`` of every map task; ``None`` marks
    a missing map status (3.2+ returns None for it, SPARK-36228; earlier releases would fail,
    so we also give up). Returns None when the partition cannot be split in two or more.
    """
    v = as_version(spark_version)
    if any(s is None or s < 0 for s in map_sizes):
        return None
    sizes = [int(s) for s in map_sizes]  # type: ignore[arg-type]
    starts = split_size_list_by_target_size(
        sizes, target_size, spark_version=v, small_partition_factor=small_partition_factor
    )
    if len(starts) <= 1:
        return None
    with_size = v >= SparkVersion(3, 1, 0)
    out = []
    for k, start in enumerate(starts):
        end = starts[k + 1] if k + 1 < len(starts) else len(sizes)
        out.append(
            PartialReducerPartitionSpec(reducer_index, start, end, sum(sizes[start:end]) if with_size else None)
        )
    return out


MapSizesFor = Callable[[int], Optional[Sequence[Optional[int]]]]


class UnitSpecs(SequenceABC):
    """``C(i, i+1, bytes[i])`` for every reducer (the specs of an unchanged shuffle read),
    created only when looked at: a skew join over many partitions changes a few."""

    def __init__(self, sizes: Sequence[int]) -> None:
        self._sizes = sizes

    def __len__(self) -> int:
        return len(self._sizes)

    def __getitem__(self, i):
        if isinstance(i, slice):
            return [self[j] for j in range(*i.indices(len(self)))]
        if i < 0:
            i += len(self)
        return CoalescedPartitionSpec(i, i + 1, self._sizes[i])


def optimize_skewed_partitions(
    bytes_by_partition_id: Sequence[int],
    map_sizes_for: MapSizesFor,
    skew_threshold: int,
    target_size: int,
    *,
    spark_version: "str | SparkVersion",
    small_partition_factor: float = SMALL_PARTITION_FACTOR,
) -> list[ShufflePartitionSpec]:
    """``ShufflePartitionsUtil.optimizeSkewedPartitions`` (4.3; a private twin in
    ``OptimizeSkewInRebalancePartitions`` for 3.2-4.2).

    Every reducer larger than ``skew_threshold`` is split by its per-map sizes when possible;
    the others stay ``C(i, i+1, size)``. ``map_sizes_for(i)`` returns None when unknown.
    """
    out: list[ShufflePartitionSpec] = []
    for i, size in enumerate(bytes_by_partition_id):
        splits = None
        if size > skew_threshold:
            sizes = map_sizes_for(i)
            if sizes is not None:
                splits = create_skew_partition_specs(
                    i, sizes, target_size, spark_version=spark_version, small_partition_factor=small_partition_factor
                )
        if splits:
            out.extend(splits)
        else:
            out.append(CoalescedPartitionSpec(i, i + 1, size))
    return out
