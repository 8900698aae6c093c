"""Aligning real pairs of runs (issue 39): literals as Spark prints them, joins that changed
strategy, and broadcast build sides paired through the join they feed.

The pairs are recorded on PySpark 4.3 by ``tools/record_run_pairs.py`` (``tests/fixtures/run_pairs/``):
each run as the recorder's capture (``.json.gz``, exact sizes) and Spark's own event log (``.zstd``).
"""
from __future__ import annotations

from functools import lru_cache
from pathlib import Path
from typing import Optional

import pytest

from aqe_core import api
from aqe_core.model.plan import PlanNode
from aqe_core.views.align_runs import align_queries, align_shuffles, fingerprint, normal_text, plan_shape
from aqe_core.views.query import QueryView, ShuffleView

PAIRS = Path(__file__).resolve().parents[1] / "fixtures" / "run_pairs"
NEW_PAIRS = ("literals", "join_strategy", "broadcast_build")
KINDS = (".zstd", ".json.gz")


@lru_cache(maxsize=None)
def _views(pair: str, run: str, ext: str) -> tuple[QueryView, ...]:
    return tuple(api.load_source(str(PAIRS / pair / f"{run}{ext}")).views)


def _plan_text(view: QueryView) -> str:
    plan = view.initial_plan or view.final_plan
    return "\n".join(n.description or "" for n in plan.walk()) if plan is not None else ""


@pytest.mark.parametrize("ext", KINDS)
@pytest.mark.parametrize("pair", NEW_PAIRS)
def test_every_query_of_the_pair_aligns_in_order(pair, ext):
    a, b = _views(pair, "a", ext), _views(pair, "b", ext)
    matches, only_a, only_b = align_queries(a, b)
    assert (only_a, only_b) == ([], [])
    assert len(matches) == len(a) == len(b)
    assert [m.a.query_id for m in matches] == [m.b.query_id for m in matches]  # the job ran in the same order


@pytest.mark.parametrize("ext", KINDS)
def test_other_literals_keep_the_precise_shape(ext):
    a, b = _views("literals", "a", ext), _views("literals", "b", ext)
    texts_a, texts_b = "\n".join(map(_plan_text, a)), "\n".join(map(_plan_text, b))
    # what the runs differ by, as Spark printed it: unquoted strings, an IN list that became an
    # INSET, a one-item NOT IN that became an equality, other dates, timestamps and decimals
    for printed in ("= zz)", "IN (1,2,3)", "2026-05-25", "1999-01-01 00:00:00", "12.50", "name-7", "dims-a.parquet",
                    "THEN gold ELSE silver END", "yyyy-MM,", "concat(tag#96, -x)", "n/a)"):
        assert printed in texts_a and printed not in texts_b
    for printed in ("= yy)", "INSET 10, 11, 12, 13, 14, 15, 4", "2026-03-01", "2001-06-15 12:30:00", "7.25", "= xy z)",
                    "THEN platinum ELSE bronze END", "yyyy,", "concat(tag#96, _y)", "none)"):
        assert printed in texts_b and printed not in texts_a
    matches, _, _ = align_queries(a, b)
    assert {m.how for m in matches} <= {"shape and SQL text", "plan shape"}
    assert all(fingerprint(m.a)[0] == fingerprint(m.b)[0] for m in matches)


@pytest.mark.parametrize("ext", KINDS)
def test_a_join_that_changed_strategy_aligns_join_strategies_aside(ext):
    for pair in ("join_strategy", "broadcast_build"):
        a, b = _views(pair, "a", ext), _views(pair, "b", ext)
        joined = [m for m in align_queries(a, b)[0] if "Join" in _plan_text(m.a)]
        assert joined and all("join strategies aside" in m.how for m in joined)
        for m in joined:
            assert "SortMergeJoin" in _plan_text(m.a) and "BroadcastHashJoin" not in _plan_text(m.a)
            assert "BroadcastHashJoin" in _plan_text(m.b) and "SortMergeJoin" not in _plan_text(m.b)
            fa, fb = fingerprint(m.a), fingerprint(m.b)
            assert fa[0] != fb[0] and fa[2] == fb[2]


