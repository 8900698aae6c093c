"""Spark event-log reader: every codec and layout, every AQE plan version, UI-exact metrics.

    from aqe_core.readers.eventlog import load
    log = load("eventlog_v2_local-123/")      # or a file, .zip, .gz, .inprogress ...

Modules: :mod:`.log_files` (files, folders, archives), :mod:`.opened` (opening by descriptor,
confined to a server's roots), :mod:`.codecs` (Spark's compression
codecs), :mod:`.log_lines` (line splitting, task-end fast path), :mod:`.builder` and
:mod:`.live_state` (Spark's ``SparkListener*`` events -> state), :mod:`.executions` (end of log),
:mod:`.loader` (the entry point), :mod:`.planinfo` (``sparkPlanInfo`` -> PlanNode),
:mod:`.metrics` (Spark's metric text), :mod:`.errors`. The dataclasses read into are in
:mod:`aqe_core.model.eventlog`.
"""
from aqe_core.readers.eventlog.errors import DEFAULT_LIMITS, DecodeError, EventLogError, LimitExceeded, Limits
from aqe_core.readers.eventlog.loader import load, not_in_log

__all__ = ["load", "not_in_log", "EventLogError", "DecodeError", "LimitExceeded", "Limits", "DEFAULT_LIMITS"]
