"""``OptimizeSkewedJoin``'s plan-shape check (aqe_core/rules/optimize_skewed_join_plan.py): which
joins are split at all (the join type, the setting, and from 3.3 "no extra shuffle unless
forceOptimizeSkewedJoin"), against every join recorded on real Spark (``tests/fixtures/captures``,
see tests/rules/recorded.py). The skew math is tests/rules/test_optimize_skewed_join.py's.
"""
from __future__ import annotations

import pytest

from aqe_core.rules import optimize_skewed_join as osj
from tests.rules.recorded import RELEASES, joins, reads, replayed


def _codes(rq) -> set[str]:
    return {x.code for q, r in reads(rq.release, rq.workload) if q is rq for x in r.reasons}


@pytest.mark.parametrize("release", RELEASES)
def test_joins_are_split_where_spark_split_them(release):
    skew = 0
    for rq, j in joins(release):
        assert j.simulated_skew == j.spark_skew, (rq.where, j.node)
        skew += j.spark_skew
    assert skew


@pytest.mark.parametrize("release", RELEASES)
def test_a_full_outer_join_is_never_split(release):
    found = list(joins(release, "skew_join_full_outer"))
    assert found
    for rq, j in found:
        assert not j.spark_skew, rq.where
        codes = _codes(rq)
        assert osj.SPLIT.code not in codes, rq.where
        if osj.NO_SPLIT.code in codes:  # a partition was skewed: the join type is why it stayed whole
            assert osj.JOIN_TYPE_NOT_SUPPORTED.code in codes, rq.where


@pytest.mark.parametrize("release", RELEASES)
def test_skew_join_off_splits_nothing(release):
    found = [(rq, j) for rq, j in joins(release) if rq.query.preset == "skew_join_off"]
    assert found
    for rq, j in found:
        assert not j.spark_skew and osj.SKEW_JOIN_DISABLED.code in _codes(rq), rq.where


@pytest.mark.parametrize("release", [r for r in RELEASES if r >= "3.3"])
def test_a_split_needing_an_extra_shuffle_is_dropped_unless_forced(release):
    """``skew_join_then_aggregate`` / ``multi_way_join_same_key``: splitting the join would break
    the distribution the operator above needs; from 3.3 Spark dropped the split (default) and kept
    it with ``forceOptimizeSkewedJoin`` (``force``)."""
    seen = set()
    for workload in ("skew_join_then_aggregate", "multi_way_join_same_key"):
        for rq, j in joins(release, workload):
            if rq.query.preset == "force":
                assert j.spark_skew, rq.where
            else:
                assert not j.spark_skew and osj.DISTRIBUTION_BROKEN.code in _codes(rq), rq.where
            seen.add(rq.query.preset)
    assert seen == {"default", "force"}


def test_which_joins_the_rule_splits_per_release():
    """``optimizeSkewJoin`` matches ``SortMergeJoinExec`` from 3.0 and ``ShuffledHashJoinExec`` from
    3.2.0 (SPARK-35214, apache/spark#32328, merged for 3.2.0; 3.1's rule imports and matches
    ``SortMergeJoinExec`` only)."""
    assert [osj.splits_join("SortMergeJoin", v) for v in ("3.0.1", "3.1.3", "3.2.4")] == [True, True, True]
    assert [osj.splits_join("ShuffledHashJoin", v) for v in ("3.0.1", "3.1.3", "3.2.0", "4.3.0")] == [
        False, False, True, True]
    assert not osj.splits_join("BroadcastHashJoin", "4.3.0")  # its streamed side: the broadcast case


@pytest.mark.parametrize("release", RELEASES)
def test_every_join_spark_split_is_one_the_rule_splits(release):
    """Spark's own ``(skew=true)`` marks, on sort-merge and shuffled hash joins, are on joins the
    rule may split in that release."""
    for rq in replayed():
        if rq.release == release:
            for _, node, _ in rq.query.final_plan.indexed():
                if "(skew=true)" in node.name and not node.name.startswith("BroadcastHashJoin"):
                    assert osj.splits_join(node.name, release), (rq.where, node.name)
