"""Compatibility path (issue 9): the partition spec dataclasses live in :mod:`aqe_core.model.specs`."""
# compat shim (issue 9)
import importlib
import sys

sys.modules[__name__] = importlib.import_module("aqe_core.model.specs")
