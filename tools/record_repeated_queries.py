#!/usr/bin/env python3
"""Record a small plain Spark event log (no AQE Lens listener) of one query run again and again
over data that grows, as a long-running application (a streaming job's micro-batches, a Thrift
server, a notebook) writes it (issue 41, "Grouped by query"):

* ``daily join, run <i>`` (20 runs): ``facts`` (grows by 6,000 rows a run) joined to ``dim``
  (grows by 120 rows a run) on ``k``, then grouped. The static planner never broadcasts
  (``spark.sql.autoBroadcastJoinThreshold=-1``); AQE may, under
  ``spark.sql.adaptive.autoBroadcastJoinThreshold`` (48 KiB): while dim's shuffle writes less, the
  join becomes a broadcast hash join; once it writes more, it stays a sort-merge join. The
  coalesced partition count of the reads grows with ``facts`` (a 16 KiB advisory size);
* ``dim lookup, run <i>`` and ``row count, run <i>`` interleaved every few runs: other queries;
* ``setup views, run <i>``: the two temporary views of each run (commands, no AQE).

With these sizes dim's shuffle writes 2,880 B a run ("data size"): 48,960 B in run 17, under the
49,152 B threshold (broadcast), 51,840 B in run 18, over it (sort-merge from there on).

  python tools/record_repeated_queries.py tests/fixtures/eventlogs/repeated
  python tools/record_repeated_queries.py --streaming tests/fixtures/eventlogs/repeated/streaming
  python tools/record_repeated_queries.py --conf spark.sql.adaptive.autoBroadcastJoinThreshold=32k \
      --conf spark.sql.adaptive.advisoryPartitionSizeInBytes=32k tests/fixtures/eventlogs/repeated/threshold_32k

``--conf KEY=VALUE`` (repeatable): a setting over the ones below, for a second run of the same
job to diff against the first (``diff`` groups both runs' executions by query). With the two
above, dim's shuffle fits the 32 KiB threshold up to run 11 (31,680 B) and not from run 12
(34,560 B), and the reads coalesce to a 32 KiB target.

``--streaming``: a Structured Streaming query instead (a file stream joined to a static table,
stateless so that AQE runs on each micro-batch; one file per micro-batch of 160 more rows each
time, the static planner never broadcasting): AQE broadcasts the batch's side while its shuffle
writes at most 20 KiB (24 B a row: batches 0-4) and sort-merges it after: each micro-batch is an SQL execution whose description Spark
writes as ``<name>\nid = ...\nrunId = ...\nbatch = <n>``.

Runs the installed PySpark (4.3.0) on local[2] and copies the finished log (zstd) to OUT_DIR.
Nothing here writes events: Spark does.
"""
from __future__ import annotations

import argparse
import shutil
import tempfile
from pathlib import Path

RUNS = 20


def _session(app: str, logdir: Path, settings: dict[str, str], conf: dict[str, str]):
    """A local[2] session writing one zstd event log into ``logdir``: the recording's
    ``settings``, then ``--conf``'s over them."""
    from pyspark.sql import SparkSession

    builder = (SparkSession.builder.master("local[2]").appName(app)
               .config("spark.eventLog.enabled", "true").config("spark.eventLog.dir", str(logdir))
               .config("spark.eventLog.rolling.enabled", "false").config("spark.eventLog.compress", "true")
               .config("spark.eventLog.compression.codec", "zstd").config("spark.ui.enabled", "false"))
    for key, value in {**settings, **conf}.items():
        builder = builder.config(key, value)
    spark = builder.getOrCreate()
    spark.sparkContext.setLogLevel("ERROR")
    return spark


def _keep(logdir: Path, out: Path) -> None:
    """The finished log copied to ``out`` (printed), its temporary folder removed."""
    out.mkdir(parents=True, exist_ok=True)
    for p in logdir.iterdir():
        shutil.copyfile(p, out / p.name)
        print(out / p.name)
    shutil.rmtree(logdir, ignore_errors=True)


