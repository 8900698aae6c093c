"""The hot keys of a skewed reducer: which join or grouping key values made it heavy (issue 42).

A reducer of a hash-partitioned shuffle is ``pmod(hash(k1, k2, ...), numPartitions)`` of its
rows' keys (``HashPartitioning.partitionIdExpression``); the keys with most rows in a skewed
reducer are what made it skewed. :mod:`aqe_core.live.hot_keys` computes them on Spark from a
capture or a live run; this module only holds the result.

How each number is known (docs/architecture.md, "Evidence"):

- ``rows`` of a key and of a reducer: **exact** (counted on Spark over the exchange's input with
  Spark's own partition-id expression) unless ``sample_fraction`` < 1, then an **estimate**
  (the sample's count divided by the fraction);
- ``bytes`` of a reducer: Spark's ``bytesByPartitionId`` (**exact**, what AQE decided with);
- ``bytes_estimate`` of a key: its rows times the side's average row size (Spark's
  ``dataSize / rowCount`` of the shuffle, or the reducer's bytes / rows): always an **estimate**;
- ``verified``: the counted rows reproduce Spark's recorded picture (see :class:`Check`); when
  not, the keys are reported as unverified.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Optional

from aqe_core.model.evidence import Evidence

__all__ = ["Check", "HotKey", "HotKeyTarget", "ReducerKeys", "ShuffleKeys", "SideSQL"]


@dataclass
class HotKeyTarget:
    """The reducers of one shuffle to name the keys of: reducer -> parts Spark split it into (None:
    left unsplit); ``label`` says which side of what it is."""

    shuffle_id: int
    reducers: dict[int, Optional[int]] = field(default_factory=dict)
    label: str = ""
    stage_id: Optional[int] = None


@dataclass
class HotKey:
    """One key value (a tuple: one value per exchange key, in the exchange's order)."""

    values: list[Any]
    rows: int
    share: float  # of the reducer's rows
    bytes_estimate: Optional[int] = None

    def to_dict(self, names: list[str]) -> dict[str, Any]:
        key: Any = self.values[0] if len(self.values) == 1 else dict(zip(names, self.values))
        return {"key": key, "rows": self.rows, "share": round(self.share, 4), "bytes_estimate": self.bytes_estimate}


@dataclass
class Check:
    """One comparison of our counts with what Spark recorded."""

    name: str
    passed: bool
    detail: str

    def to_dict(self) -> dict[str, Any]:
        return {"name": self.name, "passed": self.passed, "detail": self.detail}


@dataclass
class ReducerKeys:
    """The top keys of one reducer of one shuffle."""

    reducer: int
    rows: int
    bytes: Optional[int]  # Spark's bytesByPartitionId (exact); None where the source has none
    splits: Optional[int]  # parts Spark split it into (None: not split)
    keys: list[HotKey] = field(default_factory=list)
    distinct_keys: Optional[int] = None

    def to_dict(self, names: list[str]) -> dict[str, Any]:
        return {"reducer": self.reducer, "rows": self.rows, "bytes": self.bytes, "splits": self.splits,
                "distinct_keys": self.distinct_keys, "keys": [k.to_dict(names) for k in self.keys]}


@dataclass
class ShuffleKeys:
    """The hot keys of one shuffle's skewed reducers, and how far they can be trusted."""

    shuffle_id: Optional[int]
    stage_id: Optional[int]
    label: str  # "left side of SortMergeJoin", "aggregation"
    key_names: list[str]  # the exchange's keys as Spark wrote them (ids dropped)
    num_partitions: int
    partitioning: str  # "hashpartitioning(k, 40)"
    input_kind: str  # "join side" | "aggregation input" | "repartition input"
    reducers: list[ReducerKeys] = field(default_factory=list)
    checks: list[Check] = field(default_factory=list)
    sample_fraction: float = 1.0
    total_rows: Optional[int] = None  # rows of the exchange's input we counted (scaled when sampled)
    avg_row_bytes: Optional[float] = None
    avg_row_bytes_how: str = ""
    notes: list[str] = field(default_factory=list)
    key_types: list[str] = field(default_factory=list)  # Spark's simpleString of each key's type
    error: Optional[str] = None  # why no keys could be computed

    @property
    def verified(self) -> bool:
        return self.error is None and bool(self.checks) and all(c.passed for c in self.checks)

    @property
    def rows_evidence(self) -> Evidence:
        return Evidence.EXACT if self.sample_fraction >= 1.0 else Evidence.ESTIMATE

    def to_dict(self) -> dict[str, Any]:
        return {
            "shuffle_id": self.shuffle_id, "stage_id": self.stage_id, "label": self.label,
            "key_names": list(self.key_names), "key_types": list(self.key_types), "num_partitions": self.num_partitions,
            "partitioning": self.partitioning, "input_kind": self.input_kind,
            "rows_evidence": self.rows_evidence.value,
            "bytes_estimate_how": self.avg_row_bytes_how, "sample_fraction": self.sample_fraction,
            "total_rows": self.total_rows, "verified": self.verified, "error": self.error,
            "checks": [c.to_dict() for c in self.checks], "notes": list(self.notes),
            "reducers": [r.to_dict(self.key_names) for r in self.reducers],
        }


@dataclass
class SideSQL:
    """One skewed shuffle of a log as SQL that runs (``views.hot_keys.cluster_code``): its input,
    keys and partition count, and what the log recorded, for :mod:`aqe_core.live.hot_keys_sql`."""

    side_sql: str
    key_sql: list[str]
    key_names: list[str]
    num_partitions: int
    reducers: dict[int, Optional[int]]  # reducer -> parts Spark split it into; empty: the log names none
    label: str = ""
    stage_id: Optional[int] = None
    input_kind: str = "join side"
    records_written: Optional[int] = None
    sizes: Optional[list[int]] = None  # bytes per reducer, where the log has them
    heaviest: int = 1  # reducers to name when the log names none
    note: str = ""  # what the SQL could not say (filters Spark made at run time)
