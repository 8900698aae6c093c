"""The view model every page and report draws: one query, its shuffles, AQE's lines and reasons.

Sources differ in what they hold (an event log has only post-AQE partition sizes; a capture has
the pre-AQE ``bytesByPartitionId`` and per-map sizes), so each source is turned into the same
:class:`QueryView`, with ``exact`` / ``approx_reason`` saying how far the numbers can be trusted.
The lines (median, skew threshold, targets) always come from the rules, through
:mod:`aqe_core.engine.histogram_lines`.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field, replace
from typing import Any, Optional

from aqe_core.config import AQEConf
from aqe_core.engine.histogram_lines import Line, SideAnalysis, coalesce_line, shuffle_lines
from aqe_core.model.evidence import Evidence
from aqe_core.model.plan import PlanNode
from aqe_core.model.query import Query
from aqe_core.model.reasons import Reason
from aqe_core.model.task_time import TaskTime
from aqe_core.units import mib
from aqe_core.versions import SparkVersion

__all__ = ["JoinRead", "Line", "QueryView", "ShuffleView", "SkewRow", "compute_group_lines", "compute_lines",
           "join_keys", "join_reads", "join_type_of", "read_join_context",
           "regroup_coalesce_lines"]

_JOIN_TYPE_RE = re.compile(r"\b(Inner|Cross|LeftOuter|RightOuter|FullOuter|LeftSemi|LeftAnti|ExistenceJoin)\b")


@dataclass
class SkewRow:
    """One row of the skewed-partitions table."""

    partition: int
    size: int
    splits: Optional[int]
    explanation: str

    def to_dict(self) -> dict[str, Any]:
        return {"partition": self.partition, "size": self.size, "splits": self.splits, "explanation": self.explanation}


@dataclass
class ShuffleView:
    """One shuffle (or one side of a join) as the partitions page shows it."""

    key: str
    label: str
    node_id: Optional[int] = None
    stage_id: Optional[int] = None
    side: Optional[str] = None
    join: Optional[str] = None
    join_type: Optional[str] = None
    read_description: str = ""
    partitions_before: Optional[int] = None
    partitions_after: Optional[int] = None
    sizes_before: Optional[list[int]] = None  # pre-AQE bytesByPartitionId, in reducer order
    sizes_after: Optional[list[int]] = None   # post-AQE partition sizes, in read order
    coalesced_partitions: Optional[int] = None
    skewed_partitions: Optional[int] = None
    skew_splits: Optional[int] = None
    local: bool = False
    exact: bool = False
    #: False where the source logs no adaptive-read metrics (Spark 3.0): whether a reducer was
    #: split cannot be told, where otherwise a missing skew metric means none was
    has_read_metrics: bool = True
    #: False for a shuffle AQE left as planned (no adaptive read over its exchange: a plain log's
    #: ``planned_shuffles``); its sizes are the bytes each reduce task read
    adaptive_read: bool = True
    #: the read of a REBALANCE exchange (its skew is OptimizeSkewInRebalancePartitions', not a join's)
    rebalance: bool = False
    approx_reason: Optional[str] = None
    lines: list[Line] = field(default_factory=list)
    skew_rows: list[SkewRow] = field(default_factory=list)
    reasons: list[Reason] = field(default_factory=list)
    side_analysis: Optional[SideAnalysis] = None
    group_key: Optional[str] = None  # shuffles coalesced together (the sides of one join) share it
    #: per post-AQE partition (exact sources): the reducers it reads ``(start, end)`` and whether it
    #: is a part of a split reducer; None where the source does not say (a plain log)
    after_reducers: Optional[list[tuple[int, int]]] = None
    after_split: Optional[list[bool]] = None
    #: the task durations of the Spark stage that ran this read (event logs: task events)
    task_time: Optional[TaskTime] = None
    #: each shuffle-read rule of the release, its conditions and verdict (exact sources)
    trace: list[Any] = field(default_factory=list)
    #: ``sizes_after`` (and ``after_reducers``) are our rules' prediction under a what-if, not a run;
    #: ``predicted_note`` says over what (an exact replay, or an estimate over post-AQE sizes)
    predicted: bool = False
    predicted_note: str = ""
    #: the engine's own numbers for this shuffle (never Spark's rules, never exact): ``{"engine",
    #: "metric", "meaning", "value", "decided_by"}``, e.g. Photon's "aos new number of partitions"
    engine_numbers: list[dict[str, Any]] = field(default_factory=list)

    @property
    def sizes_for_lines(self) -> Optional[list[int]]:
        return self.sizes_before if self.sizes_before is not None else self.sizes_after

    @property
    def evidence(self) -> Evidence:
        """How this shuffle's lines are known: exact (pre-AQE statistics) or an estimate over
        Spark's post-AQE sizes (``approx_reason`` says which assumption)."""
        return Evidence.EXACT if self.exact else Evidence.ESTIMATE

    def to_dict(self) -> dict[str, Any]:
        return {
            "key": self.key, "label": self.label, "node_id": self.node_id, "stage_id": self.stage_id,
            "side": self.side, "join": self.join, "join_type": self.join_type,
            "read_description": self.read_description, "partitions_before": self.partitions_before,
            "partitions_after": self.partitions_after, "sizes_before": self.sizes_before,
            "sizes_after": self.sizes_after, "coalesced_partitions": self.coalesced_partitions,
            "skewed_partitions": self.skewed_partitions, "skew_splits": self.skew_splits, "local": self.local,
            "adaptive_read": self.adaptive_read,
            "exact": self.exact, "approx_reason": self.approx_reason, "lines": [ln.to_dict() for ln in self.lines],
            "skew_rows": [r.to_dict() for r in self.skew_rows], "reasons": [r.to_dict() for r in self.reasons],
            "task_time": self.task_time.to_dict() if self.task_time is not None else None,
            "trace": [t.to_dict() for t in self.trace],
            "engine_numbers": [dict(n) for n in self.engine_numbers],
        }


