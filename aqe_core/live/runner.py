"""Run SQL text or built-in workloads on Spark and capture what AQE did.

    from aqe_core.api import Runner
    cap = Runner().run_workload("skew_join_inner", scale=1)   # or Runner(master="spark://h:7077")
    cap = Runner().run_sql("SELECT ...", conf={"spark.sql.adaptive.skewJoin.enabled": "false"})

Each query runs in its own ``spark.newSession()`` (settings isolated), under a job group
``aqe-lens:<tag>:<n>`` that :meth:`Runner.cancel` cancels and the SQL execution's description
names (that is how its plan updates are found in the event log). A progress callback gets a
:class:`Progress` a few times a second.

Time limits: ``Runner(time_limit_s=...)`` bounds every run, :meth:`Runner.limit_time` one run
(from now). A watchdog thread per query sleeps until the deadline (no polling) and then cancels
the run's job group, present and future jobs, so the query stops and the SparkContext keeps
serving the next run; the run raises :class:`RunTimedOut`.

Guarded by default: unless the runner is ``trusted`` (``Runner(trusted=True)``, or the server
setting ``trusted`` / ``AQE_LENS_TRUSTED=1`` when not given), every SQL text and setup statement
passes :mod:`aqe_core.live.sql_guard` in the session it runs in (SQL on files off), and every setting
from a user passes :mod:`aqe_core.live.conf_guard`, before anything runs; refusals raise
:class:`~aqe_core.live.sql_guard.UnsafeSQL`. A guarded query that fails while running reports
Spark's error class, not Spark's message (which can carry data). Enforcing it here means no
caller (Run page, CLI, Re-run for real) can skip it.
"""
from __future__ import annotations

import datetime as _dt
import threading
import time
import uuid
from dataclasses import dataclass
from typing import Any, Callable, Mapping, Optional, Sequence

import aqe_core
from aqe_core.model.capture import Capture, QueryCapture
from aqe_core.live import workloads as wl
from aqe_core.live.conf_guard import check_conf, check_spark_conf
from aqe_core.live.recorder import DEFAULT_MAP_SIZE_CAP, Recorder
from aqe_core.exception_text import reason_line
from aqe_core.live.runtime import SparkRuntime, get_runtime
from aqe_core.live.sql_guard import (
    check_setup,
    check_sql,
    check_text,
    guard_session,
    trusted_by_default,
)


@dataclass
class Progress:
    """Where a run is. ``phase``: ``running`` (Spark jobs), ``capturing`` (reading statistics),
    ``done``. Counts cover the jobs of the current query."""

    tag: str
    label: str
    phase: str
    query_index: int
    query_count: int
    jobs_done: int = 0
    jobs_total: int = 0
    stages_done: int = 0
    stages_total: int = 0
    tasks_done: int = 0
    tasks_total: int = 0
    elapsed_s: float = 0.0


ProgressFn = Callable[[Progress], None]


class RunCancelled(RuntimeError):
    """The run was cancelled through :meth:`Runner.cancel`."""


class RunTimedOut(RunCancelled):
    """The run was stopped at its time limit."""


class RunFailed(RuntimeError):
    """Spark failed to run the query (the message carries Spark's first line; on a guarded run
    only Spark's error class, see :func:`redacted_failure`)."""


def redacted_failure(exc: BaseException) -> str:
    """What a guarded run may say about a failure: Spark's error class or condition and a
    generic sentence. Spark's message text can carry data (``raise_error(secret)``, the value a
    cast failed on), so it is never shown."""
    cond = ""
    for getter in ("getCondition", "getErrorClass"):
        fn = getattr(exc, getter, None)
        if callable(fn):
            try:
                cond = str(fn() or "")
            except Exception:  # noqa: BLE001 - py4j: a failure's condition is optional
                cond = ""
            if cond:
                break
    if not cond:
        jexc = getattr(exc, "java_exception", None)
        try:
            cond = str(jexc.getClass().getSimpleName()) if jexc is not None else ""
        except Exception:  # noqa: BLE001 - py4j: a failure's class name is optional
            cond = ""
    cond = cond or type(exc).__name__
    return (f"Spark failed while running the query ({cond[:120]}); its message is not shown on a guarded "
            "server because it can carry query data")


def _now() -> str:
    return _dt.datetime.now(_dt.timezone.utc).replace(microsecond=0).isoformat()