def _exchange_below(view: QueryView, s: ShuffleView) -> Optional[PlanNode]:
    """The shuffle's exchange in the final plan (event logs: below the read with its node id)."""
    plan = view.final_plan
    node = next((n for n in plan.walk() if n.id == s.node_id), None) if plan is not None else None
    while node is not None and not (node.name or "").endswith("Exchange"):
        node = node.children[0] if node.children else None
    return node


def _pairs(pair: str, ext: str) -> list[tuple[str, Optional[ShuffleView], Optional[ShuffleView], QueryView, QueryView]]:
    matches, _, _ = align_queries(_views(pair, "a", ext), _views(pair, "b", ext))
    return [(m.a.description, sa, sb, m.a, m.b) for m in matches for sa, sb in align_shuffles(m.a, m.b)]


@pytest.mark.parametrize("pair", ("join_strategy", "broadcast_build"))
def test_each_shuffle_pairs_with_the_one_writing_the_same_rows_event_logs(pair):
    """Spark's own exchanges say which shuffle is which: the same map side (the plan below the
    exchange, join strategies aside), and where no join is below it (the same data), the same
    bytes written."""
    paired = 0
    for _q, sa, sb, va, vb in _pairs(pair, ".zstd"):
        if sa is None or sb is None:
            continue
        ea, eb = _exchange_below(va, sa), _exchange_below(vb, sb)
        assert ea is not None and eb is not None
        assert plan_shape(ea, True) == plan_shape(eb, True)
        if "Join" not in plan_shape(ea, True):
            written = [e.metric("shuffle bytes written") for e in (ea, eb)]
            assert written[0] and written[1] and written[0].get("total") == written[1].get("total")
        paired += 1
    assert paired >= (1 if pair == "join_strategy" else 8)


def test_each_build_side_pairs_with_the_one_writing_the_same_bytes_captures():
    """The captures' exact sizes: a build side's aggregate wrote the same bytes in both runs."""
    rights = [(sa, sb) for _q, sa, sb, _va, _vb in _pairs("broadcast_build", ".json.gz")
              if sa is not None and sa.side == "right"]
    assert len(rights) == 5  # one of them read as planned in run a (its exact map statistics)
    for sa, sb in rights:
        assert sb is not None and sa.sizes_before and sb.sizes_before
        assert sum(sa.sizes_before) == sum(sb.sizes_before)


@pytest.mark.parametrize("ext", KINDS)
def test_a_broadcast_build_side_pairs_with_the_sort_merge_side_of_the_same_join(ext):
    """Run b broadcasts shuffled aggregates; run a sort-merges them: each aggregate's read pairs
    with the right side of the same join in run a (the probe side's shuffle has no partner)."""
    for q, sa, sb, _va, vb in _pairs("broadcast_build", ext):
        if sa is not None and sa.join is not None:
            assert sa.join == "SortMergeJoin"
            assert (sb is None) == (sa.side == "left"), (q, sa.label, sb and sb.label)
    rights = [(sa, sb) for _q, sa, sb, _va, _vb in _pairs("broadcast_build", ext) if sa is not None and sa.side == "right"]
    # every source lists the shuffles read as planned too (one build side's, in run a)
    assert len(rights) == 5 and all(sb is not None and sb.join is None for _sa, sb in rights)


