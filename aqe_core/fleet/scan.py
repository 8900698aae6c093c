"""The fleet scan as a Spark job (issue 14): event logs (and captures) spread over Spark tasks,
each parsed by AQE Lens's reader in the executor's Python, written as Parquet (or CSV): one row
per SQL execution (:class:`~aqe_core.fleet.rows.ExecutionRow`) and one per finding.

Where the logs are:

* local paths, directories and globs: expanded on the driver; each task opens its files by
  path (on a cluster, the path must be the same on every executor: a shared mount);
* Hadoop filesystem URIs (``file:``, ``hdfs:``, ``s3a:`` ... whatever connectors the session
  has): listed on the driver through Hadoop's ``FileSystem.globStatus``, read on the executors
  with ``binaryFiles`` (a rolling ``eventlog_v2_*`` directory's parts are grouped back into
  one log), then parsed from a temporary copy.

The package itself travels to the executors as a zip (``addPyFile``), so a cluster needs only
the Python libraries the reader uses (``requirements.txt``). Bad files become rows with their
error; nothing a log holds can stop the job.
"""
from __future__ import annotations

import glob
import json
import os
import shutil
import tempfile
import threading
import time
import zipfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Iterable, Iterator, Optional

from aqe_core.fleet.rows import EXECUTION_COLUMNS, FINDING_COLUMNS, scan_file

__all__ = ["ScanResult", "expand_local", "is_uri", "run_scan"]

_HIDDEN = (".", "_")
_ROLLING = "eventlog_v2_"


def is_uri(source: str) -> bool:
    """``hdfs://...``, ``s3a://...``, ``file:/...``: read through Hadoop (one-letter schemes are
    Windows drives)."""
    head, sep, _ = source.partition(":")
    return bool(sep) and len(head) > 1 and head.replace("+", "").replace("-", "").isalnum()


def _logs_in(directory: Path) -> list[str]:
    if directory.name.startswith(_ROLLING):
        return [str(directory)]
    out = []
    for p in sorted(directory.iterdir()):
        if p.name.startswith(_HIDDEN):
            continue
        if p.is_file() or (p.is_dir() and p.name.startswith(_ROLLING)):
            out.append(str(p))
    return out


def expand_local(sources: Iterable[str]) -> tuple[list[str], list[str]]:
    """Log paths (files and rolling directories) for local sources, and the sources that
    matched nothing (said, not fatal)."""
    paths: list[str] = []
    missing: list[str] = []
    for s in sources:
        hits = sorted(glob.glob(s)) if any(c in s for c in "*?[") else ([s] if os.path.exists(s) else [])
        if not hits:
            missing.append(s)
        for h in hits:
            p = Path(h)
            paths.extend(_logs_in(p.resolve()) if p.is_dir() else [str(p.resolve())])
    return list(dict.fromkeys(paths)), missing


def _expand_uris(spark: Any, uris: list[str]) -> tuple[list[tuple[str, str]], list[str]]:
    """(log root, file) for every file of every log under the URIs (Hadoop ``globStatus``)."""
    jvm, conf = spark._jvm, spark.sparkContext._jsc.hadoopConfiguration()
    out: list[tuple[str, str]] = []
    missing: list[str] = []
    for u in uris:
        path = jvm.org.apache.hadoop.fs.Path(u)
        fs = path.getFileSystem(conf)
        statuses = fs.globStatus(path) or []
        if not statuses:
            missing.append(u)
        for st in statuses:
            _expand_status(fs, st, out, top=True)
    return out, missing


def _expand_status(fs: Any, st: Any, out: list[tuple[str, str]], top: bool) -> None:
    p = st.getPath()
    name = p.getName()
    if name.startswith(_HIDDEN):
        return
    if not st.isDirectory():
        out.append((p.toString(), p.toString()))
    elif name.startswith(_ROLLING):
        out.extend((p.toString(), c.getPath().toString()) for c in fs.listStatus(p) if not c.isDirectory())
    elif top:
        for c in fs.listStatus(p):
            _expand_status(fs, c, out, top=False)


def _scan_paths(paths: Iterator[str], presets: bool) -> Iterator[tuple[str, Any]]:
    for p in paths:
        e, f = scan_file(p, presets=presets)
        yield from (("e", r) for r in e)
        yield from (("f", r) for r in f)


def _scan_blobs(group: tuple[str, Iterable[tuple[str, bytes]]], presets: bool) -> Iterator[tuple[str, Any]]:
    root, files = group
    tmp = tempfile.mkdtemp(prefix="aqe-lens-scan-")
    try:
        files = list(files)
        local = os.path.join(tmp, root.rstrip("/").rsplit("/", 1)[-1] or "log")
        if not (len(files) == 1 and files[0][0] == root):
            os.makedirs(local)  # a rolling directory: its parts side by side
        for f, data in files:
            target = local if f == root else os.path.join(local, f.rstrip("/").rsplit("/", 1)[-1])
            with open(target, "wb") as fh:
                fh.write(data)
        for kind, row in _scan_paths(iter([local]), presets):
            row["file"] = root  # the log's own address, not the temporary copy
            yield kind, row
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


_SHIPPED: set[tuple[int, str]] = set()


