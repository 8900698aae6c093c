"""Capturing inside a user's own PySpark program, and the CLI, on the shared SparkSession."""
from __future__ import annotations

import argparse
import json

import pytest

from aqe_core.readers.capture_file import load_capture
from aqe_core.engine.simulate import simulate

pytestmark = pytest.mark.slow


def test_capture_queries_sees_every_action(spark):
    from aqe_core.api import capture_queries

    s = spark.newSession()
    s.conf.set("spark.sql.adaptive.enabled", "true")
    s.conf.set("spark.sql.shuffle.partitions", "16")
    s.conf.set("spark.sql.adaptive.advisoryPartitionSizeInBytes", "2k")
    with capture_queries(s) as cq:
        df = s.range(0, 40000, 1, 4).selectExpr("id % 50 AS k", "id AS v").groupBy("k").count()
        assert df.count() == 50
        df.collect()
        df.write.format("noop").mode("overwrite").save()
    cap = cq.capture
    assert [q.label.split(":")[1] for q in cap.queries] == ["count", "collectToPython", "overwrite"]
    assert all(q.adaptive and q.reads and q.plan_updates for q in cap.queries)
    assert cap.queries[0].conf["spark.sql.shuffle.partitions"] == "16"
    assert simulate(cap).agreement.complete


def _run_cli(command: str, argv: list[str]) -> int:
    """One command of ``python -m aqe_core``, in this process (it shares the test's Spark)."""
    from aqe_core import cli

    _, add_arguments, run = cli.COMMANDS[command]
    p = argparse.ArgumentParser()
    add_arguments(p)
    return run(p.parse_args(argv))


def test_cli_run_then_simulate(spark_runtime, tmp_path, capsys):
    out = tmp_path / "agg.json.gz"
    rc = _run_cli("run", ["--workload", "aggregate_coalesce", "--preset", "default",
                                               "--preset", "min_partition_num_6", "-o", str(out), "--check"])
    assert rc == 0 and out.exists()
    assert "agreement: 2/2" in capsys.readouterr().err
    cap = load_capture(out)
    assert [q.preset for q in cap.queries] == ["default", "min_partition_num_6"]
    assert _run_cli("simulate", [str(out)]) == 0
    text = capsys.readouterr().out
    assert "Agreement with Spark: 2/2 adaptive reads, 0/0 join decisions (100.0% of decisions)" in text
    assert _run_cli("simulate", [str(out), "--json", "--conf",
                                                      "spark.sql.adaptive.coalescePartitions.minPartitionNum=3"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["replay"] is False and doc["overrides"]
    sql_out = tmp_path / "sql.json"
    rc = _run_cli("run", ["--sql", "SELECT id % 3 AS g, count(*) FROM range(0, 1000, 1, 2) GROUP BY 1",
                                               "--conf", "spark.sql.shuffle.partitions=8", "-o", str(sql_out),
                                               "--no-progress"])
    assert rc == 0 and load_capture(sql_out).queries[0].row_count == 3


def test_cli_simulate_rejects_a_non_capture(tmp_path):
    bad = tmp_path / "x.json"
    bad.write_text("{}")
    assert _run_cli("simulate", [str(bad)]) == 2


def test_cancel_a_running_query(spark_runtime):
    import threading
    import time

    from aqe_core.live.runner import RunCancelled, Runner

    runner = Runner(spark_runtime)
    seen = []
    err: list[BaseException] = []

    def go():
        try:
            runner.run_sql("SELECT count(*) FROM range(0, 30000000, 1, 4) a JOIN range(0, 30000000, 1, 4) b ON a.id = b.id",
                           {"spark.sql.shuffle.partitions": "8", "spark.sql.autoBroadcastJoinThreshold": "-1"},
                           tag="to-cancel", progress=seen.append)
        except BaseException as e:  # noqa: BLE001 - handed to the test thread's asserts
            err.append(e)

    t = threading.Thread(target=go)
    t.start()
    deadline = time.time() + 60
    while not any(p.phase == "running" and p.tasks_total for p in seen) and time.time() < deadline:
        time.sleep(0.2)
    runner.cancel("to-cancel")
    t.join(120)
    assert not t.is_alive()
    assert err and isinstance(err[0], RunCancelled)


def test_highly_compressed_map_status_sizes_are_exact(spark_runtime):
    """More than 2000 reducers: Spark keeps HighlyCompressedMapStatus (average + huge blocks +
    empty bitmap); the per-map sizes must still add up to bytesByPartitionId exactly."""
    from aqe_core.live.runner import Runner

    cap = Runner(spark_runtime).run_sql(
        "SELECT k, count(*) FROM (SELECT CASE WHEN id % 4 = 0 THEN 0 ELSE id % 5000 END AS k FROM range(0, 60000, 1, 3))"
        " GROUP BY k", {"spark.sql.shuffle.partitions": "2100", "spark.sql.adaptive.advisoryPartitionSizeInBytes": "4k",
                        "spark.sql.adaptive.coalescePartitions.minPartitionSize": "1k"})
    q = cap.queries[0]
    sh = next(s for s in q.shuffles.values() if s.num_reducers == 2100)
    assert sh.map_sizes is not None and "HighlyCompressedMapStatus" in sh.map_sizes.status_classes
    assert sh.map_sizes.consistent and sh.map_sizes.complete
    assert simulate(cap).agreement.complete


def test_task_times_are_spark_own(spark_runtime):
    """A fresh run's task durations (the run's task events, through the tap) equal what Spark's
    own status store (the stage pages' source) holds for every successful task, and each
    adaptive read is placed in the stage whose tasks read its exchange."""
    from aqe_core.live.runner import Runner
    from aqe_core.views.from_capture import views_from_capture

    cap = Runner(spark_runtime).run_sql(
        "SELECT count(*), sum(a.v + b.w) FROM (SELECT CASE WHEN id % 3 = 0 THEN 0 ELSE id % 500 END AS k, id AS v"
        " FROM range(0, 60000, 1, 4)) a JOIN (SELECT id % 500 AS k, id AS w FROM range(0, 6000, 1, 2)) b ON a.k = b.k",
        {"spark.sql.shuffle.partitions": "12", "spark.sql.autoBroadcastJoinThreshold": "-1",
         "spark.sql.adaptive.skewJoin.skewedPartitionThresholdInBytes": "1k",
         "spark.sql.adaptive.advisoryPartitionSizeInBytes": "2k"})
    q = cap.queries[0]
    store = spark_runtime.spark.sparkContext._jsc.sc().statusStore()
    compared = 0
    for t in q.spark_stages:
        assert t.task_ms is not None, t.stage_id
        tasks = store.taskList(t.stage_id, 0, 100000)
        theirs = {}
        for i in range(tasks.size()):
            td = tasks.apply(i)
            if td.status() == "SUCCESS":
                theirs[td.index()] = (td.duration().get(), td.taskId())
        ours = {i: (ms, t.task_ids[i]) for i, ms in enumerate(t.task_ms) if ms >= 0}
        assert ours == theirs and len(ours) == t.num_tasks, t.stage_id
        compared += len(ours)
    assert compared >= 7, [(t.stage_id, t.num_tasks) for t in q.spark_stages]
    view = views_from_capture(cap)[0][0]
    reads = [s for s in view.shuffles if s.task_time is not None]
    assert reads and len({s.task_time.stage_id for s in reads}) == 1  # both sides of the join: one reduce stage
    reduce_stage = reads[0].task_time.stage_id
    assert next(t for t in q.spark_stages if t.stage_id == reduce_stage).num_tasks == reads[0].partitions_after
