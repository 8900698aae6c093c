"""The AQE Lens listener's events in an event log: exact statistics for any Spark job.

A job run with the listener (``python -m aqe_core listener --spark-conf``; docs/listener.md)
logs one ``AqeLensQueryEvent`` per finished adaptive SQL execution. Its payload is the query as a
capture records it: the final plan with stage, join and distribution details, each stage's
runtime statistics, ``bytesByPartitionId``, per-map block sizes, the read specs Spark used and
the explicitly set ``spark.sql.*`` values. The initial plan and every intermediate plan come
from the log's own SQL events, so the two together are a :class:`Capture`: the engine replays
it exactly as it replays a capture file. A payload that does not validate is left out with a
warning (the execution is then shown from the plain log).
"""
from __future__ import annotations

from typing import Any, Optional

from aqe_core.model.capture import Capture, CaptureFormatError, CapturedPlan, PlanUpdate, QueryCapture, SparkStageTiming
from aqe_core.model.eventlog import EventLog, SQLExecution
from aqe_core.readers.eventlog.jsonfast import parse_json
from aqe_core.readers.eventlog.packed import unpack
from aqe_core.model.scala_text import parse_specs, split_top_level
from aqe_core.model.specs import spec_to_dict

#: payload schema versions this reader understands
SCHEMAS = (1,)


def listener_capture(log: EventLog, *, versions: bool = True) -> Optional[Capture]:
    """The listener's executions of ``log`` as a capture (None when the log has none).
    ``versions=False``: of the plans AQE posted, only the first and the last (what a replay and
    the fleet scan's rows read; the ones between are built only to be drawn)."""
    if not log.listener_payloads:
        return None
    queries: list[QueryCapture] = []
    listener_version = None
    payload_version = None
    for eid in sorted(log.listener_payloads):
        try:
            doc = _payload(log.listener_payloads[eid], eid)
            q = QueryCapture.from_dict(_as_capture(doc["query"]), f"listener event of execution {eid}")
        except (ValueError, CaptureFormatError, RecursionError) as e:
            log.warnings.append(f"listener event of execution {eid} ignored: {str(e)[:300]}")
            continue
        listener_version = listener_version or doc.get("listener_version")
        if isinstance(doc.get("spark_version"), str):
            payload_version = payload_version or doc["spark_version"]
        ex = log.executions.get(eid)
        _from_log(q, eid, ex, log, versions)
        queries.append(q)
    if not queries:
        return None
    # a side file (event logging off) holds only the listener's events: its payload names the release
    cap = Capture(log.spark_version or payload_version or "", queries, app_id=log.application.id,
                  run={"kind": "listener", "log": log.path, "listener_version": listener_version},
                  producer={"name": "aqe-lens-listener", "version": listener_version})
    return cap


def _payload(stored: bytes, eid: int) -> dict[str, Any]:
    doc = parse_json(unpack(stored))  # the reader keeps it packed; parsed as json.loads would, in C
    if not isinstance(doc, dict) or not isinstance(doc.get("query"), dict):
        raise ValueError("the payload is not a listener document (no \"query\" object)")
    if doc.get("schema") not in SCHEMAS:
        raise ValueError(f"listener payload schema {doc.get('schema')!r} is not one this reader knows {SCHEMAS}")
    if doc.get("execution_id", eid) != eid:
        raise ValueError("the payload names another execution")
    return doc


def _as_capture(query: dict[str, Any]) -> dict[str, Any]:
    """The listener sends Spark's strings where the recorder parsed them in Python: a node's
    ``requiredChildDistribution`` (``req_text``) and a read's ``partitionSpecs`` (``specs_text``)."""
    plan = query.get("final_plan")
    stack = [plan] if isinstance(plan, dict) else []
    while stack:
        node = stack.pop()
        info = node.get("info")
        if isinstance(info, dict) and isinstance(info.get("req_text"), str):
            info["req"] = split_top_level(info.pop("req_text"))
        kids = node.get("children")
        stack.extend(k for k in (kids if isinstance(kids, list) else []) if isinstance(k, dict))
    notes = query.setdefault("notes", [])
    for r in query.get("reads") or []:
        if isinstance(r, dict) and isinstance(r.get("specs_text"), str):
            specs = parse_specs(r.pop("specs_text"))
            n = r.pop("specs_count", None)
            if isinstance(n, int) and n != len(specs) and isinstance(notes, list):
                notes.append(f"read at node {r.get('node')}: parsed {len(specs)} of {n} partition specs")
            r["specs"] = [spec_to_dict(x) for x in specs]
    return query


def _from_log(q: QueryCapture, eid: int, ex: Optional[SQLExecution], log: EventLog, versions: bool = True) -> None:
    """What the log itself holds about the execution: its description, the plans AQE posted
    (the initial plan is the start event's), its timings and stages."""
    q.index = eid
    q.execution_ids = [eid]
    if ex is None:
        q.notes.append("the log has no SQL execution events for this listener event")
        return
    q.label = (ex.description or f"execution {eid}")[:500]
    if ex.duration is not None:
        q.duration_ms = float(ex.duration)
    seq = 0
    initial = ex.initial_plan  # (built on each read: once)
    if initial is not None:
        q.plan_updates.append(PlanUpdate(eid, "start", "isFinalPlan=true" in initial.description, initial, seq))
        seq += 1
        if initial.name == "AdaptiveSparkPlan" and initial.children:
            q.initial_plan = CapturedPlan(initial.children[0], [])
    posted = ex.plan_versions if versions else [ex.final_plan] if ex.num_plan_versions else []
    for plan in (p for p in posted if p is not None):
        q.plan_updates.append(PlanUpdate(eid, "update", "isFinalPlan=true" in plan.description, plan, seq))
        seq += 1
    for sid in ex.stage_ids:
        st = log.stages.get(sid)
        if st is not None:
            q.spark_stages.append(SparkStageTiming(sid, st.name, st.num_tasks, st.submission_time,
                                                   st.completion_time, st.failed))
