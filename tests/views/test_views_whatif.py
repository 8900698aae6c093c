"""Issue 9 WP4a: the views, the one what-if path and the structured sentences.

* :func:`aqe_core.views.compare.whatif` (one advice call for lines and decisions) answers what the
  what-if page assembled from ``whatif_view`` and ``compare_presets``;
* the engine dispatches on ``Query.evidence`` (capture: exact replay; event log: estimate);
* the hypothetical split sentence is rendered from the reason's numbers, equal to the rule's own
  sentence with "would";
* ``QueryView.adaptive_reason`` says why AQE did not apply (InsertAdaptiveSparkPlan's reason).
"""
from __future__ import annotations

import json
import pickle
from pathlib import Path

import pytest

from aqe_core.engine import adaptive_verdict, simulate
from aqe_core.engine.adaptive import AdaptiveVerdict
from aqe_core.advise.whatif import compare_presets, simulate_preset, what_if
from aqe_core.model.evidence import Evidence
from aqe_core.model.presets import BUILTIN_PRESETS, Preset
from aqe_core.model.reasons import Reason
from aqe_core.readers.capture_file import load_capture
from aqe_core.readers.eventlog import load
from aqe_core.opening import load_source
from aqe_core.views.compare import whatif, whatif_view
from aqe_core.views.sentences import ADAPTIVE_DISAGREES, adaptive_reason, skew_row_sentence, skew_split_sentence

REPO = Path(__file__).resolve().parents[2]
SAMPLES = REPO / "sample_logs"
CAPTURES = sorted((SAMPLES / "captures").glob("*.json.gz")) + sorted((REPO / "tests" / "fixtures" / "captures").glob("*/*.json*"))
EVENTLOGS = [SAMPLES / "eventlogs" / e["files"][0]
             for e in json.loads((SAMPLES / "eventlogs" / "MANIFEST.json").read_text()).values()]
OVERRIDES = {"spark.sql.adaptive.advisoryPartitionSizeInBytes": "1m", "spark.sql.adaptive.skewJoin.skewedPartitionFactor": "2"}


def _rows(outcomes):
    return [(o.summary_row(), o.note, o.settings, [s.to_dict() for s in o.shuffles]) for o in outcomes]


@pytest.mark.parametrize("path", [CAPTURES[0], *[p for p in CAPTURES if "skew_join" in p.name][:2], EVENTLOGS[0]],
                         ids=lambda p: p.name)
def test_whatif_is_whatif_view_and_compare_presets_in_one_call(path):
    src = load_source(str(path))
    for view in src.views[:4]:
        got = whatif(view, OVERRIDES)
        old_view, errors = whatif_view(view, OVERRIDES)
        assert got.errors == errors == []
        assert [s.to_dict() for s in got.view.shuffles] == [s.to_dict() for s in old_view.shuffles]
        old = compare_presets(view, [next(p for p in BUILTIN_PRESETS if p.name == "actual"),
                                     Preset("what-if", "your settings", dict(OVERRIDES))])
        assert _rows(got.outcomes) == _rows(old)
        assert got.note == old[1].note


def test_whatif_reports_a_bad_setting_and_no_decisions():
    view = load_source(str(EVENTLOGS[0])).views[0]
    got = whatif(view, {"spark.sql.adaptive.skewJoin.skewedPartitionFactor": "bad"})
    assert got.errors and got.outcomes == [] and got.view is view
    assert whatif(view, {}).outcomes == []


def test_engine_dispatches_on_the_evidence():
    cap_view = load_source(str(CAPTURES[0])).views[0]
    log_view = next(v for v in load_source(str(EVENTLOGS[0])).views if v.shuffles)
    assert cap_view.model.evidence is Evidence.EXACT and cap_view.model.raw[1] == int(cap_view.query_id)
    assert log_view.model.evidence is Evidence.SPARK_METRIC and log_view.model.raw is None
    exact = simulate_preset(cap_view, BUILTIN_PRESETS[2])
    assert exact.exact and exact.note.startswith("exact:")
    estimate = simulate_preset(log_view, BUILTIN_PRESETS[2])
    assert not estimate.exact and estimate.note.startswith("approximate:")
    # without a model (a view built by hand) the engine estimates
    got = what_if(None, cap_view.shuffles, [], cap_view.conf, default_parallelism=cap_view.default_parallelism)
    assert got.outcome is not None and not got.outcome.exact and len(got.lines) == len(cap_view.shuffles)