def _ship_package(sc: Any, where: str) -> None:
    """The ``aqe_core`` package (its ``.py`` files) to every executor with ``addPyFile``, once per
    SparkContext and version of the code (Spark refuses a second file of the same name)."""
    import hashlib

    root = Path(__file__).resolve().parent.parent
    files = [p for p in sorted(root.rglob("*.py")) if "__pycache__" not in p.parts]
    digest = hashlib.sha256(b"".join(p.read_bytes() for p in files)).hexdigest()[:16]
    key = (id(sc._jsc), digest)
    if key in _SHIPPED:
        return
    out = os.path.join(where, f"aqe_core-{digest}.zip")
    with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as z:
        for p in files:
            z.write(p, str(p.relative_to(root.parent)))
    sc.addPyFile(out)
    _SHIPPED.add(key)


@dataclass
class ScanResult:
    out: str
    files: int
    executions: int
    findings: int
    errors: int
    seconds: float
    missing: list[str] = field(default_factory=list)


def _schemas() -> tuple[Any, Any]:
    from pyspark.sql import types as T

    kinds = {"execution_id": T.LongType(), "duration_ms": T.LongType(), "partitions_before": T.LongType(),
             "partitions_after": T.LongType(), "skew_splits": T.LongType(), "wasted_task_ms": T.LongType(),
             "score": T.DoubleType()}
    ex = T.StructType([T.StructField(c, kinds.get(c, T.StringType())) for c in EXECUTION_COLUMNS])
    fi = T.StructType([T.StructField(c, T.LongType() if c == "execution_id" else T.StringType()) for c in FINDING_COLUMNS])
    return ex, fi


def _tuple(row: dict[str, Any], columns: list[str]) -> tuple:
    return tuple(json.dumps(row[c], sort_keys=True) if c == "preset_changes" else row.get(c) for c in columns)


def run_scan(spark: Any, sources: list[str], out: str, *, fmt: str = "parquet", presets: bool = True,
             progress: Optional[Callable[[int, int], None]] = None) -> ScanResult:
    """Scan ``sources`` on ``spark`` and write ``out/executions`` and ``out/findings``."""
    t0 = time.perf_counter()
    sc = spark.sparkContext
    local, uris = [s for s in sources if not is_uri(s)], [s for s in sources if is_uri(s)]
    paths, missing = expand_local(local)
    blobs, missing_uris = _expand_uris(spark, uris) if uris else ([], [])
    _ship_package(sc, tempfile.mkdtemp(prefix="aqe-lens-ship-"))  # kept: executors fetch it from the driver
    slices = max(1, min(len(paths), 4 * sc.defaultParallelism))
    rdd = sc.parallelize(paths, slices).mapPartitions(lambda it: _scan_paths(it, presets)) if paths else sc.emptyRDD()
    if blobs:
        roots = {f: r for r, f in blobs}
        files = sc.binaryFiles(",".join(sorted(roots)))
        rdd = rdd.union(files.map(lambda kv: (roots.get(kv[0], kv[0]), (kv[0], kv[1])))
                        .groupByKey().flatMap(lambda g: _scan_blobs(g, presets)))
    rdd = rdd.cache()
    group = f"aqe-lens-scan-{os.getpid()}-{int(t0)}"
    sc.setJobGroup(group, f"AQE Lens fleet scan of {len(paths) + len({r for r, _ in blobs})} logs", True)
    stop = threading.Event()
    if progress is not None:
        threading.Thread(target=_watch, args=(sc, group, progress, stop), daemon=True).start()
    try:
        ex_schema, fi_schema = _schemas()
        execs = spark.createDataFrame(rdd.filter(lambda kv: kv[0] == "e").map(lambda kv: _tuple(kv[1], EXECUTION_COLUMNS)),
                                      ex_schema)
        finds = spark.createDataFrame(rdd.filter(lambda kv: kv[0] == "f").map(lambda kv: _tuple(kv[1], FINDING_COLUMNS)),
                                      fi_schema)
        writer = (lambda df, name: df.write.mode("overwrite").option("header", "true").csv(os.path.join(out, name))) \
            if fmt == "csv" else (lambda df, name: df.write.mode("overwrite").parquet(os.path.join(out, name)))
        writer(execs, "executions")
        writer(finds, "findings")
        counts = execs.selectExpr("count(*) AS n", "count(error) AS errors", "count(DISTINCT file) AS files").first()
        n_findings = finds.count()
    finally:
        stop.set()
        rdd.unpersist()
        sc.setLocalProperty("spark.jobGroup.id", None)
    return ScanResult(out, counts["files"], counts["n"] - counts["errors"], n_findings, counts["errors"],
                      time.perf_counter() - t0, missing + missing_uris)


def _watch(sc: Any, group: str, progress: Callable[[int, int], None], stop: threading.Event) -> None:
    tracker = sc.statusTracker()
    while not stop.wait(0.5):
        done = total = 0
        for jid in tracker.getJobIdsForGroup(group):
            job = tracker.getJobInfo(jid)
            for sid in job.stageIds if job else []:
                st = tracker.getStageInfo(sid)
                if st:
                    done += st.numCompletedTasks
                    total += st.numTasks
        if total:
            progress(done, total)
