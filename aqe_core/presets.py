"""Compatibility path (issue 9): moved to :mod:`aqe_core.model.presets`."""
# compat shim (issue 9)
import importlib
import sys

sys.modules[__name__] = importlib.import_module("aqe_core.model.presets")
