"""The application's own events (log start, application start and end, environment) and the AQE
Lens listener's payloads, as the event-log builder reads them: names, settings and payloads kept
through the load's :class:`~aqe_core.readers.eventlog.kept_text.KeptText`, so they are cut and
charged like every other string of a log."""
from __future__ import annotations

from typing import TYPE_CHECKING, Any

from aqe_core.model.eventlog import MAX_EXECUTORS, ExecutorSpan
from aqe_core.readers.eventlog import kept_text as K
from aqe_core.readers.eventlog.packed import pack

if TYPE_CHECKING:
    from aqe_core.model.eventlog import EventLog


#: listener payloads kept per log (one per SQL execution)
MAX_LISTENER_EVENTS = 100_000
#: bytes one kept executor takes (its span and its id's entry), charged to the load's meter
EXECUTOR_BYTES = 200


class AppEvents:
    """Handlers of the builder (a mixin: ``log``, ``kept`` and the flags are the builder's)."""

    log: "EventLog"
    kept: K.KeptText
    saw_log_start: bool
    saw_app_end: bool
    env_updates: int
    if TYPE_CHECKING:
        def spill_into(self, values: Any, key: int) -> None: ...

    def on_log_start(self, line, d) -> None:
        self.saw_log_start = True
        v = self.kept.text(d.get("Spark Version"), K.NAME_CHARS, "Spark version")
        if v is not None:
            self.log.application.spark_version = v

    def on_dbc_metadata(self, line, d) -> None:
        """Databricks' first event: its "Spark Version" is the Apache Spark release under the
        runtime (a Databricks log may have no SparkListenerLogStart)."""
        v = self.kept.text(d.get("Spark Version"), K.NAME_CHARS, "Spark version")
        if v is not None:
            self.log.application.dbc_spark_version = v

    def on_executor_added(self, line, d) -> None:
        """An executor and its cores (``Total Cores``): the cluster's parallelism is theirs."""
        app = self.log.application
        eid, info = d.get("Executor ID"), d.get("Executor Info")
        cores = info.get("Total Cores") if isinstance(info, dict) else None
        if not isinstance(eid, str) or len(eid) > 64 or type(cores) is not int or not 0 < cores < 1 << 31:
            return  # (Spark's executor ids are short numbers, "driver" in local mode)
        if eid not in app.executors and len(app.executors) >= MAX_EXECUTORS:
            app.executors_dropped += 1
            return
        ts = d.get("Timestamp")
        if eid not in app.executors:
            self.kept.charge(EXECUTOR_BYTES + len(eid))  # (a long application adds thousands: charged like stages)
        app.executors[eid] = ExecutorSpan(cores, ts if type(ts) is int else None)

    def on_executor_removed(self, line, d) -> None:
        eid = d.get("Executor ID")
        span = self.log.application.executors.get(eid) if isinstance(eid, str) else None
        ts = d.get("Timestamp")
        if span is not None:
            span.removed = ts if type(ts) is int else (span.added or 0)

    def on_app_start(self, line, d) -> None:
        app = self.log.application
        kept = self.kept
        app.name = kept.text(d.get("App Name"), K.NAME_CHARS, "application name")
        app.id = kept.text(d.get("App ID"), K.NAME_CHARS, "application id")
        app.attempt_id = kept.text(d.get("App Attempt ID"), K.NAME_CHARS, "attempt id")
        app.user = kept.text(d.get("User"), K.NAME_CHARS, "user name")
        ts = d.get("Timestamp")
        app.start_time = ts if isinstance(ts, int) else None

    def on_app_end(self, line, d) -> None:
        self.saw_app_end = True
        ts = d.get("Timestamp")
        self.log.application.end_time = ts if isinstance(ts, int) else None
        ec = d.get("ExitCode")
        self.log.application.exit_code = ec if isinstance(ec, int) else None

    def on_env(self, line, d) -> None:
        self.env_updates += 1
        props = d.get("Spark Properties")
        if isinstance(props, list):  # very old layout: [[k, v], ...]
            props = {str(kv[0]): kv[1] for kv in props if isinstance(kv, (list, tuple)) and len(kv) == 2}
        if isinstance(props, dict):
            self.kept.settings(props, "Spark properties", value_cap=K.ENV_SETTING_CHARS, max_keys=K.ENV_SETTINGS,
                               into=self.log.spark_properties)

    def on_listener(self, line, d) -> None:
        """The AQE Lens listener's statistics of one execution: kept as text, decoded (and
        validated) by :mod:`aqe_core.readers.eventlog.listener_events` when views are built."""
        eid, payload = d.get("executionId"), d.get("payload")
        if isinstance(eid, int) and not isinstance(eid, bool) and eid >= 0 and isinstance(payload, str):
            if len(self.log.listener_payloads) < MAX_LISTENER_EVENTS or eid in self.log.listener_payloads:
                self.log.listener_payloads[eid] = packed = pack(payload.encode("utf-8", "surrogatepass"))
                # kept packed, then decoded into a capture when views are built: JSON numbers
                # and lists take up to four times their text as Python objects
                self.kept.charge(len(packed) + 4 * len(payload))
                self.spill_into(self.log.listener_payloads, eid)  # (a SpillMap: init_spilling made it one)
