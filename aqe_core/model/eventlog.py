"""What the reader keeps from an event log (see docs/eventlog-json.md for the JSON form)."""
from __future__ import annotations

import threading
from array import array
from collections import OrderedDict
from dataclasses import dataclass, field
from typing import Any, Callable, Iterator, Mapping, MutableMapping

from aqe_core.model.plan import PlanNode
from aqe_core.model.task_time import TaskTime

#: Facts an event log does not hold (stated in every load result; docs/eventlog-limits.md).
NOT_IN_LOG = [
    "pre-AQE per-reducer shuffle sizes (MapOutputStatistics.bytesByPartitionId for all shuffle partitions)",
    "per-map, per-reducer block sizes",
    "the reducer range of each coalesced partition and the map range / reducer of each skew split",
    "runtime thresholds (median size, skew threshold, target size): recompute them from the configuration",
    "which AQE rule made a change: compare the plan versions instead",
]

APPROXIMATE_NOTE = (
    "approximate: an event log holds only post-AQE partition sizes (sums of MapStatus sizes, which are "
    "log-encoded and overstate each block by up to ~10%), not the per-reducer sizes AQE started from"
)


@dataclass
class Application:
    id: str | None = None
    name: str | None = None
    attempt_id: str | None = None
    spark_version: str | None = None
    user: str | None = None
    start_time: int | None = None
    end_time: int | None = None
    exit_code: int | None = None
    #: the "Spark Version" of Databricks' ``DBCEventLoggingListenerMetadata`` event (a Databricks
    #: log may have no SparkListenerLogStart): the Apache Spark release under the runtime
    dbc_spark_version: str | None = None
    #: executor id -> what the executor-added / removed events say of it (bounded: :data:`MAX_EXECUTORS`)
    executors: dict[str, "ExecutorSpan"] = field(default_factory=dict)
    #: executor-added events beyond :data:`MAX_EXECUTORS` (not kept: the cores are then not known)
    executors_dropped: int = 0

    def to_dict(self) -> dict[str, Any]:
        return {
            "id": self.id, "name": self.name, "spark_version": self.spark_version,
            "attempt_id": self.attempt_id, "user": self.user, "start_time": self.start_time,
            "end_time": self.end_time, "exit_code": self.exit_code, "dbc_spark_version": self.dbc_spark_version,
            "executors": len(self.executors),
        }


#: executors an application's facts keep (a log claiming more names no cores)
MAX_EXECUTORS = 100_000


@dataclass
class ExecutorSpan:
    """One executor as ``SparkListenerExecutorAdded`` / ``Removed`` state it: its cores (``Total
    Cores``) and when it was there (ms; None where the event has no time)."""

    cores: int
    added: int | None = None
    removed: int | None = None


@dataclass
class StageAttempt:
    """One attempt of a stage as the log states it (``Stage Attempt ID``)."""

    attempt: int
    num_tasks: int = 0
    failed: bool = False
    #: the first line of Spark's "Failure Reason" (an exception class and message), cut short
    reason: str | None = None
    #: tasks of this attempt that re-ran a partition an earlier attempt had already finished:
    #: more than zero means Spark retried the stage in full, not only its missing partitions
    reran_finished: int = 0

    def to_dict(self) -> dict[str, Any]:
        return {"attempt": self.attempt, "num_tasks": self.num_tasks, "failed": self.failed,
                "reason": self.reason, "reran_finished": self.reran_finished}


