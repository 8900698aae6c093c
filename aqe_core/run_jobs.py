"""Background runs for the app: one Spark run at a time, pollable progress, cancel, result file.

The app's script threads must not block on Spark (a rerun cannot interrupt a JVM call), so runs
go to a single worker thread; the page polls :meth:`RunManager.status`. Results are captures
saved under ``$AQE_LENS_HOME/runs/``, which every page opens like any other source.

Runs are guarded unless the server is ``trusted`` (see :mod:`aqe_core.sql_guard`): text-level
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
from typing import Any, Mapping, Optional

from aqe_core.conf_guard import check_conf
from aqe_core.presets import lens_home
from aqe_core.sql_guard import UnsafeSQL, check_text, trusted_by_default


@dataclass
class RunJob:
    job_id: str
    kind: str  # "sql" | "workload"
    label: str
    state: str = "queued"  # queued | running | done | failed | cancelled | refused
    progress: Any = None  # the runner's latest Progress
    message: str = ""
    result_path: Optional[str] = None
    started: float = field(default_factory=time.time)
    finished: Optional[float] = None

    @property
    def active(self) -> bool:
        return self.state in ("queued", "running")


class RunManager:
    """Queue of Spark runs for one server process (share it with ``st.cache_resource``)."""

    def __init__(self, master: Optional[str] = None, *, trusted: Optional[bool] = None) -> None:
        self.master = master
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
        from aqe_core.capture.runner import Runner

        if self._runner is None:
            self._runner = Runner(master=master or self.master, trusted=False)
        return self._runner

    def submit_sql(self, sql: str, conf: Optional[Mapping[str, str]] = None, *, master: Optional[str] = None,
                   label: str = "sql") -> RunJob:
        """Queue one SQL query. Guarded, the text and settings are checked now (raising
        :class:`UnsafeSQL`) and the query by Spark's parse in the worker (job ``refused``)."""
        query = sql
        if not self.trusted:
            query = check_text(sql)
            conf = check_conf(conf)
        return self._submit("sql", label, lambda r, job: r.run_sql(query, dict(conf or {}), label=label, tag=job.job_id,
                                                                  progress=self._progress(job)), master)

    def submit_workload(self, name: str, *, scale: float = 1.0, presets: Optional[list[str]] = None,
                        conf: Optional[Mapping[str, str]] = None, master: Optional[str] = None) -> RunJob:
        from aqe_core.capture import workloads

        workloads.get(name)  # unknown names fail now, with the list of workloads
        if not self.trusted:
            conf = check_conf(conf)
        return self._submit("workload", name, lambda r, job: r.run_workload(
            name, scale=scale, presets=presets, conf=conf, tag=job.job_id, progress=self._progress(job)), master)

    def submit_rerun(self, capture_path: str, query_index: int, presets: list[Any], *,
                     master: Optional[str] = None) -> RunJob:
        """Re-run one captured query on Spark under each preset (the "Re-run for real" of the
        compare page). Presets are applied as settings on this Spark; the result is a capture
        with one query per preset, in order."""
        from aqe_core.capture.model import load_capture

        cap = load_capture(capture_path)
        q = next(x for x in cap.queries if x.index == query_index)
        sql = q.sql or (cap.run or {}).get("sql")
        if not sql:
            raise ValueError("this capture does not hold the query text, so it cannot be re-run")
        setup = list(((cap.run or {}).get("views") or {}).values())
        runs = []
        for p in presets:
            keep = {k: v for k, v in q.conf.items() if not (p.base == "defaults" and k.startswith("spark.sql.adaptive."))}
            runs.append((p.name, {**keep, **p.settings}))

        def go(r: Any, job: RunJob) -> Any:
            return r.rerun(sql, runs, setup=setup, label=q.label, tag=job.job_id, progress=self._progress(job),
                           run_info={"source": capture_path, "query": query_index, "views": (cap.run or {}).get("views")})

        return self._submit("rerun", f"re-run of {q.label}", go, master)

    def _progress(self, job: RunJob):
        def update(p: Any) -> None:
            job.progress = p
        return update

    def _submit(self, kind: str, label: str, fn, master: Optional[str]) -> RunJob:
        job = RunJob(uuid.uuid4().hex[:12], kind, label)
        trusted = self.trusted  # as when the job was submitted
        with self._lock:
            self._jobs[job.job_id] = job

        def work() -> None:
            from aqe_core.capture.model import save_capture
            from aqe_core.capture.runner import RunCancelled

            if job.state == "cancelled":
                return
            job.state = "running"
            try:
                runner = self._get_runner(master)
                runner.trusted = trusted  # one worker thread: no other job uses the runner meanwhile
                capture = fn(runner, job)
                out = lens_home() / "runs"
                out.mkdir(parents=True, exist_ok=True)
                path = save_capture(capture, out / f"{time.strftime('%Y%m%d-%H%M%S')}-{job.job_id}.json.gz")
                job.result_path = str(path)
                job.state = "done"
                job.message = f"captured {len(capture.queries)} quer{'y' if len(capture.queries) == 1 else 'ies'}"
            except RunCancelled:
                job.state, job.message = "cancelled", "cancelled"
            except UnsafeSQL as exc:  # the guard refused the SQL or a setting: nothing ran
                job.state, job.message = "refused", f"not run: {exc}"
            except Exception as exc:  # a failed run is reported, never raised into the app
                job.state = "failed"
                job.message = f"{type(exc).__name__}: {str(exc).splitlines()[0] if str(exc) else ''}"
            finally:
                job.finished = time.time()

        self._pool.submit(work)
        return job

    def status(self, job_id: str) -> Optional[RunJob]:
        return self._jobs.get(job_id)

    def cancel(self, job_id: str) -> None:
        job = self._jobs.get(job_id)
        if job is None:
            return
        if job.state == "queued":
            job.state, job.message = "cancelled", "cancelled before it started"
        elif job.state == "running" and self._runner is not None:
            self._runner.cancel(job_id)

    def recent_runs(self) -> list[Path]:
        d = lens_home() / "runs"
        return sorted(d.glob("*.json*"), reverse=True)[:20] if d.is_dir() else []
