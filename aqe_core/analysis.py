"""The view model every page and report draws: one query, its shuffles, AQE's lines and reasons.

Sources differ in what they hold (an event log has only post-AQE partition sizes; a capture has
the pre-AQE ``bytesByPartitionId`` and per-map sizes), so each source is turned into the same
:class:`QueryView`, with ``exact`` / ``approx_reason`` saying how far the numbers can be trusted.
The lines (median, skew threshold, targets) always come from :mod:`aqe_core.rules`.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any, Optional

from aqe_core.config import AQEConf, checked_layers
from aqe_core.model.plan import PlanNode
from aqe_core.rules.coalesce_shuffle_partitions import K_ADVISORY, K_MIN_NUM, K_MIN_SIZE, K_PAR_FIRST, min_num_partitions, min_partition_size
from aqe_core.model.reasons import Reason
from aqe_core.units import mib, num
from aqe_core.rules.shuffle_partitions import coalesce_target
from aqe_core.rules.skew_join import K_FACTOR, K_THRESHOLD, SideAnalysis, analyze_side
from aqe_core.versions import SparkVersion, as_version

_JOIN_TYPE_RE = re.compile(r"\b(Inner|Cross|LeftOuter|RightOuter|FullOuter|LeftSemi|LeftAnti|ExistenceJoin)\b")
_MASTER_LOCAL_RE = re.compile(r"^local\[(\d{1,10})\b")
_MAX_PARALLELISM = 2 ** 31 - 1  # an int in Spark; a log claiming more is not believed


@dataclass(frozen=True)
class Line:
    """A vertical line on a partition histogram: what it is, its value and where it comes from."""

    kind: str  # "median" | "skew_threshold" | "factor_threshold" | "threshold_bytes" | "coalesce_target" | "split_target"
    value: int
    label: str
    config_keys: tuple[str, ...] = ()

    def to_dict(self) -> dict[str, Any]:
        return {"kind": self.kind, "value": self.value, "label": self.label, "config_keys": list(self.config_keys)}


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
    approx_reason: Optional[str] = None
    lines: list[Line] = field(default_factory=list)
    skew_rows: list[SkewRow] = field(default_factory=list)
    reasons: list[Reason] = field(default_factory=list)
    side_analysis: Optional[SideAnalysis] = None
    group_key: Optional[str] = None  # shuffles coalesced together (the sides of one join) share it

    @property
    def sizes_for_lines(self) -> Optional[list[int]]:
        return self.sizes_before if self.sizes_before is not None else self.sizes_after

    def to_dict(self) -> dict[str, Any]:
        return {
            "key": self.key, "label": self.label, "node_id": self.node_id, "stage_id": self.stage_id,
            "side": self.side, "join": self.join, "join_type": self.join_type,
            "read_description": self.read_description, "partitions_before": self.partitions_before,
            "partitions_after": self.partitions_after, "sizes_before": self.sizes_before,
            "sizes_after": self.sizes_after, "coalesced_partitions": self.coalesced_partitions,
            "skewed_partitions": self.skewed_partitions, "skew_splits": self.skew_splits, "local": self.local,
            "exact": self.exact, "approx_reason": self.approx_reason, "lines": [ln.to_dict() for ln in self.lines],
            "skew_rows": [r.to_dict() for r in self.skew_rows], "reasons": [r.to_dict() for r in self.reasons],
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
    adaptive: bool = True
    outcome: str = ""
    warnings: list[str] = field(default_factory=list)
    #: the source object behind the view (e.g. (Capture, query index)) for exact simulators
    source: Any = field(default=None, repr=False, compare=False)


def join_type_of(node: PlanNode) -> Optional[str]:
    """The join type written in a join node's description (``SortMergeJoin [a], [b], Inner``)."""
    m = _JOIN_TYPE_RE.search(node.description or "")
    return m.group(1) if m else None


