"""The application's own events (log start, application start and end, environment), as the
event-log builder reads them: names and settings kept through the load's
:class:`~aqe_core.readers.eventlog.kept_text.KeptText`, so they are cut and charged like every
other string of a log."""
from __future__ import annotations

from typing import TYPE_CHECKING

from aqe_core.readers.eventlog import kept_text as K

if TYPE_CHECKING:
    from aqe_core.model.eventlog import EventLog


class AppEvents:
    """Handlers of the builder (a mixin: ``log``, ``kept`` and the flags are the builder's)."""

    log: "EventLog"
    kept: K.KeptText
    saw_log_start: bool
    saw_app_end: bool
    env_updates: int

    def on_log_start(self, line, d) -> None:
        self.saw_log_start = True
        v = self.kept.text(d.get("Spark Version"), K.NAME_CHARS, "Spark version")
        if v is not None:
            self.log.application.spark_version = v

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
