"""Recording what AQE saw and decided, from a live SparkSession.

After an action, ``df._jdf.queryExecution().executedPlan()`` is the ``AdaptiveSparkPlanExec``
that ran. :class:`Recorder` walks it through py4j (final plan, initial plan) and reads, for
every shuffle query stage, the map output statistics and the per-map block sizes from the
driver's ``MapOutputTrackerMaster`` (see :mod:`aqe_core.live.jvm` for how, without
touching ``SparkEnv``'s methods), and for every adaptive shuffle read the partition specs.

The intermediate plans come from the event log tap (:mod:`aqe_core.live.event_tap`).
"""
from __future__ import annotations

import re
import time
from dataclasses import dataclass, field
from typing import Any, Optional

from aqe_core import config
from aqe_core.model.capture import (
    CapturedPlan,
    MapSizes,
    PlanUpdate,
    QueryCapture,
    ReadCapture,
    ShuffleCapture,
    StageCapture,
)
from aqe_core.live.event_tap import EventLogTap
from aqe_core.live.jvm import DECOMPRESS_TABLE, Jvm, JvmError, parse_specs
from aqe_core.model.plan import PlanNode
from aqe_core.model.scala_text import split_top_level

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
# Plan walking


#: unary operators whose size-only statistics scale the child's size by output row width
_ROW_WIDTH_NODES = ("Project", "Window", "HashAggregate", "ObjectHashAggregate", "SortAggregate")


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
                except Exception:  # noqa: BLE001 - py4j: no sparkSession() on this release
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
                except Exception as e:  # noqa: BLE001 - py4j: a note, the final plan is still recorded
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
        except Exception:  # noqa: BLE001 - py4j: no readable conf, an empty one
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
        except Exception:  # noqa: BLE001 - py4j/Scala text: fall back to the Java map
            jm = self.j.jvm.scala.collection.JavaConverters.mapAsJavaMap(m)
            out = {str(k): str(v) for k, v in dict(jm).items()}
        return {k: v for k, v in out.items() if k.startswith(config.SQL_PREFIX)}

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
                except Exception:  # noqa: BLE001 - py4j: before 3.0.1 simpleString takes no argument
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
                except Exception:  # noqa: BLE001 - py4j: an optional detail of the node
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
            except Exception:  # noqa: BLE001 - py4j: before 3.2 the plan is a private field
                return [self.j.field(obj, obj.getClass().getName(), "currentPhysicalPlan")]
        if name in STAGE_NAMES:
            return [obj.plan()]
        kids = Jvm.seq(obj.children())
        if "subquery" in desc.lower() or "dynamicpruning" in desc.lower():
            try:  # SparkPlanInfo lists a node's subquery plans after its children
                kids += Jvm.seq(obj.subqueries())
            except Exception:  # noqa: BLE001 - py4j: an optional detail of the node
                pass
        return kids

    def _annotate(self, obj: Any, name: str, desc: str, info: dict[str, Any], idx: int, walk: _Walk) -> None:
        if name == "AdaptiveSparkPlan":
            walk.adaptive_objs.append((idx, obj))
            info["is_final"] = "isFinalPlan=true" in desc
            try:
                info["is_subquery"] = bool(obj.isSubquery())
            except Exception:  # noqa: BLE001 - py4j: an optional detail of the node
                pass
        elif name in STAGE_NAMES:
            try:
                info["stage_id"] = int(obj.id())
            except Exception:  # noqa: BLE001 - py4j: an optional detail of the node
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
                except Exception:  # noqa: BLE001 - py4j: an optional detail of the node
                    pass
            if name.startswith("CartesianProduct"):
                info["join_type"] = "Cross"
        elif name == "Exchange":
            self._exchange_info(obj, info)
        elif name in _ROW_WIDTH_NODES:
            sizes = self._row_sizes(obj)
            if sizes is not None:
                info["row_sizes"] = sizes
        elif name == "Union":
            try:
                info["partitioning"] = str(obj.outputPartitioning().toString())
            except Exception:  # noqa: BLE001 - py4j: an optional detail of the node
                pass

    def _row_sizes(self, obj: Any) -> Optional[list[int]]:
        """``EstimationUtils.getSizePerRow`` of the node's output and of its child's output: the
        ratio Spark's size-only statistics scale a side's size by (``visitUnaryNode``)."""
        try:
            rows = [obj.output(), obj.child().output()]
        except Exception:  # noqa: BLE001 - py4j: no row sizes, no ratio
            return None
        try:
            eu = self.j.jvm.org.apache.spark.sql.catalyst.plans.logical.statsEstimation.EstimationUtils
            empty = getattr(eu, "getSizePerRow$default$2")()
            return [int(str(eu.getSizePerRow(r, empty))) for r in rows]
        except Exception:  # noqa: BLE001 - py4j: no EstimationUtils here, the default sizes below
            pass
        try:  # no attribute statistics: 8 bytes of row overhead plus each type's default size
            return [8 + sum(int(a.dataType().defaultSize()) for a in Jvm.seq(r)) for r in rows]
        except Exception:  # noqa: BLE001 - py4j: no row sizes, no ratio
            return None

    def _exchange_info(self, ex: Any, info: dict[str, Any]) -> None:
        v = self._vt
        if v >= (3, 1):
            try:
                info["origin"] = str(ex.shuffleOrigin().toString())
            except Exception:  # noqa: BLE001 - py4j: an optional detail of the node
                pass
        else:
            try:
                info["can_change_num_partitions"] = bool(ex.canChangeNumPartitions())
            except Exception:  # noqa: BLE001 - py4j: an optional detail of the node
                pass
        try:
            part = ex.outputPartitioning()
            info["partitioning"] = str(part.toString())
            info["num_partitions"] = int(part.numPartitions())
        except Exception:  # noqa: BLE001 - py4j: an optional detail of the node
            pass
        if v >= (3, 5):
            try:
                adv = ex.advisoryPartitionSize()
                if adv.isDefined():
                    info["advisory_partition_size"] = int(str(adv.get()))
            except Exception:  # noqa: BLE001 - py4j: an optional detail of the node
                pass

    def _required_distribution(self, adaptive: Any) -> Optional[str]:
        try:
            rd = self.j.field(adaptive, "org.apache.spark.sql.execution.adaptive.AdaptiveSparkPlanExec",
                              "requiredDistribution")
        except Exception:  # noqa: BLE001 - py4j: no such field on this release
            return None
        if rd is None:
            return None
        try:
            return str(rd.get().toString()) if rd.isDefined() else "None"
        except Exception:  # noqa: BLE001 - py4j: not an Option on this release
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
            except Exception:  # noqa: BLE001 - py4j: a broadcast stage has no shuffle()
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
            except Exception:  # noqa: BLE001 - py4j: no map statistics yet
                ms = None
            if ms is not None:
                shuffle_id = int(ms.shuffleId())
            else:
                try:
                    shuffle_id = int(shuffle.shuffleDependency().shuffleId())
                except Exception:  # noqa: BLE001 - py4j: no shuffle id to read
                    shuffle_id = None
            st.shuffle_id = shuffle_id
            info["shuffle_id"] = shuffle_id
            try:
                st.num_maps = int(shuffle.numMappers() if self._vt >= (3, 2)
                                  else shuffle.shuffleDependency().rdd().getNumPartitions())
            except Exception:  # noqa: BLE001 - py4j: an optional detail of the stage
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
            read_st = stage_by_node.get(child_idx) if child_idx is not None else None
            text = str(robj.partitionSpecs().toString())
            specs = parse_specs(text)
            try:
                n = int(robj.partitionSpecs().size())
                if n != len(specs):
                    q.notes.append(f"read at node {ridx}: parsed {len(specs)} of {n} partition specs")
            except Exception:  # noqa: BLE001 - py4j: the count check is optional
                pass
            node_desc = self._node_desc(walk, ridx)
            name = self._node_name(walk, ridx)
            short = node_desc[len(name):].strip() if node_desc.startswith(name) else node_desc
            q.reads.append(ReadCapture(ridx, read_st.stage_id if read_st else None, read_st.shuffle_id if read_st else None,
                                       short, specs))
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
        except Exception:  # noqa: BLE001 - py4j: no runtime statistics yet
            stats = None
        if stats is None:
            return
        try:
            st.size_in_bytes = _big(stats.sizeInBytes())
            rc = stats.rowCount()
            if rc.isDefined():
                st.row_count = _big(rc.get())
        except Exception:  # noqa: BLE001 - py4j: an optional row count
            pass

    def _map_sizes(self, sc: ShuffleCapture) -> None:
        """``MapStatus.getSizeForBlock`` of every map for the reducers we keep."""
        b = sc.bytes_by_partition_id or []
        try:
            arr = self.j.map_statuses(sc.shuffle_id)
        except Exception as e:  # noqa: BLE001 - py4j: a note, the sizes after AQE stay
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
        bulk = self._bulk_sizes(sc.shuffle_id, wanted, n_maps)
        if bulk is not None:
            present, names, sizes = bulk
            consistent = all(sum(row) == b[r] for r, row in zip(wanted, sizes) if -1 not in row)
            sc.map_sizes = MapSizes(n_maps, sizes, reducers, names, consistent)
            if not all(present):
                sc.map_sizes_note = "some map statuses are missing (lost executor?): their sizes are -1"
            return
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

    def _bulk_sizes(self, shuffle_id: int, wanted: list[int], n_maps: int
                    ) -> Optional[tuple[list[bool], list[str], list[list[int]]]]:
        """Every size in one round trip through the shipped jar (``Bulk.mapSizes``), which calls
        ``getSizeForBlock`` itself: exact for every MapStatus class. None: use the per-map path."""
        try:
            got = self.j.bulk_map_sizes(shuffle_id, wanted)
        except Exception:  # noqa: BLE001 - the per-map path still works
            return None
        if got is None or got[0] != n_maps:
            return None
        _, present, names, rows = got
        return present, names, rows

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
        except Exception:  # noqa: BLE001 - py4j: the per-map path still works
            return None
        return [0 if r in empty else huge.get(r, avg) for r in wanted]

    # -- event log ---------------------------------------------------------------------
    def _plan_updates(self, q: QueryCapture, exs: list[Any]) -> None:
        try:
            from aqe_core.readers.eventlog.planinfo import build_plan
        except Exception:  # noqa: BLE001 - a note, the capture stays without the plans
            q.notes.append("intermediate plans not decoded: aqe_core.readers.eventlog.planinfo unavailable")
            return
        seq = 0
        for ex in exs:
            q.execution_ids.append(ex.execution_id)
            for event, info in ex.plans:
                root = build_plan(info)
                q.plan_updates.append(PlanUpdate(ex.execution_id, event, "isFinalPlan=true" in root.description, root, seq))
                seq += 1
            for sid in ex.stage_ids:
                t = self.tap.timing(sid) if self.tap else None
                if t is not None:
                    q.spark_stages.append(t)
        if not exs:
            q.notes.append("no SQL execution found in the event log for this query")
