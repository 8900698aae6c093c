"""Streaming event-log reader: bytes -> lines -> events -> :class:`EventLog`.

Memory grows with what is kept (plans, per-execution metric summaries, per-task shuffle read
sizes, post-AQE partition sizes), not with the log's size: events are consumed one line at a
time, per-task SQL metric slots are aggregated and dropped when their execution ends (as the
Spark UI does), and event types that are not needed are skipped by peeking at the
``{"Event":"..."`` prefix without parsing the line. ``SparkListenerTaskEnd`` lines, most of a
large log, are read with a few anchored regular expressions (falling back to ``json`` when a
line does not have the layout Spark's JsonProtocol writes).
"""
from __future__ import annotations

import json
import os
import re
import tarfile
import time
import zipfile
import zlib
from array import array
from itertools import chain as _chain
from collections import defaultdict
from typing import Any, Callable, Iterable, Iterator

from aqe_core.eventlog import codecs, metrics as M
from aqe_core.eventlog.errors import DEFAULT_LIMITS, DecodeError, EventLogError, LimitExceeded, Limits
from aqe_core.eventlog.model import (
    NOT_IN_LOG, EventLog, ShuffleRead, SQLExecution, StageInfo,
)
from aqe_core.eventlog.planinfo import SHUFFLE_READ_NAMES, build_plan, graph_nodes, plan_metrics
from aqe_core.eventlog.sources import IterStream, LogSource, Part, open_source
from aqe_core.model.plan import PlanNode

ProgressFn = Callable[[int, "int | None"], None]

SQL_PREFIX = "org.apache.spark.sql.execution.ui."
_MAX_SAMPLES = 5
_I64_MIN, _I64_MAX = -(2 ** 63), 2 ** 63 - 1
#: what a malformed event may raise while a handler reads it (the event is skipped, with a warning)
_FIELD_ERRORS = (KeyError, TypeError, ValueError, AttributeError, IndexError, RecursionError, OverflowError)
#: what reading a part of an archive may raise besides the codecs' own errors
_CONTAINER_ERRORS = (zipfile.BadZipFile, zlib.error, EOFError, tarfile.TarError, RuntimeError, NotImplementedError)

# --------------------------------------------------------------------------------------------
# line splitting


class _Lines:
    """Split decoded chunks into lines with a bounded line length."""

    def __init__(self, max_line: int):
        self.max_line = max_line
        self.oversize: list[int] = []  # lengths of skipped lines
        self.partial_tail = 0  # bytes of an unterminated last line (dropped)

    def split(self, chunks: Iterable[bytes]) -> Iterator[list[bytes]]:
        pending: list[bytes] = []
        plen = 0
        skipping = False
        max_line = self.max_line
        for chunk in chunks:
            start = 0
            if skipping:
                i = chunk.find(b"\n")
                if i < 0:
                    plen += len(chunk)
                    continue
                self.oversize.append(plen + i)
                skipping = False
                plen = 0
                start = i + 1
            elif pending:
                i = chunk.find(b"\n")
                if i < 0:
                    pending.append(chunk)
                    plen += len(chunk)
                    if plen > max_line:
                        pending = []
                        skipping = True
                    continue
                pending.append(chunk[:i])
                line = b"".join(pending)
                pending = []
                plen = 0
                start = i + 1
                if len(line) > max_line:
                    self.oversize.append(len(line))
                else:
                    yield [line]
            j = chunk.rfind(b"\n")
            if j < start:
                tail = chunk[start:] if start else chunk
            else:
                lines = chunk[start:j].split(b"\n")
                if max_line < len(chunk):
                    keep = [ln for ln in lines if len(ln) <= max_line]
                    if len(keep) != len(lines):
                        self.oversize.extend(len(ln) for ln in lines if len(ln) > max_line)
                    lines = keep
                yield lines
                tail = chunk[j + 1 :]
            if tail:
                pending = [tail]
                plen = len(tail)
                if plen > max_line:
                    pending = []
                    skipping = True
        if skipping:
            self.oversize.append(plen)
        elif pending:
            rest = b"".join(pending)
            if rest.strip():
                self.partial_tail = len(rest)


# --------------------------------------------------------------------------------------------
# fast extraction of the fields we need from task/stage events

_TE_SUCCESS = re.compile(
    rb'\{"Event":"SparkListenerTaskEnd","Stage ID":(\d+),"Stage Attempt ID":(\d+),"Task Type":"[^"\\]*",'
    rb'"Task End Reason":\{"Reason":"Success"\},"Task Info":\{"Task ID":(\d+),"Index":(\d+),"Attempt":\d+,'
    rb'(?:"Partition ID":-?\d+,)?"Launch Time":-?\d+,"Executor ID":"[^"\\]*","Host":"[^"\\]*",'
    rb'"Locality":"[^"\\]*","Speculative":(?:true|false),"Getting Result Time":-?\d+,"Finish Time":(\d+),'
    rb'"Failed":false,"Killed":false,"Accumulables":\['
)
_TE_HEAD = re.compile(rb'"Stage ID":(-?\d+),"Stage Attempt ID":(-?\d+)')
_TE_INFO = re.compile(rb'"Task Info":\{"Task ID":(-?\d+),"Index":(-?\d+),"Attempt":(-?\d+)')
_TE_FINISH = re.compile(
    rb'"Finish Time":(-?\d+),"Failed":(true|false),"Killed":(true|false),"Accumulables":\['
)
_ACC = re.compile(rb'\{"ID":(\d+),(?:"Name":"[^"\\]*(?:\\.[^"\\]*)*",)?"Update":("?)(-?\d+)[",]')
# SQL metric updates are strings ("Update":"123"); names without escapes (the common case)
# (internal.metrics.* entries carry numeric updates and are skipped early by the lookahead)
_ACC_SQL = re.compile(rb'\{"ID":(\d+),"Name":"(?!internal\.metrics\.)[^"\\]*","Update":"(-?\d+)"')
_SRM = re.compile(
    rb'"Shuffle Read Metrics":\{"Remote Blocks Fetched":-?\d+,"Local Blocks Fetched":-?\d+,'
    rb'"Fetch Wait Time":-?\d+,"Remote Bytes Read":(-?\d+),(?:"Remote Bytes Read To Disk":-?\d+,)?'
    rb'"Local Bytes Read":(-?\d+),"Total Records Read":(-?\d+)'
)
_STAGE_INFO = re.compile(
    rb'"Stage Info":\{"Stage ID":(-?\d+),"Stage Attempt ID":(-?\d+),"Stage Name":"((?:[^"\\]|\\.)*)",'
    rb'"Number of Tasks":(-?\d+)'
)
_SUBMISSION = re.compile(rb'"Submission Time":(-?\d+)')
_COMPLETION = re.compile(rb'"Completion Time":(-?\d+)')


