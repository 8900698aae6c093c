"""Plain logs never contradict Spark (issue 23): every "as run" figure is the log's own
AQEShuffleRead metrics ("number of partitions", "number of skewed partitions", "number of
skewed partition splits", read from the final plan's nodes and the driver's accumulator
updates), and each defect the issue lists has its test, on real Spark logs.

tests/fixtures/eventlogs/plain_cases is a real PySpark 4.3.0 log (tools/record_plain_cases.py):
#1/#2 a REBALANCE over two hot keys (Spark split two reducers, 10 parts in all), #7 no
adaptive read (coalescing off, 128 partitions, broadcast joins), #10 a sort-merge join on a hot
key with skew-join handling off, #11 a window over a hot key.
"""
from __future__ import annotations

from pathlib import Path

import pytest

from aqe_core.model.evidence import Evidence
from aqe_core.model.presets import BUILTIN_PRESETS
from aqe_core.readers.eventlog import load
from aqe_core.advise.whatif import simulate_preset
from aqe_core.views.compare import skew_sentence, whatif
from aqe_core.views.explain import explain_views
from aqe_core.views.from_eventlog import views_from_eventlog
from aqe_core.advise.releases import compare_releases
from aqe_core.views.triage import triage

ROOT = Path(__file__).resolve().parents[2]
SAMPLES = ROOT / "sample_logs" / "eventlogs"
FIXTURES = ROOT / "tests" / "fixtures" / "eventlogs"
CASES = FIXTURES / "plain_cases" / "local-1795647456252.zstd"
LZ4 = SAMPLES / "local-1795309052779.lz4"
ACTUAL = next(p for p in BUILTIN_PRESETS if p.name == "actual")

LOGS = sorted(
    [p for p in SAMPLES.iterdir() if p.name != "MANIFEST.json"]
    + [p for p in FIXTURES.iterdir() if p.name not in ("MANIFEST.json", "listener", "plain_cases", "retry_cases",
                                                      "sentence_cases", "repeated", "streaming")]
    + [p for p in (FIXTURES / "listener").glob("*/*") if p.name != "captures.json.gz"] + [CASES]
    + sorted((FIXTURES / "repeated").rglob("*.zstd")) + sorted((FIXTURES / "streaming").glob("*/*/*.zstd")))
# (sentence_cases: shuffles AQE left as planned, no adaptive read to check here;
# tests/views/test_sentences_hold.py holds it to why nothing merged)
# (retry_cases: 4.1/4.2 stage retries with coalescing off, no adaptive read to check here;
# tests/readers/test_eventlog_retry_cases.py holds them to their release's History Server)


def _views(path: Path):
    log = load(str(path))
    return log, {v.query_id: v for v in views_from_eventlog(log)}


@pytest.mark.parametrize("path", LOGS, ids=lambda p: f"{p.parent.name}/{p.name}")
def test_every_as_run_figure_is_the_logs_own_metric(path):
    """The "actual" outcome every page, the report and the CLI show as run, read by read."""
    log, views = _views(path)
    checked = 0
    for ex in log.executions_by_id():
        v = views[str(ex.id)]
        if not v.adaptive:
            continue
        ran = simulate_preset(v, ACTUAL)
        assert ran.evidence is Evidence.SPARK_METRIC
        adaptive = [s for s, sv in zip(ran.shuffles, v.shuffles) if sv.adaptive_read]
        assert len(adaptive) == len(ex.shuffle_reads)
        for got, r in zip(adaptive, ex.shuffle_reads):
            assert got.evidence is Evidence.SPARK_METRIC
            if r.num_partitions is not None:
                assert got.partitions_after == r.num_partitions, (ex.id, got.label)
                assert got.skewed == (r.skewed_partitions or 0), (ex.id, got.label)
                assert got.splits == (r.skew_splits or 0), (ex.id, got.label)
            else:  # Spark 3.0: no read metrics, so no claim on the split parts
                assert got.splits is None or got.splits == r.skew_splits
            checked += 1
    if not log.spark_version.startswith("3.0"):
        assert checked > 0


