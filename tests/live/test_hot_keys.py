"""Which key is skewed (issue 42), against real Spark runs whose hot keys the tests made.

Each test builds tiny temporary views over ``range`` where the hot keys and their row counts are
known by construction, runs the join on Spark (the capture records what AQE did), and asks
``hot-keys`` for the keys of every skewed reducer. The named keys must be the keys the test made,
their rows the rows it generated, and their reducer the one Spark split (the read's
``PartialReducerPartitionSpec``s) -- and, independently, ``pmod(hash(key), n)`` as PySpark's
``F.hash`` computes it.
"""
from __future__ import annotations

import argparse
from typing import Any

import pytest

from aqe_core.model.specs import PartialReducerPartitionSpec
from aqe_core.views.from_capture import views_from_capture

N = 20  # shuffle partitions
ROWS, MAPS = 20_000, 8
CONF = {
    "spark.sql.adaptive.enabled": "true",
    "spark.sql.shuffle.partitions": str(N),
    "spark.sql.adaptive.advisoryPartitionSizeInBytes": "16k",
    "spark.sql.adaptive.coalescePartitions.minPartitionSize": "1k",
    "spark.sql.adaptive.skewJoin.skewedPartitionThresholdInBytes": "16k",
    "spark.sql.autoBroadcastJoinThreshold": "-1",
}


def _run(runtime: Any, sql: str, views: dict[str, str]) -> Any:
    from aqe_core.live.runner import Runner

    cap = Runner(runtime, trusted=True).rerun(sql, [("test", CONF)], setup=list(views.values()),
                                               run_info={"views": views})
    return cap


def _doc(cap: Any) -> list[dict[str, Any]]:
    from aqe_core.cli.hot_keys import hot_keys_doc

    views, _ = views_from_capture(cap)
    args = argparse.Namespace(top=5, time_limit=120.0, trusted=False, master=None, no_spark=False)
    return hot_keys_doc(views, args)  # untrusted: the views and the query pass the SQL guard


def _split_reducers(cap: Any) -> dict[int, set[int]]:
    """shuffle id -> the reducers Spark split (its adaptive reads' partial-reducer specs)."""
    out: dict[int, set[int]] = {}
    for r in cap.queries[0].reads:
        for s in r.specs:
            if isinstance(s, PartialReducerPartitionSpec):
                out.setdefault(r.shuffle_id, set()).add(s.reducer_index)
    return out


def _reducer_by_f_hash(spark: Any, value_sql: str) -> int:
    """The reducer of one key as PySpark's ``F.hash`` (Murmur3, seed 42) and pmod compute it."""
    from pyspark.sql import functions as F

    return int(spark.sql(f"SELECT {value_sql} AS k").select(F.pmod(F.hash("k"), F.lit(N))).first()[0])


def _hot_entry(doc: list[dict[str, Any]], cap: Any) -> dict[str, Any]:
    split = _split_reducers(cap)
    entries = [e for e in doc if e["reducer"] in split.get(e["shuffle"], set())]
    assert entries, f"no entry for a reducer Spark split: {split}, {[(e['shuffle'], e['reducer']) for e in doc]}"
    assert len(entries) == 1, entries
    e = entries[0]
    assert e["error"] is None and e["verified"], e["checks"]
    assert e["rows_evidence"] == "exact"
    return e


#: an incompressible column the queries read, so a reducer's bytes follow its rows (repeated rows
#: of a hot key would compress to almost nothing)
PAYLOAD = "sha2(CAST(id AS STRING), 256) AS p"


def _facts(hot_sql: str, pct: int = 30, extra: str = "") -> str:
    return (f"CREATE TEMPORARY VIEW facts AS SELECT id, CASE WHEN id % 100 < {pct} THEN {hot_sql} "
            f"ELSE (id * 7919) % 500 + 1000 END AS k{extra}, {PAYLOAD} FROM range(0, {ROWS}, 1, {MAPS})")


DIMS = "CREATE TEMPORARY VIEW dims AS SELECT id % 2000 AS k, id AS d FROM range(0, 2000, 1, 2)"