class _BadNumber(ValueError):
    """A log field that should hold a 64-bit integer does not; the message names only the kind
    of value (never the value), so it may be shown as it is."""


def _as_int(v: Any) -> int:
    if isinstance(v, bool):
        raise _BadNumber("boolean where a number was expected")
    if isinstance(v, str):
        if len(v) > 20:
            raise _BadNumber("a number with too many digits")
        try:
            v = int(v)
        except ValueError:
            raise _BadNumber("text where a number was expected") from None
    if not isinstance(v, int):
        raise _BadNumber(f"{type(v).__name__} where a number was expected")
    if not _I64_MIN <= v <= _I64_MAX:
        raise _BadNumber("a number outside the 64-bit range")
    return v


def parse_task_end_fast(line: bytes):
    """(stage, attempt, task_id, index, successful, [acc0, value0, acc1, value1, ...],
    (remote, local, records) | None), or None when the line does not have the layout
    Spark's JsonProtocol writes. Only string-valued (SQL metric) updates are returned."""
    ok = _TE_SUCCESS.match(line)
    if ok is not None:  # the common case: one anchored match
        i = ok.end()
        head = (int(ok.group(1)), int(ok.group(2)), int(ok.group(3)), int(ok.group(4)), ok.group(5) != b"0")
    else:
        h = _TE_HEAD.search(line, 0, 200)
        if h is None:
            return None
        ti = _TE_INFO.search(line, h.end())
        if ti is None:
            return None
        fin = _TE_FINISH.search(line, ti.end())
        if fin is None:
            return None
        i = fin.end()
        successful = fin.group(2) == b"false" and fin.group(3) == b"false" and int(fin.group(1)) != 0
        head = (int(h.group(1)), int(h.group(2)), int(ti.group(1)), int(ti.group(2)), successful)
    j = line.find(b'"Task Executor Metrics"', i)
    if j < 0:
        j = line.find(b'"Task Metrics"', i)
        if j < 0:
            j = len(line)
    # Only string-valued updates matter (SQL metrics); internal.metrics.* carry numbers and are
    # never plan metrics. Fall back to the escape-aware pattern when a name has a backslash.
    if line.find(b"\\", i, j) < 0:
        # JsonProtocol sorts accumulables by id and the internal.metrics.* ones (numeric updates)
        # usually come last: stop there unless a string update still follows.
        k = line.find(b'"Name":"internal.metrics.', i, j)
        if k < 0 or line.find(b'"Update":"', k, j) >= 0:
            k = j
        accs = list(map(int, _chain(*_ACC_SQL.findall(line, i, k))))
    else:
        accs = [int(x) for a, b, q in _ACC.findall(line, i, j) if q for x in (a, b)]
    k = line.find(b'"Shuffle Read Metrics":', j)
    srm = _SRM.match(line, k) if k >= 0 else None
    if srm is None:
        if k >= 0:
            return None
        read = None
    else:
        read = (int(srm.group(1)), int(srm.group(2)), int(srm.group(3)))
    return (*head, accs, read)


def parse_task_end_json(d: dict):
    """Same tuple as :func:`parse_task_end_fast`, from a parsed event."""
    info = d["Task Info"]
    accs: list[int] = []
    for a in info.get("Accumulables") or ():
        if not isinstance(a, dict) or not isinstance(a.get("Update"), str) or "ID" not in a:
            continue
        try:
            acc, value = _as_int(a["ID"]), int(a["Update"])
        except (ValueError, TypeError):
            continue
        accs.append(acc)
        accs.append(value)
    read = None
    tm = d.get("Task Metrics")
    if isinstance(tm, dict) and isinstance(tm.get("Shuffle Read Metrics"), dict):
        s = tm["Shuffle Read Metrics"]
        read = (_as_int(s.get("Remote Bytes Read", 0)), _as_int(s.get("Local Bytes Read", 0)),
                _as_int(s.get("Total Records Read", 0)))
    finish = _as_int(info.get("Finish Time", 0))
    successful = finish != 0 and not info.get("Failed", False) and not info.get("Killed", False)
    return (_as_int(d["Stage ID"]), _as_int(d.get("Stage Attempt ID", 0)), _as_int(info["Task ID"]),
            _as_int(info["Index"]), successful, accs, read)


# --------------------------------------------------------------------------------------------
# live state (mirrors SQLAppStatusListener)


class _SlotBudget:
    """Per-task arrays are sized by a stage's task count, which the log states: a one-line log
    claiming 2**31 tasks must not allocate gigabytes. Every array is charged here first."""

    __slots__ = ("left", "limit")

    def __init__(self, limit: int):
        self.left = self.limit = limit

    def zeros(self, n: int, fill: int = 0) -> array:
        if n > self.left:
            raise LimitExceeded(f"the log's stages declare more tasks than the reader keeps values for "
                                f"({self.limit} per-task values in all)")
        self.left -= n
        return array("q", bytes(8 * n)) if fill == 0 else array("q", [fill]) * n


class _StageMetrics:
    """Per-stage SQL metric slots indexed by task index (LiveStageMetrics)."""

    __slots__ = ("stage_id", "attempt", "num_tasks", "types", "values", "completed", "maxes", "budget")

    def __init__(self, stage_id: int, attempt: int, num_tasks: int, types: dict[int, str], budget: _SlotBudget):
        self.stage_id = stage_id
        self.attempt = attempt
        self.num_tasks = max(0, num_tasks)
        self.types = types  # shared with the execution: metrics added later are tracked too
        self.values: dict[int, array] = {}
        self.completed: set[int] = set()
        self.maxes: dict[int, list[int]] = {}
        self.budget = budget

    def update(self, task_id: int, index: int, successful: bool, accs) -> None:
        if index in self.completed:
            return
        types = self.types
        n = self.num_tasks
        it = iter(accs)
        for acc, value in zip(it, it):
            t = types.get(acc)
            if t is None:
                continue
            arr = self.values.get(acc)
            if arr is None:
                arr = self.values[acc] = self.budget.zeros(n)
            if 0 <= index < n:
                arr[index] = value
            if t != M.SUM:
                mx = self.maxes.get(acc)
                if mx is None:
                    self.maxes[acc] = [value, task_id]
                elif value > mx[0]:
                    mx[0] = value
                    mx[1] = task_id
        if successful:
            self.completed.add(index)