class Runner:
    """Runs queries on the shared :class:`SparkRuntime` and returns :class:`Capture` objects."""

    def __init__(self, runtime: Optional[SparkRuntime] = None, *, master: Optional[str] = None,
                 spark_conf: Optional[Mapping[str, Any]] = None, progress: Optional[ProgressFn] = None,
                 map_size_cap: int = DEFAULT_MAP_SIZE_CAP, poll_interval: float = 0.25,
                 time_limit_s: Optional[float] = None, trusted: Optional[bool] = None) -> None:
        #: False: SQL and settings pass the guards (see the module docstring)
        self.trusted = trusted_by_default() if trusted is None else bool(trusted)
        if spark_conf and not self.trusted:  # before a JVM starts with them (raises UnsafeConf)
            spark_conf = check_spark_conf(spark_conf)
        self.rt = runtime or get_runtime(master, spark_conf)
        self.time_limit_s = time_limit_s  # for runs without a limit of their own (limit_time)
        self.progress = progress
        self.map_size_cap = map_size_cap
        self.poll_interval = poll_interval
        self._running: dict[str, str] = {}  # run tag -> job group of the query in flight
        self._cancelled: set[str] = set()
        self._limits: dict[str, tuple[float, float]] = {}  # run tag -> (seconds, monotonic deadline)
        self._timed_out: set[str] = set()
        self._lock = threading.Lock()

    # -- public ------------------------------------------------------------------------
    @property
    def spark_version(self) -> str:
        return self.rt.version

    def run_sql(self, sql: str, conf: Optional[Mapping[str, Any]] = None, *, label: str = "sql",
                tag: Optional[str] = None, progress: Optional[ProgressFn] = None, action: str = "collect") -> Capture:
        """Run one SQL query with ``conf`` (``spark.sql.*``) in a fresh session."""
        if not self.trusted:
            sql = check_text(sql)
            conf = check_conf(conf, spark_version=self.rt.version)
        tag = tag or uuid.uuid4().hex[:12]
        session = self.rt.new_session(conf)
        if not self.trusted:
            check_sql(sql, guard_session(session))
        cap = self._new_capture({"kind": "sql", "sql": sql, "conf": dict(conf or {}), "tag": tag, "action": action})
        q = self._run_query(session, sql, tag=tag, index=0, count=1, label=label, preset=None,
                            progress=progress, action=action)
        cap.queries.append(q)
        return cap

    def rerun(self, sql: str, runs: Sequence[tuple[str, Mapping[str, Any]]], *, setup: Sequence[str] = (),
              label: str = "rerun", tag: Optional[str] = None, progress: Optional[ProgressFn] = None,
              run_info: Optional[Mapping[str, Any]] = None) -> Capture:
        """Run ``sql`` once per ``(name, settings)`` in ``runs``, each in a fresh session where the
        ``setup`` statements (a workload's temporary views) ran first. Settings Spark does not let
        a session change (static ones such as the warehouse dir) are left as they are.

        Guarded, ``sql``, ``setup`` and ``runs`` typically come from an uploaded capture: every
        setting passes the conf guard (settings a session cannot change, or that would not
        change anything, are dropped first), each setup statement must be a temporary view of
        an allowed query, and ``sql`` must pass the SQL guard, all before the query runs."""
        if not self.trusted:
            sql = check_text(sql)
            runs = self._checked_runs(runs)
        tag = tag or uuid.uuid4().hex[:12]
        cap = self._new_capture({"kind": "rerun", "sql": sql, "presets": [n for n, _ in runs], "tag": tag,
                                 **dict(run_info or {})})
        for i, (name, settings) in enumerate(runs):
            session = self.rt.new_session({})
            for k, v in settings.items():
                if session.conf.isModifiable(str(k)):
                    session.conf.set(str(k), str(v))
            if not self.trusted:
                guard_session(session)
            for stmt in setup:
                session.sql(stmt if self.trusted else check_setup(stmt, session))
            if not self.trusted:
                check_sql(sql, session)
            cap.queries.append(self._run_query(session, sql, tag=tag, index=i, count=len(runs), label=f"{label} @ {name}",
                                               preset=name, progress=progress))
        return cap

    def run_workload(self, name: str, *, scale: float = 1.0, presets: Optional[list[str]] = None,
                     conf: Optional[Mapping[str, Any]] = None, tag: Optional[str] = None,
                     progress: Optional[ProgressFn] = None) -> Capture:
        """Run a built-in workload once per preset (all presets this Spark supports by default);
        ``conf`` overrides every preset's settings."""
        w = wl.get(name)
        if not w.supports(self.rt.version):
            raise ValueError(f"workload {name} needs Spark {w.min_version}+ (running {self.rt.version})")
        chosen = w.presets_for(self.rt.version, presets)
        if not self.trusted:
            conf = check_conf(conf, spark_version=self.rt.version)
        tag = tag or uuid.uuid4().hex[:12]
        cap = self._new_capture({"kind": "workload", "workload": name, "scale": scale, "doc": w.doc, "sql": w.sql,
                                 "presets": [p.name for p in chosen], "conf_overrides": dict(conf or {}), "tag": tag})
        for i, p in enumerate(chosen):
            settings = {**w.conf_for(p, scale), **{k: str(v) for k, v in (conf or {}).items()}}
            session = self.rt.new_session(settings)
            views = w.views(session, scale)
            cap.run.setdefault("views", views)
            q = self._run_query(session, w.sql, tag=tag, index=i, count=len(chosen), label=f"{name}/{p.name}",
                                preset=p.name, progress=progress)
            cap.queries.append(q)
        return cap

    def cancel(self, tag: Optional[str] = None) -> None:
        """Cancel a run (every run when ``tag`` is None): its Spark jobs are killed and the
        run raises :class:`RunCancelled`. A tag not running yet is cancelled when it starts."""
        with self._lock:
            tags = [tag] if tag else list(self._running)
            for t in tags:
                self._cancelled.add(t)
                group = self._running.get(t)
                if group:
                    self._cancel_group(group)

    def limit_time(self, tag: str, seconds: Optional[float]) -> None:
        """Stop run ``tag`` ``seconds`` from now (None: no limit of its own)."""
        with self._lock:
            if seconds is None:
                self._limits.pop(tag, None)
            else:
                self._limits[tag] = (float(seconds), time.monotonic() + float(seconds))

    def forget(self, tag: str) -> None:
        """Drop what the runner keeps about a finished run (cancel flags, time limit)."""
        with self._lock:
            self._cancelled.discard(tag)
            self._timed_out.discard(tag)
            self._limits.pop(tag, None)

    # -- internals ---------------------------------------------------------------------
    def _cancel_group(self, group: str) -> None:
        """Cancel the group's jobs, and (Spark 4+) the ones it submits later: between two
        query stages an adaptive query has no job running that a plain cancel would catch."""
        sc = self.rt.spark.sparkContext
        try:
            sc._jsc.sc().cancelJobGroupAndFutureJobs(group)
        except Exception:  # noqa: BLE001 - Spark < 4 has only cancelJobGroup
            try:
                sc.cancelJobGroup(group)
            except Exception:  # noqa: BLE001 - the JVM is gone: nothing left to cancel
                pass

    def _deadline(self, tag: str) -> Optional[float]:
        """The run's deadline (the runner-wide limit counts from the run's first query). Caller holds the lock."""
        if tag not in self._limits and self.time_limit_s:
            self._limits[tag] = (float(self.time_limit_s), time.monotonic() + float(self.time_limit_s))
        lim = self._limits.get(tag)
        return lim[1] if lim else None

    def _stopped(self, tag: str) -> RunCancelled:
        """The error for a cancelled run. Caller holds the lock."""
        if tag in self._timed_out:
            seconds = self._limits.get(tag, (0.0, 0.0))[0]
            return RunTimedOut(f"run {tag} was stopped at its time limit of {seconds:g} s")
        return RunCancelled(f"run {tag} was cancelled")

    def _watchdog(self, tag: str, deadline: float, stop: threading.Event) -> None:
        if stop.wait(max(0.0, deadline - time.monotonic())):
            return
        with self._lock:
            self._timed_out.add(tag)
        self.cancel(tag)

    def _checked_runs(self, runs: Sequence[tuple[str, Mapping[str, Any]]]) -> list[tuple[str, dict[str, str]]]:
        """The conf guard over every run's settings, dropping those that cannot matter: static
        keys (a session cannot change them; a capture records the warehouse dir) and values the
        fresh guarded session already has (a guarded SQL run records the guard's own
        ``spark.sql.runSQLOnFiles=false``, so its capture can be re-run)."""
        probe = guard_session(self.rt.new_session({}))
        sqlconf = self.rt.spark._jvm.org.apache.spark.sql.internal.SQLConf

        def ignore(key: str, value: str) -> bool:
            try:
                if bool(sqlconf.isStaticConfigKey(key)):
                    return True
            except Exception:  # noqa: BLE001 - py4j: no such method on this release
                pass
            try:
                return probe.conf.get(key, None) == value
            except Exception:  # noqa: BLE001 - py4j: an unreadable key is not set
                return False

        return [(name, check_conf(settings, spark_version=self.rt.version, ignore=ignore)) for name, settings in runs]

    def _new_capture(self, run: dict[str, Any]) -> Capture:
        sc = self.rt.spark.sparkContext
        cap = Capture(spark_version=self.rt.version, master=str(sc.master), app_id=str(sc.applicationId),
                      java=self.rt.java_info(), run=run, created_at=_now(),
                      producer={"name": "aqe-lens", "version": aqe_core.__version__})
        cap.warnings.extend(self.rt.warnings)
        return cap

    def _run_query(self, session: Any, sql: str, *, tag: str, index: int, count: int, label: str,
                   preset: Optional[str], progress: Optional[ProgressFn], action: str = "collect") -> QueryCapture:
        progress = progress or self.progress
        sc = self.rt.spark.sparkContext
        if self.rt.tap is not None:
            self.rt.tap.trim()
        group = f"aqe-lens:{tag}:{index}"
        with self._lock:
            deadline = self._deadline(tag)
            if deadline is not None and time.monotonic() >= deadline:
                self._timed_out.add(tag)
                self._cancelled.add(tag)
            if tag in self._cancelled:
                raise self._stopped(tag)
            self._running[tag] = group
        stop = threading.Event()
        if deadline is not None:
            threading.Thread(target=self._watchdog, args=(tag, deadline, stop), daemon=True,
                             name=f"aqe-lens-limit-{tag}").start()
        t0 = time.perf_counter()
        monitor = None
        if progress is not None:
            monitor = threading.Thread(target=self._monitor, args=(group, tag, label, index, count, progress, stop, t0),
                                       daemon=True)
            monitor.start()
        rows: Optional[int] = None
        try:
            sc.setJobGroup(group, group, True)
            df = session.sql(sql)
            rows = self._action(df, action)
            duration = (time.perf_counter() - t0) * 1000.0
        except Exception as e:
            with self._lock:
                stopped = self._stopped(tag) if tag in self._cancelled else None
            if stopped is not None:
                raise stopped from None
            if self._context_stopped(sc):
                raise RunFailed(f"{label}: the Spark application stopped while the query ran (killed on the"
                                f" master, or its SparkContext shut down); start a new run") from None
            if not self.trusted:
                raise RunFailed(f"{label}: {redacted_failure(e)}") from None
            first = str(e).strip().splitlines()[0] if str(e).strip() else type(e).__name__
            if type(e).__name__ == "Py4JJavaError":  # its first line names only the py4j call
                first = reason_line(e)
            raise RunFailed(f"{label}: {first[:500]}") from e
        finally:
            stop.set()
            try:
                for key in ("spark.jobGroup.id", "spark.job.description", "spark.job.interruptOnCancel"):
                    sc.setLocalProperty(key, None)
            except Exception:  # noqa: BLE001 - the JVM may be gone (the run's own error says why)
                pass
            with self._lock:
                self._running.pop(tag, None)
            if monitor is not None:
                monitor.join(timeout=2)
        if progress is not None:
            progress(Progress(tag, label, "capturing", index, count, elapsed_s=time.perf_counter() - t0))
        rec = Recorder(session, tap=self.rt.tap, map_size_cap=self.map_size_cap)
        q = rec.capture(df, index=index, label=label, description=group, sql=sql, preset=preset,
                        duration_ms=duration, row_count=rows)
        if progress is not None:
            progress(Progress(tag, label, "done", index, count, elapsed_s=time.perf_counter() - t0))
        return q

    @staticmethod
    def _context_stopped(sc: Any) -> bool:
        try:
            return bool(sc._jsc.sc().isStopped())
        except Exception:  # noqa: BLE001 - the JVM side is gone too
            return True

    @staticmethod
    def _action(df: Any, action: str) -> Optional[int]:
        if action == "collect":
            # rows stay in the driver JVM: nothing is shipped to Python
            return int(df._jdf.collectAsList().size())
        if action == "collect_python":
            return len(df.collect())
        raise ValueError(f"unknown action {action!r} (collect, collect_python)")

    def _monitor(self, group: str, tag: str, label: str, index: int, count: int, progress: ProgressFn,
                 stop: threading.Event, t0: float) -> None:
        tracker = self.rt.spark.sparkContext.statusTracker()
        while not stop.wait(self.poll_interval):
            p = Progress(tag, label, "running", index, count, elapsed_s=time.perf_counter() - t0)
            try:
                for jid in tracker.getJobIdsForGroup(group):
                    job = tracker.getJobInfo(jid)
                    if job is None:
                        continue
                    p.jobs_total += 1
                    p.jobs_done += int(str(job.status) == "SUCCEEDED")
                    for sid in job.stageIds:
                        st = tracker.getStageInfo(sid)
                        if st is None:
                            continue
                        p.stages_total += 1
                        p.tasks_total += st.numTasks
                        p.tasks_done += st.numCompletedTasks
                        p.stages_done += int(st.numTasks > 0 and st.numCompletedTasks >= st.numTasks)
            except Exception:  # noqa: BLE001 - the tracker may race with job cleanup
                continue
            try:
                progress(p)
            except Exception:  # noqa: BLE001 - a broken callback must not kill the run
                pass