@dataclass
class QueryView:
    """One query (SQL execution) from any source."""

    source_kind: str  # "eventlog" | "capture"
    query_id: str
    description: str
    spark_version: SparkVersion
    conf: AQEConf
    default_parallelism: Optional[int]
    status: str = ""
    duration_ms: Optional[int] = None
    initial_plan: Optional[PlanNode] = None
    plan_versions: list[PlanNode] = field(default_factory=list)
    final_plan: Optional[PlanNode] = None
    shuffles: list[ShuffleView] = field(default_factory=list)
    join_changes: list[str] = field(default_factory=list)
    #: one sentence per join: which sizes decided its strategy, and whether our rules agree
    join_decisions: list[str] = field(default_factory=list)
    #: the codes of the reasons behind those decisions (exact sources), e.g. "demoted"
    join_reason_codes: set[str] = field(default_factory=set)
    #: per join (same order as ``join_decisions``): its decision trace (exact sources)
    join_traces: list[list[Any]] = field(default_factory=list)
    #: the captured final plan's node index of each join trace (its place among the joins)
    join_nodes: list[int] = field(default_factory=list)
    adaptive: bool = True
    outcome: str = ""
    warnings: list[str] = field(default_factory=list)
    #: why AQE did not apply (InsertAdaptiveSparkPlan's reason), "" when it did
    adaptive_reason: str = ""
    #: Spark stage id -> its task durations (event logs; empty where the source has no task events)
    stage_times: dict[int, TaskTime] = field(default_factory=dict)
    #: node id in the final plan -> the Spark stage it ran in (event logs: from the SQL metrics)
    node_stages: dict[int, int] = field(default_factory=dict)
    #: Spark's own ids (event logs): the query's UUID (``queryId``, logged from 4.2) and the root
    #: execution a sub-execution belongs to (``rootExecutionId``, 3.4+; None for a root itself),
    #: as Spark's SQL tab groups sub-executions under their root
    spark_query_id: Optional[str] = None
    root_execution_id: Optional[int] = None
    #: when the execution started and ended (epoch ms: an event log's SQLExecutionStart and
    #: SQLExecutionEnd), None where the source does not say
    start_ms: Optional[int] = None
    end_ms: Optional[int] = None
    #: the initial plan's key in query groups (:func:`~aqe_core.views.align_runs.strategy_free_shape`),
    #: kept where the view is built without that plan (the fleet scan's); "" otherwise
    query_shape: str = ""
    #: one sentence per stage that ran more than once (event logs), each counted once
    stage_retries: list[str] = field(default_factory=list)
    #: how ``default_parallelism`` is known ("60 cores: 15 executors x 4 cores, from executor-added
    #: events"), or why it is not ("unknown: ..."); "" where the source states it (a capture)
    parallelism_how: str = ""
    #: the release as the source states it, with the rules that replay it ("Spark 3.4.1 (Databricks
    #: Runtime 13.3; replayed as Apache Spark 3.4.1 rules)", "release unknown: rules replayed as ...")
    release: str = ""
    release_known: bool = True
    #: the vendor runtime or native engine that ran the plans ("Databricks Photon"; "" for Spark's
    #: own operators), from the plans' node names and the log's properties (aqe_core/model/engines.py)
    engine: str = ""
    #: join changes the engine made itself, not AQE ("SortMergeJoin -> ShuffledHashJoin (NVIDIA
    #: RAPIDS's own rewrite, not AQE; ...)"); a rename is neither
    engine_changes: list[str] = field(default_factory=list)
    #: exchanges of the final plan into one partition (``SinglePartition``: a global aggregate's,
    #: Databricks' executor broadcast): nothing for AQE's reads to coalesce or split, not listed
    single_partition_exchanges: int = 0
    #: the query behind the view (the engine's what-if works on it); not part of the view's data
    model: Optional[Query] = field(default=None, repr=False, compare=False)

    @property
    def release_label(self) -> str:
        """The release for headers: the source's own words, else "Spark <version>"."""
        return self.release or f"Spark {self.spark_version}"

    def spark_ids(self) -> str:
        """Spark's ids of the query, as its SQL tab shows them ("" when the log has none)."""
        parts = [f"sub-execution of #{self.root_execution_id}" if self.root_execution_id is not None else "",
                 f"Spark query id {self.spark_query_id}" if self.spark_query_id else ""]
        return "; ".join(p for p in parts if p)

    def to_dict(self) -> dict[str, Any]:
        """The view's data as JSON-ready values (plans and the model left out)."""
        return {
            "source_kind": self.source_kind, "query_id": self.query_id, "description": self.description,
            "spark_version": str(self.spark_version), "conf": dict(self.conf.explicit),
            "default_parallelism": self.default_parallelism, "parallelism_how": self.parallelism_how,
            "release": self.release_label, "release_known": self.release_known, "engine": self.engine,
            "engine_changes": list(self.engine_changes),
            "single_partition_exchanges": self.single_partition_exchanges,
            "status": self.status, "duration_ms": self.duration_ms,
            "adaptive": self.adaptive, "adaptive_reason": self.adaptive_reason, "outcome": self.outcome,
            "join_changes": list(self.join_changes), "join_decisions": list(self.join_decisions),
            "warnings": list(self.warnings), "spark_query_id": self.spark_query_id,
            "root_execution_id": self.root_execution_id, "stage_retries": list(self.stage_retries),
            "shuffles": [s.to_dict() for s in self.shuffles],
            "stage_times": [t.to_dict() for _, t in sorted(self.stage_times.items())],
        }


