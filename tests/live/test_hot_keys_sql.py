"""Which key is skewed for an event log (issue 42, requirement 2): ``hot-keys LOG --spark`` runs the
SQL written from the log's plan on the user's tables, through the SQL guard.

The test makes a skewed join over two parquet tables with a filter whose literals Spark prints
without quotes (a string with a space, a date), records Spark's own event log of it (the runtime's
event-log tap: a plain log, without the AQE Lens listener), drops and re-creates the tables under
the same names (the user's cluster), and asks ``hot-keys --spark`` for the keys. The hot key, its
rows (counted by construction) and its reducer (``pmod(hash(key), n)`` by PySpark's ``F.hash``)
must be the test's; the rows counted must equal the log's shuffle records written.
"""
from __future__ import annotations

import json
import shutil
from typing import Any

import pytest

N = 20
ROWS = 20_000
CONF = {
    "spark.sql.adaptive.enabled": "true",
    "spark.sql.shuffle.partitions": str(N),
    "spark.sql.adaptive.advisoryPartitionSizeInBytes": "16k",
    "spark.sql.adaptive.coalescePartitions.minPartitionSize": "1k",
    "spark.sql.adaptive.skewJoin.skewedPartitionThresholdInBytes": "16k",
    "spark.sql.autoBroadcastJoinThreshold": "-1",
}
#: 30% of the rows share the key 'hot one'; a tenth of all rows fall on the day the query filters out
FACTS = ("SELECT id, CASE WHEN id % 100 < 30 THEN 'hot one' ELSE concat('c', CAST((id * 7919) % 500 AS STRING)) END AS s,"
         " date_add(DATE'2024-01-01', CAST(id % 10 AS INT)) AS day, sha2(CAST(id AS STRING), 256) AS p"
         f" FROM range(0, {ROWS}, 1, 8)")
DIMS = ("SELECT concat('c', CAST(id % 500 AS STRING)) AS s, id AS d FROM range(0, 1500, 1, 2)"
        " UNION ALL SELECT 'hot one', -1")
QUERY = ("SELECT count(*), sum(d), max(f.p) FROM hk_sql_facts f JOIN hk_sql_dims x ON f.s = x.s"
         " WHERE f.day <> DATE'2024-01-05' AND f.s <> 'x y'")
HOT_ROWS = ROWS * 30 // 100 * 9 // 10  # hot rows not on the filtered day (id % 10 == 4)


def _tables(spark: Any, where: Any) -> None:
    """(Re-)create the two tables the query reads, as parquet under ``where``."""
    for name, sql in (("hk_sql_facts", FACTS), ("hk_sql_dims", DIMS)):
        spark.sql(f"DROP TABLE IF EXISTS {name}")
        shutil.rmtree(where / name, ignore_errors=True)
        spark.sql(f"CREATE TABLE {name} USING parquet LOCATION '{where / name}' AS {sql}")


def _record(spark_runtime: Any, tmp_path: Any) -> tuple[str, str]:
    """Run the query on the tables; (a copy of Spark's event log of it, its execution id)."""
    tap = spark_runtime.tap
    if tap is None or not tap.available:
        pytest.skip("the runtime has no event-log tap")
    session = spark_runtime.spark.newSession()
    for k, v in CONF.items():
        session.conf.set(k, v)
    _tables(session, tmp_path / "warehouse")
    description = "hot keys sql test"
    session.sparkContext.setJobDescription(description)
    try:
        session.sql(QUERY).collect()
    finally:
        session.sparkContext.setJobDescription(None)
    (ex,) = tap.wait_for_end(description)
    log = tmp_path / "app.inprogress"
    shutil.copy(tap.log_path, log)
    return str(log), str(ex.execution_id)


