"""One event log as fleet-scan rows (issue 14): a row per SQL execution with its AQE outcome and
the triage's findings, a row per finding, and what each built-in preset would change.

Pure Python over :func:`aqe_core.opening.load_source` and the views: the scan job calls it in
the executors' Python, once per file. A file that cannot be read is one execution row carrying
its error (``execution_id`` null), never an exception: one bad log must not stop a fleet scan.
"""
from __future__ import annotations

import gc
import json
import threading
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any, Iterator, Mapping, Optional

from aqe_core.config import AQEConf
from aqe_core.model.presets import BUILTIN_PRESETS, Preset
from aqe_core.opening import LoadedSource, SourceError, load_source, scan_limits
from aqe_core.advise.whatif import simulate_preset
from aqe_core.views.query import QueryView
from aqe_core.views.triage import FINDINGS, triage_row

__all__ = ["EXECUTION_COLUMNS", "FINDING_COLUMNS", "PRESETS", "QUERY_COLUMNS", "ExecutionRow", "FindingRow", "QueryRow",
           "scan_file"]

#: the presets a fleet-wide change is simulated for (the query's own is what Spark did)
PRESETS = [p for p in BUILTIN_PRESETS if p.name != "actual"]


@dataclass
class ExecutionRow:
    file: str
    app_id: Optional[str] = None
    source_label: Optional[str] = None  # what the log or capture is (application name and id, release)
    app_name: Optional[str] = None  # one job's runs share it: the fleet's trend follows it
    app_start_ms: Optional[int] = None  # when the application started (epoch ms): the trend's time
    spark_version: Optional[str] = None
    execution_id: Optional[int] = None
    description: str = ""
    status: Optional[str] = None
    duration_ms: Optional[int] = None
    evidence: Optional[str] = None  # exact | spark-metrics: how the partition sizes are known
    partitions_before: Optional[int] = None
    partitions_after: Optional[int] = None
    skew_splits: Optional[int] = None
    joins: str = ""
    findings: str = ""  # finding codes, comma separated (views.triage.FINDINGS)
    unsplit_why: str = ""
    read_stage_tasks: str = ""
    wasted_task_ms: int = 0
    score: float = 0.0
    outcome: str = ""
    #: preset name -> what it would change ("" when nothing), JSON text in the table
    preset_changes: dict[str, str] = field(default_factory=dict)
    error: Optional[str] = None


@dataclass
class FindingRow:
    file: str
    app_id: Optional[str]
    execution_id: int
    finding: str
    label: str
    detail: str = ""


@dataclass
class QueryRow:
    """One query of a log (:mod:`aqe_core.views.query_groups`): its executions (a streaming
    query's micro-batches, a statement a Thrift server or a notebook ran again), their span, and
    how often each AQE decision took each outcome, with the executions where it changed."""

    file: str
    app_id: Optional[str]
    app_name: Optional[str]
    query: str  # the group's key: the plan's shape with join strategies aside
    name: str  # its first execution's description (a streaming query's name and first batch)
    executions: int
    first_execution: Optional[int]
    last_execution: Optional[int]
    first_start_ms: Optional[int]
    last_end_ms: Optional[int]
    span_ms: Optional[int]
    evidence: str  # exact | spark-metric, comma separated where the executions differ
    not_final: int  # executions without AQE's final plan (not counted in the decisions)
    changes: int  # how many times a decision changed from one execution to the next
    decisions: str  # each decision's outcomes with how many executions took each, in words
    decisions_json: str  # the same as data: [{kind, key, label, distribution, changed, changes}]
    change_sentences: str  # the change points kept, one sentence each, newline separated


EXECUTION_COLUMNS = [f for f in ExecutionRow.__dataclass_fields__]
FINDING_COLUMNS = [f for f in FindingRow.__dataclass_fields__]
QUERY_COLUMNS = [f for f in QueryRow.__dataclass_fields__]


