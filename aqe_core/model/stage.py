"""The stage plan as the rules see it: protocols the engine's stage plan implements.

A rule's plan-shape check (``CoalesceShufflePartitions`` looking for its coalesce groups,
``OptimizeSkewedJoin`` for a join over two shuffle stages ...) walks a *stage fragment*: the
plan between an exchange (or the root) and the query stages below it. The engine builds the
fragments (:mod:`aqe_core.engine.stage_plan`); the rules only see these protocols, so a rule
never imports the engine. ``idx`` identifies a node (its pre-order index in the recorded plan).
"""
from __future__ import annotations

from typing import Any, Callable, Iterator, Optional, Protocol, Sequence

from aqe_core.config import AQEConf
from aqe_core.model.reasons import Reason
from aqe_core.model.specs import ShufflePartitionSpec
from aqe_core.versions import SparkVersion

#: ``map_sizes_for(reducer)``: ``MapStatus.getSizeForBlock`` of every map task (None: unknown)
MapSizesFor = Callable[[int], Optional[Sequence[Optional[int]]]]


class StageNode(Protocol):
    """A node of a stage fragment (codegen wrappers and adaptive reads taken out); a stage
    leaf is a query stage (``ShuffleQueryStage``, ``BroadcastQueryStage`` ...)."""

    idx: int
    name: str
    info: dict[str, Any]  # recorded facts: join_type, build_side, req (required distributions) ...
    children: list[Any]  # list[StageNode]
    parent: Optional[Any]  # Optional[StageNode]
    pos: int  # position among the parent's children

    @property
    def is_stage(self) -> bool: ...

    @property
    def is_shuffle_stage(self) -> bool: ...

    def walk(self) -> Iterator[Any]: ...


class Fragment(Protocol):
    """One stage fragment: its root, its stage leaves in plan order, whether it is the query's
    final stage (and of the query itself, not a subquery)."""

    root: Any  # StageNode
    stages: list[Any]  # list[StageNode]
    is_final: bool
    main: bool


class StageFacts(Protocol):
    """What was recorded about one query stage (read-only here: a record whose field is never
    None, such as a capture's ``stage_id: int``, satisfies it)."""

    @property
    def stage_id(self) -> Optional[int]: ...
    @property
    def shuffle_id(self) -> Optional[int]: ...
    @property
    def origin(self) -> Optional[str]: ...
    @property
    def can_change_num_partitions(self) -> Optional[bool]: ...
    @property
    def num_maps(self) -> Optional[int]: ...
    @property
    def num_partitions(self) -> Optional[int]: ...
    @property
    def advisory_partition_size(self) -> Optional[int]: ...


class ShuffleFacts(Protocol):
    """What was recorded about one shuffle (read-only here, as :class:`StageFacts`)."""

    @property
    def num_maps(self) -> Optional[int]: ...
    @property
    def num_reducers(self) -> Optional[int]: ...


class StageStats(Protocol):
    """The statistics of a query's stage leaves, the release and the conf the rules run with."""

    v: SparkVersion
    conf: AQEConf
    default_parallelism: int

    def stage(self, n: Any) -> Optional[StageFacts]: ...

    def stage_at(self, idx: int) -> StageFacts:
        """The stage recorded at a leaf's node index (KeyError if none)."""
        ...

    def shuffle(self, n: Any) -> Optional[ShuffleFacts]: ...

    def bytes(self, n: Any) -> Optional[list[int]]: ...

    def origin(self, n: Any) -> str: ...

    def single_partition(self, n: Any) -> bool: ...

    def map_sizes_for(self, n: Any) -> Optional[MapSizesFor]: ...

    def breaks_distribution(self, fr: Any, changed: Sequence[Any], skew_joins: set[int]) -> Optional[str]:
        """Spark's ``ValidateRequirements``: would these leaves' new partitioning break a
        distribution the plan relies on? A sentence, or None."""
        ...

    def union_reports_partitioning(self, n: Any) -> bool:
        """Spark's ``UnionExec.outputPartitioning`` is not ``UnknownPartitioning`` (4.1+)."""
        ...


class SpecState(Protocol):
    """The specs the rules put on a fragment's stage leaves (by ``idx``), with the rules that
    did it, the reasons, and the joins split for skew."""

    specs: dict[int, list[ShufflePartitionSpec]]
    rules: dict[int, list[str]]
    reasons: dict[int, list[Reason]]
    skew_joins: set[int]
    descriptions: dict[int, str]

    def put(self, n: Any, specs: list[ShufflePartitionSpec], rule: str) -> None: ...

    def why(self, n: Any, reasons: list[Reason]) -> None: ...

    def copy(self) -> Any: ...

    def adopt(self, trial: Any) -> None:
        """Take a trial copy's changes (the rule's result is kept)."""
        ...

    def merge_reasons(self, trial: Any) -> None:
        """Keep only a dropped trial's reasons."""
        ...


__all__ = ["Fragment", "MapSizesFor", "ShuffleFacts", "SpecState", "StageFacts", "StageNode", "StageStats"]
