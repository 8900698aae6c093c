"""Executions grouped by query (issue 41), held to what Spark wrote in a real log.

tests/fixtures/eventlogs/repeated is a real PySpark 4.3.0 log (tools/record_repeated_queries.py):
one join-and-aggregate query run 20 times over growing data, AQE broadcasting the join while
dim's shuffle is under spark.sql.adaptive.autoBroadcastJoinThreshold and sort-merging it after,
two other queries interleaved and the temporary views of each run. Every expected number here
is read from the raw events (SQLExecutionStart descriptions, the final plans of
SQLAdaptiveExecutionUpdate, task-end accumulables, the driver's accumulator updates), never
from our own code.
"""
from __future__ import annotations

import json
from collections import Counter
from functools import lru_cache
from pathlib import Path
from typing import Any, Iterator, Optional

import zstandard

from aqe_core.opening import load_source
from aqe_core.views.execution_summary import ExecutionSummary, JoinFacts, ReadFacts, batch_of, log_summaries, summary_of
from aqe_core.views.query_groups import MAX_CHANGES, QueryGrouper, group_executions, group_views
from aqe_core.readers.eventlog import load

ROOT = Path(__file__).resolve().parents[2]
LOG = next((ROOT / "tests" / "fixtures" / "eventlogs" / "repeated").glob("*.zstd"))
STREAMING = next((ROOT / "tests" / "fixtures" / "eventlogs" / "repeated" / "streaming").glob("*.zstd"))


def _events(path: Path = LOG) -> Iterator[dict[str, Any]]:
    with path.open("rb") as f, zstandard.ZstdDecompressor().stream_reader(f, read_across_frames=True) as raw:
        for line in raw.read().decode().splitlines():
            if line.strip():
                yield json.loads(line)


@lru_cache(maxsize=2)
def raw(path: Path = LOG) -> dict[str, Any]:
    """Per execution id: its description, final plan (sparkPlanInfo), and each accumulator's
    total (task-end updates and the driver's updates); the app's Spark properties."""
    desc: dict[int, str] = {}
    final: dict[int, dict] = {}
    accs: Counter = Counter()
    driver: dict[int, dict[int, int]] = {}
    props: dict[str, str] = {}
    root: dict[int, Optional[int]] = {}
    for e in _events(path):
        kind = e["Event"]
        if kind.endswith("SparkListenerSQLExecutionStart"):
            desc[e["executionId"]] = e["description"]
            final[e["executionId"]] = e["sparkPlanInfo"]
            root[e["executionId"]] = e.get("rootExecutionId")
        elif kind.endswith("SparkListenerSQLAdaptiveExecutionUpdate"):
            final[e["executionId"]] = e["sparkPlanInfo"]
        elif kind.endswith("SparkListenerDriverAccumUpdates"):
            driver.setdefault(e["executionId"], {}).update({a: v for a, v in e["accumUpdates"]})
        elif kind == "SparkListenerTaskEnd":
            for a in e["Task Info"].get("Accumulables", []):
                if isinstance(a.get("Update"), (int, str)) and str(a["Update"]).lstrip("-").isdigit():
                    accs[a["ID"]] += int(a["Update"])
        elif kind == "SparkListenerEnvironmentUpdate":
            props = dict(e["Spark Properties"])
    return {"desc": desc, "final": final, "accs": accs, "driver": driver, "props": props, "root": root}


def _walk(node: dict) -> Iterator[dict]:
    stack = [node]
    while stack:
        n = stack.pop()
        yield n
        stack.extend(reversed(n.get("children", [])))


def _join(plan: dict) -> Optional[dict]:
    return next((n for n in _walk(plan) if n["nodeName"].endswith("Join")), None)


def _executions(prefix: str) -> list[int]:
    return sorted(i for i, d in raw()["desc"].items() if d.startswith(prefix))


@lru_cache(maxsize=1)
def groups():
    return {g.name.split(",")[0]: g for g in group_views(load_source(str(LOG)).views)}


