"""Verify (issue 13): a fix's prediction scored against Spark running the query again with the
change (the shared real session). Exact when every comparable read's specs and every join's
strategy are what the replay predicted; a wrong prediction scores "differs"."""
from __future__ import annotations

import copy
import json
import time
from pathlib import Path

import pytest

from aqe_core import config
from aqe_core.readers.capture_file import load_capture
from aqe_core.advise.fix_findings import MISSED, SKEW
from aqe_core.advise.recommend import recommend
from aqe_core.advise.verify import DIFFERS, NOT_PREDICTED, SAME, score_fix

CAPTURES = Path(__file__).resolve().parents[1] / "fixtures" / "captures" / "4.3.0"
pytestmark = pytest.mark.slow


def _skew_off():
    capture = load_capture(str(CAPTURES / "skew_join_inner.json.gz"))
    q = next(x for x in capture.queries if x.label.endswith("/skew_join_off"))
    fix = next(f for f in recommend(capture, q) if f.finding == "skew left unsplit")
    return capture, q, fix


def test_a_verified_fix_scores_exact_and_a_wrong_one_differs(spark_runtime):
    from aqe_core.live.runner import Runner

    capture, q, fix = _skew_off()
    real = Runner(spark_runtime).rerun(q.sql or capture.run["sql"], [("fix", {**q.conf, **fix.settings})],
                                       setup=list(capture.run["views"].values()), label=q.label)
    got = score_fix(fix, q, real)
    assert got.exact and [r.verdict for r in got.reads] == [SAME, SAME]
    assert got.summary() == "Verified on Spark 4.3.0: 2 of 2 comparable reads exactly as predicted, joins as predicted"
    wrong = copy.deepcopy(fix)
    wrong.predicted.reads[0].simulated_specs = wrong.predicted.reads[0].simulated_specs[:-1]
    bad = score_fix(wrong, q, real)
    assert not bad.exact and bad.reads[0].verdict == DIFFERS and "1 of 2 comparable reads" in bad.summary()


def _rerun(spark_runtime, capture, q, fix):
    from aqe_core.live.runner import Runner

    return Runner(spark_runtime).rerun(q.sql or capture.run["sql"], [("fix", {**q.conf, **fix.settings})],
                                       setup=list(capture.run["views"].values()), label=q.label)


def test_a_forced_split_on_a_three_way_join_coalesces_the_joined_shuffles_in_a_stage_of_their_own(spark_runtime):
    """Three tables joined on one key: forcing the split of the lower join makes Spark add a
    shuffle above it, so the lower join's two shuffles are coalesced as a stage of their own
    (not with the third). Those two reads are predicted exactly; the third is coalesced with
    the new shuffle, whose size no captured statistic holds: not predicted, and said why."""
    capture = load_capture(str(CAPTURES / "multi_way_join_same_key.json.gz"))
    q = next(x for x in capture.queries if x.label.endswith("/default"))
    fix = next(f for f in recommend(capture, q, application=False) if f.finding == SKEW)
    assert fix.settings == {config.ADAPTIVE_FORCE_OPTIMIZE_SKEWED_JOIN: "true"}
    assert any("not predicted" in e and "new shuffle" in e for e in fix.effects), fix.effects
    got = score_fix(fix, q, _rerun(spark_runtime, capture, q, fix))
    same = [r for r in got.reads if r.verdict == SAME]
    unsized = [r for r in got.reads if r.verdict == NOT_PREDICTED]
    assert got.exact and len(same) == 2, got.to_dict()
    assert all(r.spark is not None and r.predicted == r.spark for r in same)
    # the third table's read (coalesced with the new shuffle) and the new shuffle's own read:
    # Spark's numbers beside the reason they were not predicted
    assert len(unsized) == 2 and all(r.spark is not None and "new shuffle" in r.detail for r in unsized), got.to_dict()
    assert not [r for r in got.reads if r.verdict not in (SAME, NOT_PREDICTED)], got.to_dict()


