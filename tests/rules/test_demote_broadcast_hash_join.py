"""``DemoteBroadcastHashJoin`` (aqe_core/rules/demote_broadcast_hash_join.py; inside
``DynamicJoinSelection`` in 3.2 - 4.2): a side with too few non-empty partitions is not broadcast,
against the ``demote_broadcast`` workload recorded on every release (``tests/fixtures/captures``):
Spark demoted the small side under the default preset and broadcast it under ``no_demotion``
(``nonEmptyPartitionRatioForBroadcastJoin`` = 0).
"""
from __future__ import annotations

import copy
from pathlib import Path

import pytest

from aqe_core import config
from aqe_core.config import AQEConf
from aqe_core.engine.simulate import simulate
from aqe_core.model.capture import Capture
from aqe_core.readers.capture_file import load_capture
from aqe_core.rules.demote_broadcast_hash_join import has_many_empty_partitions
from tests.rules.recorded import RELEASES, joins

FIXTURES = Path(__file__).parents[1] / "fixtures" / "captures"
RECORDED = ("3.0.1", "3.5.9", "4.3.0")


def test_a_perturbed_partition_count_flips_the_demotion():
    """DemoteBroadcastHashJoin / DynamicJoinSelection: the small side is demoted while fewer than
    ``nonEmptyPartitionRatioForBroadcastJoin`` of its partitions hold data (Spark demoted it under
    the default preset and broadcast it under ``no_demotion``); give it enough non-empty
    partitions and the same statistics are broadcast."""
    for version in RECORDED:
        cap = load_capture(FIXTURES / version / "demote_broadcast.json.gz")
        q = next(q for q in cap.queries if q.preset == "default")
        j = simulate(Capture(cap.spark_version, [q])).queries[0].joins[0]
        assert j.simulated == "SortMergeJoin" and any(r.code == "demoted" for r in j.reasons)
        side = next(r for r in j.reasons if r.code == "demoted").subject["stage_id"]
        q2 = copy.deepcopy(q)
        sh = q2.shuffle(q2.stage(side).shuffle_id)
        b = sh.bytes_by_partition_id
        need = -(-len(b) // 5)  # 20%: the default ratio
        filled = [x or 1 for x in b[:need]] + list(b[need:])
        sh.bytes_by_partition_id = filled
        j2 = simulate(Capture(cap.spark_version, [q2])).queries[0].joins[0]
        assert j2.simulated == "BroadcastHashJoin", (version, [r.message for r in j2.reasons])
        sh.bytes_by_partition_id = [x or 1 for x in b[:need - 1]] + [0] + list(b[need:])
        if sum(1 for x in sh.bytes_by_partition_id if x) < need:
            j3 = simulate(Capture(cap.spark_version, [q2])).queries[0].joins[0]
            assert j3.simulated == "SortMergeJoin", version


@pytest.mark.parametrize("release", RELEASES)
def test_the_demoted_side_has_many_empty_partitions_as_spark_judged(release):
    """The side Spark did not broadcast under the default ratio holds data in too few partitions;
    under ``no_demotion`` (ratio 0) the same statistics are never demoted, and Spark broadcast."""
    found = list(joins(release, "demote_broadcast"))
    assert {rq.query.preset for rq, _ in found} == {"default", "no_demotion"}
    for rq, j in found:
        ratio = AQEConf.resolve(release, [rq.query.conf]).get(config.NON_EMPTY_PARTITION_RATIO_FOR_BROADCAST_JOIN)
        demoted = [r for r in j.reasons if r.code == "demoted"]
        if rq.query.preset == "default":
            assert j.spark == "SortMergeJoin" and demoted, rq.where
            q = rq.query
            b = q.shuffle(q.stage(demoted[0].subject["stage_id"]).shuffle_id).bytes_by_partition_id
            assert has_many_empty_partitions(b, ratio), rq.where
        else:
            assert j.spark.startswith("BroadcastHashJoin") and not demoted and ratio == 0, rq.where
