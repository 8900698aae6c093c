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
from typing import Any, Iterator, Optional

from aqe_core.engine.replan_joins import runtime_broadcast_threshold
from aqe_core.model.plan import PlanNode
from aqe_core.model.plan_walk import SHUFFLE_READ_NAMES, STAGE_WRAPPERS, exchange_below, is_shuffle_exchange
from aqe_core.views.align_runs import strategy_free_shape
from aqe_core.views.answers import query_evidence
from aqe_core.views.plan_literals import normal_text
from aqe_core.views.plan_match import base_name, is_join
from aqe_core.views.query import QueryView, ShuffleView, join_type_of

__all__ = ["ExecutionSummary", "JoinFacts", "ReadFacts", "batch_of", "log_summaries", "summary_of"]

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


def _exchange_of(plan: Optional[PlanNode], s: ShuffleView) -> Optional[PlanNode]:
    """The shuffle exchange a read reads (a read left as planned is its exchange)."""
    if plan is None or s.node_id is None:
        return None
    node = next((n for n in plan.walk() if n.id == s.node_id), None)
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


def _reads(view: QueryView) -> tuple[ReadFacts, ...]:
    seen: dict[str, int] = {}
    out = []
    for s in view.shuffles:
        exchange = _exchange_of(view.final_plan, s)
        side = _join_side(view.final_plan, exchange) if exchange is not None else (s.side or "")
        part = (_partitioning(exchange) or "a shuffle") + (f" ({side} side of a join)" if side else "")
        seen[part] = seen.get(part, 0) + 1
        key = part if seen[part] == 1 else f"{part} #{seen[part]}"
        skewed = s.skewed_partitions or 0 if s.has_read_metrics else None
        out.append(ReadFacts(key, s.partitions_before, s.partitions_after, skewed, s.local))
    return tuple(out)


def _shuffle_bytes(side: PlanNode) -> Optional[int]:
    """The ``data size`` of the shuffle stage a join side is, through operators that keep its
    statistics; None for anything else (a scan, a projection: other statistics)."""
    node = side
    while not is_shuffle_exchange(node):
        name = base_name(node.name or "").split(" (")[0]  # ("WholeStageCodegen (3)")
        if len(node.children) != 1 or name not in _THROUGH:
            return None
        node = node.children[0]
    m = node.metric("data size")
    total = m.get("total") if m is not None else None
    return int(total) if isinstance(total, (int, float)) else None


def _join(view: QueryView, node: PlanNode, key: str, threshold: tuple[int, str]) -> JoinFacts:
    strategy = base_name(node.name or "")
    jt = join_type_of(node) or ("Inner" if strategy == "CartesianProduct" else "")
    sizes = {side: _shuffle_bytes(child) for side, child in zip(("left", "right"), node.children)}
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


def _joins(view: QueryView) -> tuple[JoinFacts, ...]:
    plan = view.final_plan
    if plan is None:
        return ()
    threshold = runtime_broadcast_threshold(view.conf, view.spark_version)
    seen: dict[str, int] = {}
    out = []
    for node in plan.walk():
        if not is_join(base_name(node.name or "")) or len(node.children) != 2:
            continue
        keys = _RE_JOIN_KEYS.match(normal_text(node.description[len(node.name):] if node.description.startswith(
            node.name) else node.description))
        jt = join_type_of(node) or ""
        what = f"{jt} join on {keys.group(1)} = {keys.group(2)}" if keys else f"{jt} join".strip()
        seen[what] = seen.get(what, 0) + 1
        out.append(_join(view, node, what if seen[what] == 1 else f"{what} #{seen[what]}", threshold))
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
    return ExecutionSummary(
        execution=view.query_id, description=view.description.strip(),
        query=query if query is not None else strategy_free_shape(view),
        batch=batch_of(view.description), start_ms=view.start_ms, end_ms=view.end_ms,
        duration_ms=view.duration_ms, adaptive=view.adaptive, final=final, evidence=query_evidence(view).value,
        reads=_reads(view) if decided else (), joins=_joins(view) if decided else ())


def log_summaries(log: Any) -> Iterator[ExecutionSummary]:
    """One summary per execution of an :class:`~aqe_core.model.eventlog.EventLog`, in id order,
    each execution's view built and dropped in turn."""
    from aqe_core.views.from_eventlog import view_from_execution

    for ex in log.executions_by_id():
        yield summary_of(view_from_execution(log, ex))
