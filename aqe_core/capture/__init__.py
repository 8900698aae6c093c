"""Live capture: run queries on real Spark, record what AQE saw and decided, replay it.

    from aqe_core.capture import Runner, simulate, load_capture, save_capture
    cap = Runner().run_workload("skew_join_inner")     # PySpark on local[*] (or master=...)
    save_capture(cap, "skew.json.gz")
    report = simulate(cap)                              # our rules on the captured statistics
    print(report.agreement.percent)                     # 100.0

Modules: :mod:`.java` (finding Java), :mod:`.runtime` (the shared SparkSession),
:mod:`.runner` (runs, tags, cancel, progress), :mod:`.workloads` (built-in catalogue),
:mod:`.capture` (recording), :mod:`.model` (capture file format), :mod:`.simulate` (replay),
:mod:`.session` (capturing inside a user's own PySpark program). Importing this package does
not import PySpark; only running does.
"""
from aqe_core.capture.model import Capture, QueryCapture, load_capture, save_capture
from aqe_core.capture.simulate import SimulationReport, simulate

__all__ = ["Capture", "QueryCapture", "load_capture", "save_capture", "simulate", "SimulationReport",
           "Runner", "get_runtime", "capture_queries"]


def __getattr__(name: str):  # lazy: keep `import aqe_core.capture` free of PySpark
    if name == "Runner":
        from aqe_core.capture.runner import Runner

        return Runner
    if name == "get_runtime":
        from aqe_core.capture.runtime import get_runtime

        return get_runtime
    if name == "capture_queries":
        from aqe_core.capture.session import capture_queries

        return capture_queries
    raise AttributeError(name)
