"""Compatibility path (issue 9): the ``inspect`` command now lives in :mod:`aqe_core.cli`."""
# compat shim (issue 9)
from aqe_core.cli import _clear, _progress  # noqa: F401
from aqe_core.cli import add_inspect_arguments as add_arguments  # noqa: F401
from aqe_core.cli import cmd_inspect as run  # noqa: F401