class _ReadStore:
    """Per-stage shuffle read sizes of successful tasks, by task index (ours, not the UI's)."""

    __slots__ = ("num_tasks", "by_acc", "tracked", "budget")

    def __init__(self, num_tasks: int, tracked: dict[int, str], budget: _SlotBudget):
        self.num_tasks = max(0, num_tasks)
        self.by_acc: dict[int, array] = {}
        self.tracked = tracked  # exchange read-metric ids of the execution (shared)
        self.budget = budget

    def record(self, index: int, accs) -> None:
        n = self.num_tasks
        if not 0 <= index < n:
            return
        tracked = self.tracked
        it = iter(accs)
        for acc, value in zip(it, it):
            if acc in tracked:
                arr = self.by_acc.get(acc)
                if arr is None:
                    arr = self.by_acc[acc] = self.budget.zeros(n)
                arr[index] = value


_READ_METRICS = {"local bytes read": "local", "remote bytes read": "remote", "records read": "records"}



class _LiveExec:
    __slots__ = ("model", "types", "jobs", "stages", "driver_updates", "driver_all", "end_events",
                 "aggregated", "read_ids", "reads_snapshot", "live", "shared_metrics", "subquery_size_ids")

    def __init__(self, model: SQLExecution):
        self.model = model
        self.types: dict[int, str] = {}
        self.jobs: dict[int, str] = {}
        self.stages: dict[int, None] = {}
        self.driver_updates: list[tuple[int, int]] = []  # while live (UI semantics)
        self.driver_all: list[tuple[int, int]] = []  # every update (partition sizes)
        self.end_events = 0
        self.aggregated = False
        self.read_ids: dict[int, str] = {}
        self.reads_snapshot: dict[int, dict[int, array]] = {}
        self.live = True
        self.shared_metrics: dict = {}
        self.subquery_size_ids: list[int] = []


# --------------------------------------------------------------------------------------------