#: the preset of what Spark did, which every other preset is compared with
ACTUAL = next(p for p in BUILTIN_PRESETS if p.name == "actual")


def _preset_conf(v: QueryView, p: Preset, confs: dict[tuple[str, int], tuple[AQEConf, AQEConf]]) -> AQEConf:
    """``p.conf_for(v.conf)``, made once per log for the executions that share a conf object
    (the reader resolves one per distinct set of settings): ``confs`` lives as long as the views."""
    hit = confs.get((p.name, id(v.conf)))
    if hit is not None and hit[0] is v.conf:
        return hit[1]
    conf = p.conf_for(v.conf)
    confs[(p.name, id(v.conf))] = (v.conf, conf)
    return conf


def _changes(v: QueryView, confs: dict[tuple[str, int], tuple[AQEConf, AQEConf]],
             replays: Mapping[str, Any]) -> dict[str, str]:
    """For each preset: partitions, splits and join strategies that differ from what Spark did
    (``replays``: the source's kept replays, where what Spark did is read for an exact view)."""
    actual = simulate_preset(v, ACTUAL, _preset_conf(v, ACTUAL, confs), replay=replays.get(v.query_id))
    out: dict[str, str] = {}
    for p in PRESETS:
        try:
            got = simulate_preset(v, p, _preset_conf(v, p, confs))
        except Exception:  # noqa: BLE001 - one preset that cannot apply leaves the others
            out[p.name] = "not simulated"
            continue
        diff = []
        if got.partitions_after != actual.partitions_after:
            diff.append(f"partitions {actual.partitions_after} -> {got.partitions_after}")
        if (got.splits or 0) != (actual.splits or 0):
            diff.append(f"skew splits {actual.splits or 0} -> {got.splits or 0}")
        if got.join_strategies != actual.join_strategies:
            diff.append("joins " + "; ".join(got.join_strategies))
        out[p.name] = ", ".join(diff)
    return out


def _row(path: str, src: LoadedSource, v: QueryView, presets: bool,
         confs: dict[tuple[str, int], tuple[AQEConf, AQEConf]]) -> tuple[ExecutionRow, list[FindingRow]]:
    t = triage_row(v)
    app = src.app_id
    evidence = v.model.evidence.value if v.model is not None else None
    r = ExecutionRow(path, app, src.label, src.app_name, src.app_start_ms, src.spark_version,
                     int(v.query_id) if v.query_id.isdigit() else None,
                     t.description[:500], v.status, v.duration_ms, evidence,
                     sum(s.partitions_before or 0 for s in v.shuffles if not s.local) or None,
                     sum(s.partitions_after or 0 for s in v.shuffles if not s.local) or None,
                     sum(s.skew_splits or 0 for s in v.shuffles) or None, "; ".join(v.join_changes),
                     ",".join(t.findings), t.summary.split(" | ")[0] if "skew_not_split" in t.findings else "",
                     t.stage_time, t.wasted_ms, round(t.score, 3), v.outcome[:500])
    if presets and v.adaptive:
        r.preset_changes = _changes(v, confs, src.replays)
    found = [FindingRow(path, app, r.execution_id if r.execution_id is not None else -1, f, FINDINGS[f][0],
                        r.unsplit_why if f == "skew_not_split" else (t.stage_time if f == "straggler" else ""))
             for f in t.findings]
    return r, found


def _fields(row: ExecutionRow | FindingRow | QueryRow) -> dict[str, Any]:
    """A row's fields as a dict (``dataclasses.asdict`` without its deep copy: a row's one
    container, ``preset_changes``, is made for that row alone)."""
    return dict(vars(row))


#: the cyclic collector's first threshold while a log is scanned (Python's default: 700)
_SCAN_GC_THRESHOLD = 20_000
_gc_lock = threading.Lock()
_gc_scans = 0
_gc_saved: tuple[int, int, int] = (700, 10, 10)