def _is_read(node: PlanNode) -> bool:
    return node.name.startswith(("AQEShuffleRead", "CustomShuffleReader"))


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
        sized = [m.sizes_for_lines for m in members]
        if len(members) < 2 or len({len(x) for x in sized}) != 1:
            continue
        for m in members:
            m.lines = [ln for ln in m.lines if ln.kind != "coalesce_target"]
            tmp = ShuffleView(key=m.key, label=m.label, sizes_before=m.sizes_for_lines)
            compute_lines(tmp, conf, default_parallelism, coalesce_group=sized)  # type: ignore[arg-type]
            m.lines += [ln for ln in tmp.lines if ln.kind == "coalesce_target"]


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


def default_parallelism_from_properties(props: dict[str, str]) -> Optional[int]:
    """``spark.default.parallelism`` if set, else N of a ``local[N]`` master (None if unknown)."""
    dp = props.get("spark.default.parallelism")
    if dp and dp.strip().isdigit() and len(dp.strip()) <= 10 and 0 < int(dp) <= _MAX_PARALLELISM:
        return int(dp)
    m = _MASTER_LOCAL_RE.match(props.get("spark.master", ""))
    if m:
        n = int(m.group(1))
        return n if 0 < n <= _MAX_PARALLELISM else None
    if props.get("spark.master", "").strip() == "local":
        return 1
    return None


def compute_lines(view: ShuffleView, conf: AQEConf, default_parallelism: Optional[int],
                  coalesce_group: Optional[list[list[int]]] = None) -> None:
    """Fill ``view.lines`` / ``skew_rows`` from our rules over the sizes the view has.

    ``coalesce_group``: the sizes of every shuffle coalesced together with this one (both sides
    of a join share one target); default: this shuffle alone."""
    sizes = view.sizes_for_lines
    v = conf.spark_version
    if not sizes or view.local:
        return
    a = analyze_side(sizes, conf, spark_version=v, side=view.side or "")
    view.side_analysis = a
    view.lines.append(Line("median", a.median, f"median {mib(a.median)}"))
    if a.skew_threshold is not None:
        src = (f"{num(a.factor)} x median" if a.skew_threshold == a.factor_threshold else "threshold bytes")
        view.lines.append(Line("skew_threshold", a.skew_threshold,
                               f"skew threshold {mib(a.skew_threshold)} = max({num(a.factor)} x median, {mib(a.threshold_bytes)}) [{src}]",
                               (K_FACTOR, K_THRESHOLD)))
    else:  # 3.0/3.1: two separate conditions
        view.lines.append(Line("factor_threshold", a.factor_threshold, f"{num(a.factor)} x median = {mib(a.factor_threshold)}", (K_FACTOR,)))
        view.lines.append(Line("threshold_bytes", a.threshold_bytes, f"skew threshold bytes {mib(a.threshold_bytes)}", (K_THRESHOLD,)))
    view.lines.append(Line("split_target", a.target_size, f"skew split target {mib(a.target_size)}", (K_ADVISORY,)))
    if default_parallelism is not None:
        min_num, _ = min_num_partitions(conf, spark_version=v, default_parallelism=default_parallelism)
        min_size = min_partition_size(conf, spark_version=v)
        t = coalesce_target(coalesce_group or [sizes], advisory_target_size=conf.advisory_partition_size, min_num_partitions=min_num,
                            min_partition_size=min_size, spark_version=v)
        view.lines.append(Line("coalesce_target", t.target_size,
                               f"coalescing target {mib(t.target_size)} (advisory {mib(conf.advisory_partition_size)},"
                               f" total {mib(t.total_size)} / {min_num} partitions, min size {mib(min_size)})",
                               (K_ADVISORY, K_MIN_NUM, K_PAR_FIRST, K_MIN_SIZE)))
    for i in a.skewed_indices:
        view.skew_rows.append(SkewRow(i, a.sizes[i], None, a.reasons[a.skewed_indices.index(i)].message))


# ------------------------------------------------------------------------------------------
# Event log -> QueryView


def views_from_eventlog(log: Any) -> list[QueryView]:
    """One :class:`QueryView` per SQL execution of a loaded :class:`aqe_core.eventlog.model.EventLog`."""
    return [view_from_execution(log, ex) for ex in sorted(log.executions.values(), key=lambda e: e.id)]


def _outcome(ex: Any, outcome_line: Any) -> str:
    """The AQE part of the CLI's one-line summary (it starts with id, status and a 40-char description)."""
    line = outcome_line(ex)
    head = len(f"#{ex.id:<4} {ex.status:<9} ") + 40 + 2
    return line[head:].strip() if len(line) > head else "no AQE"


