"""Captures as :class:`~aqe_core.views.query.QueryView` s.

A capture holds the pre-AQE ``bytesByPartitionId`` and per-map sizes, so its lines are exact and
its what-ifs are replayed through the rules (:mod:`aqe_core.advise.whatif`), never Spark.
Reading the file is the open layer's job (:func:`aqe_core.opening.views_from_capture_file`).
"""
from __future__ import annotations

from dataclasses import replace
from typing import Any, Optional

from aqe_core.config import AQEConf, checked_layers
from aqe_core.engine import QueryResult, ReadResult, SimulationReport, adaptive_verdict, one_query, simulate
from aqe_core.engine.codes import COALESCED
from aqe_core.engine.pipeline import skew_after_coalescing
from aqe_core.engine.spec_sizes import spec_reducers, spec_sizes
from aqe_core.engine.trace import trace_join, trace_read
from aqe_core.model.capture import Capture, QueryCapture
from aqe_core.model.plan import PlanNode
from aqe_core.model.query import query_from_capture
from aqe_core.model.reasons import Reason
from aqe_core.model.shared_vocabulary import MAP_SIZES_UNKNOWN as _MAP_SIZES_UNKNOWN
from aqe_core.model.vocabulary import Vocabulary
from aqe_core.model.specs import (
    CoalescedMapperPartitionSpec, CoalescedPartitionSpec, PartialMapperPartitionSpec, PartialReducerPartitionSpec,
)
from aqe_core.versions import SparkVersion, as_version
from aqe_core.views.query import (
    QueryView, ShuffleView, SkewRow, compute_lines, join_reads, join_type_of, regroup_coalesce_lines,
    use_replayed_targets,
)
from aqe_core.views.plan_stages import stages_by_accumulators
from aqe_core.views.planned_capture import planned_shuffles
from aqe_core.views.sentences import BLOCKING_CODES, adaptive_reason, join_decision_sentence, skew_row_sentence

# the one reason this view gives (:mod:`aqe_core.model.vocabulary`; its meaning is shared)
V = Vocabulary("capture", __name__)
MAP_SIZES_UNKNOWN = V.reuse(_MAP_SIZES_UNKNOWN, "per-map sizes were not captured for shuffle {shuffle}{note}")

__all__ = ["capture_label", "skew_rows_from_replay", "view_from_query", "views_from_capture"]


def _pre_split_sizes(specs: list[Any], bytes_: list[int]) -> list[int]:
    """3.0/3.1: the coalesced partitions OptimizeSkewedJoin judged, before it split them. Splits
    of one reducer (and the other side's spec repeated for each of them) collapse back to one."""
    out: list[int] = []
    prev: Any = None
    for s in specs:
        if isinstance(s, PartialReducerPartitionSpec):
            key: tuple[Any, ...] = ("r", s.reducer_index)
            size = bytes_[s.reducer_index]
        else:
            key = ("c", s.start_reducer_index, s.end_reducer_index)
            size = sum(bytes_[s.start_reducer_index:s.end_reducer_index])
        if key != prev:
            out.append(size)
        prev = key
    return out


def _join_context(plan: Optional[PlanNode]) -> dict[int, tuple[str, str, Optional[str], int]]:
    """pre-order index of each read -> (join name, side, join type, join's pre-order index)."""
    out: dict[int, tuple[str, str, Optional[str], int]] = {}
    for jr in join_reads(plan):
        out.setdefault(jr.read_index, (jr.join.name, jr.side, join_type_of(jr.join), jr.join_index))
    return out


