"""The rule oracle's fixture files themselves (``tests/fixtures/oracle/<spark version>.json``):
present, named after their release, small, and holding only cases some rule's test file checks.
Needs neither Spark nor our implementation."""
from __future__ import annotations

import pytest

from tests.rules.oracle import FIXTURES, ORACLE_DIR


def test_fixtures_exist():
    assert FIXTURES, f"no oracle fixtures in {ORACLE_DIR}"


@pytest.mark.parametrize("fx", FIXTURES, ids=[fx["spark_version"] for fx in FIXTURES])
def test_fixture_well_formed(fx):
    assert fx["_path"].name == f"{fx['spark_version']}.json"
    assert fx["recorded_by"] == "tools/record_rule_oracle.py"
    assert fx["_path"].stat().st_size < 2_500_000, "keep fixture files small"
    names = [c["name"] for c in fx["cases"]]
    assert len(names) == len(set(names)), "case names must be unique within a fixture"
    for case in fx["cases"]:
        assert case["fn"] in {"coalesce_partitions", "split_size_list_by_target_size",
                              "analyze_side", "create_skew_partition_specs"}, case["name"]
        assert "result" in case, case["name"]
