"""Shuffle partition specs: what one shuffle-reader task reads.

Named after Spark's ``org.apache.spark.sql.execution.ShufflePartitionSpec`` family
(``ShufflePartitionSpec.scala``), with snake_case fields. ``data_size`` is ``None`` where the
Spark release has no such field (3.0.x) or the value is unknown.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Union


@dataclass(frozen=True)
class CoalescedPartitionSpec:
    """Reducers ``[start_reducer_index, end_reducer_index)`` of every map, read as one task.

    ``(0, 0)`` is Spark's special "empty" spec used when every input RDD had 0 partitions.
    """

    start_reducer_index: int
    end_reducer_index: int
    data_size: int | None = None

    @property
    def is_coalesced(self) -> bool:
        """Spark's AQEShuffleReadExec counts a spec as coalesced if it spans >1 reducer or is (0,0)."""
        width = self.end_reducer_index - self.start_reducer_index
        return width > 1 or (self.start_reducer_index == 0 and self.end_reducer_index == 0)


@dataclass(frozen=True)
class PartialReducerPartitionSpec:
    """Maps ``[start_map_index, end_map_index)`` of one reducer: one split of a skewed partition."""

    reducer_index: int
    start_map_index: int
    end_map_index: int
    data_size: int | None = None


@dataclass(frozen=True)
class PartialMapperPartitionSpec:
    """Reducers ``[start_reducer_index, end_reducer_index)`` of one map: a local shuffle read."""

    map_index: int
    start_reducer_index: int
    end_reducer_index: int


@dataclass(frozen=True)
class CoalescedMapperPartitionSpec:
    """All ``num_reducers`` reducers of maps ``[start_map_index, end_map_index)`` (local read, 3.2+)."""

    start_map_index: int
    end_map_index: int
    num_reducers: int


ShufflePartitionSpec = Union[
    CoalescedPartitionSpec,
    PartialReducerPartitionSpec,
    PartialMapperPartitionSpec,
    CoalescedMapperPartitionSpec,
]

_SPEC_TYPES = {
    cls.__name__: cls
    for cls in (
        CoalescedPartitionSpec,
        PartialReducerPartitionSpec,
        PartialMapperPartitionSpec,
        CoalescedMapperPartitionSpec,
    )
}


def spec_to_dict(spec: ShufflePartitionSpec) -> dict[str, Any]:
    """JSON form used by captures, fixtures and reports: ``{"type": <Spark class name>, fields...}``."""
    out: dict[str, Any] = {"type": type(spec).__name__}
    out.update(spec.__dict__)
    return out


def spec_from_dict(data: dict[str, Any]) -> ShufflePartitionSpec:
    """Inverse of :func:`spec_to_dict`; raises ``ValueError`` on an unknown type."""
    fields = dict(data)
    kind = fields.pop("type", None)
    cls = _SPEC_TYPES.get(kind)
    if cls is None:
        raise ValueError(f"unknown shuffle partition spec type: {kind!r}")
    return cls(**fields)
