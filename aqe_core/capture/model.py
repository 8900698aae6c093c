"""Capture files: what a live Spark run recorded about AQE, as dataclasses and versioned JSON.

A capture holds, per query, the plans (initial, every adaptive update, final) as
:class:`~aqe_core.plan.PlanNode` trees, the statistics AQE decided with (per shuffle
``bytesByPartitionId`` and the per-map block sizes ``MapStatus.getSizeForBlock``), the
partition specs each adaptive shuffle read used, and the configuration in force. The format
is documented field by field in ``docs/capture-format.md``; :data:`FORMAT_VERSION` changes
only when a reader of the previous version would misread a file, and :func:`load_capture`
keeps reading every earlier version.

Plan trees are stored as ``PlanNode.to_dict()`` dicts; nodes of the trees walked through
py4j carry one more key, ``"info"`` (class-level facts the rules need: join type and keys,
stage id, required child distributions, ...). ``PlanNode.from_dict`` ignores it; this module
keeps it in :attr:`CapturedPlan.info`, indexed by pre-order position.
"""
from __future__ import annotations

import gzip
import io
import json
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterator, Optional, Union

from aqe_core.plan import PlanNode
from aqe_core.rules.specs import ShufflePartitionSpec, spec_from_dict, spec_to_dict

FORMAT = "aqe-lens-capture"
FORMAT_VERSION = 1


class CaptureFormatError(ValueError):
    """The file is not an AQE Lens capture, or a version this release cannot read."""


# ----------------------------------------------------------------------------------------
# Plans


@dataclass
class CapturedPlan:
    """A plan tree plus per-node facts (``info[i]`` belongs to the i-th node in pre-order)."""

    root: PlanNode
    info: list[dict[str, Any]] = field(default_factory=list)

    def nodes(self) -> list[PlanNode]:
        return list(self.root.walk())

    def indexed(self) -> Iterator[tuple[int, PlanNode, dict[str, Any]]]:
        for i, node in enumerate(self.root.walk()):
            yield i, node, (self.info[i] if i < len(self.info) else {})

    def to_dict(self) -> dict[str, Any]:
        d = self.root.to_dict()
        if self.info:
            # pre-order over the dict tree, same order as PlanNode.walk()
            stack = [d]
            i = 0
            while stack:
                node = stack.pop()
                if i < len(self.info) and self.info[i]:
                    node["info"] = self.info[i]
                i += 1
                stack.extend(reversed(node["children"]))
        return d

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> "CapturedPlan":
        root = PlanNode.from_dict(data)
        info: list[dict[str, Any]] = []
        stack = [data]
        while stack:
            node = stack.pop()
            info.append(dict(node.get("info") or {}))
            stack.extend(reversed(node.get("children") or []))
        return cls(root, info if any(info) else [])


@dataclass
class PlanUpdate:
    """One plan AQE reported to the SQL UI (``SparkListenerSQLExecutionStart`` /
    ``SparkListenerSQLAdaptiveExecutionUpdate``), as read back from the event log."""

    execution_id: int
    event: str  # "start" | "update"
    is_final: bool
    plan: PlanNode
    sequence: int = 0

    def to_dict(self) -> dict[str, Any]:
        return {"execution_id": self.execution_id, "event": self.event, "is_final": self.is_final,
                "sequence": self.sequence, "plan": self.plan.to_dict()}

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> "PlanUpdate":
        return cls(int(d["execution_id"]), str(d.get("event", "update")), bool(d.get("is_final")),
                   PlanNode.from_dict(d["plan"]), int(d.get("sequence", 0)))


# ----------------------------------------------------------------------------------------
# Statistics


