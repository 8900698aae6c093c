"""Spark's ``ConvertSortMergeJoinToShuffledHashJoin`` (4.3): which side of a sort-merge join
builds a hash map when AQE replaces it by a shuffled hash join.

Mirrors ``org.apache.spark.sql.execution.adaptive.ConvertSortMergeJoinToShuffledHashJoin.apply``
(a query-stage preparation rule, 4.3.0 - 4.3.0: new in 4.3): a side can build iff the join type allows it,
``advisory <= maxShuffledHashJoinLocalMapThreshold`` and every partition times the widening
factor fits that threshold; the cheaper side (``sum(bytes) x factor``) builds.

Worked example: a 64 MiB threshold, a 1 MiB advisory size; the right side's partitions (at
most 10 MiB) fit, the left side's 100 MiB partition does not, so the right side builds:

    >>> conf = {config.ADAPTIVE_MAX_SHUFFLE_HASH_JOIN_LOCAL_MAP_THRESHOLD: "64m",
    ...         config.ADVISORY_PARTITION_SIZE_IN_BYTES: "1m"}
    >>> MiB = 1024 * 1024
    >>> choose_shuffled_hash_join_build_side([100 * MiB, MiB], [10 * MiB, MiB], "Inner", conf,
    ...                                      spark_version="4.3.0").build_side
    'right'
    >>> choose_shuffled_hash_join_build_side([MiB], [MiB], "Inner", conf, spark_version="4.0.0").build_side is None
    True
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Mapping, Optional, Sequence

from aqe_core import config
from aqe_core.config import AQEConf, as_conf as _conf
from aqe_core.model.reasons import Reason
from aqe_core.model.vocabulary import Vocabulary
from aqe_core.model import shared_vocabulary as shared
from aqe_core.rules.join_type import normalize_join_type
from aqe_core.units import mib
from aqe_core.versions import SparkVersion, as_version

#: 4.3 ``canBuildShuffledHashJoinLeft`` / ``Right`` join types
CAN_BUILD_LEFT_SHJ_43 = frozenset({"Inner", "Cross", "RightOuter", "LeftOuter", "FullOuter"})
CAN_BUILD_RIGHT_SHJ_43 = frozenset({"Inner", "Cross", "LeftOuter", "LeftSemi", "LeftAnti", "ExistenceJoin",
                                    "RightOuter", "FullOuter"})

# -- vocabulary (:mod:`aqe_core.model.vocabulary`): its reason codes and sentences
V = Vocabulary("ConvertSortMergeJoinToShuffledHashJoin", __name__)
NOT_IN_VERSION = V.reuse(shared.NOT_IN_VERSION, "Spark {v} has no ConvertSortMergeJoinToShuffledHashJoin")
DISABLED = V.reuse(shared.DISABLED, "{key} is false")
NOT_ELIGIBLE = V.code("not_eligible", "A skew join, or a join with a merge hint, stays sort-merge.",
                      "skew joins and joins with a merge hint stay sort-merge")
CANNOT_BUILD = V.code("cannot_build", "A side's partitions (times the widening factor) or the advisory size exceed the"
                      " local hash map threshold.", "{side} side cannot build a hash map: largest partition {largest} x"
                      " {factor} or advisory {advisory} exceeds {threshold}")
CONVERT_TO_SHJ = V.code("convert_to_shj", "The sort-merge join becomes a shuffled hash join (4.3).",
                        "sort-merge join becomes a shuffled hash join building the {side} side")


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
    enabled = config.CONVERT_SMJ_TO_SHJ_ENABLED
    if v < SparkVersion(4, 3, 0):
        return ShuffledHashJoinChoice(None, [NOT_IN_VERSION.reason(v=v)])
    if not c.get(enabled):
        return ShuffledHashJoinChoice(None, [DISABLED.reason(config_keys=(enabled,), key=enabled)])
    if is_skew_join or has_smj_hint:
        return ShuffledHashJoinChoice(None, [NOT_ELIGIBLE.reason()])
    cands, reasons = _candidates(left_bytes, right_bytes, jt, c, left_widening, right_widening)
    if not cands:
        return ShuffledHashJoinChoice(None, reasons)
    if len(cands) == 2:
        build = "left" if cands["left"] < cands["right"] else "right"
    else:
        build = next(iter(cands))
    reasons.append(CONVERT_TO_SHJ.reason(numbers={"build_cost": cands[build]}, subject={"side": build}, side=build,
                                         config_keys=(config.ADAPTIVE_MAX_SHUFFLE_HASH_JOIN_LOCAL_MAP_THRESHOLD,)))
    return ShuffledHashJoinChoice(build, reasons)


def _candidates(left_bytes: Optional[Sequence[int]], right_bytes: Optional[Sequence[int]], jt: str, c: AQEConf,
                left_widening: float, right_widening: float) -> tuple[dict[str, float], list[Reason]]:
    """The sides that can build, with their build cost, and why the others cannot."""
    threshold = c.get(config.ADAPTIVE_MAX_SHUFFLE_HASH_JOIN_LOCAL_MAP_THRESHOLD)
    advisory = c.advisory_partition_size
    min_widen = c.get(config.CONVERT_SMJ_TO_SHJ_MIN_WIDENING_FACTOR)
    cands: dict[str, float] = {}
    reasons: list[Reason] = []
    for name, b, widen, allowed in (("left", left_bytes, left_widening, jt in CAN_BUILD_LEFT_SHJ_43),
                                     ("right", right_bytes, right_widening, jt in CAN_BUILD_RIGHT_SHJ_43)):
        if b is None or not allowed:
            continue
        factor = max(min_widen, widen)
        fits = advisory <= threshold and all(x * factor <= threshold for x in b)
        if fits:
            cands[name] = sum(b) * factor
        else:
            reasons.append(CANNOT_BUILD.reason(numbers={"threshold": threshold, "factor": factor}, subject={"side": name},
                                               config_keys=(config.ADAPTIVE_MAX_SHUFFLE_HASH_JOIN_LOCAL_MAP_THRESHOLD,
                                                            config.CONVERT_SMJ_TO_SHJ_MIN_WIDENING_FACTOR),
                                               side=name, largest=mib(max(b) if b else 0), factor=f"{factor:g}",
                                               advisory=mib(advisory), threshold=mib(threshold)))
    return cands, reasons
