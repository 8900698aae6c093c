"""Two runs compared (issue 28): each attribution checked against what Spark did in real run
pairs (``tests/fixtures/run_pairs/``, recorded by ``tools/record_run_pairs.py``).

The truth is read from the runs themselves, never from our output: the partition specs Spark
used in each run (a capture's reads: ``PartialReducerPartitionSpec`` = a part of a split
reducer), the statistics each run saw (``bytesByPartitionId``) and the settings each run set.
"""
from __future__ import annotations

from pathlib import Path

import pytest

from aqe_core import api
from aqe_core.advise.attribute_runs import JOIN_STRATEGY, SKEW_SPLIT
from aqe_core.model.capture import Capture, QueryCapture
from aqe_core.model.evidence import Evidence
from aqe_core.model.run_diff import DATA, RELEASE, SETTINGS
from aqe_core.model.specs import PartialReducerPartitionSpec
from aqe_core.views.align_runs import align_queries

PAIRS = Path(__file__).resolve().parents[1] / "fixtures" / "run_pairs"
THRESHOLD = "spark.sql.adaptive.skewJoin.skewedPartitionThresholdInBytes"


def _capture(pair: str, run: str) -> Capture:
    return api.load_capture(str(PAIRS / pair / f"{run}.json.gz"))


def _query(capture: Capture, label: str) -> QueryCapture:
    return next(q for q in capture.queries if q.label == label)


def _split_reducers(q: QueryCapture) -> int:
    """Reducers Spark split for skew in the query (its own specs)."""
    return len({(r.shuffle_id, s.reducer_index) for r in q.reads for s in r.specs
                if isinstance(s, PartialReducerPartitionSpec)})


def _diff(pair: str, a: str = "a", b: str = "b", ext: str = "json.gz") -> api.RunDiff:
    return api.diff_runs(str(PAIRS / pair / f"{a}.{ext}"), str(PAIRS / pair / f"{b}.{ext}"))


def _skew_join(d: api.RunDiff) -> api.QueryDiff:
    return next(q for q in d.matched if q.a.description == "skew_join")


def test_queries_match_through_changed_literals_and_data():
    d = _diff("data_growth")
    assert sorted((q.a.description, q.b.description) for q in d.matched) == [
        ("by_tag", "by_tag"), ("count_dims", "count_dims"), ("skew_join", "skew_join")]
    assert not d.only_a and not d.only_b
    ca, cb = _capture("data_growth", "a"), _capture("data_growth", "b")
    assert ca.sql_of(_query(ca, "skew_join")) != cb.sql_of(_query(cb, "skew_join"))  # the literal changed


def test_a_key_grown_hot_is_attributed_to_the_data():
    ca, cb = _capture("data_growth", "a"), _capture("data_growth", "b")
    qa, qb = _query(ca, "skew_join"), _query(cb, "skew_join")
    assert qa.conf == qb.conf  # the same settings: only the data changed
    truth_a, truth_b = _split_reducers(qa), _split_reducers(qb)
    assert truth_a == 0 and truth_b >= 1
    q = _skew_join(_diff("data_growth"))
    skew = [c for c in q.causes if c.decision == SKEW_SPLIT]
    assert [(c.a, c.b) for c in skew] == [(truth_a, truth_b)]
    assert skew[0].factors == (DATA,) and skew[0].evidence is Evidence.EXACT
    assert not q.settings
    assert "the data changed" in q.sentence and "now split for skew" in q.sentence


def test_a_raised_skew_threshold_is_attributed_to_the_settings():
    ca, cb = _capture("setting_changed", "a"), _capture("setting_changed", "b")
    qa, qb = _query(ca, "skew_join"), _query(cb, "skew_join")
    assert {k for k in set(qa.conf) | set(qb.conf) if qa.conf.get(k) != qb.conf.get(k)} == {THRESHOLD}
    truth_a, truth_b = _split_reducers(qa), _split_reducers(qb)
    assert truth_a >= 1 and truth_b == 0
    q = _skew_join(_diff("setting_changed"))
    skew = next(c for c in q.causes if c.decision == SKEW_SPLIT and c.a)
    assert (skew.a, skew.b, skew.factors) == (truth_a, truth_b, (SETTINGS,))
    # the same tables in both (only the filter's literal moved): the same hot reducer, about the
    # same size, so run b under run a's settings splits what Spark split in run a
    sa, sb = (next(iter(q.shuffles.values())).bytes_by_partition_id for q in (qa, qb))
    hot = max(range(len(sa)), key=sa.__getitem__)
    assert hot == max(range(len(sb)), key=sb.__getitem__) and abs(sa[hot] - sb[hot]) <= sa[hot] // 20
    assert skew.b_under_a == truth_a and skew.a_under_b == truth_b
    parts_a = sum(1 for r in qa.reads for sp in r.specs if isinstance(sp, PartialReducerPartitionSpec))
    assert skew.b_under_a_parts == parts_a  # the parts Spark cut the hot reducer into in run a
    assert [s.key for s in q.settings] == [THRESHOLD]
    # the join's lost skew flag is this split said again, not a change of join strategy (issue 39)
    assert not [c for c in q.causes if c.decision == JOIN_STRATEGY]
    assert "no longer split" in q.sentence and "skewedPartitionThresholdInBytes 64k -> 1g" in q.sentence


def test_an_unrelated_pair_matches_no_query():
    d = _diff("unrelated")
    assert not d.matched
    assert [r.description for r in d.only_a] == ["skew_join", "by_tag", "count_dims"]
    assert [r.description for r in d.only_b] == ["buckets", "top_items"]
    assert d.notes and "two different jobs" in d.notes[0]


