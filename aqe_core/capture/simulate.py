"""Compatibility path (issue 9): moved to :mod:`aqe_core.engine.simulate` (results in
:mod:`aqe_core.engine.results`, stage plan in :mod:`aqe_core.engine.stage_plan`)."""
# compat shim (issue 9)
import importlib
import sys

sys.modules[__name__] = importlib.import_module("aqe_core.engine.simulate")
