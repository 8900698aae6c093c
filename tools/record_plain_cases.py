#!/usr/bin/env python3
"""Record a small plain Spark 4.3 event log (no AQE Lens listener) with the cases a plain-log
view must read right (issue 23):

* ``rebalance two hot keys``: a REBALANCE hint over two hot keys, one about twice and one about
  eight times the advisory size: OptimizeSkewInRebalancePartitions splits both reducers;
* ``no adaptive read``: a query72-like shape with coalescing disabled and 128 shuffle
  partitions, broadcast and sort-merge joins: AQE leaves every shuffle as planned (no
  AQEShuffleRead in the final plan);
* ``hot key, skew join off``: a sort-merge join on a hot key with skew-join handling switched
  off: one reduce task does most of the work (a straggler);
* ``hot key aggregation``: a window over a hot key: no AQE rule splits it.

  python tools/record_plain_cases.py OUT_DIR

Runs the system python's PySpark (4.3.0) on local[2] and copies the finished log (zstd) to
OUT_DIR. Nothing here writes events: Spark does.
"""
from __future__ import annotations

import shutil
import sys
import tempfile
from pathlib import Path


def main(out: Path) -> None:
    from pyspark.sql import SparkSession

    logdir = Path(tempfile.mkdtemp(prefix="plain-cases-"))
    scratch = Path(tempfile.mkdtemp(prefix="plain-cases-data-"))
    spark = (SparkSession.builder.master("local[2]").appName("aqe-lens plain cases")
             .config("spark.eventLog.enabled", "true").config("spark.eventLog.dir", str(logdir))
             .config("spark.eventLog.rolling.enabled", "false").config("spark.eventLog.compress", "true")
             .config("spark.eventLog.compression.codec", "zstd").config("spark.ui.enabled", "false")
             .config("spark.sql.shuffle.partitions", "40").getOrCreate())
    spark.sparkContext.setLogLevel("ERROR")
    sc = spark.sparkContext

    # 1. rebalance: key 1 ~ 2x, key 2 ~ 8x the advisory size, the rest small; 16 map tasks
    spark.conf.set("spark.sql.adaptive.advisoryPartitionSizeInBytes", "64k")
    spark.range(0, 200_000, numPartitions=16).selectExpr(
        "CASE WHEN id % 100 < 8 THEN 1 WHEN id % 100 < 40 THEN 2 ELSE id % 997 + 3 END AS k",
        "id AS v").createOrReplaceTempView("facts")
    sc.setJobDescription("rebalance two hot keys")
    spark.sql("SELECT /*+ REBALANCE(k) */ k, v FROM facts").write.mode("overwrite").format("noop").save()
    sc.setJobDescription("rebalance two hot keys, parquet write")
    spark.sql("SELECT /*+ REBALANCE(k) */ k, v FROM facts").write.mode("overwrite").parquet(str(scratch / "out.parquet"))
    spark.conf.unset("spark.sql.adaptive.advisoryPartitionSizeInBytes")

    # 2. query72-like: no coalescing, 128 partitions, broadcast dims and a sort-merge join
    spark.conf.set("spark.sql.adaptive.coalescePartitions.enabled", "false")
    spark.conf.set("spark.sql.shuffle.partitions", "128")
    spark.range(0, 60_000, numPartitions=4).selectExpr(
        "id AS item", "id % 50 AS d", "id % 7 AS w", "id AS qty").createOrReplaceTempView("sales")
    spark.range(0, 60_000, numPartitions=4).selectExpr("id AS item", "id % 13 AS inv").createOrReplaceTempView("inventory")
    spark.range(0, 50).selectExpr("id AS d", "id % 12 AS month").createOrReplaceTempView("dates")
    spark.range(0, 7).selectExpr("id AS w", "concat('wh', id) AS wname").createOrReplaceTempView("warehouses")
    sc.setJobDescription("no adaptive read")
    spark.sql("""
        SELECT wname, month, count(*) AS n, sum(qty * inv) AS s
        FROM sales JOIN inventory ON sales.item = inventory.item
             JOIN dates ON sales.d = dates.d
             JOIN warehouses ON sales.w = warehouses.w
        GROUP BY wname, month""").collect()
    spark.conf.unset("spark.sql.adaptive.coalescePartitions.enabled")
    spark.conf.set("spark.sql.shuffle.partitions", "40")

    # 3. a hot key in a sort-merge join with skew-join handling off: one reduce task works
    # (coalescing off too, or the small data would be read as one partition)
    spark.conf.set("spark.sql.adaptive.coalescePartitions.enabled", "false")
    spark.conf.set("spark.sql.adaptive.skewJoin.enabled", "false")
    spark.conf.set("spark.sql.autoBroadcastJoinThreshold", "-1")
    spark.range(0, 1_000_000, numPartitions=4).selectExpr(
        "CASE WHEN id % 10 < 9 THEN 0 ELSE id % 400 END AS k", "id AS v").createOrReplaceTempView("hot")
    spark.range(0, 400).selectExpr("id AS k", "concat('name', id) AS name").createOrReplaceTempView("dim")
    sc.setJobDescription("hot key, skew join off")
    spark.sql("""SELECT sum(length(sha2(concat(cast(v AS string), name), 512)))
                 FROM hot JOIN dim ON hot.k = dim.k""").collect()
    spark.conf.unset("spark.sql.adaptive.skewJoin.enabled")

    # 4. a hot key under a window: no AQE rule splits a window's partition (coalescing still off)
    sc.setJobDescription("hot key aggregation")
    spark.sql("""SELECT k, max(h) FROM (
                   SELECT k, length(sha2(concat(cast(v AS string), cast(rank() OVER (PARTITION BY k ORDER BY v)
                          AS string)), 512)) AS h FROM hot) GROUP BY k""").collect()
    spark.conf.unset("spark.sql.adaptive.coalescePartitions.enabled")
    spark.stop()
    out.mkdir(parents=True, exist_ok=True)
    for p in logdir.iterdir():
        shutil.copyfile(p, out / p.name)
        print(out / p.name)
    shutil.rmtree(logdir, ignore_errors=True)
    shutil.rmtree(scratch, ignore_errors=True)


if __name__ == "__main__":
    main(Path(sys.argv[1]))