def join_type_of(node: PlanNode) -> Optional[str]:
    """The join type written in a join node's description (``SortMergeJoin [a], [b], Inner``)."""
    m = _JOIN_TYPE_RE.search(node.description or "")
    return m.group(1) if m else None


def _is_read(node: PlanNode) -> bool:
    return node.name.startswith(("AQEShuffleRead", "CustomShuffleReader"))


@dataclass(frozen=True)
class JoinRead:
    """An adaptive shuffle read feeding one side of a join (pre-order indices in the plan)."""

    read: PlanNode
    read_index: int
    join: PlanNode
    join_index: int
    side: str  # "left" | "right"


def join_reads(plan: Optional[PlanNode]) -> list[JoinRead]:
    """Every (join, side) with the first adaptive read below that side, outer joins first;
    the search on a side stops at another join or an exchange."""
    if plan is None:
        return []
    nodes = list(plan.walk())
    index = {id(n): i for i, n in enumerate(nodes)}
    out: list[JoinRead] = []
    for node in nodes:
        if "Join" not in node.name or len(node.children) != 2:
            continue
        for side, child in zip(("left", "right"), node.children):
            for n in child.walk():
                if _is_read(n):
                    out.append(JoinRead(n, index[id(n)], node, index[id(node)], side))
                    break
                if "Join" in n.name or "Exchange" in n.name:
                    break
    return out


def read_join_context(plan: Optional[PlanNode]) -> dict[int, tuple[str, str, Optional[str]]]:
    """node id of each adaptive read -> (join node name, side, join type), for reads feeding a join."""
    out: dict[int, tuple[str, str, Optional[str]]] = {}
    for jr in join_reads(plan):
        if jr.read.id is not None:
            out.setdefault(jr.read.id, (jr.join.name, jr.side, join_type_of(jr.join)))
    return out


