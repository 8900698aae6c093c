"""Compatibility path (issue 9): the ``run`` command now lives in :mod:`aqe_core.cli`
(and the work it asks of Spark in :mod:`aqe_core.live.requests`)."""
# compat shim (issue 9)
from aqe_core.cli import ProgressBar, _kv, _time_limit, list_workloads  # noqa: F401
from aqe_core.cli import add_run_arguments as add_arguments  # noqa: F401
from aqe_core.cli import cmd_run as run  # noqa: F401