def _base_view(q: QueryCapture, r: ReadResult, ctx: dict, keys: dict) -> ShuffleView:
    """The read's shuffle as Spark read it (sizes before and after, coalesced and split counts)."""
    sh = q.shuffle(r.shuffle_id)
    before = list(sh.bytes_by_partition_id) if (sh and sh.bytes_by_partition_id is not None) else None
    specs = r.spark_specs
    after = spec_sizes(specs, before, q, r.shuffle_id) if specs is not None else before
    join, side, jtype = ctx.get(r.read_node, (None, None, None)) if r.read_node is not None else (None, None, None)
    local = bool(specs) and any(isinstance(s, (PartialMapperPartitionSpec, CoalescedMapperPartitionSpec)) for s in specs or ())
    desc = r.description or ("no adaptive read" if specs is None else "")
    label = f"shuffle {r.shuffle_id} (stage {r.stage_id})" + (f": {desc}" if desc else "")
    if join:
        label += f", {side} side of {join}"
    skew_reducers = sorted({s.reducer_index for s in specs or [] if isinstance(s, PartialReducerPartitionSpec)})
    sv = ShuffleView(
        key=f"stage-{r.stage_id}-{r.fragment}", label=label, stage_id=r.stage_id, side=side, join=join, join_type=jtype,
        read_description=desc, partitions_before=sh.num_reducers if sh else None,
        partitions_after=len(specs) if specs is not None else (sh.num_reducers if sh else None),
        sizes_before=before, sizes_after=after,
        coalesced_partitions=sum(1 for s in specs or [] if isinstance(s, CoalescedPartitionSpec) and s.is_coalesced),
        skewed_partitions=len(skew_reducers),
        skew_splits=sum(1 for s in specs or [] if isinstance(s, PartialReducerPartitionSpec)),
        local=local, exact=True, reasons=list(r.reasons), group_key=keys.get(r.read_node) if r.read_node is not None else None)
    if sh and sh.map_sizes is None:
        sv.reasons.append(MAP_SIZES_UNKNOWN.reason(shuffle=sh.shuffle_id,
                                                   note=f": {sh.map_sizes_note}" if sh.map_sizes_note else ""))
    return sv


def skew_rows_from_replay(sv: ShuffleView, r: ReadResult) -> list[SkewRow]:
    """The rules' own sentence per skewed partition of ``sv`` (split into N, or why not), from the
    replay's read ``r`` (its specs: ours where the replay decided, else Spark's)."""
    by_part: dict[int, Reason] = {}
    general: list[Reason] = []
    for reason in r.reasons:
        p = reason.subject.get("partition") if reason.subject else None
        if p is None:
            general.append(reason)
        elif reason.subject.get("side") in (None, sv.side, ""):
            by_part[int(p)] = reason
    blocking = next((g for g in general if g.code in BLOCKING_CODES), None)
    decided = r.simulated_specs if r.simulated_specs is not None else r.spark_specs
    rows = []
    for row in sv.skew_rows:
        parts = {(s.start_map_index, s.end_map_index) for s in decided or []
                 if isinstance(s, PartialReducerPartitionSpec) and s.reducer_index == row.partition}
        text = skew_row_sentence(by_part.get(row.partition), row.explanation, done=bool(parts), blocking=blocking,
                                 evidence=sv.evidence)
        rows.append(SkewRow(row.partition, row.size, len(parts) or None, text))
    return rows


def _shuffle_view(q: QueryCapture, r: ReadResult, v: SparkVersion, conf: AQEConf, ctx: dict, keys: dict) -> ShuffleView:
    sv = _base_view(q, r, ctx, keys)
    specs, before = r.spark_specs, sv.sizes_before
    if skew_after_coalescing(v) and sv.join and specs and before is not None and not sv.local:
        # 3.0/3.1 judge skew on the coalesced partitions, after CoalesceShufflePartitions
        tmp = replace(sv, sizes_before=None, sizes_after=_pre_split_sizes(specs, before), lines=[], skew_rows=[])
        compute_lines(tmp, conf, q.default_parallelism)
        sv.lines, sv.skew_rows, sv.side_analysis = tmp.lines, tmp.skew_rows, tmp.side_analysis
    else:
        compute_lines(sv, conf, q.default_parallelism)
    sv.skew_rows = skew_rows_from_replay(sv, r)
    sv.trace = trace_read(r, v, conf)
    if specs:
        sv.after_reducers, sv.after_split = spec_reducers(specs, len(specs))
    return sv


def _plans(q: QueryCapture) -> tuple[Optional[PlanNode], list[PlanNode], Optional[PlanNode]]:
    """(initial plan, plan versions, final plan) from the captured plan updates."""
    updates = sorted(q.plan_updates, key=lambda u: u.sequence)
    initial = next((u.plan for u in updates if u.event == "start"), q.initial_plan.root if q.initial_plan else None)
    versions = [u.plan for u in updates if u.event == "update"]
    final = versions[-1] if versions else (q.final_plan.root if q.final_plan else initial)
    return initial, versions or ([final] if final is not None else []), final