def test_the_groups_are_the_queries_the_log_ran():
    """Each query the recording ran is one group, with exactly the executions whose
    SQLExecutionStart description names it."""
    got = groups()
    assert set(got) == {"daily join", "dim lookup", "row count", "setup views"}
    for name, g in got.items():
        ids = _executions(name)
        assert g.execution_ids == [str(i) for i in ids]
        assert g.count == len(ids)
    assert got["daily join"].count == 20 and got["dim lookup"].count == 5 and got["row count"].count == 2


def test_a_join_that_flips_strategy_stays_in_its_group_and_the_distribution_is_spark_s():
    """The plan shape with join strategies aside keeps broadcast and sort-merge runs of the
    join together; the strategy counts are the final plans' join operators."""
    finals = raw()["final"]
    spark = Counter(_join(finals[i])["nodeName"] for i in _executions("daily join"))
    assert set(spark) == {"BroadcastHashJoin", "SortMergeJoin"}  # the log has both
    d = groups()["daily join"].decisions[("join", "Inner join on [k] = [k]")]
    assert dict(d.counts) == dict(spark)


def test_the_change_sentence_names_the_execution_where_spark_s_plan_changed():
    """The first execution whose final plan has a sort-merge join, after one with a broadcast
    join, is named, with the size of the side it could broadcast (the exchange's "data size" in
    the task events) and the threshold the application set."""
    finals, accs, props = raw()["final"], raw()["accs"], raw()["props"]
    ids = _executions("daily join")
    kinds = [_join(finals[i])["nodeName"] for i in ids]
    at = next(k for k in range(1, len(ids)) if kinds[k] != kinds[k - 1])
    changed, before = ids[at], ids[at - 1]
    smj = _join(finals[changed])
    right = next(n for n in _walk(smj["children"][1]) if n["nodeName"] == "Exchange")
    size = accs[next(m["accumulatorId"] for m in right["metrics"] if m["name"] == "data size")]
    threshold = props["spark.sql.adaptive.autoBroadcastJoinThreshold"]
    assert threshold == "48k"
    sentences = [c.sentence for c in groups()["daily join"].changes() if c.kind == "join"]
    assert sentences == [
        f"From execution {changed} the Inner join on [k] = [k] is a sort-merge join (a broadcast hash join in"
        f" execution {before}): the smaller side it could broadcast (right) wrote {size:,} B (Spark's metric"
        f" 'data size'), over spark.sql.adaptive.autoBroadcastJoinThreshold = {48 * 1024:,} B."]
    assert size > 48 * 1024


def test_partitions_after_aqe_are_the_reads_own_metric():
    """The aggregate's read: its "number of partitions" as the driver updated it, execution by
    execution, counted; and each change of it is a sentence at the execution where it changed."""
    finals, driver = raw()["final"], raw()["driver"]
    per_execution = []
    for i in _executions("daily join"):
        read = next(n for n in _walk(finals[i]) if n["nodeName"] == "AQEShuffleRead"
                    and "grp" in json.dumps(n["children"][0]))
        acc = next(m["accumulatorId"] for m in read["metrics"] if m["name"] == "number of partitions")
        per_execution.append((i, driver[i][acc]))
    d = groups()["daily join"].decisions[("partitions", "hashpartitioning(grp)")]
    assert dict(d.counts) == dict(Counter(n for _, n in per_execution))
    flips = [(i, n, p) for (i, n), (_, p) in zip(per_execution[1:], per_execution) if n != p]
    assert [(c.execution, c.after, c.before) for c in d.changes] == [(str(i), n, p) for i, n, p in flips]
    assert flips and all(f"From execution {i} " in c.sentence for (i, _n, _p), c in zip(flips, d.changes))