def test_lines_and_sentences_carry_their_evidence():
    cap = load_source(str(next(p for p in CAPTURES if "skew_join" in p.name)))
    log_view = next(v for v in load_source(str(EVENTLOGS[0])).views if any(s.lines for s in v.shuffles))
    assert all(ln.evidence is Evidence.EXACT for v in cap.views for s in v.shuffles for ln in s.lines)
    assert all(r.explanation.evidence is Evidence.EXACT for v in cap.views for s in v.shuffles for r in s.skew_rows)
    # over post-AQE sizes every line is an estimate, except the coalescing target: it needs only
    # the total, which those sizes keep (Spark's metric)
    assert all(ln.evidence is (Evidence.SPARK_METRIC if ln.kind == "coalesce_target" else Evidence.ESTIMATE)
               for s in log_view.shuffles for ln in s.lines)
    assert all(s.evidence is Evidence.ESTIMATE for s in log_view.shuffles)


def test_views_survive_the_app_cache_pickle():
    src = load_source(str(CAPTURES[0]))
    views = pickle.loads(pickle.dumps(src.views))
    assert [v.to_dict() for v in views] == [v.to_dict() for v in src.views]
    assert _rows([simulate_preset(views[0], BUILTIN_PRESETS[1])]) == _rows([simulate_preset(src.views[0], BUILTIN_PRESETS[1])])


@pytest.mark.parametrize("path", CAPTURES, ids=lambda p: p.name)
def test_split_sentence_is_rendered_from_the_reason(path):
    cap = load_capture(path)
    splits = [r for q in simulate(cap).queries for rd in q.reads for r in rd.reasons if r.code == "split"]
    for r in splits:
        text = skew_split_sentence(r)
        if text is None:  # another rule's split (rebalance, stream side) keeps its own sentence
            assert "; split into" not in r.message
            continue
        assert text == r.message
        assert skew_split_sentence(r, hypothetical=True) == r.message.replace("; split into", "; would split into")


def test_skew_row_sentence_tense_and_blocking():
    split = Reason("split", "left partition 3 is skewed: 300 B > 5 x median 10 B and > 256 B; split into 4 parts of about"
                   " 64 B", {"size": 300, "median": 10, "threshold": 256, "factor": 5, "threshold_bytes": 256, "target": 64,
                             "splits": 4}, (), {"partition": 3, "side": "left"})
    block = Reason("skew_join_disabled", "skew join is disabled")
    assert skew_row_sentence(split, "x", done=True, blocking=block) == split.message
    assert skew_row_sentence(split, "x", done=False, blocking=block) == (
        "left partition 3 is skewed: 300 B > 5 x median 10 B and > 256 B; would split into 4 parts of about 64 B;"
        " skew join is disabled")
    assert skew_row_sentence(None, "fallback", done=False, blocking=None) == "fallback"


@pytest.mark.parametrize("path", EVENTLOGS, ids=lambda p: p.name)
def test_adaptive_reason_on_sample_logs(path):
    log = load(str(path))
    views = {v.query_id: v for v in load_source(str(path)).views}
    seen = 0
    for ex in log.executions.values():
        v = views[str(ex.id)]
        if ex.adaptive or ex.initial_plan is None:
            assert v.adaptive_reason == ""
            continue
        verdict = adaptive_verdict(ex.initial_plan, v.conf, v.spark_version)
        assert not verdict.applies and v.adaptive_reason == verdict.reasons[0].message
        assert v.to_dict()["adaptive_reason"] == v.adaptive_reason and v.outcome == "no AQE"
        json.dumps(v.to_dict())
        seen += 1
    assert seen


def test_adaptive_reason_when_our_verdict_disagrees():
    assert adaptive_reason(AdaptiveVerdict(True, [], False)) == ADAPTIVE_DISAGREES
    assert adaptive_reason(AdaptiveVerdict(True, [], True)) == ""
    assert adaptive_reason(AdaptiveVerdict(False, [Reason("command", "a command")], False)) == "a command"


def test_report_says_why_aqe_did_not_apply():
    from aqe_core.report import build_report

    view = next(v for v in load_source(str(EVENTLOGS[0])).views if v.adaptive_reason)
    html = build_report(view, source_label="sample")
    assert "Why AQE did not apply: " in html and "no AQE" in html
