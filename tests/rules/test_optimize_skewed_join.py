"""``OptimizeSkewedJoin`` (aqe_core/rules/optimize_skewed_join.py): the median, skew threshold,
target size and skewed partitions of one join side, against what each recorded Spark release
computed (``tests/fixtures/oracle/<version>.json``, see tests/rules/oracle.py), and their
invariants on random inputs (hypothesis).

The properties assert structure, not numbers from our own code.
"""
from __future__ import annotations

import pytest
from hypothesis import given, settings, strategies as st

from aqe_core.rules.optimize_skewed_join import analyze_side, median_size
from tests.rules.oracle import describe, expected_exception, is_error, params

VERSIONS = ["3.0.1", "3.1.3", "3.2.4", "3.5.9", "4.3.0"]


# ------------------------------------------------------------------------------------------
# Oracle: median, threshold, target size, skewed partitions of one side
# ------------------------------------------------------------------------------------------

@pytest.mark.parametrize("version,case", params("analyze_side"))
def test_skew_side_analysis_matches_spark(version, case):
    a = case["args"]
    expected = case["result"]
    if is_error(expected):  # Spark threw before producing anything (e.g. no partitions)
        with pytest.raises(expected_exception(expected)):
            analyze_side(a["partition_sizes"], dict(a["conf"]), spark_version=version)
        return
    if is_error(expected.get("target_size")):
        with pytest.raises(expected_exception(expected["target_size"])):
            analyze_side(a["partition_sizes"], dict(a["conf"]), spark_version=version)
        return
    side = analyze_side(a["partition_sizes"], dict(a["conf"]), spark_version=version)
    actual = {
        "median": side.median,
        "skew_threshold": side.skew_threshold,
        "skewed_indices": list(side.skewed_indices),
        "target_size": side.target_size,
    }
    assert actual == {k: expected[k] for k in actual}, describe(version, case)


# ------------------------------------------------------------------------------------------
# Hostile sizes (a log's numbers are untrusted)

@pytest.mark.parametrize("version", ["3.0.1", "3.5.9"])
def test_skew_rule_past_the_int64_range(version):
    """Sizes past a Long (3.0's coalesced sums of a hostile log) and a median times a huge factor."""
    got = analyze_side([2**63 - 1, 2**63 - 1, 10, 2**64], {}, spark_version=version)
    assert got.median > 0
    huge = {"spark.sql.adaptive.skewJoin.skewedPartitionFactor": str(2**31 - 1)}
    got = analyze_side([2**61, 2**61, 2**62, 1], huge, spark_version=version)
    assert got.median == 2**61 and got.skewed_indices == ()


# ------------------------------------------------------------------------------------------
# Properties
# ------------------------------------------------------------------------------------------

@settings(max_examples=200, deadline=None)
@given(st.lists(st.integers(0, 10**10), min_size=1, max_size=100), st.sampled_from(VERSIONS))
def test_skewed_partitions_exceed_median_and_threshold(sizes, version):
    a = analyze_side(sizes, {}, spark_version=version)
    med = median_size(sizes)
    assert a.median == med >= 1
    for i, s in enumerate(sizes):
        skewed = i in a.skewed_indices
        assert skewed == (s > a.effective_threshold) or version < "3.2"
        if skewed:
            assert s > 5 * med and s > 256 * 1024 * 1024
    assert a.target_size >= 64 * 1024 * 1024
