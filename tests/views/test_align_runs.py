"""The plan fingerprint and the read alignment of two runs (issue 28)."""
from __future__ import annotations

from aqe_core import api
from aqe_core.model.plan import PlanNode
from aqe_core.views.align_runs import align_shuffles, plan_shape


def _plan(partitions: int, path: str, literal: int, op: str = "HashAggregate") -> PlanNode:
    scan = PlanNode(3, "FileScan parquet", f"FileScan parquet [k#{literal}L,v#9L] Location: InMemoryFileIndex[{path}]")
    filt = PlanNode(2, "Filter", f"Filter (isnotnull(v#9L) AND (v#9L > {literal}))", children=[scan])
    exchange = PlanNode(1, "Exchange", f"Exchange hashpartitioning(k#{literal}L, {partitions}), ENSURE_REQUIREMENTS,"
                                       f" [plan_id={literal * 3}]", children=[filt])
    return PlanNode(0, op, f"{op}(keys=[k#{literal}L], functions=[count(1)])", children=[exchange])


def test_the_shape_survives_literals_ids_paths_and_partition_counts():
    a = _plan(200, "file:/data/2026-11-25/events", 10)
    b = _plan(400, "s3a://bucket/2026-11-26/events", 20)
    assert plan_shape(a) == plan_shape(b)
    assert plan_shape(a) != plan_shape(_plan(200, "file:/data/2026-11-25/events", 10, op="SortAggregate"))


def test_wrappers_of_an_executed_plan_do_not_change_the_shape():
    plain = _plan(200, "/tmp/t", 1)
    wrapped = PlanNode(9, "WholeStageCodegen (1)", "WholeStageCodegen (1)", children=[plain])
    assert plan_shape(wrapped) == plan_shape(plain)


def test_each_read_pairs_with_the_read_in_its_place():
    views = api.load_source(str(api.SAMPLES_DIR / "captures" / "4.3.0-skew_join_inner.json.gz")).views
    pairs = align_shuffles(views[0], views[2])  # the skew split and the run with skew join off
    assert [(a.side, b.side) for a, b in pairs] == [("left", "left"), ("right", "right")]


def test_a_query_aqe_skipped_in_one_run_says_so_and_why():
    from dataclasses import replace

    from aqe_core.views.diff_runs import diff_query

    view = api.load_source(str(api.SAMPLES_DIR / "captures" / "4.3.0-skew_join_inner.json.gz")).views[0]
    off = replace(view, adaptive=False, adaptive_reason="spark.sql.adaptive.enabled is false")
    q = diff_query(view, off)
    assert not q.causes
    assert q.sentence == "AQE applied in run a only: in run b, spark.sql.adaptive.enabled is false"
