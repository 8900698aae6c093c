"""``OptimizeSkewInRebalancePartitions`` (aqe_core/rules/optimize_skew_in_rebalance_partitions.py,
3.2+): which REBALANCE partitions are split, and into which map ranges, against the
``rebalance`` / ``rebalance_no_column`` workloads recorded on real Spark
(``tests/fixtures/captures``, see tests/rules/recorded.py): the rule's math called directly on
each recorded shuffle's statistics gives the split specs Spark read.
"""
from __future__ import annotations

import pytest

from aqe_core.model.specs import PartialReducerPartitionSpec
from aqe_core.rules import optimize_skew_in_rebalance_partitions as rebalance
from tests.rules.recorded import RELEASES, reads, split

WORKLOADS = ("rebalance", "rebalance_no_column")


def _rebalance_reads(release: str):
    for workload in WORKLOADS:
        for rq, r in reads(release, workload):
            st = rq.query.stage(r.stage_id)
            if st is not None and st.origin in rebalance.REBALANCE_ORIGINS:
                yield rq, r, st


@pytest.mark.parametrize("release", [r for r in RELEASES if r >= "3.2"])
def test_the_rule_splits_what_spark_split(release):
    found = 0
    for rq, r, st in _rebalance_reads(release):
        sh = rq.query.shuffle(r.shuffle_id)
        maps = sh.map_sizes.for_reducer if sh.map_sizes is not None else None
        res = rebalance.optimize_skew_in_rebalance(sh.bytes_by_partition_id, maps, rq.query.conf,
                                                   spark_version=release, origin=st.origin,
                                                   advisory_override=st.advisory_partition_size)
        spark_parts = [s for s in r.spark_specs or [] if isinstance(s, PartialReducerPartitionSpec)]
        ours = [s for s in res.specs or [] if isinstance(s, PartialReducerPartitionSpec)]
        assert ours == spark_parts, rq.where
        assert res.applied == bool(spark_parts), rq.where
        assert ("OptimizeSkewInRebalancePartitions" in r.rules) == bool(spark_parts), rq.where
        codes = {x.code for x in res.reasons}
        if rq.query.preset == "rebalance_skew_off":
            assert codes == {rebalance.DISABLED.code} and not spark_parts, rq.where
        elif spark_parts:
            assert rebalance.SPLIT.code in codes, rq.where
        else:
            assert codes == {rebalance.NO_LARGE_PARTITION.code}, rq.where
        found += 1
    assert found


@pytest.mark.parametrize("release", [r for r in RELEASES if r >= "3.2"])
def test_some_rebalance_was_split(release):
    """The recordings hold a split for every release that has the rule (else the test above
    proves little)."""
    assert any(split(r.spark_specs) for _, r, _ in _rebalance_reads(release))
