#!/usr/bin/env python3
"""Record a small plain Spark event log (no AQE Lens listener) where coalescing is on and AQE
still adds no read, because of the cluster's cores (issue 38, "Every sentence holds"):

* ``uniform aggregate, 16 cores``: local[16], 16 shuffle partitions, ``parallelismFirst=true``
  (the default) and ``minPartitionSize=1``: CoalesceShufflePartitions aims at total / 16 cores,
  the average partition, so nothing merges and the final plan has no AQEShuffleRead (as on a
  cluster of 128 cores reading 128 even partitions of a few MiB each);
* ``uniform sort-merge join, 16 cores``: the same for both sides of a sort-merge join (broadcast
  off): no read over either side, and no partition over the skew threshold.

  python tools/record_sentence_cases.py tests/fixtures/eventlogs/sentence_cases

Runs the installed PySpark on local[16] and copies the finished log (zstd) to OUT_DIR. Nothing
here writes events: Spark does.
"""
from __future__ import annotations

import shutil
import sys
import tempfile
from pathlib import Path


def main(out: Path) -> None:
    from pyspark.sql import SparkSession

    logdir = Path(tempfile.mkdtemp(prefix="sentence-cases-"))
    spark = (SparkSession.builder.master("local[16]").appName("aqe-lens sentence cases")
             .config("spark.eventLog.enabled", "true").config("spark.eventLog.dir", str(logdir))
             .config("spark.eventLog.rolling.enabled", "false").config("spark.eventLog.compress", "true")
             .config("spark.eventLog.compression.codec", "zstd").config("spark.ui.enabled", "false")
             .config("spark.sql.shuffle.partitions", "16")
             .config("spark.sql.adaptive.coalescePartitions.minPartitionSize", "1")
             .config("spark.sql.autoBroadcastJoinThreshold", "-1").getOrCreate())
    spark.sparkContext.setLogLevel("ERROR")
    sc = spark.sparkContext
    spark.range(0, 160_000, numPartitions=4).selectExpr("id % 16000 AS k", "id AS v").createOrReplaceTempView("facts")
    spark.range(0, 16_000, numPartitions=4).selectExpr("id AS k", "concat('n', id) AS name").createOrReplaceTempView("dim")
    sc.setJobDescription("uniform aggregate, 16 cores")
    spark.sql("SELECT k, sum(v) FROM facts GROUP BY k").write.mode("overwrite").format("noop").save()
    sc.setJobDescription("uniform sort-merge join, 16 cores")
    spark.sql("SELECT count(*), max(name) FROM facts JOIN dim ON facts.k = dim.k").collect()
    spark.stop()
    out.mkdir(parents=True, exist_ok=True)
    for p in logdir.iterdir():
        shutil.copyfile(p, out / p.name)
        print(out / p.name)
    shutil.rmtree(logdir, ignore_errors=True)


if __name__ == "__main__":
    main(Path(sys.argv[1]))
