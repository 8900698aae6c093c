"""Configuration presets: named sets of AQE settings (and the Spark release whose rules apply).

Built-ins cover the comparisons engineers ask for. The user presets a server keeps are read and
written by :mod:`aqe_core.user_presets`; this module holds only the data.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Optional

from aqe_core import config
from aqe_core.config import AQEConf
from aqe_core.versions import NEWEST, as_version


@dataclass(frozen=True)
class Preset:
    """``settings`` are Spark conf strings layered over the base conf; ``spark_version`` None
    means "the query's own release"; ``base`` is "query" (start from the query's conf) or
    "defaults" (start from the release's defaults)."""

    name: str
    description: str
    settings: dict[str, str] = field(default_factory=dict)
    spark_version: Optional[str] = None
    base: str = "query"
    builtin: bool = True

    def conf_for(self, query_conf: AQEConf) -> AQEConf:
        version = as_version(self.spark_version) if self.spark_version else query_conf.spark_version
        if self.base == "defaults":
            keep = {k: v for k, v in query_conf.explicit.items() if not k.startswith(config.ADAPTIVE_PREFIX)}
            return AQEConf.resolve(version, [keep, self.settings], validate=False)
        return query_conf.for_version(version).with_overrides(self.settings)

    def to_dict(self) -> dict[str, Any]:
        return {"name": self.name, "description": self.description, "settings": dict(self.settings),
                "spark_version": self.spark_version, "base": self.base}


BUILTIN_PRESETS: list[Preset] = [
    Preset("actual", "The query's own configuration, as Spark ran it"),
    Preset("spark-3.0.1-defaults", "Spark 3.0.1's rules and defaults (AQE on): skew after coalescing", {
        config.ADAPTIVE_EXECUTION_ENABLED: "true"}, "3.0.1", base="defaults"),
    Preset("spark-4.x-defaults", f"Spark {NEWEST}'s rules and defaults", {}, NEWEST, base="defaults"),
    Preset("aggressive-coalescing", "Fewer, bigger partitions: 256 MiB advisory size, size before parallelism", {
        config.ADVISORY_PARTITION_SIZE_IN_BYTES: "256m",
        config.COALESCE_PARTITIONS_PARALLELISM_FIRST: "false",
        config.COALESCE_PARTITIONS_MIN_PARTITION_SIZE: "16m"}),
    Preset("skew-sensitive", "Split earlier: factor 2, 32 MiB threshold, 32 MiB splits", {
        config.SKEW_JOIN_SKEWED_PARTITION_FACTOR: "2",
        config.SKEW_JOIN_SKEWED_PARTITION_THRESHOLD: "32m",
        config.ADVISORY_PARTITION_SIZE_IN_BYTES: "32m"}),
]
