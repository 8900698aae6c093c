"""Compatibility path (issue 9): moved to :mod:`aqe_core.rules.optimize_shuffle_with_local_read` (named after Spark's class)."""
# compat shim (issue 9)
import importlib
import sys

sys.modules[__name__] = importlib.import_module("aqe_core.rules.optimize_shuffle_with_local_read")
