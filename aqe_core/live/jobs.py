"""Background runs for the app: one Spark run at a time, pollable progress, cancel, result file.

The app's script threads must not block on Spark (a rerun cannot interrupt a JVM call), so runs
go to a single worker thread; the page polls :meth:`RunManager.status` and shows a queued job's
place with :meth:`RunManager.ahead`. Every run has a time limit (``run_time_limit_s`` of the
server settings) and may only use a master URL of ``allowed_masters``. Results are captures
saved under ``$AQE_LENS_HOME/runs/``, listed by :class:`aqe_core.live.run_index.RunIndex` (so past
runs survive a restart), which every page opens like any other source.

Runs are guarded unless the server is ``trusted`` (see :mod:`aqe_core.live.sql_guard`): text-level
problems and refused settings are raised by ``submit_*`` at once (:class:`UnsafeSQL`); what
needs Spark to decide is checked by the runner in the worker, and the job then ends
``refused`` with the reason. A guarded run's failure message never carries Spark's text.
"""
from __future__ import annotations

import threading
import time
import uuid
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Mapping, Optional

from aqe_core import config
from aqe_core.live.conf_guard import check_conf
from aqe_core.live.run_index import RunEntry, RunIndex
from aqe_core.live.sql_guard import UnsafeSQL, check_text, trusted_by_default
from aqe_core.server_settings import server_settings


class MasterNotAllowed(ValueError):
    """The master URL is not in the server's ``allowed_masters`` (message for people)."""


@dataclass
class RunJob:
    job_id: str
    kind: str  # "sql" | "workload" | "rerun" | "verify" | "count"
    label: str
    state: str = "queued"  # queued | running | done | failed | cancelled | timed out | refused
    progress: Any = None  # the runner's latest Progress
    message: str = ""
    result_path: Optional[str] = None
    started: float = field(default_factory=time.time)
    finished: Optional[float] = None
    time_limit_s: Optional[float] = None
    cancel_requested: bool = False
    trusted: bool = False  # the guard's switch as it was when the job was submitted
    result: Any = None  # a "count" job's answer (data, not a capture)

    @property
    def active(self) -> bool:
        return self.state in ("queued", "running")


