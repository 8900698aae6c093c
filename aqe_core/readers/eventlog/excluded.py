"""Event types an application left out of its log (``spark.eventLog.excludedPatterns``, 4.1+).

Spark's ``EventLogFileWriter.writeLine`` (4.1.4, 4.2.1) drops a line when it starts with
``{"Event":"<pattern>`` for one of the comma-separated patterns: a pattern is a prefix of the
event name (``SparkListenerTask`` drops task starts and ends; SQL events need their package,
``org.apache.spark.sql.execution.ui.``). The setting is in the log's Spark properties (unless
the environment event itself was left out), so the reader can say what the log cannot hold
instead of showing zeros or guessing.
"""
from __future__ import annotations

import re

from aqe_core import config

_SQL = "org.apache.spark.sql.execution.ui."

#: the events this reader uses -> what is not known without them
USED_EVENTS: dict[str, str] = {
    "SparkListenerTaskEnd": "task times, the bytes each task read (the sizes of shuffles AQE left as planned, "
                            "and of Spark 3.0 reads) and the SQL metrics tasks update are not known",
    "SparkListenerStageSubmitted": "stage submission times, durations and retries are not known",
    "SparkListenerStageCompleted": "stage completion times and failures are not known",
    "SparkListenerJobStart": "which stages and jobs belong to which SQL execution, and the SQL settings of each job, "
                             "are not known",
    "SparkListenerJobEnd": "job results (succeeded or failed) are not known",
    "SparkListenerLogStart": "the Spark version is not known",
    "SparkListenerApplicationStart": "the application's id and name are not known",
    "SparkListenerApplicationEnd": "whether the application finished is not known",
    _SQL + "SparkListenerSQLExecutionStart": "SQL executions' descriptions and initial plans are not known",
    _SQL + "SparkListenerSQLAdaptiveExecutionUpdate": "AQE's plan versions, the final plan among them, are not known",
    _SQL + "SparkListenerSQLAdaptiveSQLMetricUpdates": "the metrics of AQE subqueries are not known",
    _SQL + "SparkListenerSQLExecutionEnd": "when SQL executions ended, and their errors, are not known",
    _SQL + "SparkListenerDriverAccumUpdates": "driver-side metrics, the partition sizes and counts of AQE's "
                                              "shuffle reads among them, are not known",
}

#: events whose absence changes what AQE appears to have done (a warning, not a note)
_PLAN_EVENTS = {_SQL + "SparkListenerSQLExecutionStart", _SQL + "SparkListenerSQLAdaptiveExecutionUpdate",
                _SQL + "SparkListenerDriverAccumUpdates", "SparkListenerJobStart"}


def patterns(spark_properties: dict[str, str]) -> list[str]:
    """The patterns as Spark splits them (comma-separated, trimmed, empty ones dropped)."""
    raw = spark_properties.get(config.EVENT_LOG_EXCLUDED_PATTERNS, "")
    return [p.strip() for p in raw.split(",") if p.strip()]


def excluded_events(spark_properties: dict[str, str], event_counts: dict[str, int] | None = None,
                    spark_version: str | None = None) -> dict[str, str]:
    """Each event this reader uses that the patterns leave out -> what is not known. Releases
    before 4.1 ignore the setting, and an event the log holds anyway was not left out.

    >>> props = {"spark.eventLog.excludedPatterns": "SparkListenerTask, SparkListenerBlock"}
    >>> sorted(excluded_events(props, {}, "4.1.4")), excluded_events(props, {}, "3.5.9")
    (['SparkListenerTaskEnd'], {})
    >>> excluded_events(props, {"SparkListenerTaskEnd": 5}, "4.2.1")
    {}
    """
    if spark_version is not None and _before_41(spark_version):
        return {}
    pats = patterns(spark_properties)
    counts = event_counts or {}
    return {event: what for event, what in USED_EVENTS.items()
            if any(event.startswith(p) for p in pats) and not counts.get(event)}


def _before_41(version: str) -> bool:
    m = re.match(r"(\d+)\.(\d+)", version)
    return m is not None and (int(m.group(1)), int(m.group(2))) < (4, 1)


def messages(excluded: dict[str, str]) -> tuple[list[str], list[str]]:
    """(notes, warnings) about the events left out (:func:`excluded_events`)."""
    notes: list[str] = []
    warnings: list[str] = []
    for event, what in excluded.items():
        short = event.rsplit(".", 1)[-1]
        text = f"{short} events were excluded from this log by {config.EVENT_LOG_EXCLUDED_PATTERNS}: {what}"
        (warnings if event in _PLAN_EVENTS else notes).append(text)
    return notes, warnings