def view_from_query(capture: Capture, q: QueryCapture, qr: Optional[QueryResult] = None) -> QueryView:
    """The view of one captured query (``qr``: its simulation, run here when not given)."""
    v = as_version(capture.spark_version)
    layers, conf_notes = checked_layers(v, [q.conf])
    conf = AQEConf.resolve(v, layers, validate=False)
    if qr is None:
        qr = simulate(one_query(capture, q)).queries[0]
    initial, versions, final = _plans(q)
    ctx = _join_context(q.final_plan.root if q.final_plan else None)
    joins = [f"{j.initial} -> {j.spark}" for j in qr.joins if j.initial and j.initial != j.spark]
    joins += [f"{j.spark} (skew)" for j in qr.joins if j.spark_skew and (not j.initial or j.initial == j.spark)]
    label = q.label + (f" [{q.preset}]" if q.preset and q.preset not in q.label else "")
    view = QueryView(
        source_kind="capture", query_id=str(q.index), description=label,
        spark_version=v, conf=conf, default_parallelism=q.default_parallelism, status="COMPLETED",
        duration_ms=int(q.duration_ms) if q.duration_ms is not None else None, initial_plan=initial,
        plan_versions=versions, final_plan=final, join_changes=joins,
        adaptive=q.adaptive, warnings=list(q.notes) + [n for n in conf_notes if n not in q.notes],
        model=query_from_capture(capture, q.index))
    if not q.adaptive and q.final_plan is not None:
        view.adaptive_reason = adaptive_reason(adaptive_verdict(q.final_plan.root, q.conf, capture.spark_version))
    keys = {idx: f"join-{j}" for idx, (_n, _s, _t, j) in ctx.items()}
    view.shuffles = [_shuffle_view(q, r, v, conf, {k: c[:3] for k, c in ctx.items()}, keys) for r in qr.reads]
    if not skew_after_coalescing(v):  # 3.0/3.1 lines are over each side's own coalesced partitions
        regroup_coalesce_lines(view.shuffles, conf, q.default_parallelism)
    use_replayed_targets(view.shuffles, _replayed_targets(qr), None)
    _task_times(view, q, qr)
    _read_metric_values(view, q, qr)
    if q.adaptive:  # (after the reads' own numbers: those pair the view's reads with the replay's by order)
        view.shuffles += planned_shuffles(q, qr, conf)
    parts = [f"{s.partitions_before}->{s.partitions_after}"
             + (f" ({s.skewed_partitions} skewed -> {s.skew_splits} splits)" if s.skewed_partitions else "")
             for s in view.shuffles if s.partitions_before is not None]
    view.join_decisions = [join_decision_sentence(j) for j in qr.joins]
    view.join_reason_codes = {r.code for j in qr.joins for r in j.reasons}
    view.join_traces = [trace_join(j, conf) for j in qr.joins]
    view.join_nodes = [j.node for j in qr.joins]
    view.outcome = (("partitions " + ", ".join(parts) if parts else "no shuffle read changes")
                    + (" | joins: " + "; ".join(joins) if joins else "")
                    + f" | rules agree with Spark on {query_agreement(qr)}")
    return view


def _task_times(view: QueryView, q: QueryCapture, qr: QueryResult) -> None:
    """A live capture's task times (the run's own task events): per stage, on the plan's nodes,
    and on each read, matched to the final plan's reads in order when both list the same ones."""
    view.stage_times = {t.stage_id: tt for t in q.spark_stages if (tt := t.task_time()) is not None}
    if not view.stage_times:
        return
    acc_stage = {acc: t.stage_id for t in sorted(q.spark_stages, key=lambda t: t.stage_id) for acc in t.accumulators or ()}
    view.node_stages = stages_by_accumulators(view.final_plan, acc_stage)
    captured = [i for i, n in enumerate(q.final_plan.root.walk()) if _is_read(n)] if q.final_plan else []
    drawn = [n.id for n in view.final_plan.walk() if _is_read(n)] if view.final_plan else []
    if len(captured) != len(drawn):
        return
    by_index = dict(zip(captured, drawn))
    for sv, r in zip(view.shuffles, qr.reads):
        nid = by_index.get(r.read_node) if r.read_node is not None else None
        sid = view.node_stages.get(nid) if nid is not None else None
        sv.task_time = view.stage_times.get(sid) if sid is not None else None


