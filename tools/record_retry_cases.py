#!/usr/bin/env python3
"""Record small plain event logs of the 4.1/4.2 cases the event-log reader must read right
(issue 25, requirement 5), on the PySpark release of the interpreter that runs it:

* ``ctas``: CREATE TABLE AS SELECT, a root execution and its sub-execution (``rootExecutionId``;
  ``queryId`` where the release logs one);
* ``task retry``: a reduce task whose UDF fails on its first attempt (``local[1,2]``: two tries);
* ``stage retry``: a reduce task of the first stage attempt deletes the shuffle files, the next
  task fails to fetch them, Spark re-runs the map stage and the reduce stage (attempt 1);
* ``stage retry, two shuffles``: the same over two shuffles (the retried stage is a shuffle map
  stage), deterministic data, no checksum;
* ``checksum retry``: the same with map output that differs between runs (a UDF Spark takes for
  deterministic) and ``spark.sql.shuffle.orderIndependentChecksum.*`` on, so the re-run map
  output's checksum differs and Spark retries the consumer stage in full (a shuffle map stage:
  a result stage that has finished tasks cannot be rolled back, Spark fails the job instead);
* a second application with ``spark.eventLog.excludedPatterns=SparkListenerTaskEnd``.

  tools/spark_env.sh 4.2.1   # then, with that env's python:
  ~/.cache/aqe-lens/spark-envs/4.2.1/bin/python tools/record_retry_cases.py OUT_DIR

Nothing here writes events: Spark does. It also tries ``spark.sql.ui.explainMode=none`` and
writes what the release answered to OUT_DIR/explain_mode_none.txt.
"""
from __future__ import annotations

import glob
import os
import shutil
import sys
import tempfile
from pathlib import Path


def _session(logdir: Path, local_dir: Path, extra: dict[str, str]):
    from pyspark.sql import SparkSession

    b = (SparkSession.builder.master("local[1,2]").appName("aqe-lens retry cases")
         .config("spark.eventLog.enabled", "true").config("spark.eventLog.dir", str(logdir))
         .config("spark.eventLog.rolling.enabled", "false").config("spark.eventLog.compress", "true")
         .config("spark.eventLog.compression.codec", "zstd").config("spark.ui.enabled", "false")
         .config("spark.local.dir", str(local_dir)).config("spark.sql.shuffle.partitions", "4")
         .config("spark.sql.warehouse.dir", str(local_dir / "warehouse")))
    for k, v in extra.items():
        b = b.config(k, v)
    spark = b.getOrCreate()
    spark.sparkContext.setLogLevel("ERROR")
    return spark


def main(out: Path) -> None:
    from pyspark.sql.functions import udf

    out.mkdir(parents=True, exist_ok=True)
    logdir = Path(tempfile.mkdtemp(prefix="retry-cases-"))
    local_dir = Path(tempfile.mkdtemp(prefix="retry-cases-local-"))
    spark = _session(logdir, local_dir, {})
    sc = spark.sparkContext
    shuffle_glob = str(local_dir / "**" / "shuffle_*")

    # 1. CTAS: a root execution and its sub-execution
    sc.setJobDescription("ctas")
    spark.sql("CREATE TABLE ctas_t USING parquet AS SELECT id % 7 AS k, count(*) AS n FROM range(1000) GROUP BY 1")

    # 2. task retry: the reduce task of partition 1 fails on its first attempt
    def fail_first(v):
        from pyspark import TaskContext

        tc = TaskContext.get()
        if tc.partitionId() == 1 and tc.attemptNumber() == 0:
            raise RuntimeError("first attempt fails on purpose")
        return v

    spark.conf.set("spark.sql.adaptive.coalescePartitions.enabled", "false")
    spark.udf.register("fail_first", udf(fail_first, "long"))
    sc.setJobDescription("task retry")
    spark.sql("SELECT k, fail_first(sum(v)) AS s FROM (SELECT id % 4 AS k, id AS v FROM range(0, 40000, 1, 4))"
              " GROUP BY k").collect()

    # 3. stage retry: the first reduce task of the stage's first run deletes the shuffle files
    def drop_shuffle(v):
        from pyspark import TaskContext

        # once per query (a marker file): PySpark's TaskContext has no stage attempt number
        marker = os.path.join(str(local_dir), f"dropped-{TaskContext.get().stageId()}")
        if TaskContext.get().partitionId() == 0 and not os.path.exists(marker):
            open(marker, "w").close()
            for f in glob.glob(shuffle_glob, recursive=True):
                try:
                    os.remove(f)
                except OSError:
                    pass
        return v

    spark.udf.register("drop_shuffle", udf(drop_shuffle, "long"))
    sc.setJobDescription("stage retry")
    spark.sql("SELECT k, drop_shuffle(sum(v)) AS s FROM (SELECT id % 4 AS k, id AS v FROM range(0, 40000, 1, 4))"
              " GROUP BY k").collect()

    # 4. the same shape with deterministic map output and no checksum: what a retry looks like
    # when nothing changed (the control for 5)
    sc.setJobDescription("stage retry, two shuffles")
    spark.sql("SELECT s % 3 AS g, count(*) AS n FROM (SELECT k, drop_shuffle(sum(v)) AS s FROM"
              " (SELECT id % 4 AS k, id AS v FROM range(0, 40000, 1, 4)) GROUP BY k) GROUP BY 1").collect()

    # 5. checksum retry: map output that differs when the map stage runs again
    def noisy(v):
        import random

        return v * 1000 + random.randint(0, 999)

    spark.udf.register("noisy", udf(noisy, "long"))  # (not marked nondeterministic: Spark trusts it)
    spark.conf.set("spark.sql.shuffle.orderIndependentChecksum.enabled", "true")
    spark.conf.set("spark.sql.shuffle.orderIndependentChecksum.enableFullRetryOnMismatch", "true")
    sc.setJobDescription("checksum retry")
    try:
        spark.sql("SELECT s % 3 AS g, count(*) AS n FROM (SELECT k, drop_shuffle(sum(v)) AS s FROM"
                  " (SELECT id % 4 AS k, noisy(id) AS v FROM range(0, 40000, 1, 4)) GROUP BY k) GROUP BY 1").collect()
    except Exception as e:  # noqa: BLE001 - a release may fail the query instead: the log says so
        print(f"checksum retry query failed: {str(e)[:300]}", file=sys.stderr)
    spark.conf.unset("spark.sql.shuffle.orderIndependentChecksum.enabled")
    spark.conf.unset("spark.sql.shuffle.orderIndependentChecksum.enableFullRetryOnMismatch")

    # 6. explainMode=none: what the release says
    try:
        spark.conf.set("spark.sql.ui.explainMode", "none")
        answer = "accepted"
    except Exception as e:  # noqa: BLE001 - a release's refusal is what is recorded
        answer = "rejected: " + str(e).splitlines()[0][:400]
    (out / "explain_mode_none.txt").write_text(f"Spark {spark.version}: spark.sql.ui.explainMode=none {answer}\n")
    spark.stop()

    # 7. task ends excluded from the log
    spark = _session(logdir, local_dir, {"spark.eventLog.excludedPatterns": "SparkListenerTaskEnd"})
    spark.sparkContext.setJobDescription("task ends excluded")
    spark.sql("SELECT k, count(*) FROM (SELECT id % 13 AS k FROM range(0, 20000, 1, 4)) GROUP BY k").collect()
    spark.stop()

    for f in sorted(logdir.iterdir()):
        shutil.copyfile(f, out / f.name)
        print(out / f.name)
    shutil.rmtree(local_dir, ignore_errors=True)


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    main(Path(sys.argv[1]))