class _Builder:
    def __init__(self, log: EventLog, keep_tasks: bool = True, limits: Limits = DEFAULT_LIMITS):
        self.log = log
        self.keep_tasks = keep_tasks
        self.budget = _SlotBudget(limits.max_task_slots)
        self.execs: dict[int, _LiveExec] = {}
        self.live: dict[int, _LiveExec] = {}
        self.stage_metrics: dict[int, _StageMetrics] = {}
        self.read_store: dict[int, _ReadStore] = {}
        self.stage_to_exec: dict[int, int] = {}
        self.job_to_exec: dict[int, int] = {}
        self.conf_cache: dict = {}
        self.line_no = 0
        self.bad_lines = 0
        self.bad_samples: list[str] = []
        self.field_errors: dict[str, int] = defaultdict(int)
        self.field_samples: list[str] = []
        self.unknown: dict[str, int] = defaultdict(int)
        self.counts: dict[str, int] = defaultdict(int)
        self.saw_app_end = False
        self.saw_log_start = False
        h = {
            "SparkListenerLogStart": self.on_log_start,
            "SparkListenerApplicationStart": self.on_app_start,
            "SparkListenerApplicationEnd": self.on_app_end,
            "SparkListenerEnvironmentUpdate": self.on_env,
            "SparkListenerJobStart": self.on_job_start,
            "SparkListenerJobEnd": self.on_job_end,
            "SparkListenerStageSubmitted": self.on_stage_submitted,
            "SparkListenerStageCompleted": self.on_stage_completed,
            "SparkListenerTaskEnd": self.on_task_end,
            SQL_PREFIX + "SparkListenerSQLExecutionStart": self.on_sql_start,
            SQL_PREFIX + "SparkListenerSQLAdaptiveExecutionUpdate": self.on_sql_update,
            SQL_PREFIX + "SparkListenerSQLAdaptiveSQLMetricUpdates": self.on_sql_metric_updates,
            SQL_PREFIX + "SparkListenerSQLExecutionEnd": self.on_sql_end,
            SQL_PREFIX + "SparkListenerDriverAccumUpdates": self.on_driver_accum,
        }
        self.handlers_str = h
        self.handlers = {k.encode(): v for k, v in h.items()}
        # handlers that want the raw line (fast paths); the others get the parsed dict
        self.raw = {self.on_task_end, self.on_stage_submitted, self.on_stage_completed}

    # -- dispatch ------------------------------------------------------------------------------
    def feed(self, lines: list[bytes]) -> None:
        handlers = self.handlers
        counts = self.counts
        raw = self.raw
        loads = json.loads
        for line in lines:
            self.line_no += 1
            if line[:10] == b'{"Event":"':
                end = line.find(b'"', 10)
                name_b = line[10:end]
                counts[name_b] += 1
                handler = handlers.get(name_b)
                if handler is None:
                    continue
                if handler in raw:
                    try:
                        handler(line, None)
                    except _FIELD_ERRORS as e:
                        self._field_error(name_b.decode("utf-8", "replace"), e)
                    continue
                try:
                    d = loads(line)
                except (ValueError, RecursionError) as e:
                    self._bad_line(line, e)
                    continue
                if not isinstance(d, dict):
                    self._bad_line(line, ValueError("not a JSON object"))
                    continue
                try:
                    handler(None, d)
                except _FIELD_ERRORS as e:
                    self._field_error(name_b.decode("utf-8", "replace"), e)
                continue
            stripped = line.strip()
            if not stripped:
                continue
            try:
                d = loads(stripped)
            except (ValueError, RecursionError) as e:
                self._bad_line(line, e)
                continue
            if not isinstance(d, dict) or not isinstance(d.get("Event"), str):
                self._bad_line(line, ValueError("a JSON value without an \"Event\" field"))
                continue
            name = d["Event"]
            counts[name.encode("utf-8", "replace")] += 1
            handler = self.handlers_str.get(name)
            if handler is None:
                continue
            try:
                handler(None, d) if handler not in raw else handler(stripped, d)
            except _FIELD_ERRORS as e:
                self._field_error(name, e)

    def _bad_line(self, line: bytes, e: Exception) -> None:
        # Never quote the line: a file that is not an event log must not be echoed back.
        self.bad_lines += 1
        if len(self.bad_samples) < _MAX_SAMPLES:
            if isinstance(e, json.JSONDecodeError):
                why = f"{e.msg} at column {e.colno}"
            elif isinstance(e, RecursionError):
                why = "nested too deeply"
            else:
                why = "not a JSON object with an \"Event\" field"
            self.bad_samples.append(f"line {self.line_no}: not a JSON event ({why}, {len(line)} bytes)")

    def _field_error(self, event: str, e: Exception) -> None:
        short = event.rsplit(".", 1)[-1][:80]
        self.field_errors[short] += 1
        if len(self.field_samples) < _MAX_SAMPLES:
            if isinstance(e, KeyError) and e.args and isinstance(e.args[0], str) and len(e.args[0]) <= 40:
                what = f"missing field {e.args[0]!r}"
            elif isinstance(e, _BadNumber):
                what = str(e)
            elif isinstance(e, (OverflowError, ValueError)):
                what = "a value of the wrong type or out of range"
            else:
                what = f"unexpected structure ({type(e).__name__})"
            self.field_samples.append(f"line {self.line_no}: {short} skipped ({what})")

    # -- application ---------------------------------------------------------------------------
    def on_log_start(self, line, d) -> None:
        self.saw_log_start = True
        v = d.get("Spark Version")
        if isinstance(v, str):
            self.log.application.spark_version = v

    def on_app_start(self, line, d) -> None:
        app = self.log.application
        app.name = _opt_str(d.get("App Name"))
        app.id = _opt_str(d.get("App ID"))
        app.attempt_id = _opt_str(d.get("App Attempt ID"))
        app.user = _opt_str(d.get("User"))
        ts = d.get("Timestamp")
        app.start_time = ts if isinstance(ts, int) else None

    def on_app_end(self, line, d) -> None:
        self.saw_app_end = True
        ts = d.get("Timestamp")
        self.log.application.end_time = ts if isinstance(ts, int) else None
        ec = d.get("ExitCode")
        self.log.application.exit_code = ec if isinstance(ec, int) else None

    def on_env(self, line, d) -> None:
        props = d.get("Spark Properties")
        if isinstance(props, dict):
            self.log.spark_properties.update({str(k): str(v) for k, v in props.items()})
        elif isinstance(props, list):  # very old layout: [[k, v], ...]
            for kv in props:
                if isinstance(kv, (list, tuple)) and len(kv) == 2:
                    self.log.spark_properties[str(kv[0])] = str(kv[1])

    # -- executions ----------------------------------------------------------------------------
    def _exec(self, eid: int) -> _LiveExec:
        ex = self.live.get(eid)
        if ex is None:
            ex = self.execs.get(eid)
            if ex is None:
                ex = _LiveExec(SQLExecution(id=eid))
                self.execs[eid] = ex
                self.log.executions[eid] = ex.model
            ex.live = True
            self.live[eid] = ex
        return ex

    def _add_metrics(self, ex: _LiveExec, defs: dict[int, tuple[str, str]], plan: PlanNode | None) -> None:
        for acc, (name, typ) in defs.items():
            ex.types[acc] = typ
        if plan is not None:
            for n in graph_nodes(plan):
                if "Exchange" in n.name:
                    for m in n.metrics:
                        kind = _READ_METRICS.get(m["name"])
                        if kind and m["accumulator_id"] is not None:
                            ex.read_ids[m["accumulator_id"]] = kind

    def on_sql_start(self, line, d) -> None:
        eid = _as_int(d["executionId"])
        ex = self._exec(eid)
        m = ex.model
        if m.initial_plan is not None:
            m.warnings.append("a second SQLExecutionStart for this execution id was ignored")
            return
        m.description = _opt_str(d.get("description"))
        root = d.get("rootExecutionId")
        m.root_execution_id = root if isinstance(root, int) else eid
        m.query_id = _opt_str(d.get("queryId"))
        t = d.get("time")
        m.submission_time = t if isinstance(t, int) else None
        mc = d.get("modifiedConfigs")
        if isinstance(mc, dict):
            m.modified_configs = {str(k): str(v) for k, v in mc.items()}
        m.physical_plan_description = _opt_str(d.get("physicalPlanDescription"))
        plan = build_plan(d.get("sparkPlanInfo"), ex.shared_metrics)
        m.initial_plan = plan
        self._add_metrics(ex, plan_metrics(plan), plan)
        self._update(ex)

    def on_sql_update(self, line, d) -> None:
        ex = self._exec(_as_int(d["executionId"]))
        plan = build_plan(d.get("sparkPlanInfo"), ex.shared_metrics)
        ex.model.plan_versions.append(plan)
        ex.model.physical_plan_description = _opt_str(d.get("physicalPlanDescription"))
        self._add_metrics(ex, plan_metrics(plan), plan)
        self._update(ex)

    def on_sql_metric_updates(self, line, d) -> None:
        ex = self._exec(_as_int(d["executionId"]))
        defs = {}
        for m in d.get("sqlPlanMetrics") or ():
            if isinstance(m, dict) and isinstance(m.get("accumulatorId"), int):
                defs[m["accumulatorId"]] = (str(m.get("name", "")), str(m.get("metricType", "sum")))
                if m.get("name") == "partition data size":  # a read inside an AQE subquery
                    ex.subquery_size_ids.append(m["accumulatorId"])
        self._add_metrics(ex, defs, None)
        self._update(ex)

    def on_sql_end(self, line, d) -> None:
        eid = _as_int(d["executionId"])
        ex = self.live.get(eid)
        if ex is None:
            if eid in self.execs and self.execs[eid].model.completion_time is None:
                self.execs[eid].model.completion_time = d.get("time") if isinstance(d.get("time"), int) else None
            return
        m = ex.model
        t = d.get("time")
        m.completion_time = t if isinstance(t, int) else None
        err = d.get("errorMessage")
        m.error_message = err if isinstance(err, str) and err else None
        self._update(ex)
        if not ex.live:
            return
        self._aggregate(ex)
        self._remove_stale(ex)
        ex.end_events += 1
        self._update(ex)

    def on_driver_accum(self, line, d) -> None:
        eid = _as_int(d["executionId"])
        pairs = []
        for p in d.get("accumUpdates") or ():
            if isinstance(p, (list, tuple)) and len(p) == 2:
                try:
                    pairs.append((_as_int(p[0]), _as_int(p[1])))
                except (ValueError, TypeError):  # also values outside the 64-bit range
                    continue
        ex = self.execs.get(eid)
        if ex is None:
            ex = self._exec(eid)
        ex.driver_all.extend(pairs)
        if ex.live:
            ex.driver_updates.extend(pairs)
            self._update(ex)

    def _update(self, ex: _LiveExec) -> None:
        if ex.live and ex.end_events >= len(ex.jobs) + 1:
            self._remove_stale(ex)
            ex.live = False
            self.live.pop(ex.model.id, None)

    def _remove_stale(self, ex: _LiveExec) -> None:
        self._snapshot_reads(ex)
        active: set[int] = set()
        for other in self.live.values():
            if other is not ex:
                active.update(other.stages)
        for sid in [s for s in self.stage_metrics if s not in active]:
            del self.stage_metrics[sid]

    def _snapshot_reads(self, ex: _LiveExec) -> None:
        for sid in ex.stages:
            rs = self.read_store.get(sid)
            if rs is not None and rs.by_acc:
                ex.reads_snapshot.setdefault(sid, {}).update(rs.by_acc)

    def _aggregate(self, ex: _LiveExec) -> None:
        if ex.aggregated:
            return
        ex.aggregated = True
        types = ex.types
        stages = [self.stage_metrics[s] for s in ex.stages if s in self.stage_metrics]
        maxes: dict[int, tuple[int, int, int, int]] = {}
        for sm in stages:
            for acc, (value, task) in sm.maxes.items():
                if acc not in types:
                    continue
                cur = maxes.get(acc)
                if cur is None or value > cur[0]:
                    maxes[acc] = (value, sm.stage_id, sm.attempt, task)
        driver: dict[int, list[int]] = defaultdict(list)
        for acc, value in ex.driver_updates:
            if acc in types:
                driver[acc].append(value)
        ids = {acc for sm in stages for acc in sm.values if acc in types} | set(driver)
        out = {}
        for acc in ids:
            stage_vals = [sm.values[acc] for sm in stages if acc in sm.values]
            dv = driver.get(acc, ())
            mx = maxes.get(acc)
            if mx is not None and any(v > mx[0] for v in dv):
                mx = None
            typ = types[acc]
            if typ == M.SUM:
                values = [sum(sum(a) for a in stage_vals) + sum(dv)]
            else:
                values = M.concat(stage_vals, dv)
            out[acc] = M.summarize(typ, values, (mx[1], mx[2], mx[3]) if mx else None)
        ex.model.metric_values = out

    # -- jobs and stages ----------------------------------------------------------------------
    def _stage(self, sid: int) -> StageInfo:
        st = self.log.stages.get(sid)
        if st is None:
            st = self.log.stages[sid] = StageInfo(stage_id=sid)
        return st

    def on_job_start(self, line, d) -> None:
        job_id = _as_int(d["Job ID"])
        infos = [si for si in (d.get("Stage Infos") or ()) if isinstance(si, dict)]
        for si in infos:
            sid = _as_int(si["Stage ID"])
            st = self._stage(sid)
            if not st.name:
                st.name = _opt_str(si.get("Stage Name")) or ""
            nt = si.get("Number of Tasks")
            if isinstance(nt, int) and not st.num_tasks:
                st.num_tasks = nt
        stage_ids = [_as_int(s) for s in (d.get("Stage IDs") or [si["Stage ID"] for si in infos])]
        props = d.get("Properties") or {}
        eid_s = props.get("spark.sql.execution.id") if isinstance(props, dict) else None
        if eid_s is None:
            return
        eid = _as_int(eid_s)
        ex = self._exec(eid)
        m = ex.model
        if ex.types:
            for si in infos:
                sid = _as_int(si["Stage ID"])
                nt = si.get("Number of Tasks")
                self.stage_metrics[sid] = _StageMetrics(sid, 0, nt if isinstance(nt, int) else 0, ex.types, self.budget)
        for si in infos:
            sid = _as_int(si["Stage ID"])
            if sid not in self.read_store:
                nt = si.get("Number of Tasks")
                self.read_store[sid] = _ReadStore(nt if isinstance(nt, int) else 0, ex.read_ids, self.budget)
        ex.jobs[job_id] = "RUNNING"
        self.job_to_exec[job_id] = eid
        if job_id not in m.job_status:
            m.job_ids.append(job_id)
        m.job_status[job_id] = "RUNNING"
        for sid in stage_ids:
            if sid not in ex.stages:
                ex.stages[sid] = None
                m.stage_ids.append(sid)
            self.stage_to_exec.setdefault(sid, eid)
        for k, v in props.items():
            if isinstance(k, str) and k.startswith("spark.sql.") and not k.startswith("spark.sql.execution."):
                m.job_properties[k] = str(v)
        self._update(ex)

    def on_job_end(self, line, d) -> None:
        job_id = _as_int(d["Job ID"])
        res = d.get("Job Result")
        ok = isinstance(res, dict) and res.get("Result") == "JobSucceeded"
        status = "SUCCEEDED" if ok else "FAILED"
        for ex in list(self.live.values()):
            if job_id in ex.jobs:
                ex.jobs[job_id] = status
                ex.model.job_status[job_id] = status
                ex.end_events += 1
                self._update(ex)
        eid = self.job_to_exec.get(job_id)
        ex = self.execs.get(eid) if eid is not None else None
        if ex is not None and not ex.live and job_id in ex.model.job_status:
            ex.model.job_status[job_id] = status  # executions no longer tracked live still get it

    def on_stage_submitted(self, line, d) -> None:
        sid, attempt, name, num_tasks, sub = self._stage_info(line, d)
        st = self._stage(sid)
        st.attempt = attempt
        if name:
            st.name = name
        if num_tasks is not None:
            st.num_tasks = num_tasks
        st.submission_time = sub
        sm = self.stage_metrics.get(sid)
        if sm is not None and sm.attempt != attempt and self._is_sql_stage(sid):
            self.stage_metrics[sid] = _StageMetrics(sid, attempt, sm.num_tasks, sm.types, self.budget)

    def _is_sql_stage(self, sid: int) -> bool:
        return any(sid in ex.stages for ex in self.live.values())

    def on_stage_completed(self, line, d) -> None:
        sid, attempt, name, num_tasks, sub = self._stage_info(line, d)
        st = self._stage(sid)
        if line is not None:
            m = _COMPLETION.search(line)
            st.completion_time = int(m.group(1)) if m else None
            st.failed = b'"Failure Reason":' in line
        else:
            info = d["Stage Info"]
            ct = info.get("Completion Time")
            st.completion_time = ct if isinstance(ct, int) else None
            st.failed = "Failure Reason" in info

    def _stage_info(self, line, d):
        if line is not None and d is None:
            m = _STAGE_INFO.search(line, 0, 300)
            if m is not None:
                sub = _SUBMISSION.search(line, m.end())
                name = m.group(3).decode("utf-8", "replace")
                if "\\" in name:
                    name = json.loads(b'"' + m.group(3) + b'"')
                return (int(m.group(1)), int(m.group(2)), name, int(m.group(4)),
                        int(sub.group(1)) if sub else None)
            d = json.loads(line)
        info = d["Stage Info"]
        nt = info.get("Number of Tasks")
        sub = info.get("Submission Time")
        return (_as_int(info["Stage ID"]), _as_int(info.get("Stage Attempt ID", 0)),
                _opt_str(info.get("Stage Name")), nt if isinstance(nt, int) else None,
                sub if isinstance(sub, int) else None)

    def on_task_end(self, line, d) -> None:
        rec = parse_task_end_fast(line) if line is not None and d is None else None
        if rec is None:
            if d is None:
                try:
                    d = json.loads(line)
                except (ValueError, RecursionError) as e:
                    self._bad_line(line, e)
                    return
            rec = parse_task_end_json(d)
        sid, attempt, task_id, index, successful, accs, read = rec
        if successful:
            st = self.log.stages.get(sid)
            if st is not None and self.keep_tasks and read is not None and 0 <= index < st.num_tasks:
                if st.shuffle_bytes_read is None:
                    st.shuffle_bytes_read = self.budget.zeros(st.num_tasks, -1)
                    st.shuffle_records_read = self.budget.zeros(st.num_tasks, -1)
                st.shuffle_bytes_read[index] = read[0] + read[1]
                st.shuffle_records_read[index] = read[2]  # type: ignore[index]
            rs = self.read_store.get(sid)
            if rs is not None and rs.tracked:
                rs.record(index, accs)
        sm = self.stage_metrics.get(sid)
        if sm is not None and sm.attempt == attempt:
            sm.update(task_id, index, successful, accs)

    # -- end of input ---------------------------------------------------------------------------
    def finish(self) -> None:
        for ex in list(self.live.values()):
            # As the History Server does when it flushes: aggregate what is there.
            self._aggregate(ex)
            self._snapshot_reads(ex)
        self.stage_metrics.clear()
        self.read_store.clear()
        version = self.log.application.spark_version
        for ex in self.execs.values():
            m = ex.model
            _set_status(m, ex)
            m.shuffle_reads, m.other_shuffle_reads = _shuffle_reads(ex, self.log, version)
            _effective_conf(m, self.log, version, self.conf_cache)
            ex.reads_snapshot = {}
            ex.types = {}
            ex.shared_metrics = {}
            ex.driver_updates = []


