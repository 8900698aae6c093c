"""Spark's ``JoinSelectionHelper``: which join sides may be broadcast, and the size limit.

Mirrors ``org.apache.spark.sql.catalyst.optimizer.JoinSelectionHelper.canBuildBroadcastLeft`` /
``canBuildBroadcastRight`` / ``canBroadcastBySize`` with the AQE threshold (3.0.1 - 4.3.0):
when AQE re-plans a join from runtime statistics (3.2+),
``spark.sql.adaptive.autoBroadcastJoinThreshold`` wins when set.

    >>> broadcast_threshold({}, spark_version="3.5.1")  # the static default: 10 MiB
    10485760
    >>> broadcast_threshold({config.ADAPTIVE_AUTO_BROADCASTJOIN_THRESHOLD: "1m"}, spark_version="3.5.1")
    1048576
    >>> broadcast_threshold({config.ADAPTIVE_AUTO_BROADCASTJOIN_THRESHOLD: "1m"}, spark_version="3.1.3")
    10485760
    >>> can_build_broadcast_left("LeftOuter"), can_build_broadcast_right("LeftOuter")
    (False, True)
"""
from __future__ import annotations

from typing import Any, Mapping

from aqe_core import config
from aqe_core.config import AQEConf, as_conf as _conf
from aqe_core.model.vocabulary import Vocabulary
from aqe_core.rules.join_type import normalize_join_type
from aqe_core.versions import SparkVersion, as_version

# -- vocabulary (:mod:`aqe_core.model.vocabulary`): a join side against the broadcast threshold,
# as AQE re-plans a join (``JoinSelection`` with runtime statistics; aqe_core/engine/replan_joins.py
# gives these reasons, the trace of a join side is declared in :mod:`.dynamic_join_selection`)
V = Vocabulary("JoinSelection", __name__)
_FITS = "fits the {kind} broadcast threshold {threshold}"
TOO_BIG_TO_BROADCAST = V.code("too_big_to_broadcast", "The side's size is over the broadcast threshold.",
                              "the {name} side's size {size} ({how}) exceeds the {kind} broadcast threshold"
                              " {threshold}{why}")
BROADCAST_OFF = V.code("broadcast_off", "The broadcast threshold is negative: broadcasting is off.",
                       "the {name} side ({how}) cannot be broadcast: {key} is {threshold}")
SIZE_UNKNOWN = V.code("size_unknown", "The side's size is unknown, and it would decide the strategy.",
                      "the {name} side's size is unknown: {why}")
CANNOT_BUILD_SIDE = V.code("cannot_build_side", "The join type cannot build (broadcast) this side.",
                           "a {join_type} join cannot broadcast its {name} side")
DEMOTED = V.code("demoted", "The side fits the threshold but carries a NO_BROADCAST_HASH hint (too many empty"
                 " partitions).", "the {name} side ({size}, {how}) " + _FITS + " but was demoted: too many empty"
                 " partitions")
RUNTIME_BROADCAST = V.code("runtime_broadcast", "The side fits the threshold at run time: a broadcast hash join"
                           " building it.", "the {name} side's size {size} ({how}) " + _FITS + "{why}: broadcast hash"
                           " join building the {name} side")
BROADCAST_BEFORE_STAGE = V.code("broadcast_before_stage", "The side's input finished first and fits: AQE broadcast"
                                " it at once, so the stage above it is never created.",
                                "{why}, as soon as its inputs finished: {how} above it is never created")
PLANNED_BROADCAST = V.code("planned_broadcast", "Broadcast was planned before AQE; AQE keeps a join over a broadcast"
                           " query stage.", "broadcast was planned before AQE from the static size estimate; AQE keeps"
                           " a join over a broadcast query stage (LogicalQueryStageStrategy)")

# JoinType groups from Spark's JoinSelectionHelper
CAN_BUILD_LEFT = frozenset({"Inner", "Cross", "RightOuter"})
CAN_BUILD_RIGHT = frozenset({"Inner", "Cross", "LeftOuter", "LeftSemi", "LeftAnti", "ExistenceJoin"})


def can_build_broadcast_left(join_type: str) -> bool:
    """``JoinSelectionHelper.canBuildBroadcastLeft``."""
    return normalize_join_type(join_type) in CAN_BUILD_LEFT


def can_build_broadcast_right(join_type: str) -> bool:
    """``JoinSelectionHelper.canBuildBroadcastRight``."""
    return normalize_join_type(join_type) in CAN_BUILD_RIGHT


def broadcast_threshold(conf: "Mapping[str, Any] | AQEConf | None" = None, *, spark_version: "str | SparkVersion",
                        runtime_stats: bool = True) -> int:
    """The size limit for broadcasting a side when AQE re-plans (``JoinSelectionHelper``):
    ``spark.sql.adaptive.autoBroadcastJoinThreshold`` for runtime statistics when set (3.2+),
    else ``spark.sql.autoBroadcastJoinThreshold``."""
    v = as_version(spark_version)
    c = _conf(conf, v)
    if runtime_stats and v >= SparkVersion(3, 2, 0):
        aqe = c.get(config.ADAPTIVE_AUTO_BROADCASTJOIN_THRESHOLD)
        if aqe is not None:
            return aqe
    return c.get(config.AUTO_BROADCASTJOIN_THRESHOLD)


def fits_broadcast_threshold(size_in_bytes: int, threshold: int) -> bool:
    """``canBroadcastBySize``'s comparison: ``0 <= size <= threshold`` (a negative threshold,
    broadcasting off, fits nothing). The threshold is :func:`broadcast_threshold`'s.

    >>> fits_broadcast_threshold(1024, 1024), fits_broadcast_threshold(1025, 1024), fits_broadcast_threshold(0, -1)
    (True, False, False)
    """
    return 0 <= size_in_bytes <= threshold
