"""Spark event-log reader: every codec and layout, every AQE plan version, UI-exact metrics.

    from aqe_core.eventlog import load
    log = load("eventlog_v2_local-123/")      # or a file, .zip, .gz, .inprogress ...
    for ex in log.executions.values():
        print(ex.id, ex.status, [r.partition_sizes for r in ex.shuffle_reads])

See docs/eventlog-json.md and docs/eventlog-limits.md. This package is the documented facade
(issue 9): the reader lives in :mod:`aqe_core.readers.eventlog`, the dataclasses in
:mod:`aqe_core.model.eventlog`, the outcome lines and JSON document in
:mod:`aqe_core.views.eventlog_summary`.
"""
# compat shim (issue 9): the documented facade
from aqe_core.model.eventlog import Application, EventLog, ShuffleRead, SQLExecution, StageInfo
from aqe_core.readers.eventlog.errors import DEFAULT_LIMITS, DecodeError, EventLogError, LimitExceeded, Limits
from aqe_core.readers.eventlog.loader import load

__all__ = [
    "load", "EventLog", "Application", "SQLExecution", "ShuffleRead", "StageInfo",
    "EventLogError", "DecodeError", "LimitExceeded", "Limits", "DEFAULT_LIMITS",
]