@pytest.mark.slow
def test_one_hot_key_is_named_in_the_reducer_spark_split(spark_runtime):
    cap = _run(spark_runtime, "SELECT count(*), sum(d), max(f.p) FROM facts f JOIN dims x ON f.k = x.k",
               {"facts": _facts("7"), "dims": DIMS})
    e = _hot_entry(_doc(cap), cap)
    assert e["keys"][0]["key"] == 7
    assert e["keys"][0]["rows"] == ROWS * 30 // 100  # the rows the view gave key 7
    assert e["reducer"] == _reducer_by_f_hash(spark_runtime.spark, "CAST(7 AS BIGINT)")
    assert {c["name"] for c in e["checks"]} >= {"partitions", "rows", "heaviest"}
    assert any(f["kind"] == "salting" and "k <=> 7" in f["code"] for f in e["fixes"])
    assert any(f["kind"] == "split_note" for f in e["fixes"])


@pytest.mark.slow
def test_two_hot_keys_in_one_reducer_are_both_named(spark_runtime):
    from aqe_core.live.workloads import same_partition_key

    a = 3
    b = same_partition_key(a, N, start=5000)  # another key Spark hashes to the same reducer
    hot = f"CASE WHEN id % 2 = 0 THEN {a} ELSE {b} END"
    cap = _run(spark_runtime, "SELECT count(*), sum(d), max(f.p) FROM facts f JOIN dims x ON f.k = x.k",
               {"facts": _facts(hot), "dims": DIMS})
    e = _hot_entry(_doc(cap), cap)
    top2 = {k["key"]: k["rows"] for k in e["keys"][:2]}
    assert top2 == {a: ROWS * 30 // 100 // 2, b: ROWS * 30 // 100 // 2}
    assert e["reducer"] == _reducer_by_f_hash(spark_runtime.spark, f"CAST({a} AS BIGINT)") \
        == _reducer_by_f_hash(spark_runtime.spark, f"CAST({b} AS BIGINT)")


@pytest.mark.slow
def test_a_null_key_of_an_outer_join_is_named_null(spark_runtime):
    cap = _run(spark_runtime, "SELECT count(*), sum(d), max(f.p) FROM facts f LEFT JOIN dims x ON f.k = x.k",
               {"facts": _facts("CAST(NULL AS BIGINT)"), "dims": DIMS})
    e = _hot_entry(_doc(cap), cap)
    assert e["keys"][0]["key"] is None
    assert e["keys"][0]["rows"] == ROWS * 30 // 100
    assert e["reducer"] == 42 % N  # Murmur3Hash of NULL is its seed, 42
    assert any(f["kind"] == "null_key" for f in e["fixes"])


@pytest.mark.slow
def test_composite_string_keys_are_named_in_their_order(spark_runtime):
    facts = ("CREATE TEMPORARY VIEW facts AS SELECT id, CASE WHEN id % 100 < 30 THEN 'unknown' "
             "ELSE concat('c', CAST((id * 7919) % 500 AS STRING)) END AS s, "
             f"CASE WHEN id % 100 < 30 THEN 5 ELSE id % 3 END AS n, {PAYLOAD} FROM range(0, {ROWS}, 1, {MAPS})")
    dims = ("CREATE TEMPORARY VIEW dims AS SELECT concat('c', CAST(id % 500 AS STRING)) AS s, id % 3 AS n, id AS d "
            "FROM range(0, 1500, 1, 2)")
    cap = _run(spark_runtime, "SELECT count(*), sum(d), max(f.p) FROM facts f JOIN dims x ON f.s = x.s AND f.n = x.n",
               {"facts": facts, "dims": dims})
    e = _hot_entry(_doc(cap), cap)
    assert e["key_names"] == ["s", "n"] and e["key_types"] == ["string", "bigint"]
    assert e["keys"][0]["key"] == {"s": "unknown", "n": 5}
    assert e["keys"][0]["rows"] == ROWS * 30 // 100
    from pyspark.sql import functions as F

    got = spark_runtime.spark.sql("SELECT 'unknown' AS s, CAST(5 AS BIGINT) AS n").select(
        F.pmod(F.hash("s", "n"), F.lit(N))).first()[0]
    assert e["reducer"] == got
    assert any(f["kind"] == "default_value" for f in e["fixes"])


@pytest.mark.slow
def test_a_date_key_is_named_as_its_date(spark_runtime):
    facts = ("CREATE TEMPORARY VIEW facts AS SELECT id, CASE WHEN id % 100 < 30 THEN DATE'2024-02-29' "
             f"ELSE date_add(DATE'2000-01-01', CAST((id * 7919) % 500 AS INT)) END AS day, {PAYLOAD} "
             f"FROM range(0, {ROWS}, 1, {MAPS})")
    dims = ("CREATE TEMPORARY VIEW dims AS SELECT date_add(DATE'2000-01-01', CAST(id % 500 AS INT)) AS day, id AS d "
            "FROM range(0, 1500, 1, 2)")
    cap = _run(spark_runtime, "SELECT count(*), sum(d), max(f.p) FROM facts f JOIN dims x ON f.day = x.day",
               {"facts": facts, "dims": dims})
    e = _hot_entry(_doc(cap), cap)
    assert e["keys"][0]["key"] == "2024-02-29" and e["key_types"] == ["date"]
    assert e["keys"][0]["rows"] == ROWS * 30 // 100
    assert e["reducer"] == _reducer_by_f_hash(spark_runtime.spark, "DATE'2024-02-29'")
    salting = next(f for f in e["fixes"] if f["kind"] == "salting")
    assert "day <=> DATE '2024-02-29'" in salting["code"]


@pytest.mark.slow
def test_the_sql_for_a_cluster_finds_the_same_key(spark_runtime):
    """The code an event log's user gets, run here with its side filled in by the view: the
    same reducer, the same key, the same rows as the count on the re-planned exchange."""
    from aqe_core.views.hot_keys import cluster_code, skewed_shuffles

    cap = _run(spark_runtime, "SELECT count(*), sum(d), max(f.p) FROM facts f JOIN dims x ON f.k = x.k",
               {"facts": _facts("7"), "dims": DIMS})
    view = views_from_capture(cap)[0][0]
    split = _split_reducers(cap)
    sk = next(s for s in skewed_shuffles(view) if set(s.reducers) & split.get(s.shuffle_id, set()))
    code = cluster_code(sk, view.final_plan)
    assert code is not None and code.keys == ["k"] and code.num_partitions == N
    assert f"pmod(hash(k), {N})" in code.sql and "CODE FOR YOU TO RUN" in code.sql
    session = spark_runtime.spark.newSession()
    for stmt in cap.setup_statements():
        session.sql(stmt.replace("CREATE TEMPORARY", "CREATE OR REPLACE TEMPORARY"))
    sql = code.sql.split("WITH side AS (", 1)
    body = "WITH side AS (SELECT * FROM facts WHERE k IS NOT NULL)," + sql[1].split("),\n", 1)[1]
    rows = session.sql(body).collect()
    assert (rows[0]["reducer"], rows[0]["key0"], rows[0]["rows"]) == (next(iter(split[sk.shuffle_id])), 7,
                                                                       ROWS * 30 // 100)


@pytest.mark.slow
def test_an_aggregations_hot_key_is_counted_on_its_input(spark_runtime):
    """collect_list keeps every row of a key through the partial aggregation, so the hot key's
    reducer is skewed in the aggregation's shuffle; its rows are the aggregation's input rows."""
    cap = _run(spark_runtime, "SELECT k, size(collect_list(p)) AS n FROM facts GROUP BY k",
               {"facts": _facts("7")})
    doc = _doc(cap)
    hot = _reducer_by_f_hash(spark_runtime.spark, "CAST(7 AS BIGINT)")
    (e,) = [x for x in doc if x["reducer"] == hot]
    assert e["input_kind"] == "aggregation input" and e["error"] is None and e["verified"], e["checks"]
    assert e["keys"][0]["key"] == 7 and e["keys"][0]["rows"] == ROWS * 30 // 100
    assert any("before the partial aggregation" in n for n in e["notes"])


@pytest.mark.slow
def test_a_grouping_expression_is_named_as_its_expression(spark_runtime):
    """GROUP BY k + 1: Spark hashes a made-up ``_groupingexpression``; the keys are named by the
    expression it stands for, both where counted and in the SQL for a cluster (over a view of
    ``range`` the optimizer writes ``k`` out: the plan's expression is the view's CASE plus 1)."""
    from aqe_core.views.hot_keys import cluster_code, skewed_shuffles

    cap = _run(spark_runtime, "SELECT k + 1 AS g, size(collect_list(p)) AS n FROM facts GROUP BY k + 1",
               {"facts": _facts("7")})
    hot = _reducer_by_f_hash(spark_runtime.spark, "CAST(8 AS BIGINT)")
    (e,) = [x for x in _doc(cap) if x["reducer"] == hot]
    name = "CASE WHEN ((id % 100) < 30) THEN 8 ELSE (((id * 7919) % 500) + 1001) END"
    assert e["key_names"] == [name] and e["verified"], (e["key_names"], e["checks"])
    assert e["keys"][0]["key"] == 8 and e["keys"][0]["rows"] == ROWS * 30 // 100
    view = views_from_capture(cap)[0][0]
    code = cluster_code(next(s for s in skewed_shuffles(view) if hot in s.reducers), view.final_plan)
    assert code is not None and code.keys == [name] and "_groupingexpression" not in code.sql


@pytest.mark.slow
def test_a_large_input_is_sampled_and_said_so_and_the_time_limit_stops_it(spark_runtime):
    from aqe_core.live.hot_keys import HotKeysStopped, hot_keys
    from aqe_core.model.hot_keys import HotKeyTarget

    cap = _run(spark_runtime, "SELECT count(*), sum(d), max(f.p) FROM facts f JOIN dims x ON f.k = x.k",
               {"facts": _facts("7"), "dims": DIMS})
    q = cap.queries[0]
    shuffle, reducers = next(iter(_split_reducers(cap).items()))
    target = HotKeyTarget(shuffle, {r: 2 for r in reducers})
    (sk,) = hot_keys(cap, q, [target], trusted=True, max_rows=5_000)
    assert sk.sample_fraction == 5_000 / ROWS and sk.rows_evidence.value == "estimate"
    assert any("Bernoulli sample" in n for n in sk.notes)
    assert "rows" not in {c.name for c in sk.checks}  # an exact row check needs every row
    top = sk.reducers[0].keys[0]
    assert top.values == [7] and abs(top.rows - ROWS * 30 // 100) < ROWS * 30 // 100 * 0.2
    with pytest.raises(HotKeysStopped, match="time limit"):
        hot_keys(cap, q, [target], trusted=True, time_limit_s=0.001)


@pytest.mark.slow
def test_cli_hot_keys_json(spark_runtime, tmp_path, capsys):
    import json

    from aqe_core.cli import main
    from aqe_core.readers.capture_file import save_capture

    cap = _run(spark_runtime, "SELECT count(*), sum(d), max(f.p) FROM facts f JOIN dims x ON f.k = x.k",
               {"facts": _facts("7"), "dims": DIMS})
    path = save_capture(cap, tmp_path / "hot.json.gz")
    assert main(["hot-keys", str(path), "--json", "--top", "2"]) == 0
    doc = json.loads(capsys.readouterr().out)
    e = _hot_entry(doc, cap)
    assert [k["key"] for k in e["keys"]][:1] == [7] and len(e["keys"]) == 2
    assert set(e) >= {"shuffle", "reducer", "rows", "bytes", "keys"}
    assert main(["hot-keys", str(path), "--no-spark"]) == 0
    assert "CODE FOR YOU TO RUN" in capsys.readouterr().out
    _report_holds(cap, doc)


def _report_holds(cap: Any, doc: list[dict[str, Any]]) -> None:
    """The shared report shows the counted keys (plotly: not in every release's test env)."""
    try:
        from aqe_core.report import build_report
    except ModuleNotFoundError:  # (PySpark 3.5.9's tools/spark_env.sh env has no plotly)
        return
    html = build_report(views_from_capture(cap)[0][0], source_label="test", hot_keys=doc)
    assert "<h2>Which key is skewed</h2>" in html and "verified against Spark's record" in html
    assert "<td>7</td>" in html
