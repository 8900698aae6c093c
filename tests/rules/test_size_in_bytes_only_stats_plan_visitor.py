"""``SizeInBytesOnlyStatsPlanVisitor`` over ``LogicalQueryStage`` leaves
(aqe_core/rules/size_in_bytes_only_stats_plan_visitor.py): the size, and whether it counts as
runtime statistics, AQE re-plans a join side with, against the ``broadcast_aggregate*`` and
``broadcast_union`` workloads recorded on real Spark (``tests/fixtures/captures``): a side that is
an operator over query stages (a Project over a Filter, a Union) is sized by the visitor, carries
no runtime flag, and so is compared with the static threshold from 3.2 even where the adaptive
one is set, which is what Spark did.
"""
from __future__ import annotations

import pytest

from aqe_core import config
from aqe_core.rules import join_selection_helper as jsh
from aqe_core.rules.size_in_bytes_only_stats_plan_visitor import logical_query_stage
from tests.rules.recorded import joins, releases_with

SHAPES = ("broadcast_aggregate_filtered", "broadcast_union")
RECORDED = releases_with(*SHAPES, "broadcast_aggregate")
DECIDING = {jsh.RUNTIME_BROADCAST.code, jsh.TOO_BIG_TO_BROADCAST.code}


def _visited(release: str):
    """(replayed query, join, reason) where a side's size came through the visitor (not one stage's)."""
    for workload in SHAPES:
        for rq, j in joins(release, workload):
            for r in j.reasons:
                if r.code in DECIDING and "stage_id" not in r.subject:
                    yield rq, j, r


@pytest.mark.parametrize("release", RECORDED)
def test_a_visited_side_decides_as_spark_decided(release):
    found = list(_visited(release))
    assert found
    for rq, j, r in found:
        assert j.simulated == j.spark, rq.where
        assert r.config_keys == (config.AUTO_BROADCASTJOIN_THRESHOLD,), rq.where  # no runtime flag


@pytest.mark.parametrize("release", [r for r in RECORDED if r >= "3.2"])
def test_the_static_threshold_applies_below_a_smaller_adaptive_one(release):
    """``adaptive_below_static``: the adaptive threshold is below the side's size, the static one
    above it; Spark broadcast the visited side anyway (its statistics are not runtime ones)."""
    below = [(rq, j, r) for rq, j, r in _visited(release) if rq.query.preset == "adaptive_below_static"]
    assert below
    for rq, j, r in below:
        adaptive = jsh.broadcast_threshold(rq.query.conf, spark_version=release)
        assert r.numbers["size"] > adaptive and j.spark.startswith("BroadcastHashJoin"), rq.where


@pytest.mark.parametrize("release", RECORDED)
def test_a_query_stage_is_runtime_statistics_from_3_2(release):
    """``QueryStageExec.computeStats`` sets ``isRuntime`` from 3.2: a bare stage side is compared
    with the adaptive threshold where it is set (the ``broadcast_aggregate`` sides under
    ``adaptive_*_static`` name it), the static one before."""
    assert logical_query_stage(1, release).is_runtime == (release >= "3.2")
    for rq, j in joins(release, "broadcast_aggregate"):
        for r in j.reasons:
            if r.code in DECIDING and "stage_id" in r.subject and rq.query.preset != "default":
                adaptive = release >= "3.2"
                assert r.config_keys == ((config.ADAPTIVE_AUTO_BROADCASTJOIN_THRESHOLD,) if adaptive
                                         else (config.AUTO_BROADCASTJOIN_THRESHOLD,)), rq.where
