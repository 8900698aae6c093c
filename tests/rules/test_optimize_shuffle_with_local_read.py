"""``OptimizeShuffleWithLocalRead`` / 3.0-3.1 ``OptimizeLocalShuffleReader``
(aqe_core/rules/optimize_shuffle_with_local_read.py): which stages are read locally, and the
mapper ranges each task reads, against every read recorded on real Spark
(``tests/fixtures/captures``, see tests/rules/recorded.py).
"""
from __future__ import annotations

import pytest

from aqe_core.rules.optimize_shuffle_with_local_read import local_read_specs
from tests.rules.recorded import RELEASES, read_locally, reads

LOCAL_RULES = {"OptimizeShuffleWithLocalRead", "OptimizeLocalShuffleReader"}


@pytest.mark.parametrize("release", RELEASES)
def test_read_locally_exactly_where_spark_did(release):
    local = 0
    for rq, r in reads(release):
        assert read_locally(r.simulated_specs) == read_locally(r.spark_specs), (rq.where, r.stage_id)
        assert bool(LOCAL_RULES & set(r.rules)) == read_locally(r.spark_specs), (rq.where, r.rules)
        if read_locally(r.spark_specs):
            assert r.simulated_specs == r.spark_specs, (rq.where, r.stage_id)
            local += 1
    assert local


@pytest.mark.parametrize("release", RELEASES)
def test_local_read_off_reads_nothing_locally(release):
    """``runtime_broadcast`` under ``local_read_off``: Spark read the broadcast join's probe side
    by reducer partitions, and so do our rules."""
    found = [(rq, r) for rq, r in reads(release, "runtime_broadcast") if rq.query.preset == "local_read_off"]
    assert found
    assert not any(read_locally(r.spark_specs) or read_locally(r.simulated_specs) for _, r in found)


@pytest.mark.parametrize("release", RELEASES)
def test_spark_s_mapper_ranges_from_its_task_count(release):
    """``getPartitionSpecs`` / ``equallyDivide``: given the number of tasks Spark read a stage
    with, the mapper and reducer ranges are Spark's (one task per mapper and reducer range, or,
    from 3.2, groups of whole mappers when there are more mappers than tasks)."""
    checked = 0
    for rq, r in reads(release):
        if not read_locally(r.spark_specs):
            continue
        st = rq.query.stage(r.stage_id)
        sh = rq.query.shuffle(r.shuffle_id)
        n_maps = st.num_maps if st.num_maps is not None else sh.num_maps
        got = local_read_specs(n_maps, sh.num_reducers, len(r.spark_specs), spark_version=release)
        assert got == r.spark_specs, (rq.where, r.stage_id)
        checked += 1
    assert checked
