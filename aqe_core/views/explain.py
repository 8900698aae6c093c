"""``explain``: every adaptive read of a source, with what each of its partitions is and how
that is known (issue 11). One view model for the CLI's JSON, the Partitions page and the report.

Exact sources (a capture, a log with listener events) give each partition's kind and reducer
ids from the specs Spark used. A plain event log gives Spark's own counts (coalesced ranges,
skewed reducers, split parts) and sizes in read order: a position is a reducer id only when
the read neither coalesced nor split (then position i is reducer i), and a skewed reducer's id
is ``null`` (the log does not say which). Nothing here calls a partition skewed that Spark did
not split. The JSON is documented in docs/explain-json.md.
"""
from __future__ import annotations

from typing import Any, Optional

from aqe_core.model.engines import spark_name
from aqe_core.engine.spec_sizes import spec_sizes
from aqe_core.model.evidence import Evidence
from aqe_core.model.specs import (
    CoalescedMapperPartitionSpec, CoalescedPartitionSpec, PartialMapperPartitionSpec, PartialReducerPartitionSpec,
)
from aqe_core.views.from_eventlog import NO_READ_METRICS
from aqe_core.views.plan_timeline import read_versions
from aqe_core.views.query import QueryView, ShuffleView, join_type_of

__all__ = ["explain_views"]


def explain_views(views: list[QueryView], execution: Optional[str] = None) -> dict[str, Any]:
    """``{"executions": [...]}`` for every view (or only ``execution``)."""
    chosen = [v for v in views if execution is None or v.query_id == str(execution)]
    return {"executions": [_execution(v) for v in chosen]}


def _execution(view: QueryView) -> dict[str, Any]:
    reads = _exact_reads(view) if view.source_kind == "capture" else [_logged_read(s) for s in view.shuffles]
    joins = [{"decision": str(d), "trace": [t.to_dict() for t in tr]}
             for d, tr in zip(view.join_decisions, view.join_traces)]
    if not joins:  # a plain log: the strategies of its final plan, as run
        joins = [{"decision": j, "trace": []} for j in plan_joins(view)]
    return {"id": view.query_id, "description": view.description, "spark_version": str(view.spark_version),
            "release": view.release_label, "engine": view.engine, "engine_changes": list(view.engine_changes),
            "single_partition_exchanges": view.single_partition_exchanges,
            "default_parallelism": view.default_parallelism,
            "parallelism": view.parallelism_how, "adaptive": view.adaptive, "reads": reads, "joins": joins, "join_changes": list(view.join_changes)}


def lines_json(s: Optional[ShuffleView], evidence: Evidence) -> list[dict[str, Any]]:
    if s is None:
        return []
    return [{**ln.to_dict(), "evidence": (ln.evidence if evidence is Evidence.EXACT else Evidence.ESTIMATE).value}
            for ln in s.lines]


def _exact_reads(view: QueryView) -> list[dict[str, Any]]:
    """From the capture's reads: the specs Spark used, so every partition's reducers are known."""
    if view.model is None or view.model.raw is None:
        return []
    capture, index = view.model.raw
    q = next((x for x in capture.queries if x.index == index), None)
    if q is None:
        return []
    by_stage = {s.stage_id: s for s in view.shuffles if s.stage_id is not None}
    decided = read_versions(view.plan_versions)
    out = []
    for r in q.reads:
        sh = q.shuffle(r.shuffle_id)
        before = list(sh.bytes_by_partition_id) if sh and sh.bytes_by_partition_id is not None else None
        sizes = spec_sizes(r.specs, before, q, r.shuffle_id) if before is not None else None
        partitions: list[dict[str, Any]] = []
        split: dict[int, list[Any]] = {}
        for i, spec in enumerate(r.specs):
            b = sizes[i] if sizes is not None and i < len(sizes) else None
            partitions.append({"position": i, "bytes": b, **_spec_kind(spec)})
            if isinstance(spec, PartialReducerPartitionSpec):
                split.setdefault(spec.reducer_index, []).append(b)
        sv = by_stage.get(r.stage_id)
        skewed = [{"reducer": red, "parts": len(parts),
                   "bytes": before[red] if before is not None and red < len(before) else None}
                  for red, parts in sorted(split.items())]
        # a split partition's sentence is both its skew row's explanation and one of the reasons: once
        sentences = list(dict.fromkeys([p.explanation for p in (sv.skew_rows if sv else [])]
                                       + [x.message for x in (sv.reasons if sv else [])]))
        out.append({"node_id": r.node, "stage_id": r.stage_id, "evidence": Evidence.EXACT.value,
                    "partitions_before": len(before) if before is not None else None,
                    "partitions": partitions, "skewed_reducers": skewed, "lines": lines_json(sv, Evidence.EXACT),
                    "sentences": sentences, "decided_in_version": decided.get(r.stage_id),
                    "trace": [t.to_dict() for t in (sv.trace if sv else [])]})
    return out


