"""Recording what AQE saw and decided, from a live SparkSession.

After an action, ``df._jdf.queryExecution().executedPlan()`` is the ``AdaptiveSparkPlanExec``
that ran. :class:`Recorder` walks it through py4j (final plan, initial plan) and reads, for
every shuffle query stage, the map output statistics and the per-map block sizes from the
driver's ``MapOutputTrackerMaster`` (see :mod:`aqe_core.capture.jvm` for how, without
touching ``SparkEnv``'s methods), and for every adaptive shuffle read the partition specs.

The intermediate plans are what AQE posts to the SQL UI (``SparkListenerSQLAdaptiveExecution
Update``); a listener bus cannot be reached from Python without callbacks, so
:class:`EventLogTap` attaches Spark's own ``EventLoggingListener`` (uncompressed, in a temp
directory) to the running ``SparkContext`` and reads those events back.
"""
from __future__ import annotations

import atexit
import json
import os
import re
import shutil
import tempfile
import threading
import time
from dataclasses import dataclass, field
from typing import Any, Iterable, Optional

from aqe_core.capture.jvm import DECOMPRESS_TABLE, Jvm, JvmError, parse_specs
from aqe_core.model.scala_text import split_top_level
from aqe_core.capture.model import (
    CapturedPlan,
    MapSizes,
    PlanUpdate,
    QueryCapture,
    ReadCapture,
    ShuffleCapture,
    SparkStageTiming,
    StageCapture,
)
from aqe_core.model.plan import PlanNode

#: Per-map sizes are stored for all reducers while maps x reducers stays under this; above
#: it, for the largest reducers (those a preset could call skewed) up to this many entries.
DEFAULT_MAP_SIZE_CAP = 2_000_000

JOIN_PREFIXES = ("SortMergeJoin", "ShuffledHashJoin", "BroadcastHashJoin", "BroadcastNestedLoopJoin",
                 "CartesianProduct")
READ_NAMES = ("AQEShuffleRead", "CustomShuffleReader")
STAGE_NAMES = ("ShuffleQueryStage", "BroadcastQueryStage", "TableCacheQueryStage", "ResultQueryStage")
#: nodes whose simpleString is their name / whose child requirement is always Unspecified
_NO_DESC = ("WholeStageCodegen", "InputAdapter")
_NO_REQ = ("WholeStageCodegen", "InputAdapter", "AdaptiveSparkPlan", "Exchange", "ShuffleQueryStage",
           "BroadcastQueryStage", "ResultQueryStage", "TableCacheQueryStage", "AQEShuffleRead", "CustomShuffleReader",
           "ReusedExchange", "BroadcastExchange", "ColumnarToRow")


# ----------------------------------------------------------------------------------------
# Event log tap


_SQL_START = "org.apache.spark.sql.execution.ui.SparkListenerSQLExecutionStart"
_SQL_UPDATE = "org.apache.spark.sql.execution.ui.SparkListenerSQLAdaptiveExecutionUpdate"
_SQL_END = "org.apache.spark.sql.execution.ui.SparkListenerSQLExecutionEnd"
_WANTED = (b"SparkListenerSQLExecutionStart", b"SparkListenerSQLAdaptiveExecutionUpdate",
           b"SparkListenerSQLExecutionEnd", b'"SparkListenerJobStart"', b'"SparkListenerStageCompleted"')


@dataclass
class _Execution:
    execution_id: int
    description: str = ""
    start_ms: Optional[int] = None
    end_ms: Optional[int] = None
    plans: list[tuple[str, dict]] = field(default_factory=list)  # (event, sparkPlanInfo)
    jobs: list[int] = field(default_factory=list)
    stage_ids: list[int] = field(default_factory=list)