#: the adaptive read metrics a capture's partition specs give exactly (Spark counts them from
#: the same specs: AQEShuffleReadExec's numPartitions, partitionDataSize, numCoalescedPartitions,
#: numSkewedPartitions, numSkewedSplits)
EXACT_READ_METRICS = ("number of partitions", "partition data size", "number of coalesced partitions",
                      "number of skewed partitions", "number of skewed partition splits")


def _read_metric_values(view: QueryView, q: QueryCapture, qr: QueryResult) -> None:
    """A capture's plans name their metrics but hold no values. On the final plan's adaptive
    reads, give the metrics Spark declared (and only those) the values of the read's captured
    partition specs, marked ``source: capture`` (exact); every other metric stays without one."""
    if view.final_plan is None or q.final_plan is None:
        return
    captured = [i for i, n in enumerate(q.final_plan.root.walk()) if _is_read(n)]
    drawn = [n for n in view.final_plan.walk() if _is_read(n)]
    if len(captured) != len(drawn):
        return
    by_index = dict(zip(captured, drawn))
    for sv, r in zip(view.shuffles, qr.reads):
        node = by_index.get(r.read_node) if r.read_node is not None and r.spark_specs is not None else None
        if node is None:
            continue
        sizes = [] if sv.local else list(sv.sizes_after or [])
        values: dict[str, dict[str, Any]] = {
            "number of partitions": {"total": sv.partitions_after},
            "number of coalesced partitions": {"total": sv.coalesced_partitions},
            "number of skewed partitions": {"total": sv.skewed_partitions},
            "number of skewed partition splits": {"total": sv.skew_splits},
        }
        if sizes:
            ordered = sorted(sizes)
            values["partition data size"] = {"total": sum(sizes), "min": ordered[0], "med": ordered[len(ordered) // 2],
                                             "max": ordered[-1], "count": len(sizes)}
        node.metrics = [dict(m, **values[m["name"]], source="capture")
                        if m.get("name") in values and values[m["name"]].get("total") is not None else m
                        for m in node.metrics]


def _is_read(n: PlanNode) -> bool:
    return n.name.startswith(("AQEShuffleRead", "CustomShuffleReader"))


def _replayed_targets(qr: QueryResult) -> dict[int, int]:
    """Stage id -> the coalescing target our replay used (the coalesce rule's reason)."""
    out: dict[int, int] = {}
    for r in qr.reads:
        t = next((x.numbers.get("target_size") for x in r.reasons if x.code == COALESCED), None)
        if r.stage_id is not None and isinstance(t, int):
            out[r.stage_id] = t
    return out


def query_agreement(qr: QueryResult) -> str:
    """"4/4 reads, 1/1 joins (1 undecided)": one query's decisions our rules re-made as Spark did."""
    agree = sum(1 for r in qr.reads if r.agrees)
    j_agree = sum(1 for j in qr.joins if j.agrees)
    undecided = sum(1 for j in qr.joins if j.outcome == "undecided")
    return (f"{agree}/{len(qr.reads)} reads" + (f", {j_agree}/{len(qr.joins)} joins" if qr.joins else "")
            + (f" ({undecided} undecided)" if undecided else ""))


def views_from_capture(capture: Capture) -> tuple[list[QueryView], SimulationReport]:
    """Views of every query of a capture, with the simulation report they came from."""
    report = simulate(capture)  # one result per query, in order (indexes repeat across workloads)
    return [view_from_query(capture, q, qr) for q, qr in zip(capture.queries, report.queries)], report


def capture_label(capture: Capture, report: SimulationReport) -> str:
    """How the sources list names a capture: what ran, on which release, how many reads agree."""
    run = capture.run or {}
    what = run.get("workload") or ("SQL" if run.get("sql") else run.get("kind", "capture"))
    return (f"capture of {what}, Spark {capture.spark_version}"
            f" ({report.agreement.summary()})")