class RunManager:
    """Queue of Spark runs for one server process (share it with ``st.cache_resource``)."""

    def __init__(self, master: Optional[str] = None, *, runtime: Any = None, time_limit_s: Optional[float] = None,
                 runs_dir: Optional[Path] = None, trusted: Optional[bool] = None) -> None:
        """``master``: the operator's default (None: the running runtime, ``AQE_LENS_MASTER`` or
        local[*]); ``runtime``: run on this SparkRuntime only (tests share theirs);
        ``time_limit_s``: instead of the server setting; ``trusted``: instead of the server setting."""
        self.master = master
        self.runtime = runtime
        self.time_limit_s = time_limit_s
        self.index = RunIndex(runs_dir)
        self._trusted = trusted
        self._pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="aqe-lens-run")
        self._jobs: dict[str, RunJob] = {}
        self._lock = threading.Lock()
        self._runner: Any = None

    @property
    def trusted(self) -> bool:
        """False (unless given, or the server settings say ``trusted``): every run passes the
        SQL and conf guards. Read at each submit, so a settings change applies to new runs."""
        return trusted_by_default() if self._trusted is None else bool(self._trusted)

    def _get_runner(self, master: Optional[str]) -> Any:
        """The runner for the runtime in force; a stopped or dead runtime is replaced by
        :func:`get_runtime`, so one crashed run never leaves Spark down for the next."""
        from aqe_core.live.runner import Runner
        from aqe_core.live.runtime import RuntimeConflict, get_runtime

        wanted = master or self.master
        if self.runtime is not None:
            rt = self.runtime
            if wanted and wanted != rt.master:
                raise RuntimeConflict(f"this server runs Spark on {rt.master}; cannot also run on {wanted}")
        else:
            rt = get_runtime(wanted)
        if self._runner is None or self._runner.rt is not rt:
            self._runner = Runner(rt, trusted=False)
        return self._runner

    @staticmethod
    def check_master(master: Optional[str]) -> None:
        """Refuse a master URL the server settings do not allow (None: the server's default)."""
        allowed = server_settings().allowed_masters
        if master is not None and master not in allowed:
            raise MasterNotAllowed(f"master {master!r} is not allowed on this server (allowed: {', '.join(allowed)};"
                                   " the operator sets allowed_masters in server.toml)")

    def submit_sql(self, sql: str, conf: Optional[Mapping[str, str]] = None, *, master: Optional[str] = None,
                   label: str = "sql", time_limit_s: Optional[float] = None) -> RunJob:
        """Queue one SQL query. Guarded, the text and settings are checked now (raising
        :class:`UnsafeSQL`) and the query by Spark's parse in the worker (job ``refused``)."""
        query = sql
        if not self.trusted:
            query = check_text(sql)
            conf = check_conf(conf)
        return self._submit("sql", label, lambda r, job: r.run_sql(query, dict(conf or {}), label=label, tag=job.job_id,
                                                                  progress=self._progress(job)), master,
                            time_limit_s)

    def submit_workload(self, name: str, *, scale: float = 1.0, presets: Optional[list[str]] = None,
                        conf: Optional[Mapping[str, str]] = None, master: Optional[str] = None,
                        time_limit_s: Optional[float] = None) -> RunJob:
        from aqe_core.live import workloads

        workloads.get(name)  # unknown names fail now, with the list of workloads
        if not self.trusted:
            conf = check_conf(conf)
        return self._submit("workload", name, lambda r, job: r.run_workload(
            name, scale=scale, presets=presets, conf=conf, tag=job.job_id, progress=self._progress(job)), master,
            time_limit_s)

    def submit_rerun(self, capture_path: str, query_index: int, presets: list[Any], *,
                     master: Optional[str] = None, time_limit_s: Optional[float] = None) -> RunJob:
        """Re-run one captured query on Spark under each preset (the "Re-run for real" of the
        compare page). Presets are applied as settings on this Spark; the result is a capture
        with one query per preset, in order."""
        from aqe_core.readers.capture_file import load_capture

        try:
            cap = load_capture(capture_path)
        except OSError as exc:  # moved or removed since it was opened: the handlers' ValueError
            raise ValueError(f"the capture cannot be read again ({exc.strerror or type(exc).__name__})") from None
        q = next(x for x in cap.queries if x.index == query_index)
        sql = cap.sql_of(q)
        if not sql:
            raise ValueError("this capture does not hold the query text, so it cannot be re-run")
        setup = cap.setup_statements()
        runs = []
        for p in presets:
            keep = {k: v for k, v in q.conf.items() if not (p.base == "defaults" and k.startswith(config.ADAPTIVE_PREFIX))}
            runs.append((p.name, {**keep, **p.settings}))

        def go(r: Any, job: RunJob) -> Any:
            return r.rerun(sql, runs, setup=setup, label=q.label, tag=job.job_id, progress=self._progress(job),
                           run_info={"source": capture_path, "query": query_index, "views": (cap.run or {}).get("views")})

        return self._submit("rerun", f"re-run of {q.label}", go, master, time_limit_s)

    def submit_verify(self, capture: Any, query_index: int, settings: dict[str, str], *,
                      master: Optional[str] = None, time_limit_s: Optional[float] = None) -> RunJob:
        """Run one captured query again with its own settings plus ``settings`` (a recommended
        fix): the "Verify" of a fix. ``capture`` is the loaded capture (a capture file or a
        listener log); raises ValueError when it does not hold the query's SQL text."""
        q = next(x for x in capture.queries if x.index == query_index)
        sql = capture.sql_of(q)
        if not sql:
            raise ValueError("the source does not hold this query's SQL text, so it cannot be run again here")
        setup = capture.setup_statements()
        runs = [("fix", {**q.conf, **{str(k): str(v) for k, v in settings.items()}})]

        def go(r: Any, job: RunJob) -> Any:
            return r.rerun(sql, runs, setup=setup, label=q.label, tag=job.job_id, progress=self._progress(job),
                           run_info={"verify_of": q.label, "views": (capture.run or {}).get("views")})

        return self._submit("verify", f"verify of {q.label}", go, master, time_limit_s)

    def submit_count(self, label: str, count: Callable[[Any, float, bool], Any], *, master: Optional[str] = None,
                     time_limit_s: Optional[float] = None) -> RunJob:
        """Queue a count on Spark whose answer is data, not a capture (the hot keys of skewed
        reducers): ``count(spark, time_limit_s, trusted)`` runs in the worker, one Spark job at a
        time like every run, and must guard its own SQL unless ``trusted``; its return value
        becomes the job's ``result``."""
        return self._submit("count", label, lambda r, job: count(r.rt.spark, job.time_limit_s or 300.0, job.trusted),
                            master, time_limit_s)

    def _progress(self, job: RunJob):
        def update(p: Any) -> None:
            job.progress = p
        return update

    def _submit(self, kind: str, label: str, fn, master: Optional[str],
                time_limit_s: Optional[float] = None) -> RunJob:
        self.check_master(master)
        limit = time_limit_s or self.time_limit_s or server_settings().run_time_limit_s
        job = RunJob(uuid.uuid4().hex[:12], kind, label, time_limit_s=float(limit), trusted=self.trusted)
        with self._lock:
            self._jobs[job.job_id] = job
        self._pool.submit(self._work, job, fn, master)
        return job

    def _work(self, job: RunJob, fn, master: Optional[str]) -> None:
        from aqe_core.readers.capture_file import save_capture
        from aqe_core.live.runner import RunCancelled, RunFailed, RunTimedOut

        with self._lock:
            if job.state == "cancelled":
                return
            job.state = "running"
        runner = None
        state, message = "failed", ""
        try:
            runner = self._get_runner(master)
            runner.trusted = job.trusted  # one worker thread: no other job uses the runner meanwhile
            runner.limit_time(job.job_id, job.time_limit_s)
            if job.cancel_requested:
                runner.cancel(job.job_id)
            capture = fn(runner, job)
            if job.kind == "count":
                job.result, state, message = capture, "done", "counted"
                return
            out = self.index.folder
            out.mkdir(parents=True, exist_ok=True)
            path = save_capture(capture, out / f"{time.strftime('%Y%m%d-%H%M%S')}-{job.job_id}.json.gz")
            job.result_path = str(path)
            state = "done"
            message = f"captured {len(capture.queries)} quer{'y' if len(capture.queries) == 1 else 'ies'}"
        except RunTimedOut:
            state = "timed out"
            message = (f"stopped at the time limit of {job.time_limit_s:g} s (server setting run_time_limit_s);"
                       " its Spark jobs were cancelled")
        except RunCancelled:
            state, message = "cancelled", "cancelled"
        except UnsafeSQL as exc:  # the guard refused the SQL or a setting: nothing ran
            state, message = "refused", f"not run: {exc}"
        except Exception as exc:  # noqa: BLE001 - a failed run is reported, never raised into the app
            message = _one_line(exc, with_type=not isinstance(exc, (RunFailed, ValueError, RuntimeError)))
            if runner is not None and not getattr(runner.rt, "alive", True):
                message += " (Spark stopped during this run, e.g. out of memory; the next run starts a fresh Spark)"
        finally:
            job.finished = time.time()
            if runner is not None:
                runner.forget(job.job_id)
            # indexed before the state is published: whoever sees the job finished also finds it on disk
            job.message = message + self._record(job, state, message)
            job.state = state

    def _record(self, job: RunJob, state: str, message: str) -> str:
        """Add the finished job to the run index; returns a note when that failed."""
        try:
            self.index.record(RunEntry(job.job_id, job.label, job.kind, state, job.started, job.finished,
                                       Path(job.result_path).name if job.result_path else None, message))
        except Exception as exc:  # noqa: BLE001 - the run's result stands even if the index cannot be written
            return f" (not added to the list of past runs: {_one_line(exc, with_type=True)})"
        return ""

    def status(self, job_id: str) -> Optional[RunJob]:
        return self._jobs.get(job_id)

    def ahead(self, job_id: str) -> Optional[int]:
        """How many runs go before this queued job (the one running included); None when
        the job is not waiting."""
        with self._lock:
            job = self._jobs.get(job_id)
            if job is None or job.state != "queued":
                return None
            n = 0
            for other in self._jobs.values():  # insertion order = submission order = run order
                if other is job:
                    return n
                n += int(other.active)
        return None

    def cancel(self, job_id: str) -> None:
        job = self._jobs.get(job_id)
        if job is None:
            return
        with self._lock:
            job.cancel_requested = True
            if job.state == "queued":
                job.state, job.message = "cancelled", "cancelled before it started"
                job.finished = time.time()
                return
        if job.state == "running" and self._runner is not None:
            self._runner.cancel(job_id)

    def past_runs(self, limit: int = 20) -> list[RunEntry]:
        """Finished runs of this server (from disk, so they outlive a restart), newest first."""
        return self.index.entries(limit)

    def recent_runs(self) -> list[Path]:
        """Capture files of the latest past runs, newest first."""
        return [p for p in (self.index.file_of(e) for e in self.past_runs()) if p is not None]


def _one_line(exc: BaseException, *, with_type: bool) -> str:
    text = str(exc).strip()
    first = text.splitlines()[0][:500] if text else ""
    return f"{type(exc).__name__}: {first}" if with_type or not first else first
