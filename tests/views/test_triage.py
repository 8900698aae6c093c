"""Triage (issue 12): every execution ranked by what AQE did, searchable and filterable, at the
scale of a busy application's log."""
from __future__ import annotations

from dataclasses import replace

from aqe_core.opening import default_sample, load_source
from aqe_core.views.triage import FINDINGS, triage, triage_row


def _views():
    return load_source(default_sample().path).views


def test_findings_come_from_what_spark_did():
    views = {v.description: v for v in _views()}
    skew = triage_row(views["skewed join"])
    assert skew.findings[0] == "skew_split" and skew.page == "partitions"
    broadcast = triage_row(next(v for d, v in views.items() if "broadcast" in d))
    assert "broadcast" in broadcast.findings
    cmd = next(triage_row(v) for v in views.values() if not v.adaptive)
    assert cmd.findings == ["no_aqe"] and cmd.summary.startswith("no AQE: ")
    assert set(FINDINGS) >= {f for v in views.values() for f in triage_row(v).findings}


def test_ranked_searched_and_filtered_at_a_thousand_executions():
    base = _views()
    many = [replace(v, query_id=str(i * len(base) + k)) for i in range(110) for k, v in enumerate(base)]
    assert len(many) > 1000
    rows = triage(many)
    assert len(rows) == len(many)
    assert [r.score for r in rows] == sorted((r.score for r in rows), reverse=True)
    skew = triage(many, "SKEW")
    assert skew and all("skew" in (r.description + r.summary).lower() for r in skew)
    assert all("no_aqe" in r.findings for r in triage(many, findings=["no_aqe"]))


def test_unsplit_skew_says_why():
    from aqe_core.readers.capture_file import load_capture
    from aqe_core.views.from_capture import views_from_capture

    views, _ = views_from_capture(load_capture("tests/fixtures/captures/4.3.0/skew_join_then_aggregate.json.gz"))
    row = triage_row(views[0])
    assert row.findings[0] == "skew_not_split"
    assert row.summary.startswith("skew left unsplit: ") and "would split into" in row.summary


def test_time_in_the_skewed_stage_comes_from_its_task_events():
    from aqe_core.readers.eventlog import load

    path = default_sample().path
    views = {v.description: v for v in load_source(path).views}
    v = views["skewed join"]
    read = next(s for s in v.shuffles if s.skewed_partitions)
    log = load(path)
    stage = log.stages[read.stage_id]
    durations = [ms for ms in stage.task_ms if ms >= 0]
    assert read.task_time.max_ms == max(durations) and read.task_time.tasks == len(durations)
    assert read.task_time.median_ms == sorted(durations)[len(durations) // 2]
    row = triage_row(v)
    assert row.stage_time == read.task_time.short() and f"stage {read.stage_id}" in row.stage_time
    assert row.to_dict()["read stage tasks"] == row.stage_time


def test_a_demoted_broadcast_is_a_finding_where_spark_demoted_it():
    """The demote_broadcast workload, recorded on every release: Spark kept the sort-merge join
    although a side fit the threshold (DemoteBroadcastHashJoin); no other capture says so."""
    from pathlib import Path

    from aqe_core.readers.capture_file import load_capture
    from aqe_core.views.from_capture import views_from_capture

    seen = set()
    for path in sorted(Path("tests/fixtures/captures").glob("*/*.json.gz")):
        views, _ = views_from_capture(load_capture(str(path)))
        for v in views:
            demoted = "demoted" in triage_row(v).findings
            assert not demoted or path.name == "demote_broadcast.json.gz", (path, v.query_id)
            if demoted:
                assert any("was demoted" in d and "SortMergeJoin" in d for d in v.join_decisions)
                seen.add(path.parent.name)
    assert seen == {p.name for p in Path("tests/fixtures/captures").iterdir() if p.is_dir()}  # on every release


def test_ranked_views_follow_the_triage_order():
    from aqe_core.opening import load_source
    from aqe_core.views.triage import ranked_views, triage
    from tests.rules.recorded import CAPTURES

    views = load_source(str(CAPTURES / "4.3.0" / "skew_join_both_sides.json.gz")).views
    assert [v.query_id for v in ranked_views(views)] == [r.query_id for r in triage(views)]
