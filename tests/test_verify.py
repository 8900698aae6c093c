"""Verify (issue 13): a fix's prediction scored against Spark running the query again with the
change (the shared real session). Exact when every comparable read's specs and every join's
strategy are what the replay predicted; a wrong prediction scores "differs"."""
from __future__ import annotations

import copy
import json
import time
from pathlib import Path

import pytest

from aqe_core.readers.capture_file import load_capture
from aqe_core.views.recommend import recommend
from aqe_core.views.verify import DIFFERS, SAME, score_fix

CAPTURES = Path(__file__).resolve().parent / "fixtures" / "captures" / "4.3.0"
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


def test_cli_recommend_verify(capsys):
    from aqe_core.cli import main

    assert main(["recommend", str(CAPTURES / "aggregate_coalesce.json.gz"), "--execution", "4", "--verify",
                 "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    fix = doc[0]["fixes"][0]
    assert fix["finding"] == "too many small partitions" and fix["verify"]["exact"]


def test_verify_in_the_app():
    """The Partitions page: "Verify on Spark" runs the query in the server's run queue; the page
    then shows Spark's agreement with the prediction."""
    from streamlit.testing.v1 import AppTest

    from aqe_core.sources import load_source, sample_sources
    from ui.run import run_manager

    sample = next(x for x in sample_sources() if x.kind == "capture" and "4.3.0" in x.label and "skewed inner" in x.label)
    qid = next(v.query_id for v in load_source(sample.path).views if v.description.endswith("skew_join_off"))
    at = AppTest.from_file(str(Path(__file__).resolve().parents[1] / "app.py"), default_timeout=180)
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