def test_plain_event_logs_label_the_attribution_an_estimate():
    d = _diff("data_growth", ext="zstd")
    assert d.kind == ("eventlog", "eventlog")
    q = next(x for x in d.matched if any(c.decision == SKEW_SPLIT for c in x.causes))
    truth_b = _split_reducers(_query(_capture("data_growth", "b"), "skew_join"))
    skew = next(c for c in q.causes if c.decision == SKEW_SPLIT)
    assert (skew.a, skew.b) == (0, truth_b)  # Spark's own read metrics in each log
    assert skew.evidence is Evidence.ESTIMATE
    assert q.sentence.endswith("[estimated: plain event logs]")
    assert any("estimated" in n for n in q.notes)


@pytest.mark.skipif(not (PAIRS / "release").is_dir(), reason="the release pair is not recorded")
def test_two_releases_name_the_release_and_its_changed_defaults():
    names = sorted(p.name.split(".json")[0] for p in (PAIRS / "release").glob("*.json.gz"))
    assert names == ["3.5.9", "4.3.0"]
    d = _diff("release", "3.5.9", "4.3.0")
    assert d.release == ("3.5.9", "4.3.0")
    assert len(d.matched) == 3 and not d.only_a and not d.only_b
    ca, cb = _capture("release", "3.5.9"), _capture("release", "4.3.0")
    q = _skew_join(d)
    truth = (_split_reducers(_query(ca, "skew_join")), _split_reducers(_query(cb, "skew_join")))
    skew = [c for c in q.causes if c.decision == SKEW_SPLIT]
    if truth[0] == truth[1]:
        assert not skew
    else:
        assert [(c.a, c.b) for c in skew] == [truth] and RELEASE in skew[0].factors
    assert q.release == ("3.5.9", "4.3.0")
    # the same settings set in both runs: only keys one release lacks differ (release defaults)
    assert q.settings and not [s.key for s in q.settings if s.in_both]
    assert "the release changed (3.5.9 -> 4.3.0)" in q.sentence


def test_align_queries_pairs_repeated_queries_in_order():
    views = api.load_source(str(api.SAMPLES_DIR / "captures" / "4.3.0-skew_join_inner.json.gz")).views
    matches, only_a, only_b = align_queries(views, views[:2])
    assert [(m.a.query_id, m.b.query_id, m.how) for m in matches] == [("0", "0", "shape and SQL text"),
                                                                      ("1", "1", "shape and SQL text")]
    assert [v.query_id for v in only_a] == ["2"] and not only_b


def test_plain_event_logs_name_a_raised_threshold_from_the_unsplit_reducer():
    d = _diff("setting_changed", ext="zstd")
    q = next(x for x in d.matched if any(c.decision == SKEW_SPLIT for c in x.causes))
    truth_a = _split_reducers(_query(_capture("setting_changed", "a"), "skew_join"))
    skew = next(c for c in q.causes if c.decision == SKEW_SPLIT)
    assert (skew.a, skew.b, skew.factors) == (truth_a, 0, (SETTINGS,))
    assert skew.evidence is Evidence.ESTIMATE and skew.b_under_a is None  # no estimated split count claimed
    # the partition counts moved with the split: the settings too (the join's skew flag is the
    # split said again, not a cause of its own)
    assert {c.decision for c in q.causes} == {SKEW_SPLIT, "partitions after AQE"}
    assert all(c.factors == (SETTINGS,) for c in q.causes)
    assert "skewedPartitionThresholdInBytes 64k -> 1g" in q.sentence


def test_a_split_only_the_newer_release_makes_is_attributed_to_the_release():
    """The bundled skew_join_inner captures of 3.0.1 and 4.3.0 (the same workload and settings):
    Spark 4.3.0 split the hot reducer, Spark 3.0.1 did not."""
    pa, pb = (str(api.SAMPLES_DIR / "captures" / f"{v}-skew_join_inner.json.gz") for v in ("3.0.1", "4.3.0"))
    ca, cb = api.load_capture(pa), api.load_capture(pb)
    qa, qb = ca.queries[0], cb.queries[0]
    assert qa.label == qb.label == "skew_join_inner/default"
    truth = (_split_reducers(qa), _split_reducers(qb))
    assert truth[0] == 0 and truth[1] >= 1
    q = next(x for x in api.diff_runs(pa, pb).matched if x.a.description == "skew_join_inner/default")
    skew = next(c for c in q.causes if c.decision == SKEW_SPLIT)
    assert (skew.a, skew.b, skew.factors) == (*truth, (RELEASE,))
    assert not [s for s in q.settings if s.in_both and (s.set_in_a or s.set_in_b)]
    assert "the release changed (3.0.1 -> 4.3.0)" in q.sentence


@pytest.mark.parametrize("pair", ["data_growth", "setting_changed"])
def test_one_run_read_as_capture_and_as_event_log_changes_no_decision(pair):
    """The same Spark run, its capture against its own event log: a capture spells a split join
    ``SortMergeJoin (skew)``, the event log's plan ``SortMergeJoin(skew=true)``; no cause may
    come of the spelling."""
    d = api.diff_runs(str(PAIRS / pair / "a.json.gz"), str(PAIRS / pair / "a.zstd"))
    assert d.matched
    assert [c.decision for q in d.matched for c in q.causes] == []


def test_an_event_logs_task_time_is_the_captures_of_the_same_run():
    """Task time from an event log's task ends per stage equals the capture's task events of the
    same Spark run (two records of one run, not our arithmetic on one)."""
    d = api.diff_runs(str(PAIRS / "setting_changed" / "a.json.gz"), str(PAIRS / "setting_changed" / "a.zstd"))
    pairs = [q.task_ms for q in d.matched]
    assert pairs and all(a is not None and a == b for a, b in pairs), pairs
