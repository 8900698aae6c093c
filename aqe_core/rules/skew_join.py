"""Public path kept from the rule-engine issue: ``aqe_core.rules.skew_join.analyze_side`` and
friends now live in :mod:`aqe_core.rules.optimize_skewed_join` (named after Spark's class)."""
# compat shim (issue 9)
import importlib
import sys

sys.modules[__name__] = importlib.import_module("aqe_core.rules.optimize_skewed_join")
