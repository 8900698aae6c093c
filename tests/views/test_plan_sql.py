"""Spark's plan text written back as SQL (issue 42): what an event log's user runs, and what
``hot-keys --spark`` runs, must quote names and type literals the way the plan's types say."""
from __future__ import annotations

import pytest

from aqe_core.views.hot_keys import key_display_names
from aqe_core.views.plan_sql import NotSQL, expression_sql, project_aliases, read_schema

TYPES = {"s": "string", "k": "bigint", "day": "date", "ts": "timestamp"}


@pytest.mark.parametrize("text, sql", [
    ("(s#3 = x y)", "(`s` = 'x y')"),
    ("(s#3 = it's)", "(`s` = 'it\\'s')"),
    ("(s#3 = a AND b)", "(`s` = 'a AND b')"),  # a literal with an operator in it
    ("(day#5 = 2024-02-29)", "(`day` = DATE '2024-02-29')"),
    ("(ts#6 >= 2024-01-01 00:00:00)", "(`ts` >= TIMESTAMP '2024-01-01 00:00:00')"),
    ("k#1L IN (1,2,3)", "`k` IN (1, 2, 3)"),
    ("NOT s#1 IN (a,b c)", "NOT `s` IN ('a', 'b c')"),
    ("(isnotnull(k#1L) AND (k#1L <=> null))", "(`k` IS NOT NULL AND (`k` <=> NULL))"),
    ("cast(k#1L as int)", "CAST(`k` AS int)"),
    ("coalesce(k#1L, 0)", "coalesce(`k`, 0)"),
])
def test_plan_text_reads_as_sql(text, sql):
    assert expression_sql(text, TYPES) == sql


def test_what_cannot_be_read_is_refused_not_guessed():
    with pytest.raises(NotSQL):
        expression_sql("(k#1L = seven)", TYPES)  # a word beside a bigint is no literal of it


def test_a_made_up_grouping_name_is_shown_as_its_expression():
    aliases = project_aliases("Project [p#2, substr(s#1, 1, 3) AS _groupingexpression#10, upper(s#1) AS u#11]")
    assert aliases == {"10": "substr(s#1, 1, 3)", "11": "upper(s#1)"}
    assert key_display_names(["_groupingexpression#10", "u#11"], aliases) == ["substr(s, 1, 3)", "u"]
    assert read_schema("FileScan parquet t[s#1] ReadSchema: struct<s:string,d:decimal(10,2)>") == {
        "s": "string", "d": "decimal(10,2)"}


def test_filters_spark_made_at_run_time_are_left_out_and_said_so():
    from aqe_core.model.plan import PlanNode
    from aqe_core.views.hot_keys import SkewedShuffle, cluster_code
    from aqe_core.views.query import ShuffleView

    scan = PlanNode(3, "Scan parquet spark_catalog.default.t",
                    "FileScan parquet spark_catalog.default.t[k#1L] ReadSchema: struct<k:bigint>")
    filt = PlanNode(2, "Filter", "Filter ((isnotnull(k#1L) AND (k#1L > 3)) AND might_contain(Subquery"
                    " scalar-subquery#9, [id=#5], xxhash64(k#1L, 42)))", children=[scan])
    exchange = PlanNode(1, "Exchange", "Exchange hashpartitioning(k#1L, 8), ENSURE_REQUIREMENTS, [plan_id=4]",
                        children=[filt])
    sv = ShuffleView.__new__(ShuffleView)
    sv.node_id, sv.stage_id, sv.join, sv.rebalance = 1, None, None, False
    code = cluster_code(SkewedShuffle(sv, None, {5: 2}), exchange)
    assert code is not None
    assert code.side_sql == "SELECT * FROM `spark_catalog`.`default`.`t` WHERE `k` IS NOT NULL AND (`k` > 3)"
    assert code.key_sql == ["`k`"] and "run time" in code.why_not and "run time" in code.note