def exchange_join_context(plan: Optional[PlanNode]) -> dict[int, tuple[str, str, Optional[str], str]]:
    """node id of each shuffle exchange feeding a join side directly (no other join or exchange
    between) -> (join node name, side, join type, a key naming that join): for shuffles read as
    planned, which have no adaptive read to hang the join on."""
    if plan is None:
        return {}
    out: dict[int, tuple[str, str, Optional[str], str]] = {}
    for i, node in enumerate(plan.walk()):
        if "Join" not in node.name or len(node.children) != 2:
            continue
        for side, child in zip(("left", "right"), node.children):
            for n in child.walk():
                if "Exchange" in n.name:
                    if "Broadcast" not in n.name and n.id is not None:
                        out.setdefault(n.id, (node.name, side, join_type_of(node), f"join-{i}"))
                    break
                if "Join" in n.name:
                    break
    return out


def join_keys(plan: Optional[PlanNode]) -> dict[int, str]:
    """node id of each adaptive read under a join -> a key naming that join (its pre-order index)."""
    out: dict[int, str] = {}
    for jr in join_reads(plan):
        if jr.read.id is not None:
            out.setdefault(jr.read.id, f"join-{jr.join_index}")
    return out


def compute_lines(view: ShuffleView, conf: AQEConf, default_parallelism: Optional[int],
                  coalesce_group: Optional[list[list[int]]] = None) -> None:
    """Fill ``view.lines`` / ``skew_rows`` / ``side_analysis`` with the engine's lines over the
    sizes the view has (:func:`aqe_core.engine.histogram_lines.shuffle_lines`)."""
    sizes = view.sizes_for_lines
    if not sizes or view.local:
        return
    got = shuffle_lines(sizes, conf, default_parallelism, side=view.side or "", coalesce_group=coalesce_group,
                        evidence=view.evidence, rebalance=view.rebalance)
    view.side_analysis = got.side_analysis
    view.lines.extend(got.lines)
    view.skew_rows.extend(SkewRow(p.partition, p.size, None, p.explanation) for p in got.skewed)


def compute_group_lines(shuffles: list[ShuffleView], conf: AQEConf, default_parallelism: Optional[int]) -> None:
    """:func:`compute_lines` for every shuffle, then :func:`regroup_coalesce_lines`."""
    for s in shuffles:
        compute_lines(s, conf, default_parallelism)
    regroup_coalesce_lines(shuffles, conf, default_parallelism)


def regroup_coalesce_lines(shuffles: list[ShuffleView], conf: AQEConf, default_parallelism: Optional[int]) -> None:
    """Shuffles coalesced together (the two sides of a join) share one coalescing target,
    computed over all of their sizes, as ``CoalesceShufflePartitions`` does."""
    if default_parallelism is None:
        return
    groups: dict[str, list[ShuffleView]] = {}
    for s in shuffles:
        if s.group_key and s.sizes_for_lines and not s.local:
            groups.setdefault(s.group_key, []).append(s)
    for members in groups.values():
        sized = [m.sizes_for_lines or [] for m in members]
        if len(members) < 2 or len({len(x) for x in sized}) != 1:
            continue
        for m in members:
            m.lines = [ln for ln in m.lines if ln.kind != "coalesce_target"]
            m.lines.append(coalesce_line(sized, conf, default_parallelism, m.evidence))


def use_replayed_targets(shuffles: list[ShuffleView], targets: dict[int, int], local: Optional[set[int]]) -> None:
    """A replay knows the coalesce groups of the plan it re-planned: each coalesced stage's
    target is the one our rules used (exact), and a stage read locally draws no line."""
    for s in shuffles:
        if local is not None and s.stage_id in local:
            s.lines = []
            continue
        t = targets.get(s.stage_id) if s.stage_id is not None else None
        if t is not None:
            s.lines = [replace(ln, value=t, label=f"coalescing target {mib(t)} (our rules, replayed)")
                       if ln.kind == "coalesce_target" else ln for ln in s.lines]


def single_partition_sentence(count: int) -> str:
    """What the view says of exchanges into one partition ("" for none)."""
    if not count:
        return ""
    return (f"{count} exchange{'s' if count != 1 else ''} into a single partition (SinglePartition):"
            " nothing for AQE's reads to coalesce or split")
