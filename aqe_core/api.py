"""AQE Lens from Python: the one module to import.

Every name a program needs is here, under one meaning each; the modules behind them are the
layers of docs/architecture.md and may move between releases, this module's names do not.
Importing it does not import PySpark (:class:`Runner`, :func:`capture_queries` and
:func:`get_runtime` import it when first used).

**Open any source** (an event log in any codec or layout, a listener log, a capture) into one
view per query, what the app's pages and the CLI show:

    >>> from aqe_core import api
    >>> skew = str(api.SAMPLES_DIR / "captures" / "4.3.0-skew_join_inner.json.gz")
    >>> source = api.load_source(skew)
    >>> source.kind, [view.query_id for view in source.views]
    ('capture', ['0', '1', '2'])

**What-if** on any view: our rules under other settings (exact on captures and listener logs,
labelled estimates on plain logs), with Spark's own run beside it:

    >>> answer = api.whatif(source.views[0], {"spark.sql.adaptive.advisoryPartitionSizeInBytes": "1m"})
    >>> [outcome.summary_row()["partitions after AQE"] for outcome in answer.outcomes]
    [42, 6]

**Replay a capture** through the rules of the release it ran on, or of another release:

    >>> capture = api.load_capture(skew)
    >>> api.simulate(capture).agreement.percent
    100.0
    >>> api.simulate(capture, spark_version="3.0.1").spark_version
    '3.0.1'

**Read an event log** into its dataclasses (:class:`EventLog`, one :class:`SQLExecution` per
query) and **draw a plan** with AQE's changes outlined (a plotly figure):

    >>> log = api.load_event_log(str(api.SAMPLES_DIR / "eventlogs" / "local-1795309160158.zstd"))
    >>> log.spark_version, len(log.executions)
    ('3.5.9', 11)
    >>> execution = log.executions[min(log.executions)]
    >>> figure = api.plan_figure(execution.plan_with_values(execution.final_plan),
    ...                          changes=api.diff_execution(execution), title="Final plan")
    >>> type(figure).__name__
    'Figure'

**Run on Spark** (needs PySpark and Java; not run here):

    capture = api.Runner().run_workload("skew_join_inner")    # local[*], or Runner(master=...)
    api.save_capture(capture, "skew.json.gz")
    with api.capture_queries(spark) as recorded:              # a user's own SparkSession
        spark.sql("SELECT ...").collect()
    recorded.save("my_job.json.gz")

**Compare two runs** of one job (yesterday's and today's log): queries aligned by their plan's
shape, AQE's decisions side by side, and whether the data, the settings or the release made the
difference (:class:`RunDiff`, JSON in docs/diff-json.md):

    >>> old = str(api.SAMPLES_DIR / "captures" / "3.0.1-skew_join_inner.json.gz")
    >>> diff = api.diff_runs(old, skew)      # yesterday's run, today's: api.diff_runs(a, b)
    >>> q = next(q for q in diff.matched if q.causes)
    >>> q.causes[0].decision, q.causes[0].a, q.causes[0].b, q.causes[0].factors
    ('skew split', 0, 1, ('release',))

Errors: opening raises only :class:`SourceError` (one line for people); the event-log reader
raises :class:`EventLogError` (:class:`LimitExceeded` past :class:`Limits`), the capture reader
:class:`CaptureFormatError`.
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Any

from aqe_core.advise.whatif import compare_presets
from aqe_core.engine import SimulationReport, simulate
from aqe_core.figures.plan_figure import plan_figure
from aqe_core.model.capture import Capture, CaptureFormatError, QueryCapture
from aqe_core.model.eventlog import Application, EventLog, ShuffleRead, SQLExecution, StageInfo
from aqe_core.model.presets import BUILTIN_PRESETS, Preset
from aqe_core.model.run_diff import Cause, QueryDiff, QueryRef, RunDiff, SettingChange, ShuffleDiff
from aqe_core.opening import LoadedSource, SourceError, load_source
from aqe_core.readers.capture_file import load_capture, save_capture
from aqe_core.readers.eventlog.errors import DEFAULT_LIMITS, DecodeError, EventLogError, LimitExceeded, Limits
from aqe_core.readers.eventlog.loader import load as load_event_log
from aqe_core.server_settings import SAMPLES_DIR
from aqe_core.views.compare import WhatIfView, whatif
from aqe_core.views.diff_runs import diff_views
from aqe_core.views.plan_diff import Change, PlanDiff, diff_execution, diff_plans, diff_versions
from aqe_core.views.query import QueryView, ShuffleView

if TYPE_CHECKING:  # imported on first use (they start PySpark): see __getattr__
    from aqe_core.live.runner import Runner
    from aqe_core.live.runtime import get_runtime
    from aqe_core.live.session import capture_queries

__all__ = [
    # opening any source into views
    "load_source", "LoadedSource", "SourceError", "QueryView", "ShuffleView", "SAMPLES_DIR",
    # what-if and presets
    "whatif", "WhatIfView", "compare_presets", "Preset", "BUILTIN_PRESETS",
    # captures and replay
    "load_capture", "save_capture", "Capture", "QueryCapture", "CaptureFormatError", "simulate",
    "SimulationReport",
    # event logs
    "load_event_log", "EventLog", "Application", "SQLExecution", "ShuffleRead", "StageInfo",
    "EventLogError", "DecodeError", "LimitExceeded", "Limits", "DEFAULT_LIMITS",
    # plans
    "diff_plans", "diff_versions", "diff_execution", "Change", "PlanDiff", "plan_figure",
    # two runs compared
    "diff_runs", "diff_sources", "diff_views", "RunDiff", "QueryDiff", "QueryRef", "ShuffleDiff", "SettingChange", "Cause",
    # running Spark (imported when first used)
    "Runner", "get_runtime", "capture_queries",
]


def diff_runs(a: str, b: str) -> RunDiff:
    """Run ``a`` (the baseline) and run ``b`` of one job compared: any two sources
    :func:`load_source` opens (raises :class:`SourceError` with one line for people)."""
    return diff_sources(load_source(a), load_source(b))


def diff_sources(a: LoadedSource, b: LoadedSource) -> RunDiff:
    """:func:`diff_runs` over two sources already open (the app, a server)."""
    return diff_views(a.views, b.views, source_a=a.path, source_b=b.path, kind=(a.kind, b.kind),
                      release=(a.spark_version or "", b.spark_version or ""))


def __getattr__(name: str) -> Any:
    """The names that start PySpark, imported on first use."""
    if name == "Runner":
        from aqe_core.live.runner import Runner

        return Runner
    if name == "get_runtime":
        from aqe_core.live.runtime import get_runtime

        return get_runtime
    if name == "capture_queries":
        from aqe_core.live.session import capture_queries

        return capture_queries
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
