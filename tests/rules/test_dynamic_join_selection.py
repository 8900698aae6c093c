"""``DynamicJoinSelection`` (aqe_core/rules/dynamic_join_selection.py, 3.2 - 4.2): the hints AQE
puts on each join side from runtime statistics, against the ``shuffled_hash_join`` workload
recorded on each release (``tests/fixtures/captures``): Spark chose a shuffled hash join where
every partition of a side fits ``maxShuffledHashJoinLocalMapThreshold``.
"""
from __future__ import annotations


import pytest

from aqe_core.rules import dynamic_join_selection as djs
from tests.rules.recorded import RELEASES, joins, one_partition_too_big

DJS_RELEASES = [r for r in RELEASES if "3.2" <= r < "4.3"]


def test_a_partition_above_the_local_map_threshold_keeps_sort_merge():
    """One partition of the build side above maxShuffledHashJoinLocalMapThreshold and no side can
    build: the shuffled hash join Spark chose (3.5.9) becomes a sort-merge join."""
    assert one_partition_too_big("3.5.9") == ("ShuffledHashJoin", "SortMergeJoin")


@pytest.mark.parametrize("release", DJS_RELEASES)
def test_shuffled_hash_join_where_spark_chose_it(release):
    found = list(joins(release, "shuffled_hash_join"))
    assert found
    for rq, j in found:
        assert j.spark == j.simulated == "ShuffledHashJoin", rq.where
        assert djs.PREFER_SHUFFLED_HASH.code in {r.code for r in j.reasons}, rq.where
