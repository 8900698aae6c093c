"""Live capture: run queries on real Spark, record what AQE saw and decided, replay it.

    from aqe_core.capture import Runner, simulate, load_capture, save_capture
    cap = Runner().run_workload("skew_join_inner")     # PySpark on local[*] (or master=...)
    save_capture(cap, "skew.json.gz")
    report = simulate(cap)                              # our rules on the captured statistics
    print(report.agreement.percent)                     # 100.0

Running Spark lives in :mod:`aqe_core.live` (issue 9): :mod:`~aqe_core.live.java` (finding
Java), :mod:`~aqe_core.live.runtime` (the shared SparkSession), :mod:`~aqe_core.live.runner`
(runs, tags, cancel, progress), :mod:`~aqe_core.live.workloads` (built-in catalogue),
:mod:`~aqe_core.live.recorder` and :mod:`~aqe_core.live.event_tap` (recording),
:mod:`~aqe_core.live.session` (capturing inside a user's own PySpark program); the capture
dataclasses in :mod:`aqe_core.model.capture`, the file format in :mod:`aqe_core.readers.capture_file`
and the replay in :mod:`aqe_core.engine`. This package is the documented facade over them.
Importing it does not import PySpark; only running does.
"""
# compat shim (issue 9): the documented facade
from aqe_core.model.capture import Capture, QueryCapture
from aqe_core.readers.capture_file import load_capture, save_capture
from aqe_core.engine import SimulationReport, simulate

__all__ = ["Capture", "QueryCapture", "load_capture", "save_capture", "simulate", "SimulationReport",
           "Runner", "get_runtime", "capture_queries"]


def __getattr__(name: str):  # lazy: keep `import aqe_core.capture` free of PySpark
    if name == "Runner":
        from aqe_core.live.runner import Runner

        return Runner
    if name == "get_runtime":
        from aqe_core.live.runtime import get_runtime

        return get_runtime
    if name == "capture_queries":
        from aqe_core.live.session import capture_queries

        return capture_queries
    raise AttributeError(name)