def test_a_join_that_becomes_broadcast_below_an_aggregate(spark_runtime):
    """A sort-merge join under an aggregation becomes a broadcast join. With the aggregation in
    the join's stage (its shuffle was added by a forced split), the shuffle goes away and the
    join's reads are predicted exactly; with an aggregation on another key above it, that
    shuffle is written by the join's new local-read tasks: its read is not predicted, with why."""
    from aqe_core.live.runner import Runner
    from aqe_core.live.workloads import get

    capture = load_capture(str(CAPTURES / "skew_join_then_aggregate.json.gz"))
    q = next(x for x in capture.queries if x.label.endswith("/force"))
    fix = next(f for f in recommend(capture, q, application=False) if f.finding == MISSED)
    got = score_fix(fix, q, _rerun(spark_runtime, capture, q, fix))
    assert got.exact and all(r.verdict == SAME for r in got.reads), got.to_dict()
    assert any(r.detail.startswith("not created, as predicted") for r in got.reads), got.to_dict()

    w = get("skew_join_then_aggregate")
    sql = "SELECT f.tag, count(*) AS n, sum(f.v) AS sv FROM facts f JOIN dims d ON f.k = d.k GROUP BY f.tag"
    runner = Runner(spark_runtime)
    setup = list(capture.run["views"].values())
    problem = runner.rerun(sql, [("default", w.conf_for(w.presets[0], 1.0))], setup=setup, label="join_then_aggregate")
    problem.run["views"] = dict(capture.run["views"])
    pq = problem.queries[0]
    fix = next(f for f in recommend(problem, pq, application=False) if f.finding == MISSED)
    got = score_fix(fix, pq, _rerun(spark_runtime, problem, pq, fix))
    unsized = [r for r in got.reads if r.verdict == NOT_PREDICTED]
    assert got.exact and len(got.comparable) == 2, got.to_dict()
    assert len(unsized) == 1 and unsized[0].spark is not None and "BroadcastHashJoin" in unsized[0].detail, got.to_dict()
    assert any(e.startswith(f"stage {unsized[0].stage_id}: not predicted") for e in fix.effects), fix.effects


def test_cli_recommend_verify(capsys):
    from aqe_core.cli import main

    assert main(["recommend", str(CAPTURES / "aggregate_coalesce.json.gz"), "--execution", "4", "--verify",
                 "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    fix = doc[0]["fixes"][0]
    assert fix["finding"] == "too many small partitions" and fix["verify"]["exact"]


def test_cli_recommend_verify_scores_every_read(capsys):
    """The shuffle Spark added for a forced split is not created once the join is broadcast: the
    CLI says so in the prediction and scores it, read by read, against the re-run."""
    from aqe_core.cli import main

    assert main(["recommend", str(CAPTURES / "skew_join_then_aggregate.json.gz"), "--execution", "1", "--verify"]) == 0
    out = capsys.readouterr().out
    assert "predicted (exact replay): stage 2: not created: " in out
    assert "verify: Verified on Spark 4.3.0: 3 of 3 comparable reads exactly as predicted, joins as predicted" in out
    assert "stage 2: predicted -, Spark no such read: exactly as predicted (not created, as predicted: " in out


def test_not_predicted_reads_say_why_in_the_cli_and_the_report(capsys):
    """No Spark: the forced split's prediction names the reads it cannot size, with why."""
    from aqe_core.cli import main
    from aqe_core.report import build_report
    from aqe_core.opening import load_source

    path = str(CAPTURES / "multi_way_join_same_key.json.gz")
    assert main(["recommend", path, "--execution", "0"]) == 0
    out = capsys.readouterr().out
    assert "predicted (exact replay): stage 3: not predicted: coalesced in one stage with the new shuffle" in out
    assert "predicted (exact replay): a new stage: not predicted: " in out
    view = next(v for v in load_source(path).views if v.query_id == "0")
    capture, index = view.model.raw
    fixes = recommend(capture, next(x for x in capture.queries if x.index == index), application=False)
    assert "stage 3: not predicted: coalesced in one stage with the new shuffle" in build_report(
        view, source_label="capture", fixes=fixes)


def test_verify_in_the_app():
    """The Partitions page: "Verify on Spark" runs the query in the server's run queue; the page
    then shows Spark's agreement with the prediction."""
    from streamlit.testing.v1 import AppTest

    from aqe_core.opening import load_source, sample_sources
    from ui.run import run_manager

    sample = next(x for x in sample_sources() if x.kind == "capture" and "4.3.0" in x.label and "skewed inner" in x.label)
    qid = next(v.query_id for v in load_source(sample.path).views if v.description.endswith("skew_join_off"))
    at = AppTest.from_file(str(Path(__file__).resolve().parents[2] / "app.py"), default_timeout=180)
    at.session_state["source_path"] = sample.path
    at.session_state["source_label"] = sample.label
    at.session_state["source_ref"] = {"kind": "sample", "key": sample.key}
    at.query_params["q"] = qid
    at.run()
    at.switch_page("pages/partitions.py").run()
    button = next(b for b in at.button if b.label == "Verify on Spark")
    button.click().run()
    assert not at.exception
    job_id = next(iter(at.session_state["verify_jobs"].values()))
    deadline = time.time() + 240
    while run_manager().status(job_id).active and time.time() < deadline:
        time.sleep(1)
    at.run()
    assert any("exactly as predicted" in s.value for s in at.success), [e.value for e in at.error]