@dataclass
class StageInfo:
    stage_id: int
    attempt: int = 0
    name: str = ""
    #: the stage's partitions (tasks of its first attempt); a retry's own count is in ``attempts``
    num_tasks: int = 0
    submission_time: int | None = None
    completion_time: int | None = None
    failed: bool = False
    #: per task index (successful attempt of the latest stage attempt): shuffle bytes read
    #: (local + remote) and records read, -1 where no successful task was seen
    shuffle_bytes_read: array | None = None
    shuffle_records_read: array | None = None
    #: per task index: duration (ms) and task id of the successful attempt, -1 where none was seen
    task_ms: array | None = None
    task_ids: array | None = None
    #: per partition: the stage attempt of its last successful task (-1 none)
    task_attempts: array | None = None
    #: every attempt the log shows, first first (one entry when the stage ran once)
    attempts: list[StageAttempt] = field(default_factory=list)

    @property
    def retried(self) -> bool:
        return len(self.attempts) > 1

    @property
    def full_retry(self) -> bool:
        """A later attempt re-ran partitions an earlier one had finished: Spark retried the stage
        in full (its input changed: a shuffle checksum mismatch, 4.1+, or a re-run of a map stage
        with indeterminate output), not only the partitions that were missing."""
        return any(a.reran_finished for a in self.attempts[1:])

    @property
    def duration_ms(self) -> int | None:
        if self.submission_time is None or self.completion_time is None:
            return None
        return self.completion_time - self.submission_time

    def task_time(self) -> TaskTime | None:
        """The stage's task durations summarized (None when no task ended successfully)."""
        if self.task_ms is None:
            return None
        return TaskTime.of(self.stage_id, self.attempt, self.task_ms, self.task_ids or (), self.duration_ms,
                           self.shuffle_bytes_read)

    def to_dict(self, tasks: bool = False) -> dict[str, Any]:
        d: dict[str, Any] = {
            "stage_id": self.stage_id, "attempt": self.attempt, "name": self.name,
            "num_tasks": self.num_tasks, "submission_time": self.submission_time,
            "completion_time": self.completion_time, "failed": self.failed,
            "attempts": [a.to_dict() for a in self.attempts], "full_retry": self.full_retry,
        }
        if tasks:  # (one value a partition: the reader's arrays stop at the last one seen, -1 after)
            d["task_shuffle_bytes_read"] = _per_task(self.shuffle_bytes_read, self.num_tasks)
            d["task_shuffle_records_read"] = _per_task(self.shuffle_records_read, self.num_tasks)
            d["task_duration_ms"] = _per_task(self.task_ms, self.num_tasks)
        return d


def _per_task(values: "array | None", n: int) -> list[int] | None:
    """``values`` as a list of ``n`` (-1 for a partition past its end), or None."""
    if values is None:
        return None
    out = list(values)
    out.extend([-1] * (n - len(out)))
    return out


@dataclass
class ShuffleRead:
    """One adaptive shuffle read (``AQEShuffleRead`` / ``CustomShuffleReader``) of a plan."""

    node_id: int | None
    name: str
    description: str
    #: Spark's "number of partitions" metric of the read (None where Spark has none: 3.0.x)
    num_partitions: int | None = None
    #: where Spark has no such metric, the count we derive, and from what ("partition sizes",
    #: "reduce tasks"); kept apart so Spark's field keeps Spark's meaning (History Server parity)
    derived_partitions: int | None = None
    derived_partitions_from: str | None = None
    #: post-AQE size of each output partition, in order (bytes)
    partition_sizes: list[int] | None = None
    #: "driver_metrics" (3.1+: the "partition data size" driver updates, i.e. what AQE used) or
    #: "task_shuffle_read" (3.0.x: bytes the reduce tasks actually read) or None
    partition_sizes_source: str | None = None
    coalesced_partitions: int | None = None
    skewed_partitions: int | None = None
    skew_splits: int | None = None
    empty_partitions: int | None = None
    local: bool = False
    #: bytes the reduce tasks read from this read's exchange, per output partition (task index)
    bytes_read: list[int] | None = None
    records_read: list[int] | None = None
    stage_id: int | None = None
    notes: list[str] = field(default_factory=list)

    @property
    def partitions(self) -> int | None:
        """Partitions the read produced: Spark's metric, else the derived count."""
        return self.num_partitions if self.num_partitions is not None else self.derived_partitions

    @property
    def coalesced(self) -> bool:
        return "coalesced" in self.description

    @property
    def skewed(self) -> bool:
        return "skew" in self.description

    def to_dict(self) -> dict[str, Any]:
        return {
            "node_id": self.node_id, "name": self.name, "description": self.description,
            "num_partitions": self.num_partitions, "num_partitions_derived": self.derived_partitions,
            "num_partitions_derived_from": self.derived_partitions_from, "partition_sizes": self.partition_sizes,
            "partition_sizes_source": self.partition_sizes_source,
            "coalesced_partitions": self.coalesced_partitions, "skewed_partitions": self.skewed_partitions,
            "skew_splits": self.skew_splits, "empty_partitions": self.empty_partitions, "local": self.local,
            "bytes_read": self.bytes_read, "records_read": self.records_read, "stage_id": self.stage_id,
            "notes": list(self.notes),
        }


#: plans built most recently, shared by every log in the process: a view that reads one
#: execution's final plan several times builds it once, and a pass over every execution of a
#: big log keeps no more than this many built
_BUILT_MAX = 32
#: ... and no more than this many bytes of their JSON (a hostile log's plan strings can be tens
#: of MB each, and this cache outlives the source that built them)
_BUILT_MAX_BYTES = 64 << 20
_built_bytes = 0
_built_plans: "OrderedDict[LazyPlan, PlanNode]" = OrderedDict()
_built_lock = threading.Lock()


