"""The event-log builder: one handler per listener event, fed line by line, keeping what
Spark's ``SQLAppStatusListener`` and ``AppStatusListener`` keep (per-execution metric
summaries, stage and job status, plans) and no more.

Event types that are not needed are skipped by peeking at the ``{"Event":"..."`` prefix
without parsing the line.
"""
from __future__ import annotations

import json
import re
from collections import defaultdict
from typing import TYPE_CHECKING, Any, Mapping, Optional

from aqe_core import config
from aqe_core.model.eventlog import EventLog, LazyPlan, SQLExecution, StageInfo
from aqe_core.readers.eventlog.spill_file import SpillMap
from aqe_core.readers.eventlog import metrics as M
from aqe_core.readers.eventlog.errors import DEFAULT_LIMITS, Limits
from aqe_core.readers.eventlog.jsonfast import parse_json
from aqe_core.readers.eventlog import kept_text as K
from aqe_core.readers.eventlog.executions import (
    _build_final, _effective_conf, _opt_str, _set_status, _shuffle_reads, planned_shuffles,
)
from aqe_core.readers.eventlog.log_lines import (
    _COMPLETION, _STAGE_INFO, _SUBMISSION, LISTENER_EVENT, SQL_EVENT_PREFIX, _as_int, _BadNumber, parse_task_end_json,
)
from aqe_core.readers.eventlog.task_end import parse_task_end_fast
from aqe_core.readers.eventlog.live_state import _READ_METRICS, _LiveExec, _ReadStore, _SlotBudget, _StageMetrics
from aqe_core.readers.eventlog.planinfo import lazy_plan, plan_facts
from aqe_core.readers.eventlog.scala_set import stage_order
from aqe_core.readers.eventlog import stages
from aqe_core.readers.eventlog.spilling import Spilling
from aqe_core.readers.eventlog.app_events import AppEvents

if TYPE_CHECKING:
    from aqe_core.readers.budget import LoadMeter

_MAX_SAMPLES = 5
#: what a malformed event may raise while a handler reads it (the event is skipped, with a warning)
_FIELD_ERRORS = (KeyError, TypeError, ValueError, AttributeError, IndexError, RecursionError, OverflowError)


#: one stage id of an execution: its entries in the execution's stage list and maps and the
#: reader's stage-to-execution map (a job start can list a million stages)
STAGE_ID_BYTES = 256
#: one stage's :class:`StageInfo` (its attempts and per-task arrays are charged as they grow)
STAGE_INFO_BYTES = 512

