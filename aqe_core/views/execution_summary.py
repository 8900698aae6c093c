"""One SQL execution reduced to the AQE decisions a query group counts (issue 41).

A long-running application (a streaming query's micro-batches, a Thrift server, a notebook)
writes the same query thousands of times; :mod:`aqe_core.views.query_groups` groups them. Its
input is :class:`ExecutionSummary`, a few hundred bytes per execution: the query's fingerprint,
its times and each decision AQE made (partitions after AQE per shuffle read, reducers split for
skew, each join's strategy, with the sizes the log gives for it). Nothing in it refers to a
plan or a view, so a reader can produce one per execution while streaming through a log and
drop the execution. :func:`summary_of` builds one from a :class:`QueryView`.
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any, Callable, Iterator, Mapping, Optional

from aqe_core.engine.replan_joins import runtime_broadcast_threshold
from aqe_core.model.plan import PlanNode
from aqe_core.model.plan_walk import SHUFFLE_READ_NAMES, STAGE_WRAPPERS, exchange_below, is_shuffle_exchange, own_walk
from aqe_core.model.eventlog import EventLog, SQLExecution
from aqe_core.model.evidence import Evidence
from aqe_core.model.log_release import release_of
from aqe_core.views.align_runs import plan_key, strategy_free_shape
from aqe_core.views.eventlog_summary import read_before_partitions
from aqe_core.views.from_eventlog import execution_conf
from aqe_core.views.answers import query_evidence
from aqe_core.views.plan_literals import normal_text
from aqe_core.views.plan_match import base_name, is_join
from aqe_core.views.query import QueryView, join_type_of

__all__ = ["ExecutionSummary", "JoinFacts", "ReadFacts", "batch_of", "log_summaries", "summary_of", "summary_of_execution"]

_RE_BATCH = re.compile(r"(?m)^batch = (\d+)\s*$")
_RE_PARTITIONING = re.compile(r"\b\w*[pP]artitioning\(.*?\)(?=,|$)|SinglePartition")
_RE_JOIN_KEYS = re.compile(r"^\s*(\[[^\]]*\]),\s*(\[[^\]]*\])")
#: join types whose left / right side Spark may build a hash table of (``canBuildBroadcastLeft/Right``)
_BUILD_LEFT = {"Inner", "Cross", "RightOuter"}
_BUILD_RIGHT = {"Inner", "Cross", "LeftOuter", "LeftSemi", "LeftAnti", "ExistenceJoin"}
#: operators between a join and the shuffle stage of one side that leave the stage's logical
#: statistics as they are (physical sorts, reads, wrappers, the broadcast of a built side)
_THROUGH = STAGE_WRAPPERS + SHUFFLE_READ_NAMES + ("InputAdapter", "WholeStageCodegen", "Sort", "BroadcastExchange",
                                                  "ColumnarToRow", "RowToColumnar")


def batch_of(description: str) -> Optional[int]:
    """The micro-batch id a Structured Streaming execution's description names (Spark's
    ``StreamExecution.getBatchDescriptionString``: name, ``id = ``, ``runId = ``, ``batch = N``).

    >>> batch_of("q1\\nid = 7d1f\\nrunId = 9a2c\\nbatch = 5231"), batch_of("daily join, run 3")
    (5231, None)
    """
    m = _RE_BATCH.search(description or "")
    return int(m.group(1)) if m else None


@dataclass(frozen=True)
class ReadFacts:
    """One shuffle read of an execution: ``key`` names its place (the shuffle's partitioning,
    normalised, and its order among reads of that partitioning), the same in every execution
    of a query."""

    key: str
    partitions_before: Optional[int]
    partitions_after: Optional[int]
    #: reducers split for skew (None where the log does not say: Spark 3.0 logs no read metrics)
    skewed: Optional[int]
    local: bool = False

    def to_dict(self) -> dict[str, Any]:
        return {"key": self.key, "partitions_before": self.partitions_before,
                "partitions_after": self.partitions_after, "skewed_reducers": self.skewed, "local": self.local}


@dataclass(frozen=True)
class JoinFacts:
    """One join of an execution's final plan: its strategy, and the sizes that decided it where
    the log has them (the ``data size`` Spark's shuffle of a side wrote: the runtime statistics
    AQE compares with the broadcast threshold)."""

    key: str
    strategy: str
    #: the side the strategy turned on: a broadcast join's build side, else the smaller side it
    #: could have built; its bytes; None where a side is no shuffle stage of its own
    side: str = ""
    side_bytes: Optional[int] = None
    threshold: Optional[int] = None
    threshold_key: str = ""

    def to_dict(self) -> dict[str, Any]:
        return {"key": self.key, "strategy": self.strategy, "side": self.side or None, "side_bytes": self.side_bytes,
                "threshold": self.threshold, "threshold_key": self.threshold_key or None}


@dataclass(frozen=True)
class ExecutionSummary:
    """What a query group needs of one execution (no plan, no view)."""

    execution: str
    description: str
    #: the query it is an execution of: :func:`~aqe_core.views.align_runs.fingerprint`'s shape with
    #: join strategies aside (see :mod:`aqe_core.views.query_groups` for why that component)
    query: str
    batch: Optional[int] = None
    start_ms: Optional[int] = None
    end_ms: Optional[int] = None
    duration_ms: Optional[int] = None
    adaptive: bool = True
    #: False where AQE's plan never became final in this execution (``AdaptiveSparkPlan
    #: isFinalPlan=false``: a streaming micro-batch's root, whose plan ran in its sub-execution,
    #: or a run that did not finish): its plan holds the planner's choices, not AQE's decisions
    final: bool = True
    evidence: str = "spark-metric"
    reads: tuple[ReadFacts, ...] = ()
    joins: tuple[JoinFacts, ...] = ()

    def to_dict(self) -> dict[str, Any]:
        return {"execution": self.execution, "description": self.description, "batch": self.batch,
                "start_ms": self.start_ms, "end_ms": self.end_ms, "duration_ms": self.duration_ms,
                "adaptive": self.adaptive, "final": self.final, "evidence": self.evidence, "reads": [r.to_dict() for r in self.reads],
                "joins": [j.to_dict() for j in self.joins]}


def _stage_node(plan: PlanNode, stage: int) -> Optional[PlanNode]:
    """The ``ShuffleQueryStage <stage>`` node of a final plan (AQE's query stage id)."""
    for n in plan.walk():
        desc = (n.description or "").split()
        if base_name(n.name or "") == "ShuffleQueryStage" and len(desc) > 1 and desc[1] == str(stage):
            return n
    return None


def _exchange_of(plan: Optional[PlanNode], node_id: Optional[int], stage: Optional[int] = None) -> Optional[PlanNode]:
    """The shuffle exchange a read reads (a read left as planned is its exchange). An exact read
    (a listener's, a capture's) names no plan node but its query stage (``stage``, AQE's own id):
    the exchange under that stage's node, where the view's final plan shows it."""
    if plan is None:
        return None
    if node_id is None:
        found = _stage_node(plan, stage) if stage is not None else None
        return exchange_below(found) if found is not None else None
    node = next((n for n in plan.walk() if n.id == node_id), None)
    if node is None or is_shuffle_exchange(node):
        return node
    return exchange_below(node)


def _partitioning(exchange: Optional[PlanNode]) -> str:
    m = _RE_PARTITIONING.search(exchange.description or "") if exchange is not None else None
    return re.sub(r",\s*N\)$", ")", normal_text(m.group(0))) if m else ""


def _join_side(plan: Optional[PlanNode], exchange: Optional[PlanNode]) -> str:
    """``left`` / ``right``: the side of the join a shuffle's rows feed (up through a broadcast
    exchange, a built side's; not through another shuffle), "" for none."""
    if plan is None or exchange is None:
        return ""
    parent = {id(c): n for n in plan.walk() for c in n.children}
    child, cur = exchange, parent.get(id(exchange))
    while cur is not None:
        if is_join(base_name(cur.name or "")) and len(cur.children) == 2:
            return "left" if cur.children[0] is child else "right"
        if is_shuffle_exchange(cur):
            return ""
        child, cur = cur, parent.get(id(cur))
    return ""


@dataclass(frozen=True)
class _Read:
    """A shuffle read as a summary needs it, from a view's :class:`ShuffleView` or straight from
    an execution's reads (:func:`summary_of_execution`)."""

    node_id: Optional[int]
    side: str
    before: Optional[int]
    after: Optional[int]
    skewed: Optional[int]
    local: bool
    #: an exact read's query stage (AQE's id), where it names no plan node
    stage: Optional[int] = None


def _view_reads(view: QueryView) -> list[_Read]:
    return [_Read(s.node_id, s.side or "", s.partitions_before, s.partitions_after,
                  s.skewed_partitions or 0 if s.has_read_metrics else None, s.local,
                  s.stage_id if s.exact and s.node_id is None else None) for s in view.shuffles]


def _execution_reads(ex: SQLExecution) -> list[_Read]:
    """The reads :func:`~aqe_core.views.from_eventlog.view_from_execution` lists, in its order:
    each adaptive read, then each shuffle read as planned (no split) but a single-partition one's. Spark
    posts a read's metrics once, the skew pair only when it split: without the partition count
    posted a missing pair says nothing (``skewed`` None)."""
    out = [_Read(r.node_id, "", read_before_partitions(ex, r), r.partitions,
                 r.skewed_partitions or 0 if r.num_partitions is not None else None, r.local) for r in ex.shuffle_reads]
    out += [_Read(r.node_id, "", r.partitions, r.partitions, 0, False) for r in ex.planned_shuffles if r.partitions != 1]
    return out


def _reads(plan: Optional[PlanNode], reads: list[_Read]) -> tuple[ReadFacts, ...]:
    seen: dict[str, int] = {}
    out = []
    for s in reads:
        exchange = _exchange_of(plan, s.node_id, s.stage)
        side = _join_side(plan, exchange) if exchange is not None else s.side
        part = (_partitioning(exchange) or "a shuffle") + (f" ({side} side of a join)" if side else "")
        seen[part] = seen.get(part, 0) + 1
        key = part if seen[part] == 1 else f"{part} #{seen[part]}"
        out.append(ReadFacts(key, s.before, s.after, s.skewed, s.local))
    return tuple(out)


#: a node's ``data size`` total: the metric's value on a view's plan, or the execution's aggregate
#: of the metric's accumulator on an execution's plan as built
SizeOf = Callable[[dict[str, Any]], Optional[int]]


def _total(m: Mapping[str, Any]) -> Optional[int]:
    total = m.get("total")
    return int(total) if isinstance(total, (int, float)) else None


def _shuffle_bytes(side: PlanNode, size_of: SizeOf) -> Optional[int]:
    """The ``data size`` of the shuffle stage a join side is, through operators that keep its
    statistics; None for anything else (a scan, a projection: other statistics)."""
    node = side
    while not is_shuffle_exchange(node):
        name = base_name(node.name or "").split(" (")[0]  # ("WholeStageCodegen (3)")
        if len(node.children) != 1 or name not in _THROUGH:
            return None
        node = node.children[0]
    m = node.metric("data size")
    return size_of(m) if m is not None else None


def _join(node: PlanNode, key: str, threshold: tuple[int, str], size_of: SizeOf) -> JoinFacts:
    strategy = base_name(node.name or "")
    jt = join_type_of(node) or ("Inner" if strategy == "CartesianProduct" else "")
    sizes = {side: _shuffle_bytes(child, size_of) for side, child in zip(("left", "right"), node.children)}
    if strategy == "BroadcastHashJoin":
        m = re.search(r"\bBuild(Left|Right)\b", node.description or "")
        sides = [m.group(1).lower()] if m else []
    else:
        sides = [s for s, ok in (("left", jt in _BUILD_LEFT), ("right", jt in _BUILD_RIGHT)) if ok]
    known = [(sizes[s], s) for s in sides if sizes[s] is not None]
    if not known or len(known) != len(sides):
        return JoinFacts(key, strategy)
    size, side = min(known)
    return JoinFacts(key, strategy, side, size, threshold[0], threshold[1])


def _joins(plan: Optional[PlanNode], threshold: tuple[int, str], size_of: SizeOf) -> tuple[JoinFacts, ...]:
    if plan is None:
        return ()
    seen: dict[str, int] = {}
    out = []
    for node in own_walk(plan):  # (not the joins of a plan a batch DataFrame came from)
        if not is_join(base_name(node.name or "")) or len(node.children) != 2:
            continue
        keys = _RE_JOIN_KEYS.match(normal_text(node.description[len(node.name):] if node.description.startswith(
            node.name) else node.description))
        jt = join_type_of(node) or ""
        what = f"{jt} join on {keys.group(1)} = {keys.group(2)}" if keys else f"{jt} join".strip()
        seen[what] = seen.get(what, 0) + 1
        out.append(_join(node, what if seen[what] == 1 else f"{what} #{seen[what]}", threshold, size_of))
    return tuple(out)


def _final(plan: Optional[PlanNode]) -> bool:
    """Whether no adaptive plan in ``plan`` says ``isFinalPlan=false``."""
    return plan is None or not any(base_name(n.name or "") == "AdaptiveSparkPlan" and "isFinalPlan=false" in (
        n.description or "") for n in plan.walk())


def summary_of(view: QueryView, query: Optional[str] = None) -> ExecutionSummary:
    """The summary of one view; ``query``: its fingerprint where the caller has it. An execution
    whose adaptive plan never became final has no decisions (:attr:`ExecutionSummary.final`)."""
    final = _final(view.final_plan) if view.adaptive else True
    decided = view.adaptive and final
    threshold = runtime_broadcast_threshold(view.conf, view.spark_version)
    return ExecutionSummary(
        execution=view.query_id, description=view.description.strip(),
        query=query if query is not None else strategy_free_shape(view),
        batch=batch_of(view.description), start_ms=view.start_ms, end_ms=view.end_ms,
        duration_ms=view.duration_ms, adaptive=view.adaptive, final=final, evidence=query_evidence(view).value,
        reads=_reads(view.final_plan, _view_reads(view)) if decided else (),
        joins=_joins(view.final_plan, threshold, _total) if decided else ())


def summary_of_execution(log: EventLog, ex: SQLExecution) -> ExecutionSummary:
    """The summary of one execution of an event log, without its view: what
    :func:`summary_of` gives for :func:`~aqe_core.views.from_eventlog.view_from_execution`'s view
    of it (the tests hold the two equal on every recorded log) at a fraction of the cost, so a
    listing reader can summarise a million executions. Spark's metrics after AQE: the evidence of
    a plain event log (a listener's exact statistics are read when an execution is opened)."""
    plan = ex.final_plan
    final = _final(plan) if ex.adaptive else True
    decided = ex.adaptive and final
    v = release_of(log).replayed_as
    values = ex.metric_values

    def size_of(m: dict[str, Any]) -> Optional[int]:
        got = values.get(m.get("accumulator_id"))  # type: ignore[arg-type]
        return _total(got) if got is not None else None

    description = (ex.description or "").strip() or f"execution {ex.id}"
    return ExecutionSummary(
        execution=str(ex.id), description=description,
        query=plan_key(ex.initial_plan or plan),
        batch=batch_of(description), start_ms=ex.submission_time, end_ms=ex.completion_time,
        duration_ms=ex.duration, adaptive=ex.adaptive, final=final, evidence=Evidence.SPARK_METRIC.value,
        reads=_reads(plan, _execution_reads(ex)) if decided else (),
        joins=_joins(plan, runtime_broadcast_threshold(execution_conf(v, ex)[0], v), size_of) if decided else ())


def log_summaries(log: EventLog, known: Optional[Mapping[int, ExecutionSummary]] = None) -> Iterator[ExecutionSummary]:
    """One summary per execution of an :class:`~aqe_core.model.eventlog.EventLog`, in id order
    (:func:`summary_of_execution`: no view is built). ``known``: summaries taken as the reader
    finalised each execution (:class:`FinalSummaries`), used where they are at hand."""
    for eid in sorted(log.executions):
        got = known.get(eid) if known is not None else None
        yield got if got is not None else summary_of_execution(log, log.executions[eid])


class FinalSummaries(dict):
    """``load(..., on_final=)``: each execution summarised as the reader finalises it (its plans
    built a moment before), by id; :func:`log_summaries` takes them instead of reading every
    spilled execution back and building its plans again. The reader's last call for an id is of
    the model its log holds (one brought back by a late event is finalised, and told, again)."""

    def __call__(self, log: EventLog, ex: SQLExecution) -> None:
        self[ex.id] = summary_of_execution(log, ex)