@dataclass
class MapSizes:
    """``MapStatus.getSizeForBlock(reducer)`` for every map task, for some or all reducers.

    ``sizes[k][m]`` is the size of map ``m``'s block for reducer ``reducers[k]`` (or reducer
    ``k`` when ``reducers`` is None = all reducers). ``-1`` marks a missing map status
    (Spark's SPARK-36228 case). ``status_classes`` names the MapStatus implementations seen.
    """

    num_maps: int
    sizes: list[list[int]]
    reducers: Optional[list[int]] = None
    status_classes: list[str] = field(default_factory=list)
    consistent: Optional[bool] = None  # sum over maps == bytesByPartitionId for every recorded reducer
    _index: Optional[dict[int, int]] = field(default=None, repr=False, compare=False)

    @property
    def complete(self) -> bool:
        return self.reducers is None

    def for_reducer(self, reducer: int) -> Optional[list[int]]:
        if self.reducers is None:
            return self.sizes[reducer] if 0 <= reducer < len(self.sizes) else None
        if self._index is None:
            self._index = {r: k for k, r in enumerate(self.reducers)}
        k = self._index.get(reducer)
        return None if k is None else self.sizes[k]

    def to_dict(self) -> dict[str, Any]:
        return {"num_maps": self.num_maps, "reducers": self.reducers, "status_classes": self.status_classes,
                "consistent": self.consistent, "sizes_by_reducer": self.sizes}

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> "MapSizes":
        return cls(int(d["num_maps"]), [list(map(int, row)) for row in d["sizes_by_reducer"]],
                   None if d.get("reducers") is None else [int(r) for r in d["reducers"]],
                   list(d.get("status_classes") or []), d.get("consistent"))


@dataclass
class ShuffleCapture:
    """One shuffle's map output statistics, as AQE saw them."""

    shuffle_id: int
    num_reducers: int
    num_maps: Optional[int]
    bytes_by_partition_id: Optional[list[int]]  # None: Spark had no map stats (0 input partitions)
    map_sizes: Optional[MapSizes] = None
    map_sizes_note: Optional[str] = None  # why per-map sizes are missing or partial

    def to_dict(self) -> dict[str, Any]:
        return {"shuffle_id": self.shuffle_id, "num_reducers": self.num_reducers, "num_maps": self.num_maps,
                "bytes_by_partition_id": self.bytes_by_partition_id,
                "map_sizes": self.map_sizes.to_dict() if self.map_sizes else None,
                "map_sizes_note": self.map_sizes_note}

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> "ShuffleCapture":
        b = d.get("bytes_by_partition_id")
        return cls(int(d["shuffle_id"]), int(d["num_reducers"]), d.get("num_maps"),
                   None if b is None else [int(x) for x in b],
                   MapSizes.from_dict(d["map_sizes"]) if d.get("map_sizes") else None, d.get("map_sizes_note"))


@dataclass
class StageCapture:
    """A query stage of the final plan (``ShuffleQueryStage`` / ``BroadcastQueryStage`` ...)."""

    stage_id: int
    kind: str  # "shuffle" | "broadcast" | "other"
    node: int  # pre-order index of the stage node in the final plan
    shuffle_id: Optional[int] = None
    origin: Optional[str] = None  # ShuffleOrigin (3.1+)
    can_change_num_partitions: Optional[bool] = None  # 3.0.x ShuffleExchangeExec flag
    num_partitions: Optional[int] = None
    num_maps: Optional[int] = None
    output_partitioning: Optional[str] = None
    advisory_partition_size: Optional[int] = None  # 3.5+ rebalance hint
    size_in_bytes: Optional[int] = None  # runtime statistics AQE re-plans with
    row_count: Optional[int] = None
    reused: bool = False

    def to_dict(self) -> dict[str, Any]:
        return dict(self.__dict__)

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> "StageCapture":
        known = {k: d.get(k) for k in cls.__dataclass_fields__ if k in d}
        return cls(**known)


@dataclass
class ReadCapture:
    """An adaptive shuffle read in the final plan and the specs Spark gave it."""

    node: int  # pre-order index in the final plan
    stage_id: Optional[int]
    shuffle_id: Optional[int]
    description: str
    specs: list[ShufflePartitionSpec]

    def to_dict(self) -> dict[str, Any]:
        return {"node": self.node, "stage_id": self.stage_id, "shuffle_id": self.shuffle_id,
                "description": self.description, "specs": [spec_to_dict(s) for s in self.specs]}

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> "ReadCapture":
        return cls(int(d["node"]), d.get("stage_id"), d.get("shuffle_id"), str(d.get("description", "")),
                   [spec_from_dict(s) for s in d.get("specs") or []])