def _opt_str(v: Any) -> str | None:
    return v if isinstance(v, str) else None


def _set_status(m: SQLExecution, ex: _LiveExec) -> None:
    if m.initial_plan is None and m.submission_time is None:
        # known only from its jobs: the start event is missing (compacted away, or the log is cut)
        m.status = "UNKNOWN"
        m.warnings.append("no SQLExecutionStart for this execution in the log (compacted away or cut): "
                          "only its jobs are known")
    elif m.completion_time is None:
        m.status = "RUNNING"
    elif m.error_message or any(s == "FAILED" for s in m.job_status.values()):
        m.status = "FAILED"
    else:
        m.status = "COMPLETED"


_SKEW_DESC = re.compile(r"(\d+) skewed partitions")


def _shuffle_reads(ex: _LiveExec, log: EventLog, version: str | None) -> tuple[list[ShuffleRead], list[ShuffleRead]]:
    """Adaptive shuffle reads of the final plan, and the others that posted sizes (reads of
    earlier plan versions that were replaced, reads inside AQE subqueries)."""
    m = ex.model
    plan = m.final_plan
    if plan is None:
        return [], []
    driver: dict[int, list[int]] = defaultdict(list)
    for acc, value in ex.driver_all:
        driver[acc].append(value)
    out = [_read_of(node, ex, log, driver) for node in graph_nodes(plan) if node.name in SHUFFLE_READ_NAMES]
    seen = {n.metric("partition data size")["accumulator_id"] for n in graph_nodes(plan)  # type: ignore[index]
            if n.name in SHUFFLE_READ_NAMES and n.metric("partition data size")}
    others: list[ShuffleRead] = []
    for version_no, p in enumerate([m.initial_plan, *m.plan_versions[:-1]]):
        if p is None:
            continue
        for node in graph_nodes(p):
            size = node.metric("partition data size") if node.name in SHUFFLE_READ_NAMES else None
            if size is None or size["accumulator_id"] in seen or not driver.get(size["accumulator_id"]):
                continue
            seen.add(size["accumulator_id"])
            r = _read_of(node, ex, log, driver)
            r.node_id = None
            r.notes.append(f"read of plan version {version_no} (0 = initial plan), not in the final plan")
            others.append(r)
    for acc in ex.subquery_size_ids:
        if acc in seen or not driver.get(acc):
            continue
        seen.add(acc)
        sizes = list(driver[acc])
        others.append(ShuffleRead(
            node_id=None, name="AQEShuffleRead", description="", num_partitions=len(sizes),
            partition_sizes=sizes, partition_sizes_source="driver_metrics",
            notes=["read inside an adaptive subquery: Spark logs its metrics but no plan tree, so only the "
                   "sizes are known (counts of coalesced/skewed partitions are not attributed)"]))
    return out, others


