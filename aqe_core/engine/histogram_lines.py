"""The lines a partition histogram draws (median, skew threshold, coalescing and split targets),
computed by AQE's own rules over a shuffle's sizes.

Only the engine calls :mod:`aqe_core.rules`; views ask this module for a shuffle's lines and keep
the answer (:class:`ShuffleLines`) on their :class:`~aqe_core.views.query.ShuffleView`.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Optional, Sequence

from aqe_core import config
from aqe_core.config import AQEConf
from aqe_core.model.evidence import Evidence
from aqe_core.rules.coalesce_shuffle_partitions import min_num_partitions, min_partition_size
from aqe_core.rules.optimize_skewed_join import (  # noqa: F401 (median_size, can_split_*: for views)
    SideAnalysis, analyze_side, can_split_left, can_split_right, median_size,
)
from aqe_core.rules.shuffle_partitions_util import coalesce_target
from aqe_core.units import mib, num
from aqe_core.versions import SparkVersion

_SKEW_KEYS = (config.SKEW_JOIN_SKEWED_PARTITION_FACTOR, config.SKEW_JOIN_SKEWED_PARTITION_THRESHOLD)
_COALESCE_KEYS = (config.ADVISORY_PARTITION_SIZE_IN_BYTES, config.COALESCE_PARTITIONS_MIN_PARTITION_NUM,
                  config.COALESCE_PARTITIONS_PARALLELISM_FIRST, config.COALESCE_PARTITIONS_MIN_PARTITION_SIZE)


@dataclass(frozen=True)
class Line:
    """A vertical line on a partition histogram: what it is, its value and where it comes from.

    ``evidence`` says how the sizes under it are known (exact pre-AQE statistics, or an estimate
    over Spark's post-AQE sizes); it is not part of :meth:`to_dict` (the report's format)."""

    kind: str  # "median" | "skew_threshold" | "factor_threshold" | "threshold_bytes" | "coalesce_target" | "split_target"
    value: int
    label: str
    config_keys: tuple[str, ...] = ()
    evidence: Evidence = field(default=Evidence.EXACT, compare=False)

    def to_dict(self) -> dict[str, Any]:
        return {"kind": self.kind, "value": self.value, "label": self.label, "config_keys": list(self.config_keys)}


@dataclass(frozen=True)
class SkewedPartition:
    """A partition the skew rule judged skewed, with the rule's sentence."""

    partition: int
    size: int
    explanation: str


@dataclass
class ShuffleLines:
    """Everything the rules say about one shuffle's sizes."""

    lines: list[Line] = field(default_factory=list)
    skewed: list[SkewedPartition] = field(default_factory=list)
    side_analysis: Optional[SideAnalysis] = None


def coalesce_line(group: Sequence[Sequence[int]], conf: AQEConf, default_parallelism: int,
                  evidence: Evidence = Evidence.EXACT) -> Line:
    """The coalescing target of ``CoalesceShufflePartitions`` over every shuffle coalesced together."""
    v = conf.spark_version
    min_num, _ = min_num_partitions(conf, spark_version=v, default_parallelism=default_parallelism)
    min_size = min_partition_size(conf, spark_version=v)
    t = coalesce_target([list(s) for s in group], advisory_target_size=conf.advisory_partition_size,
                        min_num_partitions=min_num, min_partition_size=min_size, spark_version=v)
    return Line("coalesce_target", t.target_size,
                f"coalescing target {mib(t.target_size)} (advisory {mib(conf.advisory_partition_size)},"
                f" total {mib(t.total_size)} / {min_num} partitions, min size {mib(min_size)})",
                _COALESCE_KEYS, evidence)


def shuffle_lines(sizes: Sequence[int], conf: AQEConf, default_parallelism: Optional[int], *, side: str = "",
                  coalesce_group: Optional[Sequence[Sequence[int]]] = None,
                  evidence: Evidence = Evidence.EXACT, rebalance: bool = False) -> ShuffleLines:
    """Lines and skewed partitions of one shuffle's ``sizes`` under ``conf``.

    ``coalesce_group``: the sizes of every shuffle coalesced together with this one (both sides
    of a join share one target); default: this shuffle alone. No coalescing line without a
    default parallelism (the minimum partition number depends on it). ``rebalance``: the read of
    a REBALANCE exchange, which ``OptimizeSkewInRebalancePartitions`` (3.2+) splits wherever a
    partition is over the advisory size (into parts of that size), not by the skew-join factor."""
    v = conf.spark_version
    a = analyze_side(sizes, conf, spark_version=v, side=side)
    out = ShuffleLines(side_analysis=a)
    lines = out.lines
    lines.append(Line("median", a.median, f"median {mib(a.median)}", (), evidence))
    if rebalance and v >= SparkVersion(3, 2, 0):
        adv = conf.advisory_partition_size
        on = conf.get_or(config.ADAPTIVE_OPTIMIZE_SKEWS_IN_REBALANCE_PARTITIONS_ENABLED, True)
        lines.append(Line("skew_threshold", adv, f"rebalance split threshold {mib(adv)} = the advisory size"
                          + ("" if on else " (rebalance skew handling is off)"),
                          (config.ADVISORY_PARTITION_SIZE_IN_BYTES,
                           config.ADAPTIVE_OPTIMIZE_SKEWS_IN_REBALANCE_PARTITIONS_ENABLED), evidence))
        lines.append(Line("split_target", adv, f"rebalance split target {mib(adv)}",
                          (config.ADVISORY_PARTITION_SIZE_IN_BYTES,), evidence))
        if default_parallelism is not None:
            lines.append(coalesce_line(coalesce_group or [sizes], conf, default_parallelism, evidence))
        return out  # (the skew-join verdicts do not apply to a rebalance read)
    if a.skew_threshold is not None:
        src = (f"{num(a.factor)} x median" if a.skew_threshold == a.factor_threshold else "threshold bytes")
        lines.append(Line("skew_threshold", a.skew_threshold,
                          f"skew threshold {mib(a.skew_threshold)} = max({num(a.factor)} x median,"
                          f" {mib(a.threshold_bytes)}) [{src}]", _SKEW_KEYS, evidence))
    else:  # 3.0/3.1: two separate conditions
        lines.append(Line("factor_threshold", a.factor_threshold, f"{num(a.factor)} x median = {mib(a.factor_threshold)}",
                          _SKEW_KEYS[:1], evidence))
        lines.append(Line("threshold_bytes", a.threshold_bytes, f"skew threshold bytes {mib(a.threshold_bytes)}",
                          _SKEW_KEYS[1:], evidence))
    lines.append(Line("split_target", a.target_size, f"skew split target {mib(a.target_size)}",
                      (config.ADVISORY_PARTITION_SIZE_IN_BYTES,), evidence))
    if default_parallelism is not None:
        lines.append(coalesce_line(coalesce_group or [sizes], conf, default_parallelism, evidence))
    for pos, i in enumerate(a.skewed_indices):
        out.skewed.append(SkewedPartition(i, a.sizes[i], a.reasons[pos].message))
    return out