@dataclass
class SparkStageTiming:
    """A Spark (scheduler) stage of the query, from the event log."""

    stage_id: int
    name: str
    num_tasks: int
    submitted_ms: Optional[int]
    completed_ms: Optional[int]
    failed: bool = False

    @property
    def duration_ms(self) -> Optional[int]:
        if self.submitted_ms is None or self.completed_ms is None:
            return None
        return self.completed_ms - self.submitted_ms

    def to_dict(self) -> dict[str, Any]:
        d = dict(self.__dict__)
        d["duration_ms"] = self.duration_ms
        return d

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> "SparkStageTiming":
        return cls(int(d["stage_id"]), str(d.get("name", "")), int(d.get("num_tasks", 0)), d.get("submitted_ms"),
                   d.get("completed_ms"), bool(d.get("failed", False)))


@dataclass
class QueryCapture:
    """Everything recorded about one query (one action on one DataFrame)."""

    index: int
    label: str
    conf: dict[str, str]  # spark.sql.* settings in force (explicitly set ones; the rest are defaults)
    default_parallelism: int
    adaptive: bool
    final_plan: Optional[CapturedPlan] = None
    initial_plan: Optional[CapturedPlan] = None
    plan_updates: list[PlanUpdate] = field(default_factory=list)
    stages: list[StageCapture] = field(default_factory=list)
    shuffles: dict[int, ShuffleCapture] = field(default_factory=dict)
    reads: list[ReadCapture] = field(default_factory=list)
    required_distribution: Optional[str] = None  # AdaptiveSparkPlanExec.requiredDistribution (3.2+)
    sql: Optional[str] = None
    preset: Optional[str] = None
    execution_ids: list[int] = field(default_factory=list)
    spark_stages: list[SparkStageTiming] = field(default_factory=list)
    duration_ms: Optional[float] = None
    capture_ms: Optional[float] = None
    row_count: Optional[int] = None
    notes: list[str] = field(default_factory=list)

    def shuffle(self, shuffle_id: Optional[int]) -> Optional[ShuffleCapture]:
        return None if shuffle_id is None else self.shuffles.get(shuffle_id)

    def stage(self, stage_id: Optional[int]) -> Optional[StageCapture]:
        for s in self.stages:
            if s.stage_id == stage_id:
                return s
        return None

    def to_dict(self) -> dict[str, Any]:
        return {
            "index": self.index, "label": self.label, "preset": self.preset, "sql": self.sql,
            "adaptive": self.adaptive, "execution_ids": self.execution_ids,
            "default_parallelism": self.default_parallelism, "conf": dict(sorted(self.conf.items())),
            "duration_ms": self.duration_ms, "capture_ms": self.capture_ms, "row_count": self.row_count,
            "required_distribution": self.required_distribution,
            "initial_plan": self.initial_plan.to_dict() if self.initial_plan else None,
            "final_plan": self.final_plan.to_dict() if self.final_plan else None,
            "plan_updates": [u.to_dict() for u in self.plan_updates],
            "stages": [s.to_dict() for s in self.stages],
            "shuffles": [self.shuffles[k].to_dict() for k in sorted(self.shuffles)],
            "reads": [r.to_dict() for r in self.reads],
            "spark_stages": [s.to_dict() for s in self.spark_stages],
            "notes": list(self.notes),
        }

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> "QueryCapture":
        shuffles = {}
        for s in d.get("shuffles") or []:
            sc = ShuffleCapture.from_dict(s)
            shuffles[sc.shuffle_id] = sc
        return cls(
            index=int(d.get("index", 0)), label=str(d.get("label", "")), conf={k: str(v) for k, v in (d.get("conf") or {}).items()},
            default_parallelism=int(d.get("default_parallelism", 1)), adaptive=bool(d.get("adaptive", True)),
            final_plan=CapturedPlan.from_dict(d["final_plan"]) if d.get("final_plan") else None,
            initial_plan=CapturedPlan.from_dict(d["initial_plan"]) if d.get("initial_plan") else None,
            plan_updates=[PlanUpdate.from_dict(u) for u in d.get("plan_updates") or []],
            stages=[StageCapture.from_dict(s) for s in d.get("stages") or []],
            shuffles=shuffles,
            reads=[ReadCapture.from_dict(r) for r in d.get("reads") or []],
            required_distribution=d.get("required_distribution"), sql=d.get("sql"), preset=d.get("preset"),
            execution_ids=[int(x) for x in d.get("execution_ids") or []],
            spark_stages=[SparkStageTiming.from_dict(s) for s in d.get("spark_stages") or []],
            duration_ms=d.get("duration_ms"), capture_ms=d.get("capture_ms"), row_count=d.get("row_count"),
            notes=list(d.get("notes") or []),
        )