def _read_of(node: PlanNode, ex: _LiveExec, log: EventLog, driver: dict[int, list[int]]) -> ShuffleRead:
    ids = {mm["name"]: mm["accumulator_id"] for mm in node.metrics}

    def last(name: str) -> int | None:
        vals = driver.get(ids.get(name), [])  # type: ignore[arg-type]
        return vals[-1] if vals else None

    desc = node.description
    r = ShuffleRead(node_id=node.id, name=node.name, description=desc)
    r.local = desc.rstrip().endswith(" local")
    r.num_partitions = last("number of partitions")
    r.coalesced_partitions = last("number of coalesced partitions")
    r.skewed_partitions = last("number of skewed partitions")
    r.skew_splits = last("number of skewed partition splits")
    r.empty_partitions = last("number of empty partitions")
    if "skewed partitions" in desc and r.skewed_partitions is None:
        sm = _SKEW_DESC.search(desc)
        if sm:
            r.skewed_partitions = int(sm.group(1))
    sizes_id = ids.get("partition data size")
    if sizes_id is not None and driver.get(sizes_id):
        sizes = list(driver[sizes_id])
        n = r.num_partitions
        if n and len(sizes) > n and len(sizes) % n == 0:
            r.notes.append(
                f"'partition data size' was posted {len(sizes) // n} times (the read was built more "
                "than once); the last set is used"
            )
            sizes = sizes[-n:]
        r.partition_sizes = sizes
        r.partition_sizes_source = "driver_metrics"
    # bytes actually read, per output partition, from the reduce tasks' SQL accumulators
    exch = _exchange_below(node)
    if exch is not None:
        eids = {mm["name"]: mm["accumulator_id"] for mm in exch.metrics}
        loc, rem, rec = eids.get("local bytes read"), eids.get("remote bytes read"), eids.get("records read")
        for sid, by_acc in ex.reads_snapshot.items():
            if loc in by_acc or rem in by_acc:
                n = len(by_acc.get(loc) or by_acc.get(rem))  # type: ignore[arg-type]
                la = by_acc.get(loc)
                ra = by_acc.get(rem)
                r.bytes_read = [(la[i] if la else 0) + (ra[i] if ra else 0) for i in range(n)]
                ca = by_acc.get(rec)
                r.records_read = list(ca) if ca is not None else None
                r.stage_id = sid
                break
    if r.partition_sizes is None and not r.local and r.bytes_read is not None:
        r.partition_sizes = list(r.bytes_read)
        r.partition_sizes_source = "task_shuffle_read"
        r.notes.append(
            f"{node.name} has no partition size metrics in this Spark version: sizes are the shuffle "
            "bytes each reduce task read (task metrics), not the MapStatus sizes AQE used"
        )
    if r.num_partitions is None:
        if r.partition_sizes is not None:
            r.num_partitions = len(r.partition_sizes)
        elif r.stage_id is not None and r.stage_id in log.stages:
            r.num_partitions = log.stages[r.stage_id].num_tasks or None
    return r


