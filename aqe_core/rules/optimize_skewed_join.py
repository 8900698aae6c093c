"""Spark's ``OptimizeSkewedJoin``: find skewed join partitions and split them.

Mirrors ``org.apache.spark.sql.execution.adaptive.OptimizeSkewedJoin.tryOptimizeJoinChildren``
(3.2+) / ``optimizeSkewJoin`` (3.0/3.1) with ``medianSize``, ``getSkewThreshold``, ``isSkewed``
and ``targetSize`` (3.0.1 - 4.3.0):

* 3.0.x/3.1.x  runs *after* ``CoalesceShufflePartitions``: the skew test and the target use the
  post-coalesce partition sizes, a partition is skewed if ``size > factor x median`` *and*
  ``size > thresholdBytes`` (two conditions, no single threshold), and only partitions that
  were not coalesced (one reducer) are split. The median is over the post-coalesce sizes in
  3.0.x (``medianSize(Seq[Long])``) but over the shuffle's own ``bytesByPartitionId`` in 3.1.x
  (``medianSize(MapOutputStatistics)``; checked in the 3.1.3 release and against live 3.1.3
  runs);
* 3.2+  runs *before* coalescing on the raw ``bytesByPartitionId``: one threshold
  ``max(thresholdBytes, factor x median)``; 3.4 made the factor a double (product truncated);
* 4.2+  also splits a broadcast hash join's streamed side when local reads are off (SPARK-44065:
  :mod:`aqe_core.rules.optimize_skewed_join_stream`, which owns that case's wording).

Plan-shape conditions (which joins match, the "no extra shuffle" check, forceOptimizeSkewedJoin)
are :mod:`aqe_core.rules.optimize_skewed_join_plan`'s; this module does the numbers and declares
the rule's vocabulary: every reason code with its meaning and sentence, and the conditions its
decision trace lists (why it split, or why not, is read here).

Worked example (3.5): the left side's partition 3 (400 B) is over ``max(threshold 100 B,
5 x median 25 B) = 125 B``; the target is ``max(advisory 60 B, mean of the others 20 B)``, so
its four 100 B map outputs become four parts, each joined with the right side's partition 3:

    >>> conf = {config.SKEW_JOIN_SKEWED_PARTITION_THRESHOLD: "100", config.ADVISORY_PARTITION_SIZE_IN_BYTES: "60"}
    >>> left = SkewJoinSide([10, 20, 30, 400], lambda reducer: [100, 100, 100, 100])
    >>> right = SkewJoinSide([10, 20, 30, 40])
    >>> res = optimize_skewed_join(left, right, "Inner", conf, spark_version="3.5.1")
    >>> res.left.median, res.left.skew_threshold, res.left.target_size, res.left.skewed_indices
    (25, 125, 60, (3,))
    >>> res.left_splits, res.num_specs  # 3 plain partitions + 4 parts
    ({3: 4}, 7)
    >>> [(s.start_map_index, s.end_map_index) for s in res.left_specs[3:]]
    [(0, 1), (1, 2), (2, 3), (3, 4)]
    >>> [(s.start_reducer_index, s.end_reducer_index) for s in res.right_specs[3:]]
    [(3, 4), (3, 4), (3, 4), (3, 4)]

The left side of a right outer join may not be split (``canSplitLeftSide``):

    >>> optimize_skewed_join(left, right, "RightOuter", conf, spark_version="3.5.1").applied
    False
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Mapping, Optional, Sequence

from aqe_core import config
from aqe_core.config import AQEConf, as_conf as _conf
from aqe_core.model.reasons import Reason
from aqe_core.model.vocabulary import Vocabulary
from aqe_core.units import mib, num
from aqe_core.model import shared_vocabulary as shared
from aqe_core.rules.coalesce_shuffle_partitions import COALESCED as _COALESCED, PARTITION_COUNTS_DIFFER
from aqe_core.rules.convert_sort_merge_join_to_shuffled_hash_join import NOT_ELIGIBLE
from aqe_core.rules.insert_adaptive_spark_plan import STREAMING
from aqe_core.rules import optimize_skewed_join_stream as stream_case
from aqe_core.rules.optimize_skew_in_rebalance_partitions import NO_LARGE_PARTITION, NOT_REBALANCE
from aqe_core.rules.join_type import normalize_join_type
from aqe_core.rules.shuffle_partitions_util import MapSizesFor, UnitSpecs, create_skew_partition_specs
from aqe_core.model.specs import CoalescedPartitionSpec, ShufflePartitionSpec
from aqe_core.versions import SparkVersion, as_version


_LONG_MAX = 2**63 - 1
#: Join types whose left / right side may be split (``canSplitLeftSide`` / ``canSplitRightSide``).
LEFT_SPLITTABLE = frozenset({"Inner", "Cross", "LeftSemi", "LeftAnti", "LeftOuter"})
RIGHT_SPLITTABLE = frozenset({"Inner", "Cross", "RightOuter"})
SUPPORTED_JOIN_TYPES = LEFT_SPLITTABLE | RIGHT_SPLITTABLE
#: the joins whose two shuffled children the rule can split (3.0, 3.1: sort-merge only)
SHUFFLED_JOINS = ("SortMergeJoin", "ShuffledHashJoin")
#: ``optimizeSkewJoin`` matches ``ShuffledHashJoinExec`` from 3.2.0 (SPARK-35214); 3.0 and 3.1
#: match ``SortMergeJoinExec`` only
SHUFFLED_HASH_JOIN_SINCE = SparkVersion(3, 2, 0)

# -- vocabulary (:mod:`aqe_core.model.vocabulary`): why the rule split or did not split, in its words
V = Vocabulary("OptimizeSkewedJoin", __name__)
_SKEWED = "{name} partition {i} is skewed"
SKEWED = V.code("skewed", "A side's partition is over the skew threshold (the analysis, before any split).",
                "{label}partition {i} is skewed: {size} > {factor} x median {median} and > {threshold}")
SKEW_JOIN_DISABLED = V.code("skew_join_disabled", "Skew handling is off (its ``skewJoin.enabled`` setting is false):"
                            " the rule does nothing.", "{key} is false")
JOIN_TYPE_NOT_SUPPORTED = V.code("join_type_not_supported", "The join type lets neither side be split.",
                                 "{join_type} joins are never split: neither side may be split")
SIDE_NOT_SPLITTABLE = V.code("side_not_splittable", "A skewed partition is on a side the join type may not split.",
                             _SKEWED + " ({size}) but the {name} side of a {join_type} join cannot be split")
COALESCED = V.reuse(_COALESCED, _SKEWED + " ({size}) but was coalesced from reducers {first}-{last}; only single"
                    " reducers are split")
MAP_SIZES_UNKNOWN = V.reuse(shared.MAP_SIZES_UNKNOWN, _SKEWED + " ({size}) but its per-map sizes are unknown, so the"
                            " split cannot be computed")
NOT_SPLITTABLE = V.reuse(shared.NOT_SPLITTABLE, _SKEWED + " ({size}) but its {maps} map outputs cannot be cut into two"
                         " or more parts of about {target}")
SPLIT = V.reuse(shared.SPLIT, _SKEWED + ": {size} {cond}; split into {n} parts of about {target}")
NO_SPLIT = V.reuse(shared.NO_SPLIT, "no partition was split: {why}")
SIDE_NOT_SKEWED = V.code("side_not_skewed", "The other side was split, this one has no partition over the skew"
                         " threshold.", "no {name} partition is skewed: {why}")
SKEW_JOIN_ERROR = V.code("skew_join_error", "Spark's rule would throw on this join (an assertion of its own).",
                         "OptimizeSkewedJoin would fail: {error}")
FORCED = V.code("forced", "The split breaks the plan's distribution but forceOptimizeSkewedJoin=true keeps it (3.3+,"
                " Spark adds a shuffle).", "the split breaks the plan's distribution ({broken}); applied anyway because"
                " forceOptimizeSkewedJoin=true (Spark adds a shuffle)")
DISTRIBUTION_BROKEN = V.reuse(shared.DISTRIBUTION_BROKEN, "skew handling not applied: splitting would break the plan's"
                              " distribution ({broken}), which would need an extra shuffle")

# the decision trace: what it lists, in order (engine/trace.py walks it)
ENABLED = V.condition("skew.enabled", "skew handling is enabled", "The rule's switch (a rebalance read: its own).",
                      settings=(config.SKEW_JOIN_ENABLED,), fails=(SKEW_JOIN_DISABLED, shared.DISABLED))
RUNS_ON_STAGE = V.condition(
    "skew.runs_on_stage", "the rule runs on this stage", "The final-stage filter and the plan shapes it skips.",
    settings=(config.ADAPTIVE_APPLY_FINAL_STAGE_SHUFFLE_OPTIMIZATIONS,),
    fails=(shared.FINAL_STAGE_RULE_EXCLUDED, shared.FINAL_STAGE_RULES_OFF, NOT_ELIGIBLE, NOT_REBALANCE,
           PARTITION_COUNTS_DIFFER, STREAMING))
JOIN_TYPE = V.condition("skew.join_type", "the join type lets this side be split", "``canSplitLeftSide`` / ``Right``.",
                        fails=(JOIN_TYPE_NOT_SUPPORTED, SIDE_NOT_SPLITTABLE), meets=(SPLIT,))
OVER_THRESHOLD = V.condition(
    "skew.over_threshold", "a partition is over the skew threshold", "``isSkewed``: over factor x median and the bytes.",
    settings=(config.SKEW_JOIN_SKEWED_PARTITION_FACTOR, config.SKEW_JOIN_SKEWED_PARTITION_THRESHOLD),
    fails=(NO_SPLIT, NO_LARGE_PARTITION, SIDE_NOT_SKEWED),
    meets=(SPLIT, NOT_SPLITTABLE, SIDE_NOT_SPLITTABLE, DISTRIBUTION_BROKEN))
NO_EXTRA_SHUFFLE = V.condition(
    "skew.no_extra_shuffle", "splitting needs no extra shuffle (or forceOptimizeSkewedJoin is on)",
    "Spark keeps a split only if the plan's distribution holds (3.3+: unless forced).",
    settings=(config.ADAPTIVE_FORCE_OPTIMIZE_SKEWED_JOIN,), fails=(DISTRIBUTION_BROKEN,), meets=(FORCED,))
#: a read the rule changed is split; "applied": the other side was split, this one not
VERDICTS = {"changed": "split", "applied": "not split; the other side's splits each read these partitions again",
            "unchanged": "not split"}
TRACE = V.trace("OptimizeSkewedJoin", ENABLED, RUNS_ON_STAGE, JOIN_TYPE, OVER_THRESHOLD, shared.MAP_OUTPUTS_CUT,
                NO_EXTRA_SHUFFLE, verdicts=VERDICTS)
#: a broadcast join's streamed side (SPARK-44065, 4.2.0): the case's own conditions in the middle
TRACE_STREAM = V.trace("OptimizeSkewedJoin/broadcast stream", ENABLED, RUNS_ON_STAGE, *stream_case.TRACE_CONDITIONS,
                       NO_EXTRA_SHUFFLE, marks=stream_case.CODES, subject_mark="stream", verdicts=VERDICTS)

def splits_join(join: str, spark_version: "str | SparkVersion") -> bool:
    """Is ``join`` (an operator's name, e.g. ``SortMergeJoin`` or ``ShuffledHashJoin(skew=true)``)
    one whose shuffled sides ``OptimizeSkewedJoin.optimizeSkewJoin`` may split in this release?

    >>> splits_join("SortMergeJoin", "3.0.1"), splits_join("ShuffledHashJoin", "3.1.3")
    (True, False)
    >>> splits_join("ShuffledHashJoin", "3.2.4"), splits_join("BroadcastHashJoin", "3.5.1")
    (True, False)
    """
    if "SortMergeJoin" in join:
        return True
    return "ShuffledHashJoin" in join and as_version(spark_version) >= SHUFFLED_HASH_JOIN_SINCE


def can_split_left(join_type: str) -> bool:
    """``OptimizeSkewedJoin.canSplitLeftSide`` (all releases)."""
    return normalize_join_type(join_type) in LEFT_SPLITTABLE


def can_split_right(join_type: str) -> bool:
    """``OptimizeSkewedJoin.canSplitRightSide`` (all releases)."""
    return normalize_join_type(join_type) in RIGHT_SPLITTABLE




def median_size(sizes: Sequence[int]) -> int:
    """``OptimizeSkewedJoin.medianSize`` (all releases): middle of the sorted sizes, the
    truncated mean of the two middle ones for an even count, and never below 1."""
    if not sizes:
        raise ValueError("median of no partitions")
    b = sorted(sizes)
    n = len(b)
    if n % 2 == 0:
        return max((b[n // 2] + b[n // 2 - 1]) // 2, 1)
    return max(b[n // 2], 1)


def skew_threshold(median: int, conf: "Mapping[str, Any] | AQEConf | None", *, spark_version: "str | SparkVersion") -> Optional[int]:
    """``OptimizeSkewedJoin.getSkewThreshold`` (3.2+): ``max(thresholdBytes, median x factor)``.

    Returns None for 3.0/3.1, which test the two conditions separately (:func:`is_skewed`).
    From 3.4 the factor is a double and the product is truncated to a long.
    """
    v = as_version(spark_version)
    c = _conf(conf, v)
    if v < SparkVersion(3, 2, 0):
        return None
    return max(c.skew_threshold_bytes, _times_factor(median, c.skew_factor))


def _times_factor(median: int, factor: "int | float") -> int:
    if isinstance(factor, float):
        product = median * factor
        return int(product) if product < 9.223372036854775807e18 else 2**63 - 1
    return median * factor


def is_skewed(size: int, median: int, conf: "Mapping[str, Any] | AQEConf | None", *, spark_version: "str | SparkVersion") -> bool:
    """``OptimizeSkewedJoin.isSkewed``: 3.0/3.1 ``size > median x factor && size > thresholdBytes``;
    3.2+ ``size > getSkewThreshold(median)``."""
    v = as_version(spark_version)
    c = _conf(conf, v)
    if v < SparkVersion(3, 2, 0):
        return size > median * c.skew_factor and size > c.skew_threshold_bytes
    return size > skew_threshold(median, c, spark_version=v)  # type: ignore[operator]


def target_size(sizes: Sequence[int], median: int, conf: "Mapping[str, Any] | AQEConf | None", *, spark_version: "str | SparkVersion") -> int:
    """``OptimizeSkewedJoin.targetSize``: the split target, ``max(advisory, mean of the non-skewed
    sizes)`` (truncated long mean). 3.2+ uses the advisory size when every partition is skewed;
    3.0/3.1 assert there is a non-skewed one."""
    v = as_version(spark_version)
    c = _conf(conf, v)
    advisory = c.advisory_partition_size
    non_skewed = [s for s in sizes if not is_skewed(s, median, c, spark_version=v)]
    if not non_skewed:
        if v < SparkVersion(3, 2, 0):
            raise AssertionError("There should be at least one non-skewed partition")
        return advisory
    return max(advisory, sum(non_skewed) // len(non_skewed))


@dataclass(frozen=True)
class SideAnalysis:
    """Skew statistics of one join side (or one rebalance/stream shuffle).

    ``skew_threshold`` is None for 3.0/3.1 (two conditions: ``factor_threshold`` and
    ``threshold_bytes``); the UI draws whichever lines exist.
    """

    spark_version: SparkVersion
    sizes: tuple[int, ...]
    median: int
    skew_threshold: Optional[int]
    factor_threshold: int
    threshold_bytes: int
    factor: "int | float"
    advisory_size: int
    target_size: int
    skewed_indices: tuple[int, ...]
    reasons: tuple[Reason, ...] = ()

    @property
    def effective_threshold(self) -> int:
        """The size a partition must exceed to be skewed (3.0/3.1: the larger of both conditions)."""
        if self.skew_threshold is not None:
            return self.skew_threshold
        return max(self.factor_threshold, self.threshold_bytes)

    def why_not_skewed(self, name: str) -> str:
        """The largest partition against the threshold it had to pass ("" when one passed)."""
        if not self.sizes or max(self.sizes) > self.effective_threshold:
            return ""
        over = " (over the coalesced partitions, as 3.0/3.1 judge skew)" if self.spark_version < SparkVersion(3, 2, 0) else ""
        limit = (f"{num(self.factor)} x median {mib(self.median)}{over} = {mib(self.factor_threshold)}"
                 if self.factor_threshold >= self.threshold_bytes else
                 f"the skew threshold {mib(self.threshold_bytes)} ({config.SKEW_JOIN_SKEWED_PARTITION_THRESHOLD})")
        return f"the largest {name} partition, {mib(max(self.sizes))}, is not above {limit}"


def analyze_side(
    partition_sizes: Sequence[int],
    conf: "Mapping[str, Any] | AQEConf | None" = None,
    *,
    spark_version: "str | SparkVersion",
    side: str = "",
    median_of: Optional[Sequence[int]] = None,
) -> SideAnalysis:
    """Median, skew threshold, split target and skewed partitions of one side, as computed by
    ``OptimizeSkewedJoin.tryOptimizeJoinChildren`` (3.2+) / ``optimizeSkewJoin`` (3.0/3.1).

    ``conf`` holds Spark conf strings (or an :class:`AQEConf`); unspecified keys take the
    release's defaults. For 3.0/3.1 pass the post-coalesce sizes, as Spark does; for 3.1 also
    ``median_of`` = the shuffle's ``bytesByPartitionId`` (3.1's median is over those).
    """
    v = as_version(spark_version)
    c = _conf(conf, v)
    sizes = tuple(partition_sizes)
    import numpy as np  # (here: numpy is 0.13 s of a command's start that reads no rule)

    try:
        arr = np.asarray(sizes, dtype=np.int64)  # vectorised: a what-if re-runs this per side
    except OverflowError:  # a hostile log's coalesced sums past a Long: saturated
        arr = np.asarray([min(max(s, -_LONG_MAX), _LONG_MAX) for s in sizes], dtype=np.int64)
    n = len(arr)
    if n == 0:
        raise ValueError("median of no partitions")
    if median_of is not None:
        med = median_size(median_of)
    else:
        mid = np.partition(arr, [n // 2 - 1, n // 2] if n > 1 else [0])
        med = max((int(mid[n // 2]) + int(mid[n // 2 - 1])) // 2 if n % 2 == 0 else int(mid[n // 2]), 1)
    factor = c.skew_factor
    thr_bytes = c.skew_threshold_bytes
    factor_thr = _times_factor(med, factor)
    if v < SparkVersion(3, 2, 0):
        thr = None
        mask = (arr > min(med * factor, _LONG_MAX)) & (arr > thr_bytes)  # (numpy refuses ints past a Long)
    else:
        thr = max(thr_bytes, factor_thr)
        mask = arr > min(thr, _LONG_MAX)
    skewed = tuple(int(i) for i in np.flatnonzero(mask))
    n_plain = n - len(skewed)
    advisory = c.advisory_partition_size
    if n_plain:
        plain_sum = sum(sizes) - sum(sizes[i] for i in skewed)  # exact Python ints
        tgt = max(advisory, plain_sum // n_plain)
    elif v < SparkVersion(3, 2, 0):
        raise AssertionError("There should be at least one non-skewed partition")
    else:
        tgt = advisory
    label = f"{side} side: " if side else ""
    reasons = tuple(SKEWED.reason(
        numbers={"size": sizes[i], "median": med, "factor": factor, "threshold": thr, "factor_threshold": factor_thr,
                 "threshold_bytes": thr_bytes, "target": tgt},
        config_keys=(config.SKEW_JOIN_SKEWED_PARTITION_FACTOR, config.SKEW_JOIN_SKEWED_PARTITION_THRESHOLD),
        subject={"partition": i, "side": side} if side else {"partition": i}, label=label, i=i, size=mib(sizes[i]),
        factor=num(factor), median=mib(med), threshold=mib(thr_bytes)) for i in skewed)
    return SideAnalysis(v, sizes, med, thr, factor_thr, thr_bytes, factor, advisory, tgt, skewed, reasons)


@dataclass
class SkewJoinSide:
    """One join child as the rule sees it.

    ``bytes_by_partition_id`` is the shuffle's map statistics; ``map_sizes_for(reducer)`` gives
    ``MapStatus.getSizeForBlock`` per map (None when unknown). ``coalesced_specs`` is the 3.0/3.1
    reader's specs from ``CoalesceShufflePartitions`` (None = a bare stage).
    """

    bytes_by_partition_id: Sequence[int]
    map_sizes_for: Optional[MapSizesFor] = None
    coalesced_specs: Optional[Sequence[CoalescedPartitionSpec]] = None


@dataclass
class SkewJoinResult:
    """Outcome of ``OptimizeSkewedJoin`` for one join: new specs per side, or unchanged.

    ``sections`` maps each split reducer to the (left parts, right parts) pairs after the
    cartesian expansion; ``left_specs`` / ``right_specs`` expand to Spark's full spec lists
    (one per task) on first use.
    """

    applied: bool
    join_type: str
    left: SideAnalysis
    right: SideAnalysis
    num_skewed_left: int = 0
    num_skewed_right: int = 0
    left_splits: dict[int, int] = field(default_factory=dict)  # reducer -> number of splits
    right_splits: dict[int, int] = field(default_factory=dict)
    reasons: list[Reason] = field(default_factory=list)
    sections: dict[int, tuple[list[ShufflePartitionSpec], list[ShufflePartitionSpec]]] = field(default_factory=dict)
    base_left: Sequence[CoalescedPartitionSpec] = field(default_factory=list, repr=False)
    base_right: Sequence[CoalescedPartitionSpec] = field(default_factory=list, repr=False)
    _expanded: Optional[tuple[list[ShufflePartitionSpec], list[ShufflePartitionSpec]]] = field(default=None, repr=False)

    def _expand(self) -> tuple[list[ShufflePartitionSpec], list[ShufflePartitionSpec]]:
        if self._expanded is None:
            out_l: list[ShufflePartitionSpec] = []
            out_r: list[ShufflePartitionSpec] = []
            if self.applied:
                for i, (ls, rs) in enumerate(zip(self.base_left, self.base_right)):
                    sec = self.sections.get(i)
                    if sec is None:
                        out_l.append(ls)
                        out_r.append(rs)
                    else:
                        out_l.extend(sec[0])
                        out_r.extend(sec[1])
            self._expanded = (out_l, out_r)
        return self._expanded

    @property
    def left_specs(self) -> list[ShufflePartitionSpec]:
        return self._expand()[0]

    @property
    def right_specs(self) -> list[ShufflePartitionSpec]:
        return self._expand()[1]

    @property
    def num_specs(self) -> int:
        """Tasks of the join after the rule (== len(left_specs))."""
        extra = sum(len(sec[0]) - 1 for sec in self.sections.values())
        return len(self.base_left) + extra


def _side_specs(side: SkewJoinSide, v: SparkVersion) -> Sequence[CoalescedPartitionSpec]:
    if side.coalesced_specs is not None and v < SparkVersion(3, 2, 0):
        return list(side.coalesced_specs)
    b = side.bytes_by_partition_id
    if v >= SparkVersion(3, 2, 0):
        return UnitSpecs(b)
    return [CoalescedPartitionSpec(i, i + 1) for i in range(len(b))]


def _spec_size(spec: CoalescedPartitionSpec, b: Sequence[int]) -> int:
    return sum(b[spec.start_reducer_index : spec.end_reducer_index])


def optimize_skewed_join(
    left: SkewJoinSide,
    right: SkewJoinSide,
    join_type: str,
    conf: "Mapping[str, Any] | AQEConf | None" = None,
    *,
    spark_version: "str | SparkVersion",
) -> SkewJoinResult:
    """``OptimizeSkewedJoin.tryOptimizeJoinChildren`` (3.2+) / ``optimizeSkewJoin`` (3.0/3.1).

    For each partition index, each splittable skewed side is split by its per-map sizes, and
    the pairs are the cartesian product of both sides' parts (left outer loop). The join is
    changed only if at least one side's partition was actually split.
    """
    v = as_version(spark_version)
    c = _conf(conf, v)
    jt = normalize_join_type(join_type)
    lspecs, rspecs = _side_specs(left, v), _side_specs(right, v)
    if len(lspecs) != len(rspecs):
        raise AssertionError("join sides must have the same number of partitions")
    la, ra = _analyze_sides(left, right, lspecs, rspecs, c, v)
    result = SkewJoinResult(False, jt, la, ra, base_left=lspecs, base_right=rspecs)
    reasons = result.reasons
    if not c.get(config.SKEW_JOIN_ENABLED):
        reasons.append(SKEW_JOIN_DISABLED.reason(config_keys=(config.SKEW_JOIN_ENABLED,), key=config.SKEW_JOIN_ENABLED))
        return result
    if jt not in SUPPORTED_JOIN_TYPES:
        reasons.append(JOIN_TYPE_NOT_SUPPORTED.reason(numbers={"join_type": jt}, join_type=jt))
    lsplitter = _Splitter("left", left, la, can_split_left(jt), result.left_splits, jt, v, reasons)
    rsplitter = _Splitter("right", right, ra, can_split_right(jt), result.right_splits, jt, v, reasons)
    for i in sorted(lsplitter.skewed | rsplitter.skewed):  # every other partition index keeps its one spec
        lparts, lsplit = lsplitter.parts(lspecs[i], i)
        rparts, rsplit = rsplitter.parts(rspecs[i], i)
        result.num_skewed_left += int(lsplit)
        result.num_skewed_right += int(rsplit)
        if lsplit or rsplit:
            result.sections[i] = ([lp for lp in lparts for _ in rparts], [rp for _ in lparts for rp in rparts])
    if result.num_skewed_left > 0 or result.num_skewed_right > 0:
        result.applied = True
        for name, a in (("left", la), ("right", ra)):  # the side the split left alone: why, in its numbers
            why = a.why_not_skewed(name)
            if why:
                reasons.append(SIDE_NOT_SKEWED.reason(numbers={"median": a.median, "largest": max(a.sizes)},
                                                      subject={"side": name}, name=name, why=why))
    else:
        whys = [w for w in (la.why_not_skewed("left"), ra.why_not_skewed("right")) if w]
        reasons.append(NO_SPLIT.reason(numbers={"left_median": la.median, "right_median": ra.median},
                                       why="; ".join(whys) if whys else "the join is unchanged"))
    return result


def _analyze_sides(left: SkewJoinSide, right: SkewJoinSide, lspecs: Sequence[CoalescedPartitionSpec],
                   rspecs: Sequence[CoalescedPartitionSpec], c: AQEConf, v: SparkVersion) -> tuple[SideAnalysis, SideAnalysis]:
    """Both sides' statistics: 3.2+ on the raw map statistics (one entry per reducer), 3.0/3.1 on
    the post-coalesce sizes (one entry per reader spec; 3.1's median over the raw ones)."""
    if v >= SparkVersion(3, 2, 0):
        lsizes, rsizes = list(left.bytes_by_partition_id), list(right.bytes_by_partition_id)
    else:
        lsizes = [_spec_size(s, left.bytes_by_partition_id) for s in lspecs]
        rsizes = [_spec_size(s, right.bytes_by_partition_id) for s in rspecs]
    median_raw = SparkVersion(3, 1, 0) <= v < SparkVersion(3, 2, 0)  # 3.1: medianSize(mapStats)
    la = analyze_side(lsizes, c, spark_version=v, side="left",
                      median_of=left.bytes_by_partition_id if median_raw else None)
    ra = analyze_side(rsizes, c, spark_version=v, side="right",
                      median_of=right.bytes_by_partition_id if median_raw else None)
    return la, ra


@dataclass
class _Splitter:
    """Splits one join side's skewed partitions, recording the splits and the reasons."""

    name: str
    side: SkewJoinSide
    analysis: SideAnalysis
    splittable: bool
    splits: dict[int, int]
    join_type: str
    v: SparkVersion
    reasons: list[Reason]

    @property
    def skewed(self) -> set[int]:
        return set(self.analysis.skewed_indices)

    def parts(self, spec: CoalescedPartitionSpec, i: int) -> tuple[list[ShufflePartitionSpec], bool]:
        """The specs partition ``i`` becomes on this side, and whether it was split."""
        name, analysis = self.name, self.analysis
        if i not in analysis.skewed_indices:
            return [spec], False
        size = analysis.sizes[i]
        subject = {"partition": spec.start_reducer_index, "side": name}
        if not self.splittable:
            self.reasons.append(SIDE_NOT_SPLITTABLE.reason(numbers={"size": size}, subject=subject, name=name,
                                                           i=spec.start_reducer_index, size=mib(size),
                                                           join_type=self.join_type))
            return [spec], False
        if spec.end_reducer_index - spec.start_reducer_index != 1:
            self.reasons.append(COALESCED.reason(numbers={"size": size}, subject=subject, name=name, i=i, size=mib(size),
                                                 first=spec.start_reducer_index, last=spec.end_reducer_index - 1))
            return [spec], False
        reducer = spec.start_reducer_index
        map_sizes = self.side.map_sizes_for(reducer) if self.side.map_sizes_for else None
        if map_sizes is None:
            self.reasons.append(MAP_SIZES_UNKNOWN.reason(numbers={"size": size}, subject=subject, name=name, i=reducer,
                                                         size=mib(size)))
            return [spec], False
        split = create_skew_partition_specs(reducer, map_sizes, analysis.target_size, spark_version=self.v)
        if not split:
            self.reasons.append(NOT_SPLITTABLE.reason(
                numbers={"size": size, "target": analysis.target_size, "num_maps": len(map_sizes)},
                config_keys=(config.ADVISORY_PARTITION_SIZE_IN_BYTES,), subject=subject, name=name, i=reducer,
                size=mib(size), maps=len(map_sizes), target=mib(analysis.target_size)))
            return [spec], False
        self.splits[reducer] = len(split)
        self.reasons.append(self._split_reason(reducer, size, len(split), subject))
        return list(split), True

    def _split_reason(self, reducer: int, size: int, n: int, subject: dict[str, Any]) -> Reason:
        a = self.analysis
        cond = f"> {num(a.factor)} x median {mib(a.median)} and > {mib(a.threshold_bytes)}"
        return SPLIT.reason(numbers={"size": size, "median": a.median, "threshold": a.skew_threshold, "factor": a.factor,
                                     "threshold_bytes": a.threshold_bytes, "target": a.target_size, "splits": n},
                            config_keys=(config.SKEW_JOIN_SKEWED_PARTITION_FACTOR,
                                         config.SKEW_JOIN_SKEWED_PARTITION_THRESHOLD,
                                         config.ADVISORY_PARTITION_SIZE_IN_BYTES), subject=subject, name=self.name,
                            i=reducer, size=mib(size), cond=cond, n=n, target=mib(a.target_size))


def optimize_broadcast_stream_side(
    stream: SkewJoinSide,
    conf: "Mapping[str, Any] | AQEConf | None" = None,
    *,
    spark_version: "str | SparkVersion",
    side: str = "",
) -> tuple[Optional[list[ShufflePartitionSpec]], SideAnalysis, list[Reason]]:
    """4.2+'s case for ``BroadcastHashJoinExec`` (SPARK-44065, :mod:`.optimize_skewed_join_stream`):
    the new specs of the streamed side (None = unchanged), its analysis and the reasons."""
    v = as_version(spark_version)
    c = _conf(conf, v)
    a = analyze_side(stream.bytes_by_partition_id, c, spark_version=v, side=side or "stream")
    specs, reasons = stream_case.split_streamed_side(stream.bytes_by_partition_id, stream.map_sizes_for, a, c,
                                                     spark_version=v, side=side)
    return specs, a, reasons