@dataclass
class Capture:
    """A capture file: one Spark run (SQL text, a built-in workload, or a user's program)."""

    spark_version: str
    queries: list[QueryCapture] = field(default_factory=list)
    master: Optional[str] = None
    app_id: Optional[str] = None
    java: Optional[dict[str, Any]] = None
    run: dict[str, Any] = field(default_factory=dict)  # kind, workload, scale, presets, sql, tag
    created_at: Optional[str] = None
    producer: dict[str, Any] = field(default_factory=dict)
    warnings: list[str] = field(default_factory=list)
    format_version: int = FORMAT_VERSION

    def to_dict(self) -> dict[str, Any]:
        return {
            "format": FORMAT, "format_version": FORMAT_VERSION, "producer": self.producer,
            "created_at": self.created_at,
            "spark": {"version": self.spark_version, "master": self.master, "app_id": self.app_id, "java": self.java},
            "run": self.run, "warnings": list(self.warnings),
            "queries": [q.to_dict() for q in self.queries],
        }

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> "Capture":
        if not isinstance(d, dict) or d.get("format") != FORMAT:
            raise CaptureFormatError("not an AQE Lens capture (no \"format\": \"aqe-lens-capture\")")
        v = d.get("format_version")
        if not isinstance(v, int) or v < 1:
            raise CaptureFormatError(f"capture has no valid format_version: {v!r}")
        if v > FORMAT_VERSION:
            raise CaptureFormatError(f"capture format version {v} is newer than this AQE Lens reads ({FORMAT_VERSION}); upgrade AQE Lens")
        spark = d.get("spark") or {}
        return cls(
            spark_version=str(spark.get("version")), master=spark.get("master"), app_id=spark.get("app_id"),
            java=spark.get("java"), run=dict(d.get("run") or {}), created_at=d.get("created_at"),
            producer=dict(d.get("producer") or {}), warnings=list(d.get("warnings") or []),
            queries=[QueryCapture.from_dict(q) for q in d.get("queries") or []], format_version=v,
        )


# ----------------------------------------------------------------------------------------
# Files

PathLike = Union[str, "os.PathLike[str]"]


def dumps(capture: Capture) -> str:
    return json.dumps(capture.to_dict(), separators=(",", ":"), allow_nan=False)


def save_capture(capture: Capture, path: PathLike, *, compress: Optional[bool] = None) -> Path:
    """Write ``capture`` as JSON; gzip when ``compress`` or the name ends in ``.gz``."""
    p = Path(path)
    if compress is None:
        compress = p.suffix == ".gz"
    data = dumps(capture).encode()
    p.parent.mkdir(parents=True, exist_ok=True)
    tmp = p.with_name(p.name + ".tmp")
    if compress:
        with open(tmp, "wb") as fh:
            # mtime=0: the same capture always gives the same bytes
            with gzip.GzipFile(filename="", mode="wb", fileobj=fh, mtime=0, compresslevel=9) as gz:
                gz.write(data)
    else:
        tmp.write_bytes(data)
    os.replace(tmp, p)
    return p


def loads(data: "bytes | str") -> Capture:
    if isinstance(data, (bytes, bytearray)):
        if data[:2] == b"\x1f\x8b":
            data = gzip.decompress(data)
        data = data.decode("utf-8")
    try:
        doc = json.loads(data)
    except json.JSONDecodeError as e:
        raise CaptureFormatError(f"not JSON: {e}") from None
    return Capture.from_dict(doc)


def load_capture(source: "PathLike | bytes | io.IOBase") -> Capture:
    """Read a capture from a path (plain or gzip JSON), bytes, or a binary file object."""
    if isinstance(source, (bytes, bytearray)):
        return loads(source)
    if hasattr(source, "read"):
        return loads(source.read())  # type: ignore[union-attr]
    return loads(Path(source).read_bytes())  # type: ignore[arg-type]
