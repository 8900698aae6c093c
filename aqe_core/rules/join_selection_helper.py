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
from aqe_core.model.reasons import Reason
from aqe_core.rules.join_type import normalize_join_type
from aqe_core.units import mib
from aqe_core.versions import SparkVersion, as_version

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


def can_broadcast_by_size(size_in_bytes: int, conf: "Mapping[str, Any] | AQEConf | None" = None, *,
                          spark_version: "str | SparkVersion", runtime_stats: bool = True) -> tuple[bool, Reason]:
    """``canBroadcastBySize``: ``0 <= size <= threshold`` (a negative threshold disables it)."""
    v = as_version(spark_version)
    t = broadcast_threshold(conf, spark_version=v, runtime_stats=runtime_stats)
    aqe = config.ADAPTIVE_AUTO_BROADCASTJOIN_THRESHOLD
    key = aqe if (runtime_stats and v >= SparkVersion(3, 2, 0) and _conf(conf, v).get(aqe) is not None) \
        else config.AUTO_BROADCASTJOIN_THRESHOLD
    ok = 0 <= size_in_bytes <= t
    verb = "fits under" if ok else "exceeds"
    return ok, Reason("broadcast_by_size" if ok else "too_big_to_broadcast",
                      f"runtime size {mib(size_in_bytes)} {verb} the broadcast threshold {mib(t) if t >= 0 else 'disabled (-1)'}",
                      {"size": size_in_bytes, "threshold": t}, (key,))
