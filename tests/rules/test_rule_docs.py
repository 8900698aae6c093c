"""Every rule module (issue 9) is named after the Spark class it mirrors, says in its docstring
which class and method(s) and which releases, and carries a worked example that runs (doctest,
like the example in Spark's ``ShufflePartitionsUtil`` doc comment). Compat shims are exempt."""
import doctest
import importlib
import re
from pathlib import Path

import pytest

RULES = Path(__file__).resolve().parents[2] / "aqe_core" / "rules"
MODULES = sorted(p.stem for p in RULES.glob("*.py")
                 if p.stem != "__init__" and "# compat shim (issue 9)" not in p.read_text(encoding="utf-8"))
#: a part of one rule's module moved into its own file for room (``<rule module>_<part>``): it
#: names its rule's Spark class like the rule's module does
COMPANIONS = {"optimize_skewed_join_stream": "optimize_skewed_join",
              "optimize_skewed_join_plan": "optimize_skewed_join"}
RELEASES = re.compile(r"\b[34]\.\d\.\d+ ?- ?[34]\.\d\.(?:\d+|x)\b")


def _camel(stem: str) -> str:
    return "".join(w.capitalize() for w in stem.split("_"))


def test_the_rule_modules():
    assert MODULES == [
        "coalesce_shuffle_partitions", "convert_sort_merge_join_to_shuffled_hash_join", "demote_broadcast_hash_join",
        "dynamic_join_selection", "insert_adaptive_spark_plan", "join_selection_helper", "join_type",
        "optimize_shuffle_with_local_read", "optimize_skew_in_rebalance_partitions", "optimize_skewed_join",
        "optimize_skewed_join_plan", "optimize_skewed_join_stream", "shuffle_partitions_util",
        "size_in_bytes_only_stats_plan_visitor", "union_exec",
    ]


@pytest.mark.parametrize("name", MODULES)
def test_docstring_names_spark_class_method_and_releases(name):
    doc = importlib.import_module(f"aqe_core.rules.{name}").__doc__ or ""
    cls = _camel(COMPANIONS.get(name, name))
    assert f"Spark's ``{cls}" in doc, f"{name}: the docstring should start from Spark's ``{cls}``"
    assert re.search(rf"``(?:org\.apache\.spark\.[\w.]+\.)?{cls}\.\w+``", doc), f"{name}: name {cls}.<method>"
    assert RELEASES.search(doc), f"{name}: say which releases (e.g. 3.0.1 - 4.3.0)"


@pytest.mark.parametrize("name", MODULES)
def test_worked_example_runs(name):
    module = importlib.import_module(f"aqe_core.rules.{name}")
    assert ">>> " in (module.__doc__ or ""), f"{name}: the module docstring needs a worked example"
    result = doctest.testmod(module, optionflags=doctest.ELLIPSIS)
    assert result.attempted > 0 and result.failed == 0
