"""Spark's own event log, tapped at run time: the intermediate plans AQE posts.

The intermediate plans are what AQE posts to the SQL UI (``SparkListenerSQLAdaptiveExecution
Update``); a listener bus cannot be reached from Python without callbacks, so
:class:`EventLogTap` attaches Spark's own ``EventLoggingListener`` (uncompressed, in a temp
directory) to the running ``SparkContext`` and reads those events back.
"""
from __future__ import annotations

import atexit
import json
import os
import shutil
import tempfile
import threading
import time
from dataclasses import dataclass, field, replace
from typing import Any, Iterable, Optional

from aqe_core import config
from aqe_core.model.capture import SparkStageTiming
from aqe_core.live.jvm import Jvm
from aqe_core.readers.eventlog.log_lines import parse_task_end_json
from aqe_core.readers.eventlog import stages
from aqe_core.readers.eventlog.task_end import parse_task_end_fast

_SQL_START = "org.apache.spark.sql.execution.ui.SparkListenerSQLExecutionStart"
_SQL_UPDATE = "org.apache.spark.sql.execution.ui.SparkListenerSQLAdaptiveExecutionUpdate"
_SQL_END = "org.apache.spark.sql.execution.ui.SparkListenerSQLExecutionEnd"
_WANTED = (b"SparkListenerSQLExecutionStart", b"SparkListenerSQLAdaptiveExecutionUpdate",
           b"SparkListenerSQLExecutionEnd", b'"SparkListenerJobStart"', b'"SparkListenerStageCompleted"')
_TASK_END = b'{"Event":"SparkListenerTaskEnd"'
#: the tap's log is replaced by a fresh one past this size, between queries (:meth:`EventLogTap.trim`)
TRIM_BYTES = 64 << 20


class _StageTasks:
    """A stage's successful tasks as they end: index -> (attempt, duration ms, task id), and
    the SQL accumulators they updated."""

    __slots__ = ("tasks", "accumulators")

    def __init__(self) -> None:
        self.tasks: dict[int, tuple[int, int, int]] = {}
        self.accumulators: set[int] = set()


@dataclass
class _Execution:
    execution_id: int
    description: str = ""
    start_ms: Optional[int] = None
    end_ms: Optional[int] = None
    plans: list[tuple[str, dict]] = field(default_factory=list)  # (event, sparkPlanInfo)
    jobs: list[int] = field(default_factory=list)
    stage_ids: list[int] = field(default_factory=list)