def view_from_execution(log: Any, ex: Any) -> QueryView:
    from aqe_core.eventlog.summary import join_changes, outcome_line, read_before_partitions

    version_text = log.spark_version or "4.3.0"
    try:
        v = as_version(version_text)
    except ValueError:
        v = as_version("4.3.0")
    notes: list[str] = []
    if isinstance(ex.aqe_conf, AQEConf):
        conf = ex.aqe_conf
    else:
        layers, notes = checked_layers(v, ex.conf_layers or [])
        conf = AQEConf.resolve(v, layers, validate=False)
    dp = default_parallelism_from_properties(log.spark_properties)
    qv = QueryView(
        source_kind="eventlog",
        query_id=str(ex.id),
        description=(ex.description or "").strip() or f"execution {ex.id}",
        spark_version=v,
        conf=conf,
        default_parallelism=dp,
        status=ex.status,
        duration_ms=ex.duration,
        initial_plan=ex.plan_with_values(ex.initial_plan),
        plan_versions=[p for p in (ex.plan_with_values(p) for p in ex.plan_versions) if p is not None],
        final_plan=ex.plan_with_values(ex.final_plan),
        join_changes=join_changes(ex),
        adaptive=ex.adaptive,
        outcome=_outcome(ex, outcome_line),
        warnings=list(ex.warnings) + notes,
    )
    ctx = read_join_context(ex.final_plan)
    ctx_keys = _join_keys(ex.final_plan)
    for r in ex.shuffle_reads:
        join, side, jtype = ctx.get(r.node_id, (None, None, None)) if r.node_id is not None else (None, None, None)
        jkey = ctx_keys.get(r.node_id) if r.node_id is not None else None
        head = r.description if r.description.startswith(r.name) else f"{r.name} {r.description}"
        label = head.strip() + (f" (node {r.node_id})" if r.node_id is not None else "")
        if join:
            label += f": {side} side of {join}"
        sv = ShuffleView(
            key=f"read-{r.node_id}", label=label, node_id=r.node_id, stage_id=r.stage_id, side=side, join=join,
            join_type=jtype, read_description=r.description, partitions_before=read_before_partitions(ex, r),
            partitions_after=r.num_partitions, sizes_after=list(r.partition_sizes) if r.partition_sizes else None,
            coalesced_partitions=r.coalesced_partitions, skewed_partitions=r.skewed_partitions,
            skew_splits=r.skew_splits, local=r.local, exact=False,
            approx_reason=("event log: the lines are computed over the partition sizes after AQE (the log has no"
                           " pre-AQE per-reducer sizes or per-map sizes); the coalescing target is exact"
                           + ("" if dp is not None else ", but the default parallelism is unknown")),
        )
        sv.group_key = jkey
        if r.partition_sizes_source == "task_shuffle_read":
            sv.approx_reason = (sv.approx_reason or "") + "; Spark 3.0 logs no read metrics: sizes are the bytes each reduce task read"
        if r.skewed_partitions:
            sv.reasons.append(Reason("logged_skew", f"Spark split {r.skewed_partitions} skewed partition(s) into"
                                     f" {r.skew_splits} parts (from the read's metrics)",
                                     {"skewed": r.skewed_partitions, "splits": r.skew_splits}))
        if r.coalesced_partitions:
            sv.reasons.append(Reason("logged_coalesce", f"{sv.partitions_before or '?'} shuffle partitions were read as"
                                     f" {r.num_partitions} ({r.coalesced_partitions} of them coalesced)",
                                     {"before": sv.partitions_before, "after": r.num_partitions}))
        qv.shuffles.append(sv)
    compute_group_lines(qv.shuffles, conf, dp)
    return qv


def _join_keys(plan: Optional[PlanNode]) -> dict[int, str]:
    """node id of each adaptive read under a join -> a key naming that join (its pre-order index)."""
    out: dict[int, str] = {}
    for jr in join_reads(plan):
        if jr.read.id is not None:
            out.setdefault(jr.read.id, f"join-{jr.join_index}")
    return out