class LazyPlan:
    """A plan version kept as its compressed ``sparkPlanInfo`` JSON and built when asked: a log
    holds several versions of every execution (the final one too) and views read them one
    execution at a time. ``adaptive``: an ``AdaptiveSparkPlan`` node is in it; ``size_accs``:
    the "partition data size" accumulators of its shuffle reads (what the reader looks for in
    earlier versions). The last plans built are kept (:data:`_BUILT_MAX`), so a caller gets the
    same object while it is recent: treat a built plan as read-only."""

    __slots__ = ("raw", "build", "adaptive", "size_accs", "size")

    def __init__(self, raw: bytes, build: "Callable[[bytes], PlanNode]", adaptive: bool,
                 size_accs: frozenset[int], size: int = 0) -> None:
        self.raw, self.build, self.adaptive, self.size_accs = raw, build, adaptive, size_accs
        self.size = size  # bytes of the JSON ``raw`` packs: about what its built tree's strings take

    def __reduce__(self):  # (pickled to a big log's spill file: the fast form for a slotted class)
        return LazyPlan, (self.raw, self.build, self.adaptive, self.size_accs, self.size)

    def plan(self) -> PlanNode:
        with _built_lock:
            hit = _built_plans.get(self)
            if hit is not None:
                _built_plans.move_to_end(self)
                return hit
        built = self.build(self.raw)
        global _built_bytes
        with _built_lock:
            if self not in _built_plans:
                _built_bytes += self.size
            _built_plans[self] = built
            while len(_built_plans) > 1 and (len(_built_plans) > _BUILT_MAX or _built_bytes > _BUILT_MAX_BYTES):
                _built_bytes -= _built_plans.popitem(last=False)[0].size
        return built


def _built(src: "PlanNode | LazyPlan | None") -> PlanNode | None:
    return src.plan() if isinstance(src, LazyPlan) else src


