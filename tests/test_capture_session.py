"""Capturing inside a user's own PySpark program, and the CLI, on the shared SparkSession."""
from __future__ import annotations

import argparse
import json

import pytest

from aqe_core.capture.model import load_capture
from aqe_core.capture.simulate import simulate

pytestmark = pytest.mark.slow


def test_capture_queries_sees_every_action(spark):
    from aqe_core.capture import capture_queries

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


def _run_cli(module: str, argv: list[str]) -> int:
    import importlib

    mod = importlib.import_module(module)
    p = argparse.ArgumentParser()
    mod.add_arguments(p)
    return mod.run(p.parse_args(argv))


def test_cli_run_then_simulate(spark_runtime, tmp_path, capsys):
    out = tmp_path / "agg.json.gz"
    rc = _run_cli("aqe_core.capture.cli_run", ["--workload", "aggregate_coalesce", "--preset", "default",
                                               "--preset", "min_partition_num_6", "-o", str(out), "--check"])
    assert rc == 0 and out.exists()
    assert "agreement: 2/2" in capsys.readouterr().err
    cap = load_capture(out)
    assert [q.preset for q in cap.queries] == ["default", "min_partition_num_6"]
    assert _run_cli("aqe_core.capture.cli_simulate", [str(out)]) == 0
    text = capsys.readouterr().out
    assert "Agreement with Spark: 2/2 adaptive reads (100.0%)" in text
    assert _run_cli("aqe_core.capture.cli_simulate", [str(out), "--json", "--conf",
                                                      "spark.sql.adaptive.coalescePartitions.minPartitionNum=3"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["replay"] is False and doc["overrides"]
    sql_out = tmp_path / "sql.json"
    rc = _run_cli("aqe_core.capture.cli_run", ["--sql", "SELECT id % 3 AS g, count(*) FROM range(0, 1000, 1, 2) GROUP BY 1",
                                               "--conf", "spark.sql.shuffle.partitions=8", "-o", str(sql_out),
                                               "--no-progress"])
    assert rc == 0 and load_capture(sql_out).queries[0].row_count == 3


def test_cli_simulate_rejects_a_non_capture(tmp_path):
    bad = tmp_path / "x.json"
    bad.write_text("{}")
    assert _run_cli("aqe_core.capture.cli_simulate", [str(bad)]) == 2