class _Builder(AppEvents, Spilling):
    """Feeds lines to one handler per event type and fills ``log``; :meth:`finish` ends the
    executions still running when the log stops (as the History Server does)."""

    def __init__(self, log: EventLog, keep_tasks: bool = True, limits: Limits = DEFAULT_LIMITS,
                 meter: "LoadMeter | None" = None):
        self.log = log
        self.keep_tasks = keep_tasks
        self.meter = meter  # the server's per-source limits and memory budget (None: the CLI's reading)
        self.budget = _SlotBudget(limits.max_task_slots, meter)
        self.execs: dict[int, _LiveExec] = {}  # in memory (the rest are in self.cold)
        self.order: dict[int, None] = {}  # every execution id, first seen first
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
        self.counts: dict[bytes, int] = {}
        self.kept = K.KeptText(meter)  # free text, cut per kind and charged to the meter
        self.saw_app_end = False
        self.saw_log_start = False
        self.init_spilling(log, limits.spill_after)
        self.task_read_sizes: set[int] = set()  # executions whose reads' sizes came from reduce tasks (3.0.x)
        h = {
            "SparkListenerLogStart": self.on_log_start,
            "SparkListenerApplicationStart": self.on_app_start,
            "SparkListenerApplicationEnd": self.on_app_end,
            "SparkListenerEnvironmentUpdate": self.on_env,
            "DBCEventLoggingListenerMetadata": self.on_dbc_metadata,
            "SparkListenerExecutorAdded": self.on_executor_added,
            "SparkListenerExecutorRemoved": self.on_executor_removed,
            "SparkListenerJobStart": self.on_job_start,
            "SparkListenerJobEnd": self.on_job_end,
            "SparkListenerStageSubmitted": self.on_stage_submitted,
            "SparkListenerStageCompleted": self.on_stage_completed,
            "SparkListenerTaskEnd": self.on_task_end,
            SQL_EVENT_PREFIX + "SparkListenerSQLExecutionStart": self.on_sql_start,
            SQL_EVENT_PREFIX + "SparkListenerSQLAdaptiveExecutionUpdate": self.on_sql_update,
            SQL_EVENT_PREFIX + "SparkListenerSQLAdaptiveSQLMetricUpdates": self.on_sql_metric_updates,
            SQL_EVENT_PREFIX + "SparkListenerSQLExecutionEnd": self.on_sql_end,
            SQL_EVENT_PREFIX + "SparkListenerDriverAccumUpdates": self.on_driver_accum,
            LISTENER_EVENT: self.on_listener,
        }
        self.handlers_str = h
        self.used_events = frozenset(h)  # (what the loader's 'skipped events' note leaves out)
        self.handlers = {k.encode(): v for k, v in h.items()}
        # handlers that want the raw line (fast paths); the others get the parsed dict
        self.raw = {self.on_task_end, self.on_stage_submitted, self.on_stage_completed}

    def close(self) -> None:
        """Drop the handler tables (bound methods: a cycle through the builder and the log that only
        the cyclic collector frees), so a log is freed when its last reader drops it (a fleet scan)."""
        self.handlers, self.handlers_str, self.raw = {}, {}, set()

    # -- dispatch ------------------------------------------------------------------------------
    def feed(self, lines: list[bytes]) -> None:
        handlers = self.handlers
        counts = self.counts
        raw = self.raw
        loads = parse_json
        for line in lines:
            self.line_no += 1
            if line.startswith(b'{"Event":"'):
                end = line.find(b'"', 10)
                name_b = line[10:end]
                handler = handlers.get(name_b)
                if handler is None:
                    self.kept.count_event(self.counts, name_b)
                    continue
                counts[name_b] = counts.get(name_b, 0) + 1
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
            self.kept.count_event(self.counts, name.encode("utf-8", "replace"))
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

    # -- executions ----------------------------------------------------------------------------
    def _exec(self, eid: int, start: bool = False) -> _LiveExec:
        ex = self.live.get(eid)
        if ex is None:
            ex = self._known(eid)
            if ex is None:
                # (a focused reader: an id it did not see start is another execution's)
                if self.handed is not None and (eid in self.handed or self.focus is not None and not start):
                    return self.late_event(eid)
                if self.meter is not None:
                    self.meter.execution(eid)
                ex = _LiveExec(SQLExecution(id=eid))
                self.execs[eid] = ex
                self.order[eid] = None
            ex.live = True
            self.live[eid] = ex
        return ex

    def _known(self, eid: int) -> _LiveExec | None:
        """An execution seen before (brought back from the spill file), or None."""
        ex = self.execs.get(eid)
        if ex is None and eid in self.cold:
            ex = self._revive(eid)
        return ex

    def _add_metrics(self, ex: _LiveExec, defs: dict[int, tuple[str, str]],
                     exchange_metrics: tuple[tuple[str, int], ...] | list[tuple[str, int]] = ()) -> None:
        for acc, (name, typ) in defs.items():
            ex.types[acc] = typ
        for name, acc in exchange_metrics:
            kind = _READ_METRICS.get(name)
            if kind:
                ex.read_ids[acc] = kind

    def _plan_text(self, ex: _LiveExec, text: Any) -> None:
        """The latest ``physicalPlanDescription``, held until the execution ends (then packed,
        smaller): charged by what it adds to the one it replaces."""
        before = K.str_bytes(ex.plan_text) if ex.plan_text is not None else 0
        ex.plan_text = _opt_str(text)
        if ex.plan_text is not None:
            self.kept.charge(max(0, K.str_bytes(ex.plan_text) - before))

    def _lazy(self, ex: _LiveExec, info: Any) -> LazyPlan:
        """A plan version's metrics registered (as the History Server adds every version's), the
        tree kept unbuilt until a view asks (finish() builds the final one)."""
        facts = plan_facts(info)
        if self.meter is not None:
            self.meter.nodes(facts.nodes)
        self._add_metrics(ex, facts.metrics, facts.exchange_metrics)
        plan = lazy_plan(info, facts, packed=self.packs)  # (a listing summarises it within the execution)
        # kept packed, and built into a view's tree with every string of its JSON; the strings
        # of a plan node of real size are in what meter.nodes charged already
        self.kept.charge(len(plan.raw) + max(0, plan.size - facts.nodes * K.PLAN_JSON_PER_NODE))
        return plan

    def on_sql_start(self, line, d) -> None:
        eid = _as_int(d["executionId"])
        ex = self._exec(eid, start=True)
        m = ex.model
        if m.initial_source is not None:
            m.warnings.append("a second SQLExecutionStart for this execution id was ignored")
            return
        m.description = self.kept.text(d.get("description"), K.DESCRIPTION_CHARS, "description")
        root = d.get("rootExecutionId")
        m.root_execution_id = root if isinstance(root, int) else eid
        m.query_id = self.kept.text(d.get("queryId"), K.NAME_CHARS, "query id")
        t = d.get("time")
        m.submission_time = t if isinstance(t, int) else None
        mc = d.get("modifiedConfigs")
        if isinstance(mc, dict):
            m.modified_configs = self.kept.settings(mc, "modifiedConfigs")
        self._plan_text(ex, d.get("physicalPlanDescription"))
        m.initial_source = self._lazy(ex, d.get("sparkPlanInfo"))
        self._update(ex)

    def on_sql_update(self, line, d) -> None:
        ex = self._exec(_as_int(d["executionId"]))
        ex.model.version_sources.append(self._lazy(ex, d.get("sparkPlanInfo")))
        self._plan_text(ex, d.get("physicalPlanDescription"))
        self._update(ex)

    def on_sql_metric_updates(self, line, d) -> None:
        ex = self._exec(_as_int(d["executionId"]))
        defs = {}
        for m in d.get("sqlPlanMetrics") or ():
            if isinstance(m, dict) and isinstance(m.get("accumulatorId"), int):
                defs[m["accumulatorId"]] = (str(m.get("name", "")), str(m.get("metricType", "sum")))
                if m.get("name") == "partition data size":  # a read inside an AQE subquery
                    ex.subquery_size_ids.append(m["accumulatorId"])
        self._add_metrics(ex, defs)
        self._update(ex)

    def on_sql_end(self, line, d) -> None:
        eid = _as_int(d["executionId"])
        ex = self.live.get(eid)
        if ex is None:
            known = self._known(eid)
            if known is not None and known.model.completion_time is None:
                known.model.completion_time = d.get("time") if isinstance(d.get("time"), int) else None
            elif known is None:
                self.another_ended(eid)
            return
        m = ex.model
        t = d.get("time")
        m.completion_time = t if isinstance(t, int) else None
        err = d.get("errorMessage")
        m.error_message = self.kept.text(err, K.MESSAGE_CHARS, "error message") if err else None
        ex.keep_plan_text(self.packs)
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
        ex = self._known(eid)
        if ex is None:
            ex = self._exec(eid)
        ex.driver_all.extend(x for pair in pairs for x in pair)
        if ex.live:
            ex.driver_updates.extend(pairs)
            self._update(ex)

    def _update(self, ex: _LiveExec) -> None:
        if ex.live and ex.end_events >= len(ex.jobs) + 1:
            self._remove_stale(ex)
            ex.live = False
            self.live.pop(ex.model.id, None)
            if ex.aggregated:  # its UI metrics are final: what only aggregation reads can go now,
                ex.types = {}  # not at the end of the log (a big log would hold every execution's)
                ex.driver_updates = []
            self._ended(ex)

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
                ex.read_tasks[sid] = rs.num_tasks

    def _aggregate(self, ex: _LiveExec) -> None:
        if ex.aggregated:
            return
        ex.aggregated = True
        types = ex.types
        order = stage_order(list(ex.stages), self._spark_major())
        stages = [self.stage_metrics[s] for s in order if s in self.stage_metrics]
        maxes: dict[int, tuple[int, int, int, int]] = {}  # the first stage with the max, as Spark
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
        out: dict[int, Mapping[str, Any]] = {}
        for acc in ids:
            stage_vals = [sm.values[acc] for sm in stages if acc in sm.values]
            dv = driver.get(acc, ())
            mx = maxes.get(acc)
            if mx is not None and any(v > mx[0] for v in dv):
                mx = None
            typ = types[acc]
            zeros = 0
            if typ == M.SUM:
                values = [sum(sum(a) for a in stage_vals) + sum(dv)]
            else:
                values = M.concat(stage_vals, dv)
                zeros = sum(sm.missing(acc) for sm in stages if acc in sm.values)  # (slots no task reached)
            out[acc] = M.summarize(typ, values, (mx[1], mx[2], mx[3]) if mx else None, zeros)
        ex.model.metric_values = out

    def _spark_major(self) -> Optional[int]:
        m = re.match(r"(\d+)\.", self.log.application.spark_version or "")
        return int(m.group(1)) if m else None

    # -- jobs and stages ----------------------------------------------------------------------
    def _stage(self, sid: int) -> StageInfo:
        st = self.stages_mem.get(sid)
        if st is None:
            st = self._stage_revived(sid)
            if st is None:
                st = self.log.stages[sid] = StageInfo(stage_id=sid)
                self.kept.charge(STAGE_INFO_BYTES)
        return st

    def on_job_start(self, line, d) -> None:
        job_id = _as_int(d["Job ID"])
        infos = [si for si in (d.get("Stage Infos") or ()) if isinstance(si, dict)]
        for si in infos:
            sid = _as_int(si["Stage ID"])
            st = self._stage(sid)
            if not st.name:
                st.name = self.kept.text(si.get("Stage Name"), K.NAME_CHARS, "stage name") or ""
            nt = si.get("Number of Tasks")
            if isinstance(nt, int) and not st.num_tasks:
                st.num_tasks = nt
        stage_ids = [_as_int(s) for s in (d.get("Stage IDs") or [si["Stage ID"] for si in infos])]
        props = d.get("Properties") or {}
        eid_s = props.get(config.EXECUTION_ID_KEY) if isinstance(props, dict) else None
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
                self.kept.charge(STAGE_ID_BYTES)
            owner = self.stage_to_exec.setdefault(sid, eid)
            if owner != eid:  # a stage of another execution (reused): both stay in memory
                self._known(owner)
                self.pinned.update((owner, eid))
        sql_props = {k: v for k, v in props.items()
                     if isinstance(k, str) and k.startswith(config.SQL_PREFIX)
                     and not k.startswith(config.EXECUTION_PROPERTY_PREFIX)}
        if sql_props:
            self.kept.settings(sql_props, "job properties", into=m.job_properties)
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
        known = self._known(eid) if eid is not None else None
        if known is not None and not known.live and job_id in known.model.job_status:
            known.model.job_status[job_id] = status  # executions no longer tracked live still get it

    def on_stage_submitted(self, line, d) -> None:
        sid, attempt, name, num_tasks, sub = self._stage_info(line, d)
        st = self._stage(sid)
        stages.submitted(st, attempt, num_tasks)
        if name and name != st.name:
            st.name = self.kept.text(name, K.NAME_CHARS, "stage name") or ""
        st.submission_time = sub
        sm = self.stage_metrics.get(sid)
        if sm is not None and sm.attempt != attempt and self._is_sql_stage(sid):
            self.stage_metrics[sid] = _StageMetrics(sid, attempt, sm.num_tasks, sm.types, self.budget)

    def _is_sql_stage(self, sid: int) -> bool:
        return any(sid in ex.stages for ex in self.live.values())

    def on_stage_completed(self, line, d) -> None:
        sid, attempt, name, num_tasks, sub = self._stage_info(line, d)
        st = self._stage(sid)
        reason = None
        if line is not None and b'"Failure Reason":' not in line:
            m = _COMPLETION.search(line)
            st.completion_time = int(m.group(1)) if m else None
            st.failed = False
        else:  # (a failed stage is rare: read its reason)
            if d is None:  # (a raw handler is given the line whenever it has no parsed event)
                assert line is not None
                d = parse_json(line)
            info = d["Stage Info"]
            ct = info.get("Completion Time")
            st.completion_time = ct if isinstance(ct, int) else None
            st.failed = "Failure Reason" in info
            reason = info.get("Failure Reason")
        stages.completed(st, attempt, st.failed, reason)

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
            d = parse_json(line)
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
                    d = parse_json(line)
                except (ValueError, RecursionError) as e:
                    self._bad_line(line, e)
                    return
            rec = parse_task_end_json(d)
        sid, attempt, task_id, index, successful, accs, read, ms, partition = rec
        if successful:
            st = self.stages_mem.get(sid)
            if st is None and self.spilled_owner:
                st = self._stage_revived(sid)
            slot = stages.task_slot(attempt, index, partition)  # (a retry's index is not its partition)
            if st is not None:
                stages.task_succeeded(st, self.budget, attempt, slot, task_id, ms, read, self.keep_tasks)
            rs = self.read_store.get(sid)
            if rs is not None and rs.tracked:
                rs.record(slot, accs)
        sm = self.stage_metrics.get(sid)
        if sm is not None and sm.attempt == attempt:
            sm.update(task_id, index, successful, accs)

    # -- end of input ---------------------------------------------------------------------------
    def finalize(self, ex: _LiveExec) -> SQLExecution:
        """What the model keeps of an ended execution: status, final plan, reads, effective conf."""
        m = ex.model
        version = self.log.application.spark_version
        ex.keep_plan_text(self.packs)
        final = _build_final(m)
        _set_status(m, ex)
        m.shuffle_reads, m.other_shuffle_reads = _shuffle_reads(ex, self.log, version, final)
        m.planned_shuffles = planned_shuffles(ex, self.log, final) if m.adaptive else []
        _effective_conf(m, self.log, version, self.conf_cache, self.env_updates)
        m.stage_retries = stages.stage_retries(m.stage_ids, self.log.stages, m.conf_layers)
        if m.shuffle_reads and m.shuffle_reads[0].partition_sizes_source == "task_shuffle_read":
            self.task_read_sizes.add(m.id)
        return m

    def finish(self) -> None:
        for ex in list(self.live.values()):
            # As the History Server does when it flushes: aggregate what is there.
            self._aggregate(ex)
            self._snapshot_reads(ex)
        self.stage_metrics.clear()
        self.read_store.clear()
        if self.sink is not None:
            return self.hand_over_rest()
        # finished executions go to the spill file too when the log was big enough to spill
        done: SpillMap[int, SQLExecution] = SpillMap(file=self.spill_file)
        meter = self.meter
        for eid in self.order:
            if meter is not None:
                meter.check_time()
            left = self.execs.pop(eid, None)
            if left is None:
                ref = self.finished_spilled(eid)
                if ref is not None:
                    done.add_spilled(eid, ref)
                    continue
                left = self.cold.pop(eid)[0]
            done[eid] = model = self.finalize(left)
            if self.on_final is not None:
                self.on_final(self.log, model)
            self.spill_into(done, eid)
        self.log.executions = done
