"""Compatibility path (issue 9): the ``simulate`` command now lives in :mod:`aqe_core.cli`."""
# compat shim (issue 9)
from aqe_core.cli import _kv, _spec_text, format_report  # noqa: F401
from aqe_core.cli import add_simulate_arguments as add_arguments  # noqa: F401
from aqe_core.cli import cmd_simulate as run  # noqa: F401