class EventLogTap:
    """Spark's ``EventLoggingListener`` attached at run time, read back incrementally.

    Works on any running SparkContext (ours or a user's) from Spark 3.0 to 4.3. Only SQL
    execution events, job starts and stage completions are parsed (a substring test skips the
    rest). ``close()`` detaches the listener and removes the directory.
    """

    def __init__(self, spark: Any, directory: Optional[str] = None) -> None:
        self.jvm = Jvm(spark)
        self.dir = directory or tempfile.mkdtemp(prefix="aqe-lens-events-")
        self._own_dir = directory is None
        self._lock = threading.Lock()
        self._offset = 0
        self._partial = b""
        self.executions: dict[int, _Execution] = {}
        self.stages: dict[int, SparkStageTiming] = {}
        self._path: Optional[str] = None
        self.listener = None
        self.error: Optional[str] = None
        if self._own_dir:  # a process that never calls close() still leaves no temp files
            atexit.register(shutil.rmtree, self.dir, True)
        try:
            self._attach()
        except Exception as e:  # noqa: BLE001
            self.error = f"could not attach an event logging listener: {str(e).splitlines()[0][:300]}"

    def _attach(self) -> None:
        jvm, jsc = self.jvm.jvm, self.jvm.jsc
        conf = jsc.conf().clone()
        conf.set("spark.eventLog.compress", "false")
        conf.set("spark.eventLog.rolling.enabled", "false")
        conf.set("spark.eventLog.overwrite", "true")
        conf.set("spark.eventLog.logStageExecutorMetrics", "false")
        conf.set("spark.eventLog.includeTaskMetricsAccumulators", "false")  # 4.x: smaller task events
        app_id = f"{jsc.applicationId()}-aqelens-{os.getpid()}-{int(time.time() * 1000)}"
        uri = jvm.java.net.URI("file://" + os.path.abspath(self.dir))
        listener = jvm.org.apache.spark.scheduler.EventLoggingListener(
            app_id, jvm.scala.Option.empty(), uri, conf, jsc.hadoopConfiguration())
        listener.start()
        jsc.addSparkListener(listener)
        self.listener = listener
        self._path = os.path.join(self.dir, app_id + ".inprogress")

    @property
    def available(self) -> bool:
        return self.listener is not None

    def poll(self) -> None:
        """Parse whatever the listener has written since the last call."""
        if not self._path:
            return
        with self._lock:
            try:
                with open(self._path, "rb") as fh:
                    fh.seek(self._offset)
                    data = fh.read()
            except OSError:
                return
            if not data:
                return
            self._offset += len(data)
            data = self._partial + data
            lines = data.split(b"\n")
            self._partial = lines.pop()  # incomplete last line, if any
            for line in lines:
                if line and any(w in line for w in _WANTED):
                    try:
                        self._on_event(json.loads(line))
                    except (ValueError, KeyError, TypeError):
                        continue

    def _on_event(self, ev: dict) -> None:
        kind = ev.get("Event")
        if kind == _SQL_START:
            ex = self.executions.setdefault(int(ev["executionId"]), _Execution(int(ev["executionId"])))
            ex.description = str(ev.get("description") or "")
            ex.start_ms = ev.get("time")
            if isinstance(ev.get("sparkPlanInfo"), dict):
                ex.plans.append(("start", ev["sparkPlanInfo"]))
        elif kind == _SQL_UPDATE:
            ex = self.executions.setdefault(int(ev["executionId"]), _Execution(int(ev["executionId"])))
            if isinstance(ev.get("sparkPlanInfo"), dict):
                ex.plans.append(("update", ev["sparkPlanInfo"]))
        elif kind == _SQL_END:
            ex = self.executions.setdefault(int(ev["executionId"]), _Execution(int(ev["executionId"])))
            ex.end_ms = ev.get("time")
        elif kind == "SparkListenerJobStart":
            props = ev.get("Properties") or {}
            eid = props.get("spark.sql.execution.id")
            if eid is not None:
                ex = self.executions.setdefault(int(eid), _Execution(int(eid)))
                ex.jobs.append(int(ev.get("Job ID", -1)))
                ex.stage_ids.extend(int(s) for s in ev.get("Stage IDs") or [])
        elif kind == "SparkListenerStageCompleted":
            info = ev.get("Stage Info") or {}
            sid = int(info.get("Stage ID", -1))
            self.stages[sid] = SparkStageTiming(sid, str(info.get("Stage Name", "")), int(info.get("Number of Tasks", 0)),
                                                info.get("Submission Time"), info.get("Completion Time"),
                                                bool(info.get("Failure Reason")))

    def executions_for(self, description: str) -> list[_Execution]:
        return [e for e in sorted(self.executions.values(), key=lambda e: e.execution_id) if e.description == description]

    def wait_for_end(self, description: str, timeout: float = 15.0) -> list[_Execution]:
        """Executions whose description is ``description``, once all of them have ended."""
        deadline = time.monotonic() + timeout
        delay = 0.02
        while True:
            self.poll()
            exs = self.executions_for(description)
            if exs and all(e.end_ms is not None for e in exs):
                return exs
            if time.monotonic() > deadline:
                return exs
            time.sleep(delay)
            delay = min(delay * 1.5, 0.25)

    def matching(self, exchange_ids: set[str], timeout: float = 10.0) -> list[_Execution]:
        """The ended execution whose plans share the most exchange ids (``[plan_id=N]``,
        ``[id=#N]``) with a captured plan: how a user program's query finds its events."""
        if not exchange_ids:
            return []
        deadline = time.monotonic() + timeout
        while True:
            self.poll()
            best, score = None, 0
            for e in self.executions.values():
                if e.end_ms is None or not e.plans:
                    continue
                text = json.dumps(e.plans[-1][1])
                n = sum(1 for x in exchange_ids if x in text)
                if n > score:
                    best, score = e, n
            if best is not None or time.monotonic() > deadline:
                return [best] if best is not None else []
            time.sleep(0.1)

    def forget(self, executions: Iterable[_Execution]) -> None:
        with self._lock:
            for e in executions:
                self.executions.pop(e.execution_id, None)

    def close(self) -> None:
        if self.listener is not None:
            try:
                self.jvm.jsc.removeSparkListener(self.listener)
                self.listener.stop()
            except Exception:  # noqa: BLE001
                pass
            self.listener = None
        if self._own_dir:
            shutil.rmtree(self.dir, ignore_errors=True)