def main(out: Path, conf: dict[str, str]) -> None:
    logdir = Path(tempfile.mkdtemp(prefix="repeated-"))
    spark = _session("aqe-lens repeated queries", logdir, {
        "spark.sql.shuffle.partitions": "32",
        "spark.sql.autoBroadcastJoinThreshold": "-1",
        "spark.sql.adaptive.autoBroadcastJoinThreshold": "48k",
        "spark.sql.adaptive.advisoryPartitionSizeInBytes": "16k",
        "spark.sql.adaptive.coalescePartitions.parallelismFirst": "false",
        "spark.sql.adaptive.coalescePartitions.minPartitionSize": "1k"}, conf)
    sc = spark.sparkContext
    for i in range(1, RUNS + 1):
        sc.setJobDescription(f"setup views, run {i}")  # (else they carry the last query's description)
        spark.range(0, 6_000 * i, numPartitions=2).selectExpr(
            f"id % {120 * i} AS k", "id AS v").createOrReplaceTempView("facts")
        spark.range(0, 120 * i, numPartitions=2).selectExpr(
            "id AS k", "concat('name-', id) AS name", "id % 10 AS grp").createOrReplaceTempView("dim")
        sc.setJobDescription(f"daily join, run {i}")
        spark.sql("SELECT d.grp, count(*) AS n, sum(f.v) AS total FROM facts f JOIN dim d ON f.k = d.k"
                  " GROUP BY d.grp").collect()
        if i % 4 == 0:
            sc.setJobDescription(f"dim lookup, run {i}")
            spark.sql("SELECT grp, max(name) FROM dim GROUP BY grp").collect()
        if i % 7 == 0:
            sc.setJobDescription(f"row count, run {i}")
            spark.sql("SELECT count(DISTINCT k) FROM facts").collect()
    spark.stop()
    _keep(logdir, out)


def streaming(out: Path, conf: dict[str, str], batches: int = 8) -> None:
    logdir = Path(tempfile.mkdtemp(prefix="repeated-streaming-"))
    data = Path(tempfile.mkdtemp(prefix="repeated-streaming-data-"))
    spark = _session("aqe-lens repeated streaming", logdir, {
        "spark.sql.shuffle.partitions": "8", "spark.sql.autoBroadcastJoinThreshold": "-1",
        "spark.sql.adaptive.autoBroadcastJoinThreshold": "20k"}, conf)
    (data / "in").mkdir()
    for b in range(batches):  # one file a batch, each larger than the one before
        spark.range(0, 160 * (b + 1), numPartitions=1).selectExpr("id % 5000 AS k", "id AS v") \
            .toPandas().to_json(data / "in" / f"part-{b:03d}.json", orient="records", lines=True)
    spark.range(0, 5_000).selectExpr("id AS k", "id % 5 AS grp").createOrReplaceTempView("dim")
    stream = spark.readStream.schema("k LONG, v LONG").option("maxFilesPerTrigger", 1).json(str(data / "in"))
    joined = stream.join(spark.table("dim"), "k")  # stateless: AQE re-plans each micro-batch (a stateful one runs without)
    q = (joined.writeStream.queryName("joined_rows").format("memory").outputMode("append")
         .option("checkpointLocation", str(data / "checkpoint")).trigger(availableNow=True).start())
    q.awaitTermination()
    spark.stop()
    _keep(logdir, out)
    shutil.rmtree(data, ignore_errors=True)


def _setting(text: str) -> tuple[str, str]:
    key, eq, value = text.partition("=")
    if not eq or not key.startswith("spark."):
        raise argparse.ArgumentTypeError(f"expected spark.KEY=VALUE, got {text!r}")
    return key, value


if __name__ == "__main__":
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("out", type=Path, help="the folder the finished log is copied to")
    ap.add_argument("--streaming", action="store_true", help="the Structured Streaming job instead")
    ap.add_argument("--conf", type=_setting, action="append", default=[], metavar="KEY=VALUE",
                    help="a Spark setting over the recording's own (repeatable)")
    opts = ap.parse_args()
    (streaming if opts.streaming else main)(opts.out, dict(opts.conf))