def _exchange_below(node: PlanNode) -> PlanNode | None:
    for n in node.walk():
        if n is not node and "Exchange" in n.name:
            return n
    return None


def _effective_conf(m: SQLExecution, log: EventLog, version: str | None, cache: dict) -> None:
    def sql_only(d: dict[str, str]) -> dict[str, str]:
        return {k: v for k, v in d.items() if k.startswith("spark.sql.")}

    m.conf_layers = [sql_only(log.spark_properties), dict(m.job_properties), sql_only(m.modified_configs)]
    if version is None:
        return
    key = (version, tuple(tuple(sorted(layer.items())) for layer in m.conf_layers))
    if key in cache:
        m.aqe_conf, err = cache[key]
    else:
        err: list[str] = []
        try:
            from aqe_core.config import AQEConf, checked_layers

            layers, err = checked_layers(version, m.conf_layers)
            m.aqe_conf = AQEConf.resolve(version, layers, validate=False)
        except Exception as e:  # unsupported version string, missing module: keep the raw layers
            err = [f"effective AQE configuration not built: {str(e)[:200]}"]
        cache[key] = (m.aqe_conf, err)
    m.warnings.extend(err)


# --------------------------------------------------------------------------------------------
# entry point


def _open_part_stream(part: Part, limits: Limits, on_read: Callable[[int], None], log: EventLog,
                      expected_truncation: bool) -> Iterator[bytes]:
    f = part.opener()
    try:
        raw = codecs.CountingReader(f, on_read)
        reader = raw
        if part.wrapper == "gzip":
            reader = codecs.CountingReader(IterStream(codecs.decode("gzip", raw, limits)))
        head = reader.read_exact(16)
        fmt = codecs.sniff(head)
        name = part.name.rsplit("/", 1)[-1]
        by_name = codecs.codec_from_name(name[:-3] if part.wrapper == "gzip" and name.endswith(".gz") else name)
        if fmt == "empty":
            log.notes.append(f"{name}: empty file")
            return
        if fmt is None:
            raise DecodeError(f"{name}: not an event log (the first bytes are neither JSON nor a known codec)")
        if fmt in ("zip", "tar"):
            raise DecodeError(f"{name}: a {fmt} archive inside an event log is not supported")
        if fmt not in codecs.DECODERS:
            raise DecodeError(f"{name}: {codecs.describe_foreign(fmt)}; Spark never writes this")
        if by_name and by_name not in ("zip",) and by_name != fmt:
            log.warnings.append(f"{name}: the name says {by_name} but the bytes are {fmt}; read as {fmt}")
        if log.codec is None:
            log.codec = fmt
        stream = _Prepend(head, reader)
        yield from codecs.decode(fmt, stream, limits)  # type: ignore[arg-type]
    finally:
        f.close()


class _Prepend:
    """A reader that returns ``head`` first, then the rest of ``inner``; counts like inner."""

    def __init__(self, head: bytes, inner: codecs.CountingReader):
        self._head = head
        self._inner = inner

    @property
    def count(self) -> int:
        return self._inner.count

    def read(self, n: int = -1) -> bytes:
        if self._head:
            if n < 0:
                data = self._head + self._inner.read()
                self._head = b""
                return data
            data = self._head[:n]
            self._head = self._head[n:]
            return data
        return self._inner.read(n)

    def read_exact(self, n: int) -> bytes:
        return codecs.read_exact(self, n)

    def readable(self) -> bool:
        return True


def load(
    path: str,
    *,
    progress: ProgressFn | None = None,
    limits: Limits = DEFAULT_LIMITS,
    keep_task_metrics: bool = True,
    roots: "list[str] | None" = None,
) -> EventLog:
    """Load an event log (any layout/codec, see :mod:`aqe_core.eventlog.sources`).

    Raises :class:`EventLogError` only when nothing usable can be read (missing file, not an
    event log at all, a limit hit before any execution was read); every other problem
    (corrupt or truncated data, bad lines, unknown events, missing fields, limits) gives a
    partial load with ``warnings``. ``progress(bytes_read, total_bytes_or_None)`` is called
    as raw bytes are consumed. ``roots``: when given, every file read (the path, the parts of
    a rolling directory, after symlinks are resolved) must lie inside one of these folders.
    """
    try:
        src = open_source(path, limits, roots=roots)
        with src:
            return _load_source(src, progress, limits, keep_task_metrics)
    except EventLogError:
        raise
    except OSError as e:
        raise EventLogError(f"cannot read {os.path.basename(os.fspath(path))}: {e.strerror or type(e).__name__}") from None
    except (*_CONTAINER_ERRORS, *_FIELD_ERRORS, MemoryError) as e:
        # the last line of defence; the fuzz tests keep this unreached
        raise EventLogError(f"cannot read this log (internal error: {type(e).__name__})") from None


