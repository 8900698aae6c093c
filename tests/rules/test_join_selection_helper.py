"""``JoinSelectionHelper`` (aqe_core/rules/join_selection_helper.py): which sides of a join may be
broadcast and the size limit AQE re-plans with, against the joins recorded on real Spark
(``tests/fixtures/captures``, see tests/rules/recorded.py).

The size that decided a runtime broadcast is the one Spark compares: a perturbation of that
stage's runtime size by one byte across the threshold flips the decision (``canBroadcastBySize``'s
``<=``).
"""
from __future__ import annotations

import copy
from pathlib import Path

import pytest

from aqe_core.engine.simulate import simulate
from aqe_core.model.capture import Capture
from aqe_core.readers.capture_file import load_capture
from aqe_core.rules import join_selection_helper as jsh
from tests.rules.recorded import RELEASES, joins

FIXTURES = Path(__file__).parents[1] / "fixtures" / "captures"
RUNTIME_SHAPES = ("broadcast_aggregate", "broadcast_aggregate_filtered", "broadcast_union")
RECORDED = ("3.0.1", "3.5.9", "4.3.0")


def _deciding(qr):
    """(join, reason) for every join whose strategy a side's runtime size decided."""
    for j in qr.joins:
        for r in j.reasons:
            if r.code in ("runtime_broadcast", "too_big_to_broadcast") and "stage_id" in r.subject:
                yield j, r


def _with_stage_size(cap: Capture, qi: int, stage_id: int, size: int) -> Capture:
    out = copy.deepcopy(cap)
    q = out.queries[qi]
    for st in q.stages:
        if st.stage_id == stage_id:
            st.size_in_bytes = size
    return Capture(out.spark_version, [q])


def _perturbations():
    out = []
    for version in RECORDED:
        for name in RUNTIME_SHAPES:
            path = FIXTURES / version / f"{name}.json.gz"
            rep = simulate(load_capture(path))
            for qi, qr in enumerate(rep.queries):
                for j, r in _deciding(qr):
                    if r.numbers["size"] == load_capture(path).queries[qi].stage(r.subject["stage_id"]).size_in_bytes:
                        out.append(pytest.param(path, qi, j.node, r.code, r.subject["side"], r.subject["stage_id"],
                                                r.numbers["threshold"], id=f"{version}/{name}/{qr.preset}/{r.subject['side']}"))
    return out


@pytest.mark.parametrize("path,qi,node,code,side,stage_id,threshold", _perturbations())
def test_a_perturbed_runtime_size_flips_the_decision_at_the_threshold(path, qi, node, code, side, stage_id, threshold):
    """The side's size is its stage's runtime size (a stage, or the stage under an aggregate):
    at exactly the threshold it is broadcast, one byte more and it is not (Spark's ``<=``)."""
    cap = load_capture(path)

    def build_side(size: int):
        j = next(j for j in simulate(_with_stage_size(cap, qi, stage_id, size)).queries[0].joins if j.node == node)
        return j.simulated_build_side if j.simulated == "BroadcastHashJoin" else None

    assert threshold >= 0
    assert build_side(threshold) == side
    assert build_side(threshold + 1) != side


@pytest.mark.parametrize("release", RELEASES)
def test_spark_built_only_sides_the_join_type_can_build(release):
    """Every broadcast or shuffled hash join Spark planned builds a side that
    ``canBuildBroadcastLeft`` / ``Right`` allows for its join type (Spark's recorded build side)."""
    seen = 0
    for rq, j in joins(release):
        info = rq.query.final_plan.info[j.node] if j.node < len(rq.query.final_plan.info) else {}
        side = info.get("build_side")
        if side is None:
            continue
        can = jsh.can_build_broadcast_left if side == "BuildLeft" else jsh.can_build_broadcast_right
        assert can(info["join_type"]), (rq.where, info)
        seen += 1
    assert seen


@pytest.mark.parametrize("release", [r for r in RELEASES if r >= "3.2"])
def test_adaptive_threshold_off_keeps_the_sort_merge_join(release):
    """``runtime_broadcast`` under ``threshold_off`` (``spark.sql.adaptive.autoBroadcastJoinThreshold``
    = -1): Spark kept the sort-merge join although the static threshold would broadcast the side;
    the adaptive threshold wins for runtime statistics (3.2+) and says broadcasting is off."""
    found = [(rq, j) for rq, j in joins(release, "runtime_broadcast") if rq.query.preset == "threshold_off"]
    assert found
    for rq, j in found:
        assert j.spark == j.simulated == "SortMergeJoin", rq.where
        assert jsh.BROADCAST_OFF.code in {r.code for r in j.reasons}, rq.where
        assert jsh.broadcast_threshold(rq.query.conf, spark_version=release) < 0
        assert jsh.broadcast_threshold(rq.query.conf, spark_version=release, runtime_stats=False) >= 0


@pytest.mark.parametrize("release", RELEASES)
def test_runtime_broadcast_where_spark_broadcast(release):
    """Every join Spark turned into a broadcast at run time is one our helper let through by size."""
    seen = 0
    for rq, j in joins(release):
        if j.spark.startswith("BroadcastHashJoin") and j.initial and not j.initial.startswith("Broadcast"):
            seen += 1
            assert {jsh.RUNTIME_BROADCAST.code, jsh.BROADCAST_BEFORE_STAGE.code} & {r.code for r in j.reasons}, (
                rq.where, [r.code for r in j.reasons])
    assert seen


@pytest.mark.parametrize("release", RELEASES)
def test_the_size_check_is_the_one_spark_decided_with(release):
    """Every side whose size decided its join against a threshold: ``canBroadcastBySize`` fits it
    exactly when it was not too big, and the join is what Spark chose."""
    seen = 0
    for rq, j in joins(release):
        for r in j.reasons:
            if r.code in (jsh.RUNTIME_BROADCAST.code, jsh.TOO_BIG_TO_BROADCAST.code, jsh.DEMOTED.code):
                fits = jsh.fits_broadcast_threshold(r.numbers["size"], r.numbers["threshold"])
                assert fits == (r.code != jsh.TOO_BIG_TO_BROADCAST.code), (rq.where, r.numbers)
                assert j.simulated == j.spark, rq.where
                seen += 1
    assert seen