def test_summaries_stream_from_the_log_and_group_the_same():
    """The reader's path (one execution's view at a time) groups as the source's views do."""
    streamed = group_executions(log_summaries(load(str(LOG))))
    assert [(g.name, g.count, g.execution_ids) for g in streamed] == \
        [(g.name, g.count, g.execution_ids) for g in sorted(groups().values(), key=lambda g: -g.count)]
    assert [d.to_dict() for d in streamed[1].ordered_decisions()] == \
        [d.to_dict() for d in groups()["daily join"].ordered_decisions()]


def test_span_is_first_start_to_last_end():
    g = groups()["row count"]
    src = load_source(str(LOG))
    views = [src.view(x) for x in g.execution_ids]
    assert g.first_start_ms == min(v.start_ms for v in views)
    assert g.last_end_ms == max(v.end_ms for v in views)


def test_a_streaming_batch_id_is_named_and_change_points_are_bounded():
    """A micro-batch's description names its batch (Spark's getBatchDescriptionString); a
    decision that changes at every execution keeps MAX_CHANGES change points and counts all."""
    desc = "agg\nid = 1a2b\nrunId = 3c4d\nbatch = {}"
    grouper = QueryGrouper()
    for i in range(MAX_CHANGES + 10):
        grouper.add(ExecutionSummary(str(5000 + i), desc.format(5000 + i), "q", batch_of(desc.format(5000 + i)),
                                     reads=(ReadFacts("hashpartitioning(k)", 200, 1 + i, 0),),
                                     joins=(JoinFacts("Inner join on [k] = [k]", "SortMergeJoin"),)))
    (g,) = grouper.groups()
    d = g.decisions[("partitions", "hashpartitioning(k)")]
    assert d.changed == MAX_CHANGES + 9 and len(d.changes) == MAX_CHANGES
    assert d.changes[0].sentence.startswith("From execution 5,001 (batch 5,001) the read of the shuffle on")
    assert ("join", "Inner join on [k] = [k]") in g.decisions and not g.decisions[("join", "Inner join on [k] = [k]")].changes


def test_summary_of_a_view_holds_no_plan():
    src = load_source(str(LOG))
    s = summary_of(src.view(groups()["daily join"].execution_ids[0]))
    assert all(isinstance(getattr(s, f), (str, int, bool, tuple, type(None))) for f in s.__dataclass_fields__)
    assert s.joins[0].strategy == "BroadcastHashJoin" and s.joins[0].side == "right"


def test_the_report_of_a_repeated_query_has_its_executions_and_changes():
    from aqe_core.report import build_report

    g = groups()["daily join"]
    src = load_source(str(LOG))
    html = build_report(src.view(g.execution_ids[-1]), source_label="repeated", query_group=g)
    join_change = next(c for c in g.changes() if c.kind == "join")
    assert "This query across the application" in html and "20 executions of this query" in html
    assert join_change.sentence.replace("'", "&#x27;") in html
    assert "This query across" not in build_report(src.view(g.execution_ids[-1]), source_label="repeated")


def test_the_group_key_is_compare_runs_fingerprint_join_strategies_aside():
    from aqe_core.views.align_runs import fingerprint, plan_shape, strategy_free_shape

    views = load_source(str(LOG)).views
    assert all(strategy_free_shape(v) == fingerprint(v)[2] for v in views)
    daily = [v for v in views if v.description.startswith("daily join")]
    assert len({fingerprint(v)[2] for v in daily}) == 1
    # the planner chose the same strategy each run (AQE flipped it), so the initial shapes agree; the
    # final plans (all a source without the initial one has) differ in the strategy, and only that
    assert len({plan_shape(v.final_plan) for v in daily}) > 1 == len({plan_shape(v.final_plan, True) for v in daily})


