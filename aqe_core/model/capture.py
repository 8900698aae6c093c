"""Capture files: what a live Spark run recorded about AQE, as dataclasses and versioned JSON.

A capture holds, per query, the plans (initial, every adaptive update, final) as
:class:`~aqe_core.model.plan.PlanNode` trees, the statistics AQE decided with (per shuffle
``bytesByPartitionId`` and the per-map block sizes ``MapStatus.getSizeForBlock``), the
partition specs each adaptive shuffle read used, and the configuration in force. The format
is documented field by field in ``docs/capture-format.md``; :data:`FORMAT_VERSION` changes
only when a reader of the previous version would misread a file, and
:func:`aqe_core.readers.capture_file.load_capture` keeps reading every earlier version.

Plan trees are stored as ``PlanNode.to_dict()`` dicts; nodes of the trees walked through
py4j carry one more key, ``"info"`` (class-level facts the rules need: join type and keys,
stage id, required child distributions, ...). ``PlanNode.from_dict`` ignores it; this module
keeps it in :attr:`CapturedPlan.info`, indexed by pre-order position.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Iterator, Optional

from aqe_core.model._checks import (
    MAX_COUNT,
    _I64,
    CaptureFormatError,
    _bad,
    _bool,
    _count,
    _dict,
    _float,
    _int,
    _ints,
    _list,
    _plan_dict,
    _run,
    _spec,
    _str,
    _str_dict,
)
from aqe_core.model.plan import PlanNode
from aqe_core.model.specs import ShufflePartitionSpec, spec_to_dict
from aqe_core.model.task_time import TaskTime
from aqe_core.versions import as_version

__all__ = [
    "FORMAT", "FORMAT_VERSION", "MAX_COUNT", "Capture", "CaptureFormatError", "CapturedPlan", "MapSizes",
    "PlanUpdate", "QueryCapture", "ReadCapture", "ShuffleCapture", "SparkStageTiming", "StageCapture",
]

FORMAT = "aqe-lens-capture"
FORMAT_VERSION = 1


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
    def from_dict(cls, data: dict[str, Any], where: str = "plan") -> "CapturedPlan":
        data = _plan_dict(data, where)
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
    def from_dict(cls, d: dict[str, Any], where: str = "plan_update") -> "PlanUpdate":
        d = _dict(d, where)
        event = d.get("event", "update")
        if event not in ("start", "update"):
            raise _bad(f"{where}.event", "should be \"start\" or \"update\"")
        return cls(_int(d.get("execution_id"), f"{where}.execution_id", 0), event,  # type: ignore[arg-type]
                   bool(_bool(d.get("is_final", False), f"{where}.is_final", optional=True)),
                   PlanNode.from_dict(_plan_dict(d.get("plan"), f"{where}.plan")),
                   _int(d.get("sequence", 0), f"{where}.sequence", 0, MAX_COUNT))  # type: ignore[arg-type]


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
    def from_dict(cls, d: dict[str, Any], where: str = "map_sizes") -> "MapSizes":
        d = _dict(d, where)
        num_maps = _count(d.get("num_maps"), f"{where}.num_maps")
        rows = _list(d.get("sizes_by_reducer"), f"{where}.sizes_by_reducer", optional=False)
        if len(rows) > MAX_COUNT:
            raise _bad(f"{where}.sizes_by_reducer", f"has more than {MAX_COUNT} rows")
        sizes = [_ints(row, f"{where}.sizes_by_reducer[{i}]") for i, row in enumerate(rows)]
        if any(len(row) != num_maps for row in sizes):
            raise _bad(f"{where}.sizes_by_reducer", "has a row whose length is not num_maps")
        reducers = None if d.get("reducers") is None else _ints(d["reducers"], f"{where}.reducers", _count)
        if reducers is not None and len(reducers) != len(sizes):
            raise _bad(f"{where}.reducers", "does not match sizes_by_reducer")
        classes = [str(c) for c in _list(d.get("status_classes"), f"{where}.status_classes") if isinstance(c, str)]
        return cls(num_maps, sizes, reducers, classes,  # type: ignore[arg-type]
                   _bool(d.get("consistent"), f"{where}.consistent", optional=True))


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
    def from_dict(cls, d: dict[str, Any], where: str = "shuffle") -> "ShuffleCapture":
        d = _dict(d, where)
        b = d.get("bytes_by_partition_id")
        num_reducers = _count(d.get("num_reducers"), f"{where}.num_reducers")
        sizes = None if b is None else _ints(b, f"{where}.bytes_by_partition_id")
        if sizes is not None and len(sizes) != num_reducers:
            raise _bad(f"{where}.bytes_by_partition_id", "does not have num_reducers entries")
        if sizes is not None and sum(sizes) > _I64[1]:  # Spark sums them in a Long
            raise _bad(f"{where}.bytes_by_partition_id", "adds up to more than Spark's 64-bit range")
        ms = d.get("map_sizes")
        map_sizes = MapSizes.from_dict(ms, f"{where}.map_sizes") if ms else None
        if map_sizes is not None and map_sizes.reducers is None and len(map_sizes.sizes) != num_reducers:
            raise _bad(f"{where}.map_sizes", "does not have a row per reducer")
        note = d.get("map_sizes_note")
        return cls(_int(d.get("shuffle_id"), f"{where}.shuffle_id", -1), num_reducers,  # type: ignore[arg-type]
                   _count(d.get("num_maps"), f"{where}.num_maps", optional=True), sizes, map_sizes,
                   note if isinstance(note, str) else None)


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
    def from_dict(cls, d: dict[str, Any], where: str = "stage") -> "StageCapture":
        d = _dict(d, where)
        kind = d.get("kind")
        if kind not in ("shuffle", "broadcast", "other"):
            raise _bad(f"{where}.kind", "should be shuffle, broadcast or other")
        opt_str = {k: _str(d.get(k), f"{where}.{k}", optional=True) for k in ("origin", "output_partitioning")}
        return cls(
            stage_id=_int(d.get("stage_id"), f"{where}.stage_id", -1), kind=kind,  # type: ignore[arg-type]
            node=_count(d.get("node"), f"{where}.node"),  # type: ignore[arg-type]
            shuffle_id=_int(d.get("shuffle_id"), f"{where}.shuffle_id", -1, optional=True),
            can_change_num_partitions=_bool(d.get("can_change_num_partitions"), f"{where}.can_change_num_partitions", True),
            num_partitions=_count(d.get("num_partitions"), f"{where}.num_partitions", optional=True),
            num_maps=_count(d.get("num_maps"), f"{where}.num_maps", optional=True),
            advisory_partition_size=_int(d.get("advisory_partition_size"), f"{where}.advisory_partition_size", 0, optional=True),
            # Spark's statistics are BigInts: estimates may pass the 64-bit range
            size_in_bytes=_int(d.get("size_in_bytes"), f"{where}.size_in_bytes", 0, 2 ** 127, optional=True),
            row_count=_int(d.get("row_count"), f"{where}.row_count", 0, 2 ** 127, optional=True),
            reused=bool(_bool(d.get("reused", False), f"{where}.reused", optional=True)), **opt_str)


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
    def from_dict(cls, d: dict[str, Any], where: str = "read") -> "ReadCapture":
        d = _dict(d, where)
        specs = _list(d.get("specs"), f"{where}.specs")
        if len(specs) > MAX_COUNT:
            raise _bad(f"{where}.specs", f"has more than {MAX_COUNT} entries")
        return cls(_count(d.get("node"), f"{where}.node"),  # type: ignore[arg-type]
                   _int(d.get("stage_id"), f"{where}.stage_id", -1, optional=True),
                   _int(d.get("shuffle_id"), f"{where}.shuffle_id", -1, optional=True),
                   _str(d.get("description", ""), f"{where}.description"),  # type: ignore[arg-type]
                   [_spec(s, f"{where}.specs[{i}]") for i, s in enumerate(specs)])


def _check_specs(read: ReadCapture, sh: Optional[ShuffleCapture], where: str) -> None:
    """A read's specs stay inside its shuffle (reducers below ``num_reducers``, maps below
    ``num_maps``), as Spark's always do: the views index the shuffle's sizes with them."""
    if sh is None:
        return
    maps = sh.num_maps if sh.num_maps is not None else sh.map_sizes.num_maps if sh.map_sizes else None
    for i, s in enumerate(read.specs):
        reducers_end = getattr(s, "end_reducer_index", None)
        reducer = getattr(s, "reducer_index", None)
        map_end = getattr(s, "end_map_index", None)
        map_index = getattr(s, "map_index", None)
        if ((reducers_end is not None and reducers_end > sh.num_reducers)
                or (reducer is not None and reducer >= sh.num_reducers)
                or (maps is not None and ((map_end is not None and map_end > maps)
                                          or (map_index is not None and map_index >= maps)))):
            raise _bad(f"{where}.specs[{i}]", f"points outside shuffle {sh.shuffle_id}")


@dataclass
class SparkStageTiming:
    """A Spark (scheduler) stage of the query, from the event log."""

    stage_id: int
    name: str
    num_tasks: int
    submitted_ms: Optional[int]
    completed_ms: Optional[int]
    failed: bool = False
    #: per task index: duration (ms) and task id of the successful attempt, -1 where none was seen
    task_ms: Optional[list[int]] = None
    task_ids: Optional[list[int]] = None
    #: the SQL metric accumulators its tasks updated (which plan nodes ran in this stage)
    accumulators: Optional[list[int]] = None

    @property
    def duration_ms(self) -> Optional[int]:
        if self.submitted_ms is None or self.completed_ms is None:
            return None
        return self.completed_ms - self.submitted_ms

    def task_time(self) -> Optional[TaskTime]:
        if not self.task_ms:
            return None
        return TaskTime.of(self.stage_id, 0, self.task_ms, self.task_ids or [], self.duration_ms)

    def to_dict(self) -> dict[str, Any]:
        d = dict(self.__dict__)
        d["duration_ms"] = self.duration_ms
        return d

    @classmethod
    def from_dict(cls, d: dict[str, Any], where: str = "spark_stage") -> "SparkStageTiming":
        d = _dict(d, where)

        def ints(key: str, lo: int) -> Optional[list[int]]:
            v = d.get(key)
            if v is None:
                return None
            return _ints(v, f"{where}.{key}", check=lambda x, w: _int(x, w, lo))

        out = cls(_int(d.get("stage_id"), f"{where}.stage_id", -1),  # type: ignore[arg-type]
                  _str(d.get("name", ""), f"{where}.name"),  # type: ignore[arg-type]
                  _count(d.get("num_tasks", 0), f"{where}.num_tasks"),  # type: ignore[arg-type]
                  _int(d.get("submitted_ms"), f"{where}.submitted_ms", 0, optional=True),
                  _int(d.get("completed_ms"), f"{where}.completed_ms", 0, optional=True),
                  bool(_bool(d.get("failed", False), f"{where}.failed", optional=True)),
                  ints("task_ms", -1), ints("task_ids", -1), ints("accumulators", 0))
        if out.task_ms is not None and len(out.task_ids or ()) != len(out.task_ms):
            raise _bad(f"{where}.task_ids", "should have one entry per task_ms entry")
        return out


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
    def from_dict(cls, d: dict[str, Any], where: str = "query") -> "QueryCapture":
        d = _dict(d, where)
        shuffles = {}
        for i, s in enumerate(_list(d.get("shuffles"), f"{where}.shuffles")):
            sc = ShuffleCapture.from_dict(s, f"{where}.shuffles[{i}]")
            shuffles[sc.shuffle_id] = sc

        def plan(key: str) -> Optional[CapturedPlan]:
            return CapturedPlan.from_dict(d[key], f"{where}.{key}") if d.get(key) else None

        def items(key: str, fn) -> list:
            return [fn(x, f"{where}.{key}[{i}]") for i, x in enumerate(_list(d.get(key), f"{where}.{key}"))]

        reads = items("reads", ReadCapture.from_dict)
        for i, r in enumerate(reads):
            _check_specs(r, shuffles.get(r.shuffle_id) if r.shuffle_id is not None else None, f"{where}.reads[{i}]")
        return cls(
            index=_int(d.get("index", 0), f"{where}.index", 0, MAX_COUNT),  # type: ignore[arg-type]
            label=_str(d.get("label", ""), f"{where}.label"),  # type: ignore[arg-type]
            conf=_str_dict(d.get("conf"), f"{where}.conf"),
            default_parallelism=_int(d.get("default_parallelism", 1), f"{where}.default_parallelism", 1, MAX_COUNT),  # type: ignore[arg-type]
            adaptive=bool(_bool(d.get("adaptive", True), f"{where}.adaptive", optional=True)),
            final_plan=plan("final_plan"), initial_plan=plan("initial_plan"),
            plan_updates=items("plan_updates", PlanUpdate.from_dict),
            stages=items("stages", StageCapture.from_dict),
            shuffles=shuffles,
            reads=reads,
            required_distribution=_str(d.get("required_distribution"), f"{where}.required_distribution", optional=True),
            sql=_str(d.get("sql"), f"{where}.sql", optional=True),
            preset=_str(d.get("preset"), f"{where}.preset", optional=True),
            execution_ids=_ints(d.get("execution_ids") or [], f"{where}.execution_ids"),
            spark_stages=items("spark_stages", SparkStageTiming.from_dict),
            duration_ms=_float(d.get("duration_ms"), f"{where}.duration_ms"),
            capture_ms=_float(d.get("capture_ms"), f"{where}.capture_ms"),
            row_count=_int(d.get("row_count"), f"{where}.row_count", 0, optional=True),
            notes=[n for n in _list(d.get("notes"), f"{where}.notes") if isinstance(n, str)],
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

    def sql_of(self, q: QueryCapture) -> Optional[str]:
        """The SQL text a re-run of ``q`` runs (its own, else the run's); None when not kept.
        :class:`CaptureFormatError` when ``run`` is malformed (checked here too: a capture
        built in code never went through :meth:`from_dict`)."""
        return q.sql or _run(self.run, "run").get("sql") or None

    def setup_statements(self) -> list[str]:
        """The ``CREATE TEMPORARY VIEW`` statements (``run.views``) a re-run runs first."""
        return list((_run(self.run, "run").get("views") or {}).values())

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
            raise CaptureFormatError("capture has no valid format_version (a positive integer)")
        if v > FORMAT_VERSION:
            raise CaptureFormatError(f"capture format version {v} is newer than this AQE Lens reads ({FORMAT_VERSION}); upgrade AQE Lens")
        spark = _dict(d.get("spark"), "spark", optional=True)
        version = spark.get("version")
        version = version if isinstance(version, str) else ""  # ("" is refused just below)
        try:
            as_version(version)
        except ValueError:
            raise _bad("spark.version", "is not a Spark version AQE Lens models (3.0 or later)") from None
        queries = [QueryCapture.from_dict(q, f"queries[{i}]") for i, q in enumerate(_list(d.get("queries"), "queries"))]
        for q in queries:  # a conf value Spark itself would reject: note it, use the default
            from aqe_core.config import checked_layers

            (q.conf,), notes = checked_layers(version, [q.conf])
            q.notes.extend(notes)
        return cls(
            spark_version=version, master=_str(spark.get("master"), "spark.master", optional=True),
            app_id=_str(spark.get("app_id"), "spark.app_id", optional=True),
            java=_dict(spark.get("java"), "spark.java", optional=True) or None,
            run=_run(d.get("run"), "run"), created_at=_str(d.get("created_at"), "created_at", optional=True),
            producer=_dict(d.get("producer"), "producer", optional=True),
            warnings=[w for w in _list(d.get("warnings"), "warnings") if isinstance(w, str)],
            queries=queries, format_version=v,
        )

