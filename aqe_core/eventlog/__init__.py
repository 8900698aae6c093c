"""Spark event-log reader: every codec and layout, every AQE plan version, UI-exact metrics.

    from aqe_core.eventlog import load
    log = load("eventlog_v2_local-123/")      # or a file, .zip, .gz, .inprogress ...
    for ex in log.executions.values():
        print(ex.id, ex.status, [r.partition_sizes for r in ex.shuffle_reads])

See docs/eventlog-json.md and docs/eventlog-limits.md.
"""
from aqe_core.eventlog.errors import DEFAULT_LIMITS, DecodeError, EventLogError, LimitExceeded, Limits
from aqe_core.eventlog.model import Application, EventLog, ShuffleRead, SQLExecution, StageInfo
from aqe_core.eventlog.reader import load

__all__ = [
    "load", "EventLog", "Application", "SQLExecution", "ShuffleRead", "StageInfo",
    "EventLogError", "DecodeError", "LimitExceeded", "Limits", "DEFAULT_LIMITS",
]