def test_a_streaming_query_s_micro_batches_are_one_group_named_by_batch():
    """Real micro-batches (Spark's own descriptions ``name / id / runId / batch = N``): one group
    of every batch's executions; the roots (isFinalPlan=false) are not counted; the change is
    named at the first sub-execution whose final plan sort-merges, with its batch id from the
    description and the batch side's shuffle size from the task events."""
    r = raw(STREAMING)
    batches = sorted(i for i, d in r["desc"].items() if "\nbatch = " in d)
    (g,) = [g for g in group_views(load_source(str(STREAMING)).views) if g.count > 2 and "streaming" in g.name]
    assert g.execution_ids == [str(i) for i in batches] and g.name == "joined_rows (streaming query, from batch 0)"
    subs = [i for i in batches if r["root"][i] not in (None, i)]
    assert g.not_final == len(batches) - len(subs)
    kinds = [_join(r["final"][i])["nodeName"] for i in subs]
    at = next(k for k in range(1, len(subs)) if kinds[k] != kinds[k - 1])
    changed, before = subs[at], subs[at - 1]
    batch = int(r["desc"][changed].rsplit("batch = ", 1)[1])
    smj = _join(r["final"][changed])
    left = next(n for n in _walk(smj["children"][0]) if n["nodeName"] == "Exchange")
    size = r["accs"][next(m["accumulatorId"] for m in left["metrics"] if m["name"] == "data size")]
    assert r["props"]["spark.sql.adaptive.autoBroadcastJoinThreshold"] == "20k" and size > 20 * 1024
    before_batch = int(r["desc"][before].rsplit("batch = ", 1)[1])
    assert [c.sentence for c in g.changes() if c.kind == "join"] == [
        f"From execution {changed} (batch {batch}) the Inner join on [k] = [k] is a sort-merge join (a broadcast hash"
        f" join in execution {before} (batch {before_batch})): the smaller side it could broadcast (left) wrote"
        f" {size:,} B (Spark's metric 'data size'), over spark.sql.adaptive.autoBroadcastJoinThreshold = {20 * 1024:,} B."]
    d = g.decisions[("join", "Inner join on [k] = [k]")]
    assert dict(d.counts) == dict(Counter(kinds))


def test_a_side_s_size_is_a_shuffle_stage_s_only_through_operators_that_keep_its_statistics():
    from aqe_core.model.plan import PlanNode
    from aqe_core.views.execution_summary import _shuffle_bytes, _total

    def exchange() -> PlanNode:
        return PlanNode(9, "Exchange", "Exchange hashpartitioning(k#1L, 8)", [{"name": "data size", "total": 4096}], [])

    staged = PlanNode(1, "Sort", "Sort [k#1L ASC NULLS FIRST], false, 0", [], [
        PlanNode(2, "AQEShuffleRead", "AQEShuffleRead coalesced", [], [
            PlanNode(3, "ShuffleQueryStage", "ShuffleQueryStage 0", [], [exchange()])])])
    aggregated = PlanNode(1, "Sort", "Sort [k#1L ASC NULLS FIRST], false, 0", [], [
        PlanNode(2, "SortAggregate", "SortAggregate(key=[k#1L])", [], [exchange()])])
    assert _shuffle_bytes(staged, _total) == 4096 and _shuffle_bytes(aggregated, _total) is None


def test_groups_of_the_same_name_are_named_apart_by_what_they_decide():
    """The recorded streaming job's foreachBatch runs a stream-static join and an aggregation per
    micro-batch, both described by the stream's id: two groups, two names, each the description
    and the subject of its first decision; the same names from the views and the listing."""
    from aqe_core.readers.eventlog import load
    from aqe_core.views.execution_summary import log_summaries
    from aqe_core.views.query_listing import QueryListing

    path = next((ROOT / "tests" / "fixtures" / "eventlogs" / "streaming" / "4.3.0" / "plain").iterdir())
    groups = group_executions(log_summaries(load(str(path))))
    assert len(groups) == 2 and groups[0].given_name == groups[1].given_name
    assert [g.name for g in groups] == [f"{groups[0].given_name}: read of the shuffle on hashpartitioning(id)",
                                        f"{groups[0].given_name}: Inner join on [cast(k as bigint)] = [k]"]
    listing = QueryListing()
    load(str(path), hand_over=listing)
    assert [g.name for g in listing.groups()] == [g.name for g in listing.groups()] == [g.name for g in groups]