def _spec_kind(spec: Any) -> dict[str, Any]:
    if isinstance(spec, CoalescedPartitionSpec):
        n = spec.end_reducer_index - spec.start_reducer_index
        return {"kind": "coalesced" if n > 1 else "reducer",
                "reducers": [spec.start_reducer_index, spec.end_reducer_index]}
    if isinstance(spec, PartialReducerPartitionSpec):
        return {"kind": "split part", "reducers": [spec.reducer_index, spec.reducer_index + 1],
                "maps": [spec.start_map_index, spec.end_map_index]}
    if isinstance(spec, PartialMapperPartitionSpec):
        return {"kind": "local", "reducers": [spec.start_reducer_index, spec.end_reducer_index],
                "maps": [spec.map_index, spec.map_index + 1]}
    if isinstance(spec, CoalescedMapperPartitionSpec):
        return {"kind": "local", "reducers": None, "maps": [spec.start_map_index, spec.end_map_index]}
    return {"kind": "unknown", "reducers": None}


def plan_joins(view: QueryView) -> list[str]:
    """Each join of the final plan with its strategy as run (the plan Spark logged); what AQE
    changed is in the view's ``join_changes`` (node ids differ between plan versions).

    A sentence per join: ``node 7: BroadcastHashJoin, Inner, build right (as run, from the log's final plan)``."""
    plan = view.final_plan
    if plan is None:
        return []
    out = []
    for n in plan.walk():
        if "Join" not in n.name or n.name.startswith("Reused"):
            continue
        desc = n.description or ""
        build = "build right" if "BuildRight" in desc else "build left" if "BuildLeft" in desc else ""
        spark = spark_name(n.name, desc)
        name = n.name if spark in ("", n.name) else f"{spark} (run as {n.name})"  # (an engine's operator)
        what = ", ".join(x for x in (name, join_type_of(n) or "", build) if x)
        out.append(f"node {n.id}: {what} (as run, from the log's final plan)")
    return out


def _logged_read(s: ShuffleView) -> dict[str, Any]:
    """From a plain log: Spark's counts and sizes in read order, nothing more."""
    sizes = s.sizes_after or []
    plain = not s.local and not s.coalesced_partitions and not s.skewed_partitions \
        and s.partitions_before is not None and s.partitions_before == len(sizes)
    kind = "local" if s.local else "reducer" if plain else "unknown"
    partitions = [{"position": i, "bytes": b, "kind": kind, "reducers": [i, i + 1] if plain else None}
                  for i, b in enumerate(sizes)]
    no_metrics = any(r.code == NO_READ_METRICS for r in s.reasons)
    if no_metrics:
        skewed: Optional[list[dict[str, Any]]] = None  # the source cannot tell
    elif s.skewed_partitions:
        one = s.skewed_partitions == 1
        skewed = [{"reducer": None, "parts": s.skew_splits if one else None, "bytes": None}
                  for _ in range(s.skewed_partitions)]
    else:
        skewed = []
    return {"node_id": s.node_id, "stage_id": s.stage_id, "evidence": Evidence.SPARK_METRIC.value,
            "adaptive_read": s.adaptive_read, "rebalance": s.rebalance, "partitions_before": s.partitions_before,
            "partitions_after": s.partitions_after, "local": s.local, "partitions": partitions, "skewed_reducers": skewed,
            "skewed_parts_total": s.skew_splits if s.skewed_partitions else 0,
            "lines": lines_json(s, Evidence.ESTIMATE), "sentences": [r.message for r in s.reasons]
            + ([s.approx_reason] if s.approx_reason else [])}