def _load_source(src: LogSource, progress: ProgressFn | None, limits: Limits, keep_tasks: bool) -> EventLog:
    log = EventLog(path=src.path, layout=src.layout, parts=[p.name for p in src.parts])
    log.warnings.extend(src.warnings)
    log.notes.extend(src.notes)
    b = _Builder(log, keep_tasks, limits)
    total = src.total_size
    done = 0
    decoded_all = 0
    started = time.thread_time()
    # members of a zip/tar are counted decompressed: take the ratio against the archive
    basis = src.container_size if src.container in ("zip", "tar") else None

    def on_read(n: int) -> None:
        nonlocal done
        done += n
        if progress is not None:
            progress(done, total)

    fatal: str | None = None
    for idx, part in enumerate(src.parts):
        last = idx == len(src.parts) - 1
        lines = _Lines(limits.max_line_bytes)
        decoded = 0

        def counted(chunks: Iterator[bytes]) -> Iterator[bytes]:
            """Whole-log limits, checked once per decoded chunk (~1 MiB)."""
            nonlocal decoded, decoded_all
            for c in chunks:
                decoded += len(c)
                decoded_all += len(c)
                if decoded_all > limits.max_decompressed_bytes:
                    raise LimitExceeded(codecs.size_limit_message(limits.max_decompressed_bytes))
                raw = basis if basis is not None else done
                if decoded_all > limits.ratio_grace_bytes and decoded_all > limits.max_expansion_ratio * max(raw, 1):
                    raise LimitExceeded(codecs.ratio_limit_message(decoded_all, raw, limits.max_expansion_ratio))
                if limits.max_seconds is not None and time.thread_time() - started > limits.max_seconds:
                    raise LimitExceeded(codecs.time_limit_message(limits.max_seconds))
                yield c

        expected_trunc = last and src.complete_by_name is False
        try:
            for batch in lines.split(counted(_open_part_stream(part, limits, on_read, log, expected_trunc))):
                b.feed(batch)
        except codecs.TruncatedInput as e:
            msg = f"{part.name.rsplit('/', 1)[-1]}: {e}"
            if expected_trunc:
                log.notes.append(msg + " (expected for a log still being written)")
            else:
                log.warnings.append(msg + "; the events after it are missing")
        except LimitExceeded as e:
            log.warnings.append(f"{part.name.rsplit('/', 1)[-1]}: {e}; stopped reading")
            fatal = str(e)
        except DecodeError as e:
            if b.line_no == 0 and len(src.parts) == 1:
                raise EventLogError(str(e)) from None
            log.warnings.append(f"{e}; the events after it are missing")
        except OSError as e:
            log.warnings.append(f"{part.name.rsplit('/', 1)[-1]}: read error ({e.strerror or type(e).__name__})")
        except _CONTAINER_ERRORS as e:  # a corrupt zip/tar member, bad CRC, cut archive
            log.warnings.append(f"{part.name.rsplit('/', 1)[-1]}: the archive member is corrupt or cut"
                                f" ({type(e).__name__}); the events after it are missing")
        log.bytes_decoded += decoded
        if lines.oversize:
            log.warnings.append(
                f"{part.name.rsplit('/', 1)[-1]}: skipped {len(lines.oversize)} line(s) longer than the "
                f"{limits.max_line_bytes // (1024 * 1024)} MiB line limit (largest {max(lines.oversize)} bytes)"
            )
        if lines.partial_tail:
            msg = f"{part.name.rsplit('/', 1)[-1]}: the last line is cut ({lines.partial_tail} bytes) and was dropped"
            if expected_trunc or (last and not b.saw_app_end):
                log.notes.append(msg)
            else:
                log.warnings.append(msg)
        if fatal:
            break
    log.bytes_read = done
    if b.line_no == 0 and fatal is None and not log.warnings:
        raise EventLogError(f"{os.path.basename(src.path)}: no events found (empty log)")
    if fatal is not None and not b.execs:
        raise LimitExceeded(fatal)
    b.finish()
    app = log.application
    log.events = b.line_no
    log.event_counts = {k.decode("utf-8", "replace"): v for k, v in sorted(b.counts.items())}
    log.complete = b.saw_app_end
    if not b.saw_app_end:
        log.notes.append("no ApplicationEnd event: the application was still running or crashed (incomplete log)")
    if not b.saw_log_start and src.layout == "single":
        log.notes.append("no SparkListenerLogStart event (not an Apache Spark log, or its start is missing)")
    if app.id is None:
        log.warnings.append("no ApplicationStart event: application id and name are unknown")
    if b.bad_lines:
        log.warnings.append(f"{b.bad_lines} line(s) are not JSON events and were skipped")
        log.warnings.extend(b.bad_samples)
    if b.field_errors:
        total_err = sum(b.field_errors.values())
        kinds = ", ".join(f"{k} x{v}" for k, v in sorted(b.field_errors.items()))
        log.warnings.append(f"{total_err} event(s) lack expected fields and were skipped ({kinds})")
        log.warnings.extend(b.field_samples)
    if b.line_no and not log.executions and not b.counts:
        log.warnings.append("no Spark events recognised")
    unknown = [k for k in log.event_counts if not (k.startswith("SparkListener") or k.startswith(SQL_PREFIX))]
    if unknown:
        log.notes.append("skipped events of types this reader does not use: " + ", ".join(unknown[:10]))
    if any(ex.model.shuffle_reads and ex.model.shuffle_reads[0].partition_sizes_source == "task_shuffle_read"
           for ex in b.execs.values()):
        log.notes.append(
            "Spark 3.0.x logs have no metrics on CustomShuffleReader: per-partition sizes are derived from the "
            "reduce tasks' shuffle read metrics (bytes actually read), not the MapStatus sizes AQE used"
        )
    return log


def not_in_log() -> list[str]:
    return list(NOT_IN_LOG)