@pytest.mark.parametrize("path", [LZ4, CASES], ids=lambda p: p.name)
def test_the_as_run_release_row_is_the_logs_own_metric(path):
    log, views = _views(path)
    for ex in log.executions_by_id():
        v = views[str(ex.id)]
        if not v.adaptive or not ex.shuffle_reads:
            continue
        rows = compare_releases(v).rows
        ran = [r for r in rows if r.own]
        assert len(ran) == 1 and ran[0].summary()["release"] == f"{log.spark_version} (as run)"
        o = ran[0].outcome
        assert o.evidence is Evidence.SPARK_METRIC and ran[0].summary()["evidence"] == "Spark's metric"
        logged = [s for s in o.shuffles if s.key.startswith("read-")]
        assert [s.partitions_after for s in logged] == [r.num_partitions for r in ex.shuffle_reads]
        assert [s.skewed for s in logged] == [r.skewed_partitions or 0 for r in ex.shuffle_reads]
        # every other row is an estimate and says so
        assert all(r.outcome.evidence is Evidence.ESTIMATE and "(estimate)" in r.summary()["release"]
                   for r in rows if not r.own)


def test_releases_as_run_row_says_40_to_4_on_each_side():
    """The defect: '4.3.0 (as run)' said 1 + 1 partitions where Spark read 40 -> 4 on each side,
    and 'skewed reducers split 2' beside 'skew splits ?'."""
    _, views = _views(LZ4)
    comp = compare_releases(views["2"])
    row = next(r for r in comp.rows if r.own).summary()
    assert row["partitions after AQE"] == "4 + 4"
    assert (row["skewed reducers split"], row["skew splits"]) == (1, 2)
    assert "the release it ran on, the estimate gives 1 + 1 partitions where Spark's metrics say 4 + 4" in comp.note


def test_cli_releases_labels_each_row(capsys):
    from aqe_core.cli import main

    assert main(["releases", str(LZ4), "--execution", "2"]) == 0
    out = capsys.readouterr().out
    assert "4.3.0 (as run)     [Spark's metric] partitions 4 + 4" in out
    assert "4.3.0 (estimate)   [estimate]" in out


def test_whatif_skew_as_run_is_sparks_metric():
    """The defect: 'Skewed partitions: 0 as run' while Spark's metrics report a split reducer."""
    _, views = _views(LZ4)
    v = views["2"]
    got = whatif(v, {"spark.sql.adaptive.skewJoin.skewedPartitionFactor": "2"})
    left = skew_sentence(v.shuffles[0], got.view.shuffles[0])
    assert left.startswith("Skewed partitions: 1 split as run (Spark's metric, 2 parts); ")
    assert "(estimate over the sizes after AQE)" in left
    assert skew_sentence(v.shuffles[1], got.view.shuffles[1]).startswith("Skewed partitions: 0 split as run")
    assert got.outcomes[0].summary_row()["skewed reducers split"] == 1
    assert got.outcomes[0].summary_row()["evidence"] == "Spark's metric"


def test_a_query_aqe_left_alone_says_why_in_the_logs_numbers(capsys):
    """The defect: no adaptive read gave an empty Partitions page, '0 partitions, 0 B' on What-if
    and every preset, and an explain with only its title."""
    _, views = _views(CASES)
    v = views["7"]
    planned = [s for s in v.shuffles if not s.adaptive_read]
    assert [s.partitions_after for s in planned] == [128] and planned[0].sizes_after
    assert len(planned[0].sizes_after) == 128
    why = planned[0].reasons[0].message
    assert "into 128 partitions" in why and "against an advisory size of 64 MiB" in why
    assert "coalescing is off (spark.sql.adaptive.coalescePartitions.enabled=false)" in why
    row = simulate_preset(v, ACTUAL).summary_row()
    assert row["partitions after AQE"] == 128 and row["largest partition"] != "0 B"
    # a preset that turns coalescing on estimates what it would do, labelled an estimate
    on = whatif(v, {"spark.sql.adaptive.coalescePartitions.enabled": "true"})
    assert on.outcomes[1].evidence is Evidence.ESTIMATE and on.outcomes[1].partitions_after < 128

    from aqe_core.cli import main
    assert main(["explain", str(CASES), "--execution", "7"]) == 0
    out = capsys.readouterr().out
    assert "shuffle node 3 [spark-metric]: 128 partitions read as planned (no adaptive read)" in out
    assert "coalescing is off" in out
    assert out.count("join: node ") == 3 and "BroadcastHashJoin, Inner, build right" in out
    assert "AQE changed a join" not in out  # (the joins were planned as broadcasts: the log's initial plan)


