"""Spark's ``DynamicJoinSelection``: join hints AQE puts on each side from runtime statistics.

Mirrors ``org.apache.spark.sql.execution.adaptive.DynamicJoinSelection.apply`` /
``selectJoinStrategy`` / ``preferShuffledHashJoin`` (an AQE logical optimizer rule,
3.2.0 - 4.2.x): the ``DemoteBroadcastHashJoin`` demotion (:mod:`aqe_core.rules.demote_broadcast_hash_join`)
plus ``PREFER_SHUFFLE_HASH`` / ``SHUFFLE_HASH`` when every partition of a side fits
``maxShuffledHashJoinLocalMapThreshold``. :func:`select_join_hints` is the entry for every
release: ``DemoteBroadcastHashJoin`` alone in 3.0.x/3.1.x and 4.3.0.

Worked example (3.5): the left side has 1 non-empty partition of 10 and each partition fits a
64 MiB local map, so it is demoted *and* preferred as a shuffled hash join build side:

    >>> conf = {config.ADAPTIVE_MAX_SHUFFLE_HASH_JOIN_LOCAL_MAP_THRESHOLD: "64m"}
    >>> left, right = [0] * 9 + [1000], [10**9] * 10
    >>> lh, rh = select_join_hints(left, right, "Inner", conf, spark_version="3.5.1")
    >>> lh.hint, rh.hint
    ('SHUFFLE_HASH', None)
    >>> select_join_hints(left, right, "Inner", conf, spark_version="3.1.3")[0].hint  # no SHJ hint before 3.2
    'NO_BROADCAST_HASH'
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Mapping, Optional, Sequence

from aqe_core import config
from aqe_core.config import AQEConf, as_conf as _conf
from aqe_core.model.reasons import Reason
from aqe_core.model.vocabulary import Vocabulary
from aqe_core.rules import join_selection_helper as jsh
from aqe_core.rules.convert_sort_merge_join_to_shuffled_hash_join import CANNOT_BUILD, CONVERT_TO_SHJ
from aqe_core.rules.demote_broadcast_hash_join import NO_BROADCAST_HASH, should_demote
from aqe_core.rules.join_selection_helper import can_build_broadcast_left, can_build_broadcast_right
from aqe_core.rules.join_type import normalize_join_type
from aqe_core.units import mib
from aqe_core.versions import SparkVersion, as_version

# -- vocabulary (:mod:`aqe_core.model.vocabulary`): its reason codes and sentences, and the trace
# of a join as AQE re-plans it (each side against JoinSelection's threshold and this rule's
# demotion, then the shuffled-hash preference; aqe_core/engine/replan_joins.py runs it)
V = Vocabulary("DynamicJoinSelection", __name__)
USER_HINT = V.code("user_hint", "The side has a user join hint: the rule leaves it alone.",
                   "{name} side has a user join hint; {rule} leaves it alone")
DEMOTE_BROADCAST = V.code("demote_broadcast", "Too few non-empty partitions (``nonEmptyPartitionRatioForBroadcastJoin``):"
                          " the side gets NO_BROADCAST_HASH.", "{rule}: {why}; not broadcast (NO_BROADCAST_HASH)")
PREFER_SHUFFLED_HASH = V.code("prefer_shuffled_hash", "Every partition fits the local hash map threshold: prefer a"
                              " shuffled hash join (3.2 - 4.2).", "every {name} partition is at most {threshold} (largest"
                              " {largest}): prefer a shuffled hash join")

SIZE_FITS = V.condition(
    "join.size_fits", "the side's size fits the broadcast threshold", "``canBroadcastBySize`` on the runtime size.",
    settings=(config.ADAPTIVE_AUTO_BROADCASTJOIN_THRESHOLD, config.AUTO_BROADCASTJOIN_THRESHOLD),
    fails=(jsh.BROADCAST_OFF, jsh.TOO_BIG_TO_BROADCAST, jsh.SIZE_UNKNOWN),
    meets=(jsh.RUNTIME_BROADCAST, jsh.BROADCAST_BEFORE_STAGE, jsh.PLANNED_BROADCAST, jsh.DEMOTED, DEMOTE_BROADCAST))
CAN_BUILD = V.condition("join.can_build", "the join type can build this side", "``canBuildBroadcastLeft`` / ``Right``.",
                        fails=(jsh.CANNOT_BUILD_SIDE,), meets=(jsh.RUNTIME_BROADCAST, jsh.DEMOTED))
# (the rule's own reason first: it gives the non-empty count and the ratio this condition checks)
NOT_DEMOTED = V.condition("join.not_demoted", "enough non-empty partitions (not demoted)",
                          "``DemoteBroadcastHashJoin`` / this rule's NO_BROADCAST_HASH.",
                          settings=(config.NON_EMPTY_PARTITION_RATIO_FOR_BROADCAST_JOIN,),
                          fails=(DEMOTE_BROADCAST, jsh.DEMOTED), meets=(jsh.RUNTIME_BROADCAST,))
FITS_LOCAL_MAP = V.condition("join.fits_local_map", "every partition fits the local hash map threshold",
                             "The shuffled-hash preference (3.2 - 4.2) or conversion (4.3).",
                             settings=(config.ADAPTIVE_MAX_SHUFFLE_HASH_JOIN_LOCAL_MAP_THRESHOLD,
                                       config.PREFER_SORTMERGEJOIN),
                             fails=(CANNOT_BUILD,), meets=(PREFER_SHUFFLED_HASH, CONVERT_TO_SHJ))
#: a join side: broadcast or not (traced once per side)
TRACE_SIDE = V.trace("join side", SIZE_FITS, CAN_BUILD, NOT_DEMOTED, label="broadcast the {side} side",
                     verdicts={"changed": "broadcast", "unchanged": "not broadcast"})
#: the strategy of a join that stays shuffled (its verdict: the strategy the replay chose)
TRACE_STRATEGY = V.trace("join strategy", FITS_LOCAL_MAP, label="the strategy", verdicts={"undecided": "not re-decided"})

PREFER_SHUFFLE_HASH = "PREFER_SHUFFLE_HASH"
SHUFFLE_HASH = "SHUFFLE_HASH"


def prefer_shuffled_hash_join(bytes_by_partition_id: Sequence[int], advisory: int, threshold: int) -> bool:
    """``DynamicJoinSelection.preferShuffledHashJoin`` (3.2+): every partition fits in a local map."""
    return advisory <= threshold and all(b <= threshold for b in bytes_by_partition_id)


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
            hint.reasons.append(USER_HINT.reason(subject={"side": name}, name=name, rule=rule))
            continue
        _side_hint(hint, mine, other, jt, can_build, c, v, rule)
    return out[0], out[1]


def _side_hint(hint: JoinSideHint, mine: Sequence[int], other: Optional[Sequence[int]], jt: str, can_build: bool,
               c: AQEConf, v: SparkVersion, rule: str) -> None:
    name = hint.side
    ratio = c.get(config.NON_EMPTY_PARTITION_RATIO_FOR_BROADCAST_JOIN)
    shj_threshold = c.get_or(config.ADAPTIVE_MAX_SHUFFLE_HASH_JOIN_LOCAL_MAP_THRESHOLD, 0)
    advisory = c.advisory_partition_size
    demote, why = should_demote(mine, other, jt, ratio, can_build, spark_version=v, side=name)
    non_zero = sum(1 for b in mine if b > 0)
    shj = v >= SparkVersion(3, 2, 0) and v < SparkVersion(4, 3, 0) and prefer_shuffled_hash_join(mine, advisory, shj_threshold)
    if demote and shj:
        hint.hint = SHUFFLE_HASH
    elif demote:
        hint.hint = NO_BROADCAST_HASH
    elif shj:
        hint.hint = PREFER_SHUFFLE_HASH
    if demote:
        hint.reasons.append(DEMOTE_BROADCAST.reason(numbers={"non_empty": non_zero, "partitions": len(mine), "ratio": ratio},
                                                    config_keys=(config.NON_EMPTY_PARTITION_RATIO_FOR_BROADCAST_JOIN,),
                                                    subject={"side": name}, rule=rule, why=why))
    if shj:
        hint.reasons.append(PREFER_SHUFFLED_HASH.reason(
            numbers={"max_partition": max(mine) if mine else 0, "threshold": shj_threshold},
            config_keys=(config.ADAPTIVE_MAX_SHUFFLE_HASH_JOIN_LOCAL_MAP_THRESHOLD, config.ADVISORY_PARTITION_SIZE_IN_BYTES),
            subject={"side": name}, name=name, threshold=mib(shj_threshold), largest=mib(max(mine) if mine else 0)))
