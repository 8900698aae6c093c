"""Runtime join decisions on recorded real runs (issue 10).

Every join of every fixture is re-decided (none undecided) and agrees with Spark; the
sentences name the size, where it comes from and the threshold; an undecided join is never
counted as agreement, in the report, the CLI's exit code or the app's labels. What each join
rule decides, against Spark, is in its own file: tests/rules/test_join_selection_helper.py,
test_demote_broadcast_hash_join.py, test_dynamic_join_selection.py,
test_convert_sort_merge_join_to_shuffled_hash_join.py.
"""
from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest

from aqe_core.cli import main as cli_main
from aqe_core.engine.results import Agreement, JoinResult
from aqe_core.engine.simulate import simulate
from aqe_core.model.capture import Capture
from aqe_core.readers.capture_file import load_capture, save_capture
from aqe_core.views.from_capture import capture_label, views_from_capture
from aqe_core.views.sentences import join_decision_sentence

FIXTURES = Path(__file__).parents[1] / "fixtures" / "captures"
RUNTIME_SHAPES = ("broadcast_aggregate", "broadcast_aggregate_filtered", "broadcast_union")
RECORDED = ("3.0.1", "3.5.9", "4.3.0")


def _fixtures():
    return [pytest.param(p, id=f"{p.parent.name}/{p.name.split('.')[0]}") for p in sorted(FIXTURES.glob("*/*.json.gz"))]


@pytest.mark.parametrize("path", _fixtures())
def test_every_join_is_re_decided_as_spark_decided(path):
    rep = simulate(load_capture(path))
    for qr in rep.queries:
        for j in qr.joins:
            assert j.outcome == "agrees", f"{qr.label}: join {j.node}: {j.outcome} ({j.undecided_reason or j.simulated})"
    assert rep.agreement.joins_undecided == 0


@pytest.mark.parametrize("version", RECORDED)
@pytest.mark.parametrize("workload", RUNTIME_SHAPES + ("demote_broadcast", "runtime_broadcast"))
def test_new_shapes_are_recorded_for_each_release(version, workload):
    cap = load_capture(FIXTURES / version / f"{workload}.json.gz")
    assert cap.spark_version == version
    rep = simulate(cap)
    assert rep.agreement.complete and rep.agreement.joins_total >= len(cap.queries)


def test_sentences_say_which_size_decided():
    rep = simulate(load_capture(FIXTURES / "4.3.0" / "broadcast_aggregate_filtered.json.gz"))
    default, above, below = (qr.joins[0] for qr in rep.queries)
    s = join_decision_sentence(default)
    assert "SortMergeJoin -> BroadcastHashJoin" in s and "right side's size 1.6 KiB" in s
    assert "Project over Filter over shuffle stage 1 below the aggregate" in s and "static broadcast threshold 256 KiB" in s
    assert s.endswith("our rules agree") and s.evidence.value == "exact"
    s = join_decision_sentence(above)
    assert "spark.sql.autoBroadcastJoinThreshold is -1" in s and "left side's size 4.6 MiB" in s
    s = join_decision_sentence(below)
    assert "not runtime statistics, so the static threshold applies" in s


def test_a_union_is_broadcast_before_its_shuffle_stage_exists():
    """3.5: with the static threshold off, a shuffle stage above the union was made and its
    runtime size broadcast; with 256 KiB the union of two stages fits as soon as they finish,
    so the what-if broadcasts the union and that stage is never created."""
    cap = load_capture(FIXTURES / "3.5.9" / "broadcast_union.json.gz")
    above = next(q for q in cap.queries if q.preset == "adaptive_above_static")
    rep = simulate(Capture(cap.spark_version, [above]), {"spark.sql.autoBroadcastJoinThreshold": "256k",
                                                          "spark.sql.adaptive.autoBroadcastJoinThreshold": "1k"})
    j = rep.queries[0].joins[0]
    assert j.simulated == "BroadcastHashJoin" and any(r.code == "broadcast_before_stage" for r in j.reasons)
    gone = [r for r in rep.queries[0].reads if any(x.code == "stage_not_created" for x in r.reasons)]
    assert [r.stage_id for r in gone] == [3] and gone[0].simulated_specs is None


def test_undecided_is_never_agreement():
    j = JoinResult(5, "Inner", "k = k", "SortMergeJoin", "BroadcastHashJoin", None)
    assert j.outcome == "undecided" and not j.agrees and j.undecided_reason
    a = Agreement(total=2, agreeing=2, joins_total=1, joins_undecided=1)
    assert not a.complete and a.percent < 100 and "1 undecided" in a.summary()


@pytest.fixture
def undecided_capture(tmp_path):
    """A real capture whose initial plan is gone: the join's starting strategy is unknown."""
    cap = load_capture(FIXTURES / "4.3.0" / "broadcast_aggregate.json.gz")
    q = replace(cap.queries[0], initial_plan=None)
    return save_capture(Capture(cap.spark_version, [q], run=cap.run), tmp_path / "undecided.json.gz")


def test_an_undecided_join_fails_the_replay(undecided_capture, capsys):
    rep = simulate(load_capture(undecided_capture))
    a = rep.agreement
    assert a.agreeing == a.total and a.joins_undecided == 1 and not a.complete
    assert cli_main(["simulate", str(undecided_capture)]) == 1
    out = capsys.readouterr().out
    assert "UNDECIDED" in out and "undecided (not agreement)" in out
    views, report = views_from_capture(load_capture(undecided_capture))
    assert "1 undecided" in capture_label(load_capture(undecided_capture), report)
    assert "(1 undecided)" in views[0].outcome
    assert "not re-decided by our rules" in views[0].join_decisions[0]