@pytest.mark.parametrize("execution", ["1", "2"])
def test_a_rebalance_read_on_a_plain_43_log_is_read_right(execution):
    """Spark split two reducers of the REBALANCE read (OptimizeSkewInRebalancePartitions, 10 parts
    in all); the lines are the rebalance rule's (split over the advisory size), not the skew
    join's 256 MiB threshold that said nothing here was skewed."""
    log, views = _views(CASES)
    (r,) = explain_views(list(views.values()), execution)["executions"][0]["reads"]
    assert r["rebalance"] and len(r["skewed_reducers"]) == 2 and r["skewed_parts_total"] == 10
    assert r["partitions_after"] == 13
    threshold = next(ln for ln in r["lines"] if ln["kind"] == "skew_threshold")
    assert threshold["value"] == 64 * 1024 and "rebalance split threshold" in threshold["label"]
    (sv,) = views[execution].shuffles
    over = [x for x in sv.sizes_after if x > threshold["value"]]
    assert len(over) == 3  # the coalesced ranges Spark kept over the threshold are not split parts


def test_a_straggler_names_what_can_help():
    """The defect: 'a read stage waits on one task' came with no fix, hint or next step."""
    rows = {r.query_id: r for r in triage(list(_views(CASES)[1].values()))}
    join, window = rows["10"], rows["11"]
    assert "straggler" in join.findings and "straggler" in window.findings
    assert join.next_step.startswith("skew-join handling is off (spark.sql.adaptive.skewJoin.enabled=false)")
    assert window.next_step.startswith("no AQE setting can split this read")
    assert "salt the hot key" in window.next_step
    assert join.to_dict()["next step"] == join.next_step


def test_a_reused_join_is_not_called_removed():
    """The dozen-join query runs its CTE four times; the final plan refers to the reused
    exchanges instead of repeating them. inspect's join changes count the joins below a reused
    exchange too, so they are the skew joins Spark's own final plan holds (its last
    SparkPlanInfo, which repeats reused subtrees), and none is 'removed'."""
    import io
    import json as _json

    import zstandard

    from aqe_core.readers.eventlog.loader import load
    from aqe_core.views.eventlog_summary import join_changes

    path = Path(__file__).resolve().parents[2] / "sample_logs" / "eventlogs" / "local-1795649029734.zstd"
    log = load(str(path))
    ex = next(e for e in log.executions.values() if e.description == "dozen-joins")
    changes = join_changes(ex)
    assert changes and not any(c.endswith("removed") for c in changes), changes
    last = None
    with zstandard.ZstdDecompressor().stream_reader(path.open("rb")) as raw:
        for line in io.TextIOWrapper(raw, encoding="utf-8"):
            if "SparkListenerSQLAdaptiveExecutionUpdate" in line:
                e = _json.loads(line)
                if e.get("executionId") == ex.id:
                    last = e["sparkPlanInfo"]
    stack, skew = [last], 0
    while stack:
        n = stack.pop()
        skew += n["nodeName"] == "SortMergeJoin(skew=true)"
        stack.extend(n.get("children") or [])
    assert sum(c.endswith("SortMergeJoin(skew=true)") for c in changes) == skew > 0


def test_a_read_left_as_planned_has_no_coalescing_target_in_sparks_voice():
    """q72-like ran with coalescing off: Spark aimed at no target there, so the target line our
    rules draw for its reads is an estimate; a coalesced read's target stays Spark's metric."""
    from aqe_core.model.evidence import Evidence
    from aqe_core.opening import load_source

    src = load_source(str(Path(__file__).resolve().parents[2] / "sample_logs" / "eventlogs" / "local-1795649029734.zstd"))
    by_name = {v.description: v for v in src.views}
    planned = [s for s in by_name["q72-like"].shuffles if not s.adaptive_read]
    coalesced = [s for s in by_name["dozen-joins"].shuffles if s.adaptive_read]
    assert planned and coalesced
    for shuffles, evidence in ((planned, Evidence.ESTIMATE), (coalesced, Evidence.SPARK_METRIC)):
        targets = [ln for s in shuffles for ln in s.lines if ln.kind == "coalesce_target"]
        assert targets and all(ln.evidence is evidence for ln in targets)
