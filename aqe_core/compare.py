"""Compatibility path (issue 9): moved to :mod:`aqe_core.views.compare` (the one what-if path is
:func:`aqe_core.engine.whatif.what_if`)."""
# compat shim (issue 9)
import importlib
import sys

sys.modules[__name__] = importlib.import_module("aqe_core.views.compare")