class EventLogTap:
    """Spark's ``EventLoggingListener`` attached at run time, read back incrementally.

    Works on any running SparkContext (ours or a user's) from Spark 3.0 to 4.3. Only SQL
    execution events, job starts and stage completions are parsed (a substring test skips the
    rest). ``close()`` detaches the listener and removes the directory.
    """

    def __init__(self, spark: Any, directory: Optional[str] = None) -> None:
        self.jvm = Jvm(spark)
        self.dir = directory or tempfile.mkdtemp(prefix="aqe-lens-events-")
        self._own_dir = directory is None
        self._lock = threading.Lock()
        self._offset = 0
        self._partial = b""
        self.executions: dict[int, _Execution] = {}
        self.stages: dict[int, SparkStageTiming] = {}
        self.stage_tasks: dict[int, _StageTasks] = {}
        self._path: Optional[str] = None
        self.listener = None
        self.error: Optional[str] = None
        if self._own_dir:  # a process that never calls close() still leaves no temp files
            atexit.register(shutil.rmtree, self.dir, True)
        try:
            self._attach()
        except Exception as e:  # noqa: BLE001 - kept as the tap's error, the run goes on
            self.error = f"could not attach an event logging listener: {str(e).splitlines()[0][:300]}"

    def _attach(self) -> None:
        jvm, jsc = self.jvm.jvm, self.jvm.jsc
        conf = jsc.conf().clone()
        conf.set("spark.eventLog.compress", "false")
        conf.set("spark.eventLog.rolling.enabled", "false")
        conf.set("spark.eventLog.overwrite", "true")
        conf.set("spark.eventLog.logStageExecutorMetrics", "false")
        conf.set("spark.eventLog.includeTaskMetricsAccumulators", "false")  # 4.x: smaller task events
        app_id = f"{jsc.applicationId()}-aqelens-{os.getpid()}-{int(time.time() * 1000)}"
        uri = jvm.java.net.URI("file://" + os.path.abspath(self.dir))
        listener = jvm.org.apache.spark.scheduler.EventLoggingListener(
            app_id, jvm.scala.Option.empty(), uri, conf, jsc.hadoopConfiguration())
        listener.start()
        jsc.addSparkListener(listener)
        self.listener = listener
        self._path = os.path.join(self.dir, app_id + ".inprogress")

    @property
    def log_path(self) -> Optional[str]:
        """The event log Spark writes for this session (in progress): a real plain event log."""
        return self._path

    @property
    def available(self) -> bool:
        return self.listener is not None

    def poll(self) -> None:
        """Parse whatever the listener has written since the last call."""
        if not self._path:
            return
        with self._lock:
            try:
                with open(self._path, "rb") as fh:
                    fh.seek(self._offset)
                    data = fh.read()
            except OSError:
                return
            if not data:
                return
            self._offset += len(data)
            data = self._partial + data
            lines = data.split(b"\n")
            self._partial = lines.pop()  # incomplete last line, if any
            for line in lines:
                if line.startswith(_TASK_END):
                    self._on_task_end(line)
                elif line and any(w in line for w in _WANTED):
                    try:
                        self._on_event(json.loads(line))
                    except (ValueError, KeyError, TypeError):
                        continue

    def _on_task_end(self, line: bytes) -> None:
        rec = parse_task_end_fast(line)
        if rec is None:
            try:
                rec = parse_task_end_json(json.loads(line))
            except (ValueError, KeyError, TypeError):
                return
        sid, attempt, task_id, index, ok, accs, _read, ms, partition = rec
        st = self.stage_tasks.setdefault(sid, _StageTasks())
        st.accumulators.update(accs[0::2])
        slot = stages.task_slot(attempt, index, partition)  # (a retried stage's index is not its partition)
        if ok and ms >= 0 and slot >= 0 and st.tasks.get(slot, (-1,))[0] <= attempt:
            st.tasks[slot] = (attempt, ms, task_id)

    def timing(self, sid: int) -> Optional[SparkStageTiming]:
        """The stage's timing with its tasks' durations and the accumulators they updated."""
        t = self.stages.get(sid)
        st = self.stage_tasks.get(sid)
        if t is None or st is None:
            return t
        n = max(t.num_tasks, max(st.tasks, default=-1) + 1)
        ms, ids = [-1] * n, [-1] * n
        for i, (_a, d, tid) in st.tasks.items():
            if 0 <= i < n:
                ms[i], ids[i] = d, tid
        return replace(t, task_ms=ms, task_ids=ids, accumulators=sorted(st.accumulators))

    def _on_event(self, ev: dict) -> None:
        kind = ev.get("Event")
        if kind == _SQL_START:
            ex = self.executions.setdefault(int(ev["executionId"]), _Execution(int(ev["executionId"])))
            ex.description = str(ev.get("description") or "")
            ex.start_ms = ev.get("time")
            if isinstance(ev.get("sparkPlanInfo"), dict):
                ex.plans.append(("start", ev["sparkPlanInfo"]))
        elif kind == _SQL_UPDATE:
            ex = self.executions.setdefault(int(ev["executionId"]), _Execution(int(ev["executionId"])))
            if isinstance(ev.get("sparkPlanInfo"), dict):
                ex.plans.append(("update", ev["sparkPlanInfo"]))
        elif kind == _SQL_END:
            ex = self.executions.setdefault(int(ev["executionId"]), _Execution(int(ev["executionId"])))
            ex.end_ms = ev.get("time")
        elif kind == "SparkListenerJobStart":
            props = ev.get("Properties") or {}
            eid = props.get(config.EXECUTION_ID_KEY)
            if eid is not None:
                ex = self.executions.setdefault(int(eid), _Execution(int(eid)))
                ex.jobs.append(int(ev.get("Job ID", -1)))
                ex.stage_ids.extend(int(s) for s in ev.get("Stage IDs") or [])
        elif kind == "SparkListenerStageCompleted":
            info = ev.get("Stage Info") or {}
            sid = int(info.get("Stage ID", -1))
            self.stages[sid] = SparkStageTiming(sid, str(info.get("Stage Name", "")), int(info.get("Number of Tasks", 0)),
                                                info.get("Submission Time"), info.get("Completion Time"),
                                                bool(info.get("Failure Reason")))

    def executions_for(self, description: str) -> list[_Execution]:
        return [e for e in sorted(self.executions.values(), key=lambda e: e.execution_id) if e.description == description]

    def wait_for_end(self, description: str, timeout: float = 15.0) -> list[_Execution]:
        """Executions whose description is ``description``, once all of them have ended."""
        deadline = time.monotonic() + timeout
        delay = 0.02
        while True:
            self.poll()
            exs = self.executions_for(description)
            if exs and all(e.end_ms is not None for e in exs):
                return exs
            if time.monotonic() > deadline:
                return exs
            time.sleep(delay)
            delay = min(delay * 1.5, 0.25)

    def matching(self, exchange_ids: set[str], timeout: float = 10.0) -> list[_Execution]:
        """The ended execution whose plans share the most exchange ids (``[plan_id=N]``,
        ``[id=#N]``) with a captured plan: how a user program's query finds its events."""
        if not exchange_ids:
            return []
        deadline = time.monotonic() + timeout
        while True:
            self.poll()
            best, score = None, 0
            for e in self.executions.values():
                if e.end_ms is None or not e.plans:
                    continue
                text = json.dumps(e.plans[-1][1])
                n = sum(1 for x in exchange_ids if x in text)
                if n > score:
                    best, score = e, n
            if best is not None or time.monotonic() > deadline:
                return [best] if best is not None else []
            time.sleep(0.1)

    def trim(self, limit_bytes: int = TRIM_BYTES) -> bool:
        """Start a fresh log file once this one passed ``limit_bytes`` and Spark runs no job
        (so no event of a query being recorded is in flight); what was read of the old file is
        kept only for executions still running. Bounds the disk a long-lived server uses (about
        3.6 KB per task otherwise, for ever) and the task data of jobs nobody recorded."""
        with self._lock:
            if not self._path or self.listener is None or self._offset < limit_bytes:
                return False
        try:
            if len(self.jvm.sc.statusTracker().getActiveJobsIds()) > 0:
                return False
        except Exception:  # noqa: BLE001 - cannot tell: keep the file
            return False
        self.poll()
        with self._lock:
            old, path = self.listener, self._path
            try:
                self.jvm.jsc.removeSparkListener(old)
                old.stop()
            except Exception:  # noqa: BLE001 - best effort: the listener may be gone
                pass
            try:
                os.remove(path)
            except OSError:
                pass
            self._offset, self._partial = 0, b""
            self.executions = {k: e for k, e in self.executions.items() if e.end_ms is None}
            keep = {sid for e in self.executions.values() for sid in e.stage_ids}
            self.stages = {k: v for k, v in self.stages.items() if k in keep}
            self.stage_tasks = {k: v for k, v in self.stage_tasks.items() if k in keep}
            self.listener = None
            self._attach()
        return True

    def forget(self, executions: Iterable[_Execution]) -> None:
        with self._lock:
            for e in executions:
                self.executions.pop(e.execution_id, None)
                for sid in e.stage_ids:  # a long-lived server keeps no task data of recorded queries
                    self.stage_tasks.pop(sid, None)
                    self.stages.pop(sid, None)

    def close(self) -> None:
        if self.listener is not None:
            try:
                self.jvm.jsc.removeSparkListener(self.listener)
                self.listener.stop()
            except Exception:  # noqa: BLE001 - best effort: the listener may be gone
                pass
            self.listener = None
        if self._own_dir:
            shutil.rmtree(self.dir, ignore_errors=True)
