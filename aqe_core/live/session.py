"""Capture the queries a user's own PySpark program runs.

    from aqe_core.api import capture_queries
    with capture_queries(spark) as cq:          # any SparkSession, local or on a cluster
        df = spark.read.parquet("s3://...").join(...)
        df.write.parquet("s3://...")            # any action: collect, count, write, toPandas ...
    cq.capture                                  # a Capture, one QueryCapture per action
    cq.save("my_job.json.gz")

Spark tells a ``QueryExecutionListener`` about every finished action with its
``QueryExecution``; this module registers one implemented in Python (a py4j callback, the
mechanism PySpark itself uses for streaming listeners) on the session, keeps the references,
and records each execution when the block ends (map statuses stay registered while the plans
are referenced). Intermediate plans come from an event-logging listener attached for the
duration of the block. Only the given session's actions are seen (``newSession()`` children
have their own listener managers).

``capture_dataframe(df)`` records one DataFrame after its action (``df.collect()``) without a
listener.
"""
from __future__ import annotations

import datetime as _dt
import threading
from contextlib import contextmanager
from typing import Any, Iterator, Optional

import aqe_core
from aqe_core.model.capture import Capture
from aqe_core.readers.capture_file import save_capture
from aqe_core.live.event_tap import EventLogTap
from aqe_core.live.recorder import DEFAULT_MAP_SIZE_CAP, Recorder


class _Listener:
    """``org.apache.spark.sql.util.QueryExecutionListener`` in Python (py4j callback)."""

    def __init__(self) -> None:
        self.events: list[tuple[str, Any, Optional[float], Optional[str]]] = []
        self.lock = threading.Lock()

    def onSuccess(self, funcName, qe, durationNs):  # Java interface: Py4J calls these names
        with self.lock:
            self.events.append((str(funcName), qe, durationNs / 1e6, None))

    def onFailure(self, funcName, qe, exception):  # Java interface
        try:
            msg = str(exception.toString())
        except Exception:  # noqa: BLE001 - py4j: the exception may be unreadable
            msg = "failed"
        with self.lock:
            self.events.append((str(funcName), qe, None, msg))

    class Java:
        implements = ["org.apache.spark.sql.util.QueryExecutionListener"]


class CaptureSession:
    """What :func:`capture_queries` yields; ``capture`` is filled when the block ends."""

    def __init__(self, spark: Any, *, map_size_cap: int = DEFAULT_MAP_SIZE_CAP, event_log: bool = True) -> None:
        from pyspark.java_gateway import ensure_callback_server_started

        self.spark = spark
        self.map_size_cap = map_size_cap
        self.capture: Optional[Capture] = None
        self._listener = _Listener()
        gw = spark.sparkContext._gateway
        ensure_callback_server_started(gw)
        self._manager = spark._jsparkSession.listenerManager()
        self._manager.register(self._listener)
        self.tap = EventLogTap(spark) if event_log else None
        self._created = _dt.datetime.now(_dt.timezone.utc).replace(microsecond=0).isoformat()

    def finish(self) -> Capture:
        sc = self.spark.sparkContext
        try:  # let the listener bus deliver the last actions' events
            sc._jsc.sc().listenerBus().waitUntilEmpty(30000)
        except Exception:  # noqa: BLE001 - py4j: best effort, the events may already be in
            pass
        try:
            self._manager.unregister(self._listener)
        except Exception:  # noqa: BLE001 - py4j: best effort, the JVM may be gone
            pass
        rec = Recorder(self.spark, tap=self.tap, map_size_cap=self.map_size_cap)
        cap = Capture(spark_version=str(self.spark.version), master=str(sc.master), app_id=str(sc.applicationId),
                      run={"kind": "session"}, created_at=self._created,
                      producer={"name": "aqe-lens", "version": aqe_core.__version__})
        with self._listener.lock:
            events = list(self._listener.events)
        for i, (func, qe, dur, err) in enumerate(events):
            try:
                q = rec.capture_execution(qe, None, index=i, label=f"{i}:{func}", duration_ms=dur, match_events=True)
            except Exception as e:  # noqa: BLE001 - one action's failure is a warning, the others are kept
                cap.warnings.append(f"action {i} ({func}) could not be recorded: {str(e).splitlines()[0][:200]}")
                continue
            if err:
                q.notes.append(f"the action failed: {err[:300]}")
            cap.queries.append(q)
        if self.tap is not None:
            if self.tap.error:
                cap.warnings.append(self.tap.error)
            self.tap.close()
        self.capture = cap
        return cap

    def save(self, path: str) -> Any:
        if self.capture is None:
            raise RuntimeError("the capture block has not ended yet")
        return save_capture(self.capture, path)


@contextmanager
def capture_queries(spark: Any = None, *, map_size_cap: int = DEFAULT_MAP_SIZE_CAP,
                    event_log: bool = True) -> Iterator[CaptureSession]:
    """Record every action run on ``spark`` (default: the active session) inside the block."""
    if spark is None:
        from pyspark.sql import SparkSession

        spark = SparkSession.getActiveSession() if hasattr(SparkSession, "getActiveSession") else None
        spark = spark or SparkSession.builder.getOrCreate()
    cs = CaptureSession(spark, map_size_cap=map_size_cap, event_log=event_log)
    try:
        yield cs
    finally:
        cs.finish()


def capture_dataframe(df: Any, *, label: str = "query", tap: Optional[EventLogTap] = None) -> Capture:
    """Record one DataFrame whose action (``collect``/``toPandas``) has run."""
    spark = df.sparkSession
    rec = Recorder(spark, tap=tap)
    q = rec.capture(df, label=label)
    sc = spark.sparkContext
    return Capture(spark_version=str(spark.version), master=str(sc.master), app_id=str(sc.applicationId),
                   run={"kind": "dataframe"}, queries=[q],
                   producer={"name": "aqe-lens", "version": aqe_core.__version__})