@contextmanager
def _fewer_collections() -> Iterator[None]:
    """The cyclic collector runs less often while a log is scanned, and as before after it.
    A scan allocates hundreds of thousands of dicts and lists that live until the log's rows are
    made, so at the default threshold the collector runs thousands of times over them: about 5%
    of a plan-heavy log's time. A read log leaves no cycle (the reader drops its own); an exact
    replay's stage trees are cycles, which the collector still frees, a little later (+1 MB on
    a listener log). Nested or concurrent scans restore the thresholds once, at the last."""
    global _gc_scans, _gc_saved
    with _gc_lock:
        if _gc_scans == 0:
            _gc_saved = gc.get_threshold()
            gc.set_threshold(max(_gc_saved[0], _SCAN_GC_THRESHOLD), *_gc_saved[1:])
        _gc_scans += 1
    try:
        yield
    finally:
        with _gc_lock:
            _gc_scans -= 1
            if _gc_scans == 0:
                gc.set_threshold(*_gc_saved)


def scan_file(path: str, *, presets: bool = True, plans: bool = False,
              queries: Optional[list[dict[str, Any]]] = None) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """Rows (as dicts) for every SQL execution of the log or capture at ``path``, from views
    without the plans no row reads (``plans=True``: from the full views, the same rows).
    ``queries``: a list the log's query rows (:class:`QueryRow`) are added to."""
    with _fewer_collections():
        return _scan_file(path, presets, plans, queries)


def query_rows(path: str, src: LoadedSource) -> list[dict[str, Any]]:
    """A :class:`QueryRow` per query of ``src`` (none where its views cannot be grouped)."""
    from aqe_core.views.query_groups import group_views

    try:
        groups = group_views(src.views)
    except Exception:  # noqa: BLE001 - a fleet scan reports, never aborts: the executions' rows stay
        return []
    out = []
    for g in groups:
        first, last = g.execution_ids[0], g.execution_ids[-1]
        span = g.last_end_ms - g.first_start_ms if g.first_start_ms is not None and g.last_end_ms is not None else None
        decisions = g.ordered_decisions()
        out.append(_fields(QueryRow(
            path, src.app_id, src.app_name, g.query, g.name[:500], g.count, int(first) if first.isdigit() else None,
            int(last) if last.isdigit() else None, g.first_start_ms, g.last_end_ms, max(0, span) if span is not None else None,
            ",".join(sorted(g.evidence)), g.not_final, sum(d.changed for d in decisions), g.decisions_text(),
            json.dumps([d.to_dict() for d in decisions], default=str), "\n".join(c.sentence for c in g.changes()))))
    return out


def _scan_file(path: str, presets: bool, plans: bool,
               queries: Optional[list[dict[str, Any]]]) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    try:
        src = load_source(path, plans=plans, limits=scan_limits())
    except SourceError as e:
        return [_fields(ExecutionRow(path, error=str(e)[:500]))], []
    except Exception as e:  # noqa: BLE001 - a fleet scan reports, never aborts
        return [_fields(ExecutionRow(path, error=f"cannot read: {type(e).__name__}"))], []
    execs: list[dict[str, Any]] = []
    finds: list[dict[str, Any]] = []
    confs: dict[tuple[str, int], tuple[AQEConf, AQEConf]] = {}
    for v in src.views:
        try:
            r, f = _row(path, src, v, presets, confs)
        except Exception as e:  # noqa: BLE001 - a fleet scan reports, never aborts
            r, f = ExecutionRow(path, src.app_id, src.label, src.app_name, src.app_start_ms, src.spark_version,
                                error=f"execution {v.query_id}: {type(e).__name__}"), []
        execs.append(_fields(r))
        finds.extend(_fields(x) for x in f)
    if queries is not None:
        queries.extend(query_rows(path, src))
    if not execs:
        execs.append(_fields(ExecutionRow(path, src.app_id, src.label, src.app_name, src.app_start_ms, src.spark_version,
                                         error="no SQL execution in this log")))
    return execs, finds
