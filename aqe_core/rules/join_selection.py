"""Join-strategy decisions AQE makes on runtime statistics.

Mirrors, per release:

* ``DemoteBroadcastHashJoin`` (3.0.x, 3.1.x; again in 4.3 with 3.3's join-type logic): a side
  with too many empty partitions gets ``NO_BROADCAST_HASH`` so it is not broadcast;
* ``DynamicJoinSelection`` (3.2 - 4.2): the same demotion plus ``PREFER_SHUFFLE_HASH`` /
  ``SHUFFLE_HASH`` when every partition fits ``maxShuffledHashJoinLocalMapThreshold``;
* ``ConvertSortMergeJoinToShuffledHashJoin`` (4.3 physical rule): side choice for replacing a
  sort-merge join by a shuffled hash join;
* the AQE broadcast threshold used when a join is re-planned (``JoinSelectionHelper.canBroadcastBySize``).
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Mapping, Optional, Sequence

from aqe_core.config import AQEConf, as_conf as _conf
from aqe_core.model.reasons import Reason
from aqe_core.units import mib
from aqe_core.rules.skew_join import normalize_join_type
from aqe_core.versions import SparkVersion, as_version

K_RATIO = "spark.sql.adaptive.nonEmptyPartitionRatioForBroadcastJoin"
K_SHJ = "spark.sql.adaptive.maxShuffledHashJoinLocalMapThreshold"
K_ADVISORY = "spark.sql.adaptive.advisoryPartitionSizeInBytes"
K_AQE_BHJ = "spark.sql.adaptive.autoBroadcastJoinThreshold"
K_BHJ = "spark.sql.autoBroadcastJoinThreshold"
K_CONVERT = "spark.sql.adaptive.convertSortMergeJoinToShuffledHashJoin.enabled"
K_WIDEN = "spark.sql.adaptive.convertSortMergeJoinToShuffledHashJoin.minWideningFactor"

NO_BROADCAST_HASH = "NO_BROADCAST_HASH"
PREFER_SHUFFLE_HASH = "PREFER_SHUFFLE_HASH"
SHUFFLE_HASH = "SHUFFLE_HASH"

# JoinType groups from Spark's JoinSelectionHelper
_CAN_BUILD_LEFT = {"Inner", "Cross", "RightOuter"}
_CAN_BUILD_RIGHT = {"Inner", "Cross", "LeftOuter", "LeftSemi", "LeftAnti", "ExistenceJoin"}
_CAN_BUILD_LEFT_SHJ_43 = {"Inner", "Cross", "RightOuter", "LeftOuter", "FullOuter"}
_CAN_BUILD_RIGHT_SHJ_43 = {"Inner", "Cross", "LeftOuter", "LeftSemi", "LeftAnti", "ExistenceJoin", "RightOuter", "FullOuter"}
_DEMOTE_OTHER_SIDE_TYPES = {"LeftOuter", "RightOuter", "LeftAnti"}




def has_many_empty_partitions(bytes_by_partition_id: Sequence[int], ratio: float) -> bool:
    """``hasManyEmptyPartitions``: some but under ``ratio`` of the partitions hold data."""
    n = len(bytes_by_partition_id)
    non_zero = sum(1 for b in bytes_by_partition_id if b > 0)
    return n > 0 and non_zero > 0 and non_zero * 1.0 / n < ratio


def prefer_shuffled_hash_join(bytes_by_partition_id: Sequence[int], advisory: int, threshold: int) -> bool:
    """``DynamicJoinSelection.preferShuffledHashJoin`` (3.2+): every partition fits in a local map."""
    return advisory <= threshold and all(b <= threshold for b in bytes_by_partition_id)


def can_build_broadcast_left(join_type: str) -> bool:
    return normalize_join_type(join_type) in _CAN_BUILD_LEFT


def can_build_broadcast_right(join_type: str) -> bool:
    return normalize_join_type(join_type) in _CAN_BUILD_RIGHT


@dataclass
class JoinSideHint:
    """The hint AQE puts on one side of a join, with why."""

    side: str
    hint: Optional[str]
    reasons: list[Reason] = field(default_factory=list)


def select_join_hints(
    left_bytes: Optional[Sequence[int]],
    right_bytes: Optional[Sequence[int]],
    join_type: str,
    conf: "Mapping[str, Any] | AQEConf | None" = None,
    *,
    spark_version: "str | SparkVersion",
    left_has_user_hint: bool = False,
    right_has_user_hint: bool = False,
) -> tuple[JoinSideHint, JoinSideHint]:
    """``DemoteBroadcastHashJoin`` (3.0/3.1/4.3) or ``DynamicJoinSelection`` (3.2-4.2).

    ``*_bytes`` are the sides' ``bytesByPartitionId`` (None = not a materialized shuffle
    stage). Returns the hint per side: ``NO_BROADCAST_HASH`` (demote), ``PREFER_SHUFFLE_HASH``,
    ``SHUFFLE_HASH`` or None.
    """
    v = as_version(spark_version)
    c = _conf(conf, v)
    jt = normalize_join_type(join_type)
    ratio = c.get(K_RATIO)
    shj_threshold = c.get_or(K_SHJ, 0)
    advisory = c.advisory_partition_size
    rule = "DemoteBroadcastHashJoin" if (v < SparkVersion(3, 2, 0) or v >= SparkVersion(4, 3, 0)) else "DynamicJoinSelection"
    sides = (("left", left_bytes, right_bytes, left_has_user_hint, can_build_broadcast_left(jt)),
             ("right", right_bytes, left_bytes, right_has_user_hint, can_build_broadcast_right(jt)))
    out = []
    for name, mine, other, user_hint, can_build in sides:
        hint = JoinSideHint(name, None)
        out.append(hint)
        if mine is None:
            continue
        if user_hint:
            hint.reasons.append(Reason("user_hint", f"{name} side has a user join hint; {rule} leaves it alone",
                                       subject={"side": name}))
            continue
        many_empty = has_many_empty_partitions(mine, ratio)
        non_zero = sum(1 for b in mine if b > 0)
        if v < SparkVersion(3, 3, 0):
            demote = many_empty
            why = (f"{name} side has {non_zero} non-empty of {len(mine)} partitions, under {ratio:.0%}:"
                   " broadcasting it would not pay off")
        else:
            other_empty = other is not None and has_many_empty_partitions(other, ratio)
            if many_empty and can_build:
                demote = jt not in _DEMOTE_OTHER_SIDE_TYPES
                why = (f"{name} side has {non_zero} non-empty of {len(mine)} partitions (< {ratio:.0%})")
            elif other_empty and can_build:
                demote = jt in _DEMOTE_OTHER_SIDE_TYPES
                why = f"the other side of this {jt} join has many empty partitions"
            else:
                demote = False
                why = ""
        shj = v >= SparkVersion(3, 2, 0) and v < SparkVersion(4, 3, 0) and prefer_shuffled_hash_join(mine, advisory, shj_threshold)
        if demote and shj:
            hint.hint = SHUFFLE_HASH
        elif demote:
            hint.hint = NO_BROADCAST_HASH
        elif shj:
            hint.hint = PREFER_SHUFFLE_HASH
        if demote:
            hint.reasons.append(Reason("demote_broadcast", f"{rule}: {why}; not broadcast (NO_BROADCAST_HASH)",
                                       {"non_empty": non_zero, "partitions": len(mine), "ratio": ratio}, (K_RATIO,),
                                       {"side": name}))
        if shj:
            hint.reasons.append(Reason("prefer_shuffled_hash", f"every {name} partition is at most"
                                       f" {mib(shj_threshold)} (largest {mib(max(mine) if mine else 0)}): prefer a shuffled hash join",
                                       {"max_partition": max(mine) if mine else 0, "threshold": shj_threshold},
                                       (K_SHJ, K_ADVISORY), {"side": name}))
    return out[0], out[1]


def broadcast_threshold(conf: "Mapping[str, Any] | AQEConf | None" = None, *, spark_version: "str | SparkVersion",
                        runtime_stats: bool = True) -> int:
    """The size limit for broadcasting a side when AQE re-plans (``JoinSelectionHelper``):
    ``spark.sql.adaptive.autoBroadcastJoinThreshold`` for runtime statistics when set (3.2+),
    else ``spark.sql.autoBroadcastJoinThreshold``."""
    v = as_version(spark_version)
    c = _conf(conf, v)
    if runtime_stats and v >= SparkVersion(3, 2, 0):
        aqe = c.get(K_AQE_BHJ)
        if aqe is not None:
            return aqe
    return c.get(K_BHJ)


def can_broadcast_by_size(size_in_bytes: int, conf: "Mapping[str, Any] | AQEConf | None" = None, *,
                          spark_version: "str | SparkVersion", runtime_stats: bool = True) -> tuple[bool, Reason]:
    """``canBroadcastBySize``: ``0 <= size <= threshold`` (a negative threshold disables it)."""
    v = as_version(spark_version)
    t = broadcast_threshold(conf, spark_version=v, runtime_stats=runtime_stats)
    key = K_AQE_BHJ if (runtime_stats and v >= SparkVersion(3, 2, 0) and _conf(conf, v).get(K_AQE_BHJ) is not None) else K_BHJ
    ok = 0 <= size_in_bytes <= t
    verb = "fits under" if ok else "exceeds"
    return ok, Reason("broadcast_by_size" if ok else "too_big_to_broadcast",
                      f"runtime size {mib(size_in_bytes)} {verb} the broadcast threshold {mib(t) if t >= 0 else 'disabled (-1)'}",
                      {"size": size_in_bytes, "threshold": t}, (key,))


@dataclass
class ShuffledHashJoinChoice:
    """4.3 ``ConvertSortMergeJoinToShuffledHashJoin`` outcome."""

    build_side: Optional[str]  # "left" | "right" | None (keep the sort-merge join)
    reasons: list[Reason] = field(default_factory=list)


def choose_shuffled_hash_join_build_side(
    left_bytes: Optional[Sequence[int]],
    right_bytes: Optional[Sequence[int]],
    join_type: str,
    conf: "Mapping[str, Any] | AQEConf | None" = None,
    *,
    spark_version: "str | SparkVersion",
    left_widening: float = 1.0,
    right_widening: float = 1.0,
    is_skew_join: bool = False,
    has_smj_hint: bool = False,
) -> ShuffledHashJoinChoice:
    """4.3 ``ConvertSortMergeJoinToShuffledHashJoin``: a side can build the hash map iff the
    join type allows it and ``advisory <= threshold`` and every ``bytes x factor <= threshold``,
    ``factor = max(minWideningFactor, buildRowSize / shuffleRowSize)`` (the ``*_widening``
    arguments are the row-size ratios). If both can, the smaller ``sum(bytes) x factor`` builds
    (ties build right)."""
    v = as_version(spark_version)
    c = _conf(conf, v)
    jt = normalize_join_type(join_type)
    if v < SparkVersion(4, 3, 0):
        return ShuffledHashJoinChoice(None, [Reason("not_in_version", f"Spark {v} has no ConvertSortMergeJoinToShuffledHashJoin")])
    if not c.get(K_CONVERT):
        return ShuffledHashJoinChoice(None, [Reason("disabled", f"{K_CONVERT} is false", {}, (K_CONVERT,))])
    if is_skew_join or has_smj_hint:
        return ShuffledHashJoinChoice(None, [Reason("not_eligible", "skew joins and joins with a merge hint stay sort-merge")])
    threshold = c.get(K_SHJ)
    advisory = c.advisory_partition_size
    min_widen = c.get(K_WIDEN)
    cands: dict[str, float] = {}
    reasons: list[Reason] = []
    for name, b, widen, allowed in (("left", left_bytes, left_widening, jt in _CAN_BUILD_LEFT_SHJ_43),
                                     ("right", right_bytes, right_widening, jt in _CAN_BUILD_RIGHT_SHJ_43)):
        if b is None or not allowed:
            continue
        factor = max(min_widen, widen)
        fits = advisory <= threshold and all(x * factor <= threshold for x in b)
        if fits:
            cands[name] = sum(b) * factor
        else:
            reasons.append(Reason("cannot_build", f"{name} side cannot build a hash map: largest partition"
                                  f" {mib(max(b) if b else 0)} x {factor:g} or advisory {mib(advisory)} exceeds {mib(threshold)}",
                                  {"threshold": threshold, "factor": factor}, (K_SHJ, K_WIDEN), {"side": name}))
    if not cands:
        return ShuffledHashJoinChoice(None, reasons)
    if len(cands) == 2:
        build = "left" if cands["left"] < cands["right"] else "right"
    else:
        build = next(iter(cands))
    reasons.append(Reason("convert_to_shj", f"sort-merge join becomes a shuffled hash join building the {build} side",
                          {"build_cost": cands[build]}, (K_SHJ,), {"side": build}))
    return ShuffledHashJoinChoice(build, reasons)