@dataclass
class SQLExecution:
    id: int
    description: str | None = None
    root_execution_id: int | None = None
    query_id: str | None = None
    submission_time: int | None = None
    completion_time: int | None = None
    error_message: str | None = None
    status: str = "RUNNING"
    job_ids: list[int] = field(default_factory=list)
    job_status: dict[int, str] = field(default_factory=dict)
    stage_ids: list[int] = field(default_factory=list)
    #: the SQLExecutionStart tree, and every SQLAdaptiveExecutionUpdate tree in log order; the
    #: reader keeps all but the final one unbuilt (:class:`LazyPlan`): read them through
    #: :attr:`initial_plan`, :attr:`plan_versions` and :attr:`final_plan`
    initial_source: "PlanNode | LazyPlan | None" = field(default=None, repr=False)
    version_sources: "list[PlanNode | LazyPlan]" = field(default_factory=list, repr=False)
    #: accumulator id -> summary (a read-only mapping: metrics.summarize), as the UI shows them
    metric_values: dict[int, Mapping[str, Any]] = field(default_factory=dict)
    shuffle_reads: list[ShuffleRead] = field(default_factory=list)
    #: reads that posted sizes but are not in the final plan (earlier plan versions, AQE subqueries)
    other_shuffle_reads: list[ShuffleRead] = field(default_factory=list)
    #: shuffle exchanges of the final plan that no adaptive read reads: AQE left them as planned
    #: (``name`` "Exchange", sizes the bytes each reduce task read: task i reads reducer i)
    planned_shuffles: list[ShuffleRead] = field(default_factory=list)
    modified_configs: dict[str, str] = field(default_factory=dict)
    job_properties: dict[str, str] = field(default_factory=dict)
    #: one sentence per stage of the execution that ran more than once (a fetch-failure retry, a
    #: full retry): each is counted once (:mod:`aqe_core.readers.eventlog.stages`)
    stage_retries: list[str] = field(default_factory=list)
    #: effective AQE configuration (AQEConf) or None when it could not be built
    aqe_conf: Any = None
    conf_layers: list[dict[str, str]] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    #: Spark's physicalPlanDescription of the latest plan version, compressed by the reader (a few
    #: KB of text per execution that no view reads on every load; read it with
    #: :func:`aqe_core.readers.eventlog.planinfo.physical_plan_description`)
    physical_plan_z: bytes | None = field(default=None, repr=False)

    @property
    def initial_plan(self) -> PlanNode | None:
        return _built(self.initial_source)

    @property
    def plan_versions(self) -> list[PlanNode]:
        """Every adaptive plan version, built (each call builds the ones kept unbuilt)."""
        return [p for p in (_built(x) for x in self.version_sources) if p is not None]

    @property
    def num_plan_versions(self) -> int:
        return len(self.version_sources)

    @property
    def final_plan(self) -> PlanNode | None:
        return _built(self.version_sources[-1]) if self.version_sources else self.initial_plan

    @property
    def adaptive(self) -> bool:
        src = self.initial_source if self.initial_source is not None else (
            self.version_sources[-1] if self.version_sources else None)
        if isinstance(src, LazyPlan):
            return src.adaptive
        return src is not None and any(n.name == "AdaptiveSparkPlan" for n in src.walk())

    @property
    def duration(self) -> int | None:
        if self.submission_time is None or self.completion_time is None:
            return None
        return self.completion_time - self.submission_time

    def plan_with_values(self, plan: PlanNode | None, formatted: dict | None = None) -> PlanNode | None:
        """A copy of ``plan`` whose metrics carry the aggregated values (``formatted``: see
        :meth:`plan_dict_with_values`), made node by node: the tree that
        ``PlanNode.from_dict(plan_dict_with_values(...))`` gives, without the dicts."""
        if plan is None:
            return None
        put = self._value_setter(formatted)
        return plan.copied(lambda n: PlanNode(n.id, n.name, n.description, put([dict(m) for m in n.metrics])))

    def plan_dict_with_values(self, plan: PlanNode | None, formatted: dict | None = None) -> dict[str, Any] | None:
        """``plan.to_dict()`` with the aggregated values in its metrics (what JSON output writes,
        without building the copy as nodes). Pass the same ``formatted`` dict for every version
        of this execution: a metric is in most of them, and its UI string is formatted once."""
        if plan is None:
            return None
        put = self._value_setter(formatted)
        return plan.to_dict(lambda ms: put([dict(m) for m in ms]))

    def _value_setter(self, formatted: dict | None) -> Callable[[list[dict[str, Any]]], list[dict[str, Any]]]:
        """What puts each metric's aggregated value into a node's own copy of its metrics (in
        place, and returned), an accumulator's UI strings formatted once in ``formatted``."""
        values = self.metric_values
        done = {} if formatted is None else formatted

        def put(metrics: list[dict[str, Any]]) -> list[dict[str, Any]]:
            for m in metrics:
                acc = m.get("accumulator_id")
                if acc is None:  # (no value is kept under None)
                    continue
                f = done.get(acc)
                if f is None:
                    v = values.get(acc)
                    if v is None:
                        continue
                    f = done[acc] = dict(v)
                m.update(f)
            return metrics
        return put


@dataclass
class EventLog:
    path: str
    application: Application = field(default_factory=Application)
    #: a big log's are kept in a spill file and read one at a time (:class:`~aqe_core.readers.eventlog.spill_file.SpillMap`):
    #: go through them with :meth:`executions_by_id`, and treat one read as read-only
    executions: MutableMapping[int, SQLExecution] = field(default_factory=dict)
    stages: MutableMapping[int, StageInfo] = field(default_factory=dict)
    spark_properties: dict[str, str] = field(default_factory=dict)
    complete: bool = False
    layout: str = "single"
    codec: str | None = None
    parts: list[str] = field(default_factory=list)
    bytes_read: int = 0
    bytes_decoded: int = 0
    events: int = 0
    warnings: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    #: event types the application left out of its log (``spark.eventLog.excludedPatterns``, 4.1+)
    #: that this reader uses -> what is therefore not known (:mod:`aqe_core.readers.eventlog.excluded`)
    excluded_events: dict[str, str] = field(default_factory=dict)
    #: why events are missing from what was read (a cut or damaged part, a cut last line, no
    #: ApplicationEnd): each is also in ``warnings`` or ``notes``; the app says so on every page
    cut: list[str] = field(default_factory=list)
    event_counts: dict[str, int] = field(default_factory=dict)
    #: SQL execution id -> the AQE Lens listener's payload (JSON text) as logged, packed:
    #: per-map sizes make it the largest thing a listener log keeps, and it is read once, for
    #: the views (``readers.eventlog.listener_events.listener_capture``)
    listener_payloads: MutableMapping[int, bytes] = field(default_factory=dict)

    @property
    def spark_version(self) -> str | None:
        return self.application.spark_version

    def executions_by_id(self) -> Iterator[SQLExecution]:
        """Every execution in id order, read one at a time (not all at once: a big log's are
        unpacked from its spill file as they are asked for)."""
        for eid in sorted(self.executions):
            yield self.executions[eid]