@pytest.mark.slow
def test_hot_keys_spark_runs_an_event_logs_sql_on_re_created_tables(spark_runtime, tmp_path, capsys):
    from pyspark.sql import functions as F

    from aqe_core.cli import main

    log, execution = _record(spark_runtime, tmp_path)
    spark = spark_runtime.spark
    for name in ("hk_sql_facts", "hk_sql_dims"):  # the user's cluster: the same tables, made again
        spark.sql(f"DROP TABLE {name}")
    _tables(spark, tmp_path / "cluster")
    try:
        assert main(["hot-keys", log, "--execution", execution, "--no-spark"]) == 0
        printed = capsys.readouterr().out
        assert "(`s` = 'x y')" in printed and "DATE '2024-01-05'" in printed  # quoted and typed
        assert main(["hot-keys", log, "--execution", execution, "--spark", "--json"]) == 0  # guarded
        doc = json.loads(capsys.readouterr().out)
        assert main(["hot-keys", log, "--execution", execution, "--spark", "--top", "1"]) == 0
        text = capsys.readouterr().out
        queued = _count_in_the_background(spark_runtime, log, execution, tmp_path)
    finally:
        for name in ("hk_sql_facts", "hk_sql_dims"):
            spark.sql(f"DROP TABLE IF EXISTS {name}")
    (e,) = [x for x in doc if x["keys"]]
    assert e["error"] is None and e["key_names"] == ["s"] and e["key_types"] == ["string"]
    assert e["keys"][0]["key"] == "hot one" and e["keys"][0]["rows"] == HOT_ROWS
    hot = spark.sql("SELECT 'hot one' AS s").select(F.pmod(F.hash("s"), F.lit(N))).first()[0]
    assert e["reducer"] == hot  # the log named no reducer: the heaviest counted is Spark's
    assert e["verified"], e["checks"]
    rows = next(c for c in e["checks"] if c["name"] == "rows")
    assert rows["passed"] and f"{ROWS * 9 // 10:,}" in rows["detail"]  # the log's shuffle records written
    assert any("does not name the reducer" in n for n in e["notes"])
    assert any(f["kind"] == "salting" and "'hot one'" in f["code"] for f in e["fixes"])
    assert f"heaviest reducer counted {hot}:" in text and f"'hot one': {HOT_ROWS:,} rows" in text, text
    assert [(x["reducer"], x["keys"][0]) for x in queued if x["keys"]] == [(hot, e["keys"][0])]


def _count_in_the_background(spark_runtime: Any, log: str, execution: str, tmp_path: Any) -> list[dict[str, Any]]:
    """The Partitions page's way: the count goes to the run queue and the page reads its result."""
    import time

    from aqe_core.live.hot_keys_sql import count_side_sql
    from aqe_core.live.jobs import RunManager
    from aqe_core.opening import load_source
    from aqe_core.views.hot_key_entries import hot_key_entries, side_sql_targets
    from aqe_core.views.hot_keys import skewed_shuffles

    view = load_source(log).view(execution)
    skewed = skewed_shuffles(view)
    sides = side_sql_targets(view, skewed)
    mgr = RunManager(runtime=spark_runtime, runs_dir=tmp_path / "runs")
    job = mgr.submit_count("hot keys", lambda spark, limit, trusted: {
        i: count_side_sql(s, spark=spark, trusted=trusted, time_limit_s=limit) for i, s in sides.items()})
    assert job.active and not job.trusted  # queued at once, guarded
    deadline = time.time() + 300
    while job.active and time.time() < deadline:
        time.sleep(0.2)
    assert job.state == "done", job.message
    return hot_key_entries(view, skewed, None, job.result)


@pytest.mark.slow
def test_the_guard_refuses_what_the_plan_names_when_it_is_not_a_table(spark_runtime):
    from aqe_core.live.hot_keys_sql import count_side_sql
    from aqe_core.live.sql_guard import UnsafeSQL
    from aqe_core.model.hot_keys import SideSQL

    side = SideSQL("SELECT * FROM parquet.`/etc`", ["`s`"], ["s"], N, {})
    with pytest.raises(UnsafeSQL):
        count_side_sql(side, spark=spark_runtime.spark, trusted=False)