def test_literal_forms_normalise_alike():
    same = [("Filter NOT (tag#12 = zz)", "Filter NOT tag#3 IN (ab c,x)"),
            ("Filter cast(k#1 as string) IN (1,2,3)", "Filter cast(k#9 as string) INSET 1, 10, 11, 12, 2"),
            ("Filter (d#2 >= 2026-11-25)", "Filter (d#4 >= 1999-01-01)"),
            ("Filter (ts#2 < 1999-01-01 00:00:00)", "Filter (ts#7 < 2001-06-15 12:30:00)"),
            ("Filter (cast(v#5 as decimal(10,2)) > 12.50)", "Filter (cast(v#6 as decimal(10,2)) > 7.25)"),
            ("Filter StartsWith(name#4, name-1)", "Filter StartsWith(name#8, nom)"),
            ("FileScan parquet [a#1] Location: InMemoryFileIndex(1 paths)[file:/tmp/x-a/dims.parquet]",
             "FileScan parquet [a#2] Location: InMemoryFileIndex(1 paths)[file:/tmp/y-b/dims.parquet]")]
    for x, y in same:
        assert normal_text(x) == normal_text(y), (x, y)
    # a column is not a literal: an operand with an attribute reference stays
    assert normal_text("Filter (tag#12 = name#3)") != normal_text("Filter (tag#12 = zz)")


def _join_plan(strategy: str, literal: str = "zz") -> PlanNode:
    """A join of two filtered scans as the planner draws it under ``strategy``."""
    left = PlanNode(3, "Filter", f"Filter NOT (tag#1 = {literal})", children=[PlanNode(4, "Range", "Range (0, 10, step=1, splits=2)")])
    right = PlanNode(5, "Range", "Range (0, 5, step=1, splits=1)")
    if strategy == "BroadcastHashJoin":
        kids = [left, PlanNode(6, "BroadcastExchange", "BroadcastExchange HashedRelationBroadcastMode(List(input[0, bigint, true]),false), [plan_id=9]", children=[right])]
        desc = "BroadcastHashJoin [k#1L], [k#2L], Inner, BuildRight, false, false"
    else:
        kids = [PlanNode(10 + i, "Sort", f"Sort [k#{i + 1}L ASC NULLS FIRST], false, 0", children=[
            PlanNode(20 + i, "Exchange", f"Exchange hashpartitioning(k#{i + 1}L, 40), ENSURE_REQUIREMENTS, [plan_id={30 + i}]",
                     children=[side])]) for i, side in enumerate((left, right))]
        desc = f"{strategy} [k#1L], [k#2L], Inner" + (", BuildRight" if strategy == "ShuffledHashJoin" else "")
    join = PlanNode(2, strategy, desc, children=kids)
    return PlanNode(0, "AdaptiveSparkPlan", "AdaptiveSparkPlan isFinalPlan=false", children=[
        PlanNode(1, "HashAggregate", "HashAggregate(keys=[], functions=[count(1)])", children=[join])])


def test_the_precise_shape_wins_over_the_strategy_neutral_one():
    from dataclasses import replace

    base = _views("join_strategy", "a", ".zstd")[0]
    smj, bhj, shj = (replace(base, query_id=q, initial_plan=_join_plan(s, lit), final_plan=None, model=None)
                     for q, s, lit in (("1", "SortMergeJoin", "zz"), ("2", "BroadcastHashJoin", "yy"), ("3", "ShuffledHashJoin", "x y")))
    assert len({fingerprint(v)[0] for v in (smj, bhj, shj)}) == 3 and len({fingerprint(v)[2] for v in (smj, bhj, shj)}) == 1
    matches, only_a, only_b = align_queries([smj], [bhj, smj])
    assert [(m.b.query_id, m.how) for m in matches] == [("1", "plan shape")] and only_b == [bhj]
    matches, _, _ = align_queries([smj, shj], [bhj])
    assert [(m.a.query_id, m.how) for m in matches] == [("1", "plan shape, join strategies aside")]
    # a global sort (ORDER BY) is the query's, not a strategy's: it stays in the neutral shape
    ordered = PlanNode(0, "Sort", "Sort [k#1L ASC NULLS FIRST], true, 0", children=[_join_plan("SortMergeJoin")])
    assert plan_shape(ordered, True) != plan_shape(_join_plan("SortMergeJoin"), True)


def test_normal_text_examples_hold():
    import doctest

    from aqe_core.views import plan_literals

    result = doctest.testmod(plan_literals)
    assert result.failed == 0 and result.attempted >= 10
