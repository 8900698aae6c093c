"""Configuration presets: named sets of AQE settings (and the Spark release whose rules apply).

Built-ins cover the comparisons engineers ask for; user presets are saved as JSON on the server
(``$AQE_LENS_HOME/presets.json``, default ``~/.aqe-lens``), validated with Spark's own parsing.
"""
from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Optional

from aqe_core.config import AQEConf, ConfValueError
from aqe_core.server_settings import lens_home
from aqe_core.versions import NEWEST, as_version

_NAME_RE = re.compile(r"^[A-Za-z0-9 _.\-]{1,60}$")


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
            keep = {k: v for k, v in query_conf.explicit.items() if not k.startswith("spark.sql.adaptive.")}
            return AQEConf.resolve(version, [keep, self.settings], validate=False)
        return query_conf.for_version(version).with_overrides(self.settings)

    def to_dict(self) -> dict[str, Any]:
        return {"name": self.name, "description": self.description, "settings": dict(self.settings),
                "spark_version": self.spark_version, "base": self.base}


BUILTIN_PRESETS: list[Preset] = [
    Preset("actual", "The query's own configuration, as Spark ran it"),
    Preset("spark-3.0.1-defaults", "Spark 3.0.1's rules and defaults (AQE on): skew after coalescing", {
        "spark.sql.adaptive.enabled": "true"}, "3.0.1", base="defaults"),
    Preset("spark-4.x-defaults", f"Spark {NEWEST}'s rules and defaults", {}, NEWEST, base="defaults"),
    Preset("aggressive-coalescing", "Fewer, bigger partitions: 256 MiB advisory size, size before parallelism", {
        "spark.sql.adaptive.advisoryPartitionSizeInBytes": "256m",
        "spark.sql.adaptive.coalescePartitions.parallelismFirst": "false",
        "spark.sql.adaptive.coalescePartitions.minPartitionSize": "16m"}),
    Preset("skew-sensitive", "Split earlier: factor 2, 32 MiB threshold, 32 MiB splits", {
        "spark.sql.adaptive.skewJoin.skewedPartitionFactor": "2",
        "spark.sql.adaptive.skewJoin.skewedPartitionThresholdInBytes": "32m",
        "spark.sql.adaptive.advisoryPartitionSizeInBytes": "32m"}),
]


def _store() -> Path:
    return lens_home() / "presets.json"


def load_user_presets() -> list[Preset]:
    """User presets saved on this server (a broken file is reported, not fatal)."""
    path = _store()
    if not path.exists():
        return []
    try:
        data = json.loads(path.read_text())
        return [Preset(d["name"], d.get("description", ""), dict(d.get("settings", {})), d.get("spark_version"),
                       d.get("base", "query"), builtin=False) for d in data]
    except (OSError, ValueError, KeyError, TypeError):
        return []


def all_presets() -> list[Preset]:
    return BUILTIN_PRESETS + load_user_presets()


def get_preset(name: str) -> Optional[Preset]:
    return next((p for p in all_presets() if p.name == name), None)


def save_user_preset(name: str, settings: dict[str, str], *, description: str = "", spark_version: Optional[str] = None) -> Preset:
    """Validate (name, every setting parsed as Spark would) and store; replaces a user preset
    of the same name. Raises ValueError with a message for people."""
    if not _NAME_RE.match(name or ""):
        raise ValueError("preset names use letters, digits, space, '-', '_' or '.', at most 60 characters")
    if any(p.name == name for p in BUILTIN_PRESETS):
        raise ValueError(f"'{name}' is a built-in preset; choose another name")
    version = spark_version or NEWEST
    try:
        AQEConf.resolve(version, [settings])
    except ConfValueError as exc:
        raise ValueError(str(exc)) from None
    preset = Preset(name, description, dict(settings), spark_version, builtin=False)
    others = [p for p in load_user_presets() if p.name != name]
    path = _store()
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(".tmp")
    tmp.write_text(json.dumps([p.to_dict() for p in others + [preset]], indent=1))
    tmp.replace(path)
    return preset


def delete_user_preset(name: str) -> bool:
    presets = load_user_presets()
    keep = [p for p in presets if p.name != name]
    if len(keep) == len(presets):
        return False
    _store().write_text(json.dumps([p.to_dict() for p in keep], indent=1))
    return True
