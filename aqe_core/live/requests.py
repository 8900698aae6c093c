"""What a front end (the ``run`` and ``check-sql`` commands) asks of live Spark, as plain calls.

    req = RunRequest(sql="SELECT ...", conf={...})
    req.precheck()                       # the guards that need no Spark (raises UnsafeSQL)
    runner = req.start(time_limit_s=600)  # starts (or adopts) Spark: JavaNotFound, SparkStartFailed
    cap = req.run(runner, progress)       # a Capture: RunFailed, RunCancelled, UnsafeSQL

The command line only turns arguments into a request and errors into messages and exit codes;
the work (guards, starting Spark, running) lives here, so other front ends get the same order
of checks.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Optional

from aqe_core.model.capture import Capture
from aqe_core.live.conf_guard import check_conf, check_spark_conf
from aqe_core.live.runner import ProgressFn, Runner
from aqe_core.live.runtime import get_runtime
from aqe_core.live.sql_guard import (
    check_text,
    guard_session,
    trusted_by_default,
    verdict,
)


@dataclass
class RunRequest:
    """One run: SQL text or a built-in workload (``workload`` wins), with its settings."""

    sql: Optional[str] = None
    workload: Optional[str] = None
    conf: dict[str, str] = field(default_factory=dict)
    presets: Optional[list[str]] = None
    scale: float = 1.0
    master: Optional[str] = None
    spark_conf: dict[str, Any] = field(default_factory=dict)
    #: True skips the SQL and settings guards (the ``--trusted`` switch); False leaves the
    #: choice to the server settings (``trusted``, ``AQE_LENS_TRUSTED=1``)
    trusted: bool = False

    def precheck(self) -> None:
        """Refuse what needs no Spark before Spark starts (raises ``UnsafeSQL``); the runner
        checks the rest (Spark's parse of the SQL) in the session the query runs in."""
        if self.trusted or trusted_by_default():
            return
        check_conf(self.conf)
        check_spark_conf(self.spark_conf)
        if self.sql is not None and not self.workload:
            check_text(self.sql)

    def start(self, *, time_limit_s: Optional[float] = None) -> Runner:
        """A runner on the shared Spark runtime (started now if there is none)."""
        return Runner(master=self.master, spark_conf=dict(self.spark_conf), time_limit_s=time_limit_s,
                      trusted=True if self.trusted else None)

    def run(self, runner: Runner, progress: Optional[ProgressFn] = None) -> Capture:
        """Run the workload (each chosen preset) or the SQL text; the capture of what AQE did."""
        if self.workload:
            return runner.run_workload(self.workload, scale=self.scale, presets=self.presets, conf=self.conf,
                                       progress=progress)
        return runner.run_sql(self.sql, self.conf, progress=progress)  # type: ignore[arg-type]


def judge_statements(statements: list[str], master: Optional[str] = None) -> list[dict[str, Any]]:
    """``{"allowed", "reason"}`` per statement, decided by :func:`~aqe_core.live.sql_guard.verdict`
    in one guarded session of the shared runtime (nothing is executed). Raises ``JavaNotFound``."""
    rt = get_runtime(master, event_log=False)
    _quiet_pyspark_logger()
    session = guard_session(rt.spark.newSession())
    return [verdict(s, session).to_dict() for s in statements]


def _quiet_pyspark_logger() -> None:
    try:  # PySpark 4 logs every error it converts (with a Java stack as JSON): our message says it
        from pyspark.logger import PySparkLogger

        PySparkLogger.getLogger("SQLQueryContextLogger").disabled = True
    except ImportError:
        pass


def quiet(runner: Runner, level: str = "OFF") -> None:
    """A command line run says what went wrong in one line of its own: Spark's log (a killed
    application's stack traces) and PySpark's JSON error log stay out of the terminal."""
    _quiet_pyspark_logger()
    try:
        runner.rt.spark.sparkContext.setLogLevel(level)
    except Exception:  # noqa: BLE001 - a context that is already gone logs nothing more
        pass
