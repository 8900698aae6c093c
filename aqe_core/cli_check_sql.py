"""Compatibility path (issue 9): the ``check-sql`` command now lives in :mod:`aqe_core.cli`."""
# compat shim (issue 9)
from aqe_core.cli import _JSON_TYPES, _statements  # noqa: F401
from aqe_core.cli import add_check_sql_arguments as add_arguments  # noqa: F401
from aqe_core.cli import cmd_check_sql as run  # noqa: F401
