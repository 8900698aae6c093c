"""Compatibility path (issue 9): the plan tree lives in :mod:`aqe_core.model.plan`."""
# compat shim (issue 9)
import importlib
import sys

sys.modules[__name__] = importlib.import_module("aqe_core.model.plan")
