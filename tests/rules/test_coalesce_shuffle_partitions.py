"""``CoalesceShufflePartitions`` (aqe_core/rules/coalesce_shuffle_partitions.py): which reads are
coalesced, and into which ranges, against every read recorded on real Spark
(``tests/fixtures/captures``, see tests/rules/recorded.py; the packing itself is
``ShufflePartitionsUtil``'s, tests/rules/test_shuffle_partitions_util.py).
"""
from __future__ import annotations

import pytest

from aqe_core import config
from aqe_core.config import AQEConf
from aqe_core.rules import coalesce_shuffle_partitions as csp
from tests.rules.recorded import RELEASES, merged, read_locally, reads, replayed


@pytest.mark.parametrize("release", RELEASES)
def test_coalesced_exactly_where_spark_coalesced(release):
    """A read Spark merged reducer ranges in is one our rule coalesced, into Spark's ranges; one
    Spark did not merge, our rule did not either."""
    coalesced = 0
    for rq, r in reads(release):
        if read_locally(r.spark_specs):
            continue  # a local read's reducer ranges are its own (tests/rules/test_optimize_shuffle_with_local_read.py)
        assert merged(r.simulated_specs) == merged(r.spark_specs), (rq.where, r.stage_id)
        if merged(r.spark_specs):
            assert "CoalesceShufflePartitions" in r.rules and csp.COALESCED.code in {x.code for x in r.reasons}
            assert r.simulated_specs == r.spark_specs, (rq.where, r.stage_id)
            coalesced += 1
    assert coalesced


@pytest.mark.parametrize("release", RELEASES)
def test_coalescing_off_puts_no_read(release):
    """``aggregate_coalesce`` under ``coalesce_off``: Spark read every shuffle as planned, and so
    do our rules (no read at all, on either side)."""
    off = [rq for rq in replayed() if rq.release == release and rq.query.preset == "coalesce_off"]
    assert off
    for rq in off:
        assert not AQEConf.resolve(release, [rq.query.conf]).get(config.COALESCE_PARTITIONS_ENABLED)
        assert rq.result.reads == [], rq.where


@pytest.mark.parametrize("release", RELEASES)
def test_the_minimum_partition_count_spark_kept(release):
    """``minPartitionNum`` set (``min_partition_num_*``): our rule says the setting is why, and
    where the query has one read Spark kept at least that many partitions (3.3+ shares it out
    among coalesce groups: a union's children got fewer each); ``parallelismFirst=false``: the
    advisory size alone decides (3.2+)."""
    for rq, r in reads(release):
        codes = {x.code for x in r.reasons}
        conf = AQEConf.resolve(release, [rq.query.conf])
        if rq.query.preset and rq.query.preset.startswith("min_partition_num"):
            assert csp.MIN_NUM_FROM_CONF.code in codes, rq.where
            if len(rq.result.reads) == 1:
                assert len(r.spark_specs) >= conf.get(config.COALESCE_PARTITIONS_MIN_PARTITION_NUM), rq.where
        elif rq.query.preset == "parallelism_first_off":
            assert csp.MIN_NUM_ONE.code in codes, rq.where
        else:
            assert csp.MIN_NUM_FROM_CONF.code not in codes, rq.where
