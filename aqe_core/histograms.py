"""Compatibility path (issue 9): moved to :mod:`aqe_core.figures.histograms`."""
# compat shim (issue 9)
import importlib
import sys

sys.modules[__name__] = importlib.import_module("aqe_core.figures.histograms")
