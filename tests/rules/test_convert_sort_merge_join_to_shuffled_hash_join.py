"""``ConvertSortMergeJoinToShuffledHashJoin`` (aqe_core/rules/convert_sort_merge_join_to_shuffled_hash_join.py,
4.3): which side of a sort-merge join builds a hash map, against the ``shuffled_hash_join``
workload recorded on 4.3.0 (``tests/fixtures/captures``).
"""
from __future__ import annotations


import pytest

from aqe_core.rules import convert_sort_merge_join_to_shuffled_hash_join as smj_to_shj
from tests.rules.recorded import RELEASES, joins, one_partition_too_big


def test_a_partition_above_the_local_map_threshold_keeps_sort_merge():
    """One partition of the build side above maxShuffledHashJoinLocalMapThreshold and no side can
    build: the shuffled hash join Spark chose (4.3.0) becomes a sort-merge join."""
    assert one_partition_too_big("4.3.0") == ("ShuffledHashJoin", "SortMergeJoin")


def test_4_3_converts_where_spark_did():
    found = list(joins("4.3.0", "shuffled_hash_join"))
    assert found
    for rq, j in found:
        assert j.spark == j.simulated == "ShuffledHashJoin", rq.where
        assert smj_to_shj.CONVERT_TO_SHJ.code in {r.code for r in j.reasons}, rq.where
        info = rq.query.final_plan.info[j.node]
        assert info["build_side"] == "BuildRight", rq.where


@pytest.mark.parametrize("release", [r for r in RELEASES if r < "4.3"])
def test_no_conversion_before_4_3(release):
    """Before 4.3 the rule does not exist: DynamicJoinSelection's hints decide instead."""
    got = smj_to_shj.choose_shuffled_hash_join_build_side([1], [1], "Inner", {}, spark_version=release)
    assert got.build_side is None and got.reasons[0].code == smj_to_shj.NOT_IN_VERSION.code
    assert not any(smj_to_shj.CONVERT_TO_SHJ.code in {r.code for r in j.reasons} for _, j in joins(release))