# ----------------------------------------------------------------------------------------
# Plan walking


@dataclass
class _Walk:
    plan: CapturedPlan
    stage_objs: list[tuple[int, Any]] = field(default_factory=list)  # (node index, ShuffleQueryStageExec ...)
    read_objs: list[tuple[int, Any, Optional[int]]] = field(default_factory=list)  # (node index, read, child stage node)
    adaptive_objs: list[tuple[int, Any]] = field(default_factory=list)  # (node index, AdaptiveSparkPlanExec)


_EXCHANGE_ID = re.compile(r"\[(?:plan_id=\d+|id=#\d+)\]")


def _exchange_ids(root: PlanNode) -> set[str]:
    return {m.group(0) for n in root.walk() for m in _EXCHANGE_ID.finditer(n.description)}


def _big(x: Any) -> int:
    """A Scala ``BigInt`` (py4j may already have turned it into an int)."""
    return x if isinstance(x, int) else int(str(x.toString()))


class Recorder:
    """Turns executed DataFrames into :class:`QueryCapture` records."""

    def __init__(self, spark: Any, *, tap: Optional[EventLogTap] = None, map_size_cap: int = DEFAULT_MAP_SIZE_CAP,
                 max_fields: int = 25) -> None:
        self.spark = spark
        self.j = Jvm(spark)
        self.tap = tap
        self.map_size_cap = map_size_cap
        self.max_fields = max_fields
        self.version = spark.version
        self._vt = tuple(int(x) for x in str(spark.version).split("-")[0].split(".")[:2])

    # -- public ------------------------------------------------------------------------
    def capture(self, df: Any, *, index: int = 0, label: str = "", description: Optional[str] = None,
                sql: Optional[str] = None, preset: Optional[str] = None, conf: Optional[dict[str, str]] = None,
                duration_ms: Optional[float] = None, row_count: Optional[int] = None) -> QueryCapture:
        """Record an already-executed DataFrame. ``description`` is the SQL execution description
        (job description) the action ran under, to find its plan updates in the event log."""
        session = getattr(df, "sparkSession", None) or self.spark
        return self.capture_execution(df._jdf.queryExecution(), session, index=index, label=label,
                                      description=description, sql=sql, preset=preset, conf=conf,
                                      duration_ms=duration_ms, row_count=row_count)

    def capture_execution(self, qe: Any, jsession: Any = None, *, index: int = 0, label: str = "",
                          description: Optional[str] = None, sql: Optional[str] = None, preset: Optional[str] = None,
                          conf: Optional[dict[str, str]] = None, duration_ms: Optional[float] = None,
                          row_count: Optional[int] = None, match_events: bool = False) -> QueryCapture:
        """Record an executed ``QueryExecution`` (JVM object). Its plan updates are found in the
        event log by ``description``, or, with ``match_events``, by the exchange ids its plan
        shares with an execution's plans (for queries a user's program ran)."""
        t0 = time.perf_counter()
        executed = qe.executedPlan()
        if conf is None:
            if jsession is None:
                try:
                    jsession = qe.sparkSession()
                except Exception:  # noqa: BLE001
                    jsession = self.spark._jsparkSession
            conf = self.sql_conf(jsession)
        q = QueryCapture(index=index, label=label, conf=conf,
                         default_parallelism=int(self.spark.sparkContext.defaultParallelism), adaptive=False,
                         sql=sql, preset=preset, duration_ms=duration_ms, row_count=row_count)
        final = self._walk(executed)
        q.final_plan = final.plan
        q.adaptive = bool(final.adaptive_objs)
        top = None
        if q.adaptive:
            top_idx, top = final.adaptive_objs[0]
            if not final.plan.info[top_idx].get("is_final", True):
                q.notes.append("the adaptive plan is not final: the query did not run to completion")
            q.required_distribution = self._required_distribution(top)
        self._stages_and_reads(q, final)
        if self.tap is not None and self.tap.available and (description is not None or match_events):
            if description is not None:
                exs = self.tap.wait_for_end(description)
            else:
                exs = self.tap.matching(_exchange_ids(q.final_plan.root))
            self._plan_updates(q, exs)
            self.tap.forget(exs)
        else:
            q.notes.append("intermediate plans not recorded (no event log tap)")
        if top is not None:
            start = next((u for u in q.plan_updates if u.event == "start" and u.plan.name == "AdaptiveSparkPlan"
                          and u.plan.children), None)
            if start is not None:
                # the plan AQE started from, as posted at the execution's start (no py4j walk)
                q.initial_plan = CapturedPlan(start.plan.children[0], [])
            else:
                try:
                    initial = self.j.member(top, "initialPlan")
                    q.initial_plan = self._walk(initial, light=True).plan
                except Exception as e:  # noqa: BLE001
                    q.notes.append(f"initial plan not available: {str(e).splitlines()[0][:200]}")
        q.capture_ms = (time.perf_counter() - t0) * 1000.0
        return q

    def sql_conf(self, session: Any) -> dict[str, str]:
        """The ``spark.sql.*`` settings explicitly in force in ``session`` (a PySpark session or
        its JVM ``SparkSession``); the others are the release's defaults."""
        try:
            from py4j.java_gateway import JavaObject

            jsession = session if isinstance(session, JavaObject) else session._jsparkSession
            m = jsession.sessionState().conf().getAllConfs()
        except Exception:  # noqa: BLE001
            return {}
        out: dict[str, str] = {}
        try:  # one round trip: entries print as "(key,value)" (Scala 2.13) or "key -> value" (2.12)
            for item in str(m.mkString("\u0001")).split("\u0001"):
                if " -> " in item and not item.startswith("("):
                    k, v = item.split(" -> ", 1)
                    out[k] = v
                elif item.startswith("(") and item.endswith(")") and "," in item:
                    k, v = item[1:-1].split(",", 1)
                    out[k] = v
            if not out:
                raise ValueError("unparsed")
        except Exception:  # noqa: BLE001
            jm = self.j.jvm.scala.collection.JavaConverters.mapAsJavaMap(m)
            out = {str(k): str(v) for k, v in dict(jm).items()}
        return {k: v for k, v in out.items() if k.startswith("spark.sql.")}

    # -- walking -----------------------------------------------------------------------
    def _walk(self, root_obj: Any, *, light: bool = False) -> _Walk:
        """Pre-order walk through py4j. ``light`` (the initial plan): names, descriptions and
        join facts only, no required distributions."""
        nodes: list[PlanNode] = []
        infos: list[dict[str, Any]] = []
        walk = _Walk(CapturedPlan(PlanNode(None, "?"), infos))
        # iterative pre-order: (java node, parent PlanNode)
        stack: list[tuple[Any, Optional[PlanNode]]] = [(root_obj, None)]
        root: Optional[PlanNode] = None
        while stack:
            obj, parent = stack.pop()
            idx = len(nodes)
            name = str(obj.nodeName())
            if name.startswith(_NO_DESC):
                desc = name  # codegen wrappers: simpleString is the node name
            else:
                try:
                    desc = str(obj.simpleString(self.max_fields))
                except Exception:  # noqa: BLE001
                    desc = str(obj.simpleString())
            node = PlanNode(None, name, desc)
            info: dict[str, Any] = {}
            nodes.append(node)
            infos.append(info)
            if parent is None:
                root = node
            else:
                parent.children.append(node)
            kids = self._children(obj, name, desc)
            if kids and not light and not name.startswith(_NO_REQ):
                try:
                    info["req"] = split_top_level(str(obj.requiredChildDistribution().toString()))
                except Exception:  # noqa: BLE001
                    pass
            self._annotate(obj, name, desc, info, idx, walk)
            for k in reversed(kids):
                stack.append((k, node))
        walk.plan = CapturedPlan(root if root is not None else PlanNode(None, "?"), infos)
        # link reads to the stage node just below them
        index_of = {id(n): i for i, n in enumerate(nodes)}
        reads = []
        for ri, obj, _ in walk.read_objs:
            ch = nodes[ri].children
            reads.append((ri, obj, index_of[id(ch[0])] if ch else None))
        walk.read_objs = reads
        return walk

    def _children(self, obj: Any, name: str, desc: str) -> list[Any]:
        if name == "AdaptiveSparkPlan":
            try:
                return [obj.executedPlan()]
            except Exception:  # noqa: BLE001
                return [self.j.field(obj, obj.getClass().getName(), "currentPhysicalPlan")]
        if name in STAGE_NAMES:
            return [obj.plan()]
        kids = Jvm.seq(obj.children())
        if "subquery" in desc.lower() or "dynamicpruning" in desc.lower():
            try:  # SparkPlanInfo lists a node's subquery plans after its children
                kids += Jvm.seq(obj.subqueries())
            except Exception:  # noqa: BLE001
                pass
        return kids

    def _annotate(self, obj: Any, name: str, desc: str, info: dict[str, Any], idx: int, walk: _Walk) -> None:
        if name == "AdaptiveSparkPlan":
            walk.adaptive_objs.append((idx, obj))
            info["is_final"] = "isFinalPlan=true" in desc
            try:
                info["is_subquery"] = bool(obj.isSubquery())
            except Exception:  # noqa: BLE001
                pass
        elif name in STAGE_NAMES:
            try:
                info["stage_id"] = int(obj.id())
            except Exception:  # noqa: BLE001
                pass
            if name in ("ShuffleQueryStage", "BroadcastQueryStage"):
                walk.stage_objs.append((idx, obj))
        elif name in READ_NAMES:
            walk.read_objs.append((idx, obj, None))
        elif name.startswith(JOIN_PREFIXES):
            info["skew"] = "skew=true" in name
            for key, meth in (("join_type", "joinType"), ("left_keys", "leftKeys"), ("right_keys", "rightKeys"),
                              ("build_side", "buildSide")):
                try:
                    info[key] = str(getattr(obj, meth)().toString())
                except Exception:  # noqa: BLE001
                    pass
            if name.startswith("CartesianProduct"):
                info["join_type"] = "Cross"
        elif name == "Exchange":
            self._exchange_info(obj, info)
        elif name == "Union":
            try:
                info["partitioning"] = str(obj.outputPartitioning().toString())
            except Exception:  # noqa: BLE001
                pass

    def _exchange_info(self, ex: Any, info: dict[str, Any]) -> None:
        v = self._vt
        if v >= (3, 1):
            try:
                info["origin"] = str(ex.shuffleOrigin().toString())
            except Exception:  # noqa: BLE001
                pass
        else:
            try:
                info["can_change_num_partitions"] = bool(ex.canChangeNumPartitions())
            except Exception:  # noqa: BLE001
                pass
        try:
            part = ex.outputPartitioning()
            info["partitioning"] = str(part.toString())
            info["num_partitions"] = int(part.numPartitions())
        except Exception:  # noqa: BLE001
            pass
        if v >= (3, 5):
            try:
                adv = ex.advisoryPartitionSize()
                if adv.isDefined():
                    info["advisory_partition_size"] = int(str(adv.get()))
            except Exception:  # noqa: BLE001
                pass

    def _required_distribution(self, adaptive: Any) -> Optional[str]:
        try:
            rd = self.j.field(adaptive, "org.apache.spark.sql.execution.adaptive.AdaptiveSparkPlanExec",
                              "requiredDistribution")
        except Exception:  # noqa: BLE001
            return None
        if rd is None:
            return None
        try:
            return str(rd.get().toString()) if rd.isDefined() else "None"
        except Exception:  # noqa: BLE001
            return str(rd.toString())

    # -- statistics --------------------------------------------------------------------
    def _stages_and_reads(self, q: QueryCapture, walk: _Walk) -> None:
        infos = walk.plan.info
        seen_shuffles: dict[int, ShuffleCapture] = {}
        stage_by_node: dict[int, StageCapture] = {}
        for idx, obj in walk.stage_objs:
            info = infos[idx]
            kind = "shuffle"
            try:
                shuffle = obj.shuffle()
            except Exception:  # noqa: BLE001
                shuffle = None
                kind = "broadcast"
            st = StageCapture(stage_id=int(info.get("stage_id", -1)), kind=kind, node=idx)
            stage_by_node[idx] = st
            q.stages.append(st)
            # the stage's plan node is its only child: a ReusedExchange means a reused stage
            child_index = idx + 1
            if child_index < len(infos):
                child_name = self._node_name(walk, child_index)
                st.reused = child_name == "ReusedExchange"
            self._runtime_stats(obj, st)
            if shuffle is None:
                continue
            self._exchange_info(shuffle, info)
            st.origin = info.get("origin")
            st.can_change_num_partitions = info.get("can_change_num_partitions")
            st.output_partitioning = info.get("partitioning")
            st.num_partitions = info.get("num_partitions")
            st.advisory_partition_size = info.get("advisory_partition_size")
            for k in ("origin", "can_change_num_partitions", "partitioning", "num_partitions", "advisory_partition_size"):
                info.pop(k, None)
            try:
                ms = Jvm.option(obj.mapStats())
            except Exception:  # noqa: BLE001
                ms = None
            if ms is not None:
                shuffle_id = int(ms.shuffleId())
            else:
                try:
                    shuffle_id = int(shuffle.shuffleDependency().shuffleId())
                except Exception:  # noqa: BLE001
                    shuffle_id = None
            st.shuffle_id = shuffle_id
            info["shuffle_id"] = shuffle_id
            try:
                st.num_maps = int(shuffle.numMappers() if self._vt >= (3, 2)
                                  else shuffle.shuffleDependency().rdd().getNumPartitions())
            except Exception:  # noqa: BLE001
                pass
            if shuffle_id is None or shuffle_id in seen_shuffles:
                continue
            b = self.j.long_array(ms.bytesByPartitionId()) if ms is not None else None
            n_red = len(b) if b is not None else (st.num_partitions or 0)
            sc = ShuffleCapture(shuffle_id, n_red, st.num_maps, b)
            if b is None:
                sc.map_sizes_note = "no map statistics: the shuffle's input had 0 partitions"
            elif (st.output_partitioning or "").startswith("SinglePartition"):
                sc.map_sizes_note = ("single-partition shuffle: AQE never splits or coalesces it, per-map sizes"
                                     " not recorded")
            else:
                self._map_sizes(sc)
            seen_shuffles[shuffle_id] = sc
            q.shuffles[shuffle_id] = sc
        for ridx, robj, child_idx in walk.read_objs:
            st = stage_by_node.get(child_idx) if child_idx is not None else None
            text = str(robj.partitionSpecs().toString())
            specs = parse_specs(text)
            try:
                n = int(robj.partitionSpecs().size())
                if n != len(specs):
                    q.notes.append(f"read at node {ridx}: parsed {len(specs)} of {n} partition specs")
            except Exception:  # noqa: BLE001
                pass
            node_desc = self._node_desc(walk, ridx)
            name = self._node_name(walk, ridx)
            short = node_desc[len(name):].strip() if node_desc.startswith(name) else node_desc
            q.reads.append(ReadCapture(ridx, st.stage_id if st else None, st.shuffle_id if st else None, short, specs))
            infos[ridx]["read"] = True

    def _node_name(self, walk: _Walk, idx: int) -> str:
        if not hasattr(walk, "_nodes"):
            walk._nodes = walk.plan.nodes()  # type: ignore[attr-defined]
        return walk._nodes[idx].name  # type: ignore[attr-defined]

    def _node_desc(self, walk: _Walk, idx: int) -> str:
        if not hasattr(walk, "_nodes"):
            walk._nodes = walk.plan.nodes()  # type: ignore[attr-defined]
        return walk._nodes[idx].description  # type: ignore[attr-defined]

    def _runtime_stats(self, stage: Any, st: StageCapture) -> None:
        try:
            stats = Jvm.option(stage.computeStats())
        except Exception:  # noqa: BLE001
            stats = None
        if stats is None:
            return
        try:
            st.size_in_bytes = _big(stats.sizeInBytes())
            rc = stats.rowCount()
            if rc.isDefined():
                st.row_count = _big(rc.get())
        except Exception:  # noqa: BLE001
            pass

    def _map_sizes(self, sc: ShuffleCapture) -> None:
        """``MapStatus.getSizeForBlock`` of every map for the reducers we keep."""
        b = sc.bytes_by_partition_id or []
        try:
            arr = self.j.map_statuses(sc.shuffle_id)
        except Exception as e:  # noqa: BLE001
            sc.map_sizes_note = f"map statuses not reachable: {str(e).splitlines()[0][:200]}"
            return
        if arr is None:
            sc.map_sizes_note = "the shuffle's map statuses were already unregistered"
            return
        n_maps = len(arr)
        n_red = len(b)
        sc.num_maps = sc.num_maps or n_maps
        if n_maps == 0 or n_red == 0:
            sc.map_sizes = MapSizes(n_maps, [[] for _ in range(n_red)] if n_maps == 0 else [], None, [], True)
            return
        if n_maps * n_red <= self.map_size_cap:
            reducers: Optional[list[int]] = None
            wanted = list(range(n_red))
        else:
            k = max(1, self.map_size_cap // n_maps)
            wanted = sorted(sorted(range(n_red), key=lambda r: (-b[r], r))[:k])
            reducers = wanted
            sc.map_sizes_note = (f"{n_maps} maps x {n_red} reducers exceeds the cap of {self.map_size_cap} sizes:"
                                 f" per-map sizes kept for the {len(wanted)} largest reducers")
        cols: list[Optional[list[int]]] = []  # per map: sizes for `wanted`
        classes: set[str] = set()
        try:
            f = self.j.field_handle("org.apache.spark.scheduler.CompressedMapStatus", "compressedSizes")
        except JvmError:
            f = None
        for m in range(n_maps):
            ms = arr[m]
            if ms is None:
                cols.append(None)
                continue
            raw = None
            if f is not None:
                try:
                    raw = f.get(ms)
                except Exception:  # noqa: BLE001 - another MapStatus class
                    raw = None
            if isinstance(raw, (bytes, bytearray)) and len(raw) == n_red:
                classes.add("CompressedMapStatus")
                t = DECOMPRESS_TABLE
                cols.append([t[raw[r]] for r in wanted])
            else:
                cname = str(ms.getClass().getSimpleName())
                classes.add(cname)
                col = self._highly_compressed(ms, wanted) if cname == "HighlyCompressedMapStatus" else None
                cols.append(col if col is not None else [int(ms.getSizeForBlock(r)) for r in wanted])
        sizes = [[(c[k] if c is not None else -1) for c in cols] for k in range(len(wanted))]
        # bytesByPartitionId[r] == sum over maps of getSizeForBlock(r): check, and re-read
        # any reducer whose decoded sizes disagree (floating-point decode) straight from Spark
        consistent = True
        for k, r in enumerate(wanted):
            row = sizes[k]
            if -1 in row:
                continue
            if sum(row) != b[r]:
                row[:] = [int(arr[m].getSizeForBlock(r)) if cols[m] is not None else -1 for m in range(n_maps)]
                if sum(row) != b[r]:
                    consistent = False
        sc.map_sizes = MapSizes(n_maps, sizes, reducers, sorted(classes), consistent)
        if any(c is None for c in cols):
            sc.map_sizes_note = "some map statuses are missing (lost executor?): their sizes are -1"

    def _highly_compressed(self, ms: Any, wanted: list[int]) -> Optional[list[int]]:
        """``HighlyCompressedMapStatus.getSizeForBlock`` for many reducers in a few calls:
        0 for reducers in ``emptyBlocks``, ``decompressSize(hugeBlockSizes(r))`` for huge
        blocks, else ``avgSize`` (Spark's code, 3.0 - 4.3). None if the fields differ."""
        cls = "org.apache.spark.scheduler.HighlyCompressedMapStatus"
        try:
            avg = int(self.j.field(ms, cls, "avgSize"))
            empty_bitmap = self.j.field(ms, cls, "emptyBlocks")
            empty_ids = empty_bitmap.toArray()  # int[]
            n = len(empty_ids)
            empty: set[int] = set()
            if n:
                bb = self.j.jvm.java.nio.ByteBuffer.allocate(4 * n)
                bb.asIntBuffer().put(empty_ids)
                import struct as _struct

                empty = set(_struct.unpack(f">{n}i", bytes(bb.array())))
            huge_map = self.j.field(ms, cls, "hugeBlockSizes")
            huge: dict[int, int] = {}
            text = str(huge_map.toString())
            for k, b in re.findall(r"(-?\d+)\s*->\s*(-?\d+)", text):
                huge[int(k)] = DECOMPRESS_TABLE[int(b) & 0xFF]
            if len(huge) != int(huge_map.size()):
                return None
        except Exception:  # noqa: BLE001
            return None
        return [0 if r in empty else huge.get(r, avg) for r in wanted]

    # -- event log ---------------------------------------------------------------------
    def _plan_updates(self, q: QueryCapture, exs: list[Any]) -> None:
        try:
            from aqe_core.eventlog.planinfo import build_plan
        except Exception:  # noqa: BLE001
            q.notes.append("intermediate plans not decoded: aqe_core.eventlog.planinfo unavailable")
            return
        seq = 0
        for ex in exs:
            q.execution_ids.append(ex.execution_id)
            for event, info in ex.plans:
                root = build_plan(info)
                q.plan_updates.append(PlanUpdate(ex.execution_id, event, "isFinalPlan=true" in root.description, root, seq))
                seq += 1
            for sid in ex.stage_ids:
                t = self.tap.stages.get(sid) if self.tap else None
                if t is not None:
                    q.spark_stages.append(t)
        if not exs:
            q.notes.append("no SQL execution found in the event log for this query")
