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

Each scan adds a partition ``scan=<id>`` to the output's tables, with a ``logs`` table of the
logs it read and their fingerprints; a rescan into the same directory reads only new or changed
logs, and records the logs found gone in a ``removed`` table (:mod:`aqe_core.fleet.history`). A
rescan with nothing new or gone runs no Spark job and writes nothing.

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

from aqe_core.exception_text import reason_line
from aqe_core.fleet.history import (HIDDEN_PREFIXES, LOG_COLUMNS, LOGS_TABLE, QUERIES_TABLE, REMOVED_COLUMNS, REMOVED_TABLE, SCAN_COLUMN,
                                    UNPARTITIONED_SCAN, Fingerprint, as_log_rows, fingerprint_local, gone_logs, join_path,
                                    known_logs, new_scan_id, without_removed)
from aqe_core.fleet.here import EXECUTION_TYPES, FINDING_TYPES, LOG_TYPES, QUERY_TYPES, read_here, write_parquet
from aqe_core.fleet.probe import missing_modules
from aqe_core.fleet.rows import EXECUTION_COLUMNS, FINDING_COLUMNS, QUERY_COLUMNS, scan_file
from aqe_core.fleet.tables import read_small_table, spark_table

__all__ = ["NeedsSpark", "ScanResult", "expand_local", "is_uri", "read_history", "run_scan"]

_ROLLING = "eventlog_v2_"


def is_uri(source: str) -> bool:
    """``hdfs://...``, ``s3a://...``, ``file:/...``: read through Hadoop (one-letter schemes are
    Windows drives)."""
    head, sep, _ = source.partition(":")
    return bool(sep) and len(head) > 1 and head.replace("+", "").replace("-", "").isalnum()


def _logs_in(directory: Path, skip: frozenset[Path] = frozenset()) -> list[str]:
    """Every log under ``directory``, its subfolders too (a team's logs by job or by day): files,
    and rolling ``eventlog_v2_`` directories as one log each. Hidden names, the folders in
    ``skip`` (the scan's own output) and symlinked folders (a loop, or a tree elsewhere) are left out."""
    if directory.name.startswith(_ROLLING):
        return [str(directory)]
    out = []
    for p in sorted(directory.iterdir()):
        if p.name.startswith(HIDDEN_PREFIXES) or p in skip:
            continue
        if p.is_file():
            out.append(str(p))
        elif p.is_dir() and p.name.startswith(_ROLLING):
            out.append(str(p))
        elif p.is_dir() and not p.is_symlink():
            out.extend(_logs_in(p, skip))
    return out


def expand_local(sources: Iterable[str], skip: Iterable[str] = ()) -> tuple[list[str], list[str]]:
    """Log paths (files and rolling directories, in subfolders too) for local sources, and the
    sources that matched nothing (said, not fatal). ``skip``: folders never read (the output)."""
    paths: list[str] = []
    missing: list[str] = []
    skipped = frozenset(Path(x).resolve() for x in skip)
    for s in sources:
        hits = sorted(glob.glob(s)) if any(c in s for c in "*?[") else ([s] if os.path.exists(s) else [])
        if not hits:
            missing.append(s)
        for h in hits:
            p = Path(h)
            paths.extend(_logs_in(p.resolve(), skipped) if p.is_dir() else [str(p.resolve())])
    return list(dict.fromkeys(paths)), missing


def _expand_uris(spark: Any, uris: list[str], skip: Iterable[str] = ()) -> tuple[list[tuple[str, str, int, int]], list[str]]:
    """(log root, file, length, modification ms) for every file of every log under the URIs
    (Hadoop ``globStatus``), in subfolders too; ``skip``: local folders never read (the output)."""
    jvm, conf = spark._jvm, spark.sparkContext._jsc.hadoopConfiguration()
    out: list[tuple[str, str, int, int]] = []
    missing: list[str] = []
    skipped = frozenset(str(Path(x).resolve()) for x in skip)
    for u in uris:
        path = jvm.org.apache.hadoop.fs.Path(u)
        fs = path.getFileSystem(conf)
        statuses = fs.globStatus(path) or []
        if not statuses:
            missing.append(u)
        for st in statuses:
            _expand_status(fs, st, out, skipped)
    return out, missing


def _expand_status(fs: Any, st: Any, out: list[tuple[str, str, int, int]], skip: frozenset[str]) -> None:
    p = st.getPath()
    name = p.getName()
    uri = p.toUri()
    if name.startswith(HIDDEN_PREFIXES) or (uri.getScheme() in (None, "file") and uri.getPath() in skip):
        return
    if not st.isDirectory():
        out.append((p.toString(), p.toString(), int(st.getLen()), int(st.getModificationTime())))
    elif name.startswith(_ROLLING):
        out.extend((p.toString(), c.getPath().toString(), int(c.getLen()), int(c.getModificationTime()))
                   for c in fs.listStatus(p) if not c.isDirectory() and not c.getPath().getName().startswith(HIDDEN_PREFIXES))
    else:  # a folder: its subfolders too, as a local scan reads them
        for c in fs.listStatus(p):
            _expand_status(fs, c, out, skip)


def _scan_paths(paths: Iterator[str], presets: bool) -> Iterator[tuple[str, Any]]:
    for p in paths:
        q: list[dict[str, Any]] = []
        e, f = scan_file(p, presets=presets, queries=q)
        yield from (("e", r) for r in e)
        yield from (("f", r) for r in f)
        yield from (("q", r) for r in q)


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


#: (application id, code digest) of each package shipped (an id of the Java context object could
#: come back for a later context in the same process; an application id does not)
_SHIPPED: set[tuple[str, str]] = set()
#: local applications whose workers' Python passed :func:`check_executor_python`
_CHECKED: set[str] = set()


def _ship_package(sc: Any) -> None:
    """The ``aqe_core`` package (its ``.py`` files) to every executor with ``addPyFile``, once per
    application and version of the code (Spark refuses a second file of the same name), from a
    folder of its own that is kept: executors fetch it from the driver."""
    import hashlib

    root = Path(__file__).resolve().parent.parent
    files = [p for p in sorted(root.rglob("*.py")) if "__pycache__" not in p.parts]
    digest = hashlib.sha256(b"".join(p.read_bytes() for p in files)).hexdigest()[:16]
    key = (sc.applicationId, digest)
    if key in _SHIPPED:
        return
    out = os.path.join(tempfile.mkdtemp(prefix="aqe-lens-ship-"), f"aqe_core-{digest}.zip")
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
    scan_id: str = ""  # the partition this scan added (fleet.history.new_scan_id)
    unchanged: int = 0  # logs not read again: as their latest scan recorded them
    removed: int = 0  # known logs found gone (deleted, or an .inprogress log completed): out of the fleet now
    queries: int = 0  # rows of the queries table: each log's queries (its executions grouped by plan)


class NeedsSpark(RuntimeError):
    """A scan asked to run without Spark that needs it: a Hadoop URI (a source, the output, a
    known log to check), or CSV output. Raised before anything is read or written."""


def _schemas() -> tuple[Any, Any, Any, Any, Any]:
    from pyspark.sql import types as T

    kinds = {"string": T.StringType(), "long": T.LongType(), "double": T.DoubleType()}

    def struct(types: list[tuple[str, str]]) -> Any:
        return T.StructType([T.StructField(c, kinds[k]) for c, k in types])

    return (struct(EXECUTION_TYPES), struct(FINDING_TYPES), struct(LOG_TYPES),
            struct([(c, "string") for c in REMOVED_COLUMNS]), struct(QUERY_TYPES))


def _tuple(row: dict[str, Any], columns: list[str]) -> tuple:
    return tuple(json.dumps(row[c], sort_keys=True) if c == "preset_changes" else row.get(c) for c in columns)


def run_scan(spark: Any, sources: list[str], out: str, *, fmt: str = "parquet", presets: bool = True,
             progress: Optional[Callable[[int, int], None]] = None, incremental: bool = True,
             cores: int = 1) -> ScanResult:
    """Scan ``sources`` on ``spark`` and add a partition ``scan=<id>`` to ``out``'s executions,
    findings and logs tables. ``incremental``: logs whose fingerprint is the one an earlier scan
    of ``out`` recorded are not read again (:mod:`aqe_core.fleet.history`). Known logs found gone
    go to the ``removed`` table (with ``--full`` too). A scan with nothing to read or remove runs
    no Spark job and writes nothing (its result's ``scan_id`` is empty).

    ``spark`` None: on this machine without Spark, in ``cores`` processes (:mod:`aqe_core.fleet.here`,
    a local master's work), the same tables; :class:`NeedsSpark` where that cannot be."""
    t0 = time.perf_counter()
    sid = new_scan_id()
    if spark is None and (fmt != "parquet" or is_uri(out) or any(is_uri(s) for s in sources)):
        raise NeedsSpark("Hadoop URIs and CSV output are read and written by Spark")
    plan = _plan(spark, sources, out, fmt, incremental)
    roots = sorted({r for r, *_ in plan.blobs})
    counts = (0, 0, 0, 0, 0)
    if spark is None and plan.paths:
        counts = _read_and_write_here(plan, out, sid, presets, progress, cores)
    elif plan.paths or roots:
        counts = _read_and_write(spark, plan, out, fmt, sid, presets, progress)
    if plan.gone:
        target = join_path(out, REMOVED_TABLE, f"{SCAN_COLUMN}={sid}")
        if spark is None:
            write_parquet([(f,) for f in plan.gone], [(c, "string") for c in REMOVED_COLUMNS], target)
        else:
            w = spark.createDataFrame([(f,) for f in plan.gone], _schemas()[3]).coalesce(1).write.mode("overwrite")
            w.option("header", "true").csv(target) if fmt == "csv" else w.parquet(target)
    files, execs, findings, errors, queries = counts
    wrote = bool(plan.paths or roots or plan.gone)
    return ScanResult(out, files, execs - errors, findings, errors, time.perf_counter() - t0, plan.missing,
                      sid if wrote else "", plan.skipped, len(plan.gone), queries)


@dataclass
class _Plan:
    """What a scan reads and what it found gone, decided on the driver before any Spark job."""

    paths: list[str]  # local logs to read
    blobs: list[tuple[str, str, int, int]]  # Hadoop logs' files to read: (log, file, length, mtime)
    prints: dict[str, Fingerprint]  # every log listed, with its fingerprint
    gone: list[str]  # known logs no longer there
    missing: list[str]  # sources that matched nothing
    skipped: int  # logs listed but unchanged since their latest read


def _plan(spark: Any, sources: list[str], out: str, fmt: str, incremental: bool) -> _Plan:
    """List the logs, read ``out``'s ``logs`` and ``removed`` tables (pandas on the driver for a
    local output), and keep to read only the logs new or changed (all with ``incremental`` off)."""
    local, uris = [s for s in sources if not is_uri(s)], [s for s in sources if is_uri(s)]
    paths, missing = expand_local(local, skip=[out])
    blobs, missing_uris = _expand_uris(spark, uris, [] if is_uri(out) else [out]) if uris else ([], [])
    _adopt_unpartitioned(out)
    known = known_logs(read_small_table(spark, out, LOGS_TABLE, fmt, _LOG_TYPES),
                       read_small_table(spark, out, REMOVED_TABLE, fmt, {"file": "string"}))
    prints = {p: fp for p in paths if (fp := fingerprint_local(p)) is not None}
    prints.update(_uri_fingerprints(blobs))
    same = {f for f, fp in prints.items() if known.get(f) == fp} if incremental else set()
    listed = set(paths) | {r for r, *_ in blobs}
    gone = gone_logs(known, listed, lambda f: _exists(spark, f))
    to_read, blobs = [p for p in paths if p not in same], [b for b in blobs if b[0] not in same]
    return _Plan(to_read, blobs, prints, gone, missing + missing_uris,
                 len(prints) - len(to_read) - len({r for r, *_ in blobs}))


_LOG_TYPES = {c: "string" if c == "file" else "long" for c in LOG_COLUMNS}


def _exists(spark: Any, file: str) -> bool:
    """Whether a known log is still there (a Hadoop URI through its file system)."""
    if not is_uri(file):
        return os.path.exists(file)
    if spark is None:
        raise NeedsSpark(f"a log this output knows is on a Hadoop URI ({file}): Spark checks it is still there")
    path = spark._jvm.org.apache.hadoop.fs.Path(file)
    return bool(path.getFileSystem(spark.sparkContext._jsc.hadoopConfiguration()).exists(path))


def _read_and_write(spark: Any, plan: _Plan, out: str, fmt: str, sid: str, presets: bool,
                    progress: Optional[Callable[[int, int], None]]) -> tuple[int, int, int, int, int]:
    """Read the planned logs in one Spark job and write their partition of each table: (files,
    execution rows, finding rows, error rows, query rows)."""
    sc = spark.sparkContext
    paths, blobs = plan.paths, plan.blobs
    _ship_package(sc)
    check_executor_python(sc)
    slices = max(1, min(len(paths), 4 * sc.defaultParallelism))
    rdd = sc.parallelize(paths, slices).mapPartitions(lambda it: _scan_paths(it, presets)) if paths else sc.emptyRDD()
    if blobs:
        roots = {f: r for r, f, *_ in blobs}
        blob_files = sc.binaryFiles(",".join(sorted(roots)))
        rdd = rdd.union(blob_files.map(lambda kv: (roots.get(kv[0], kv[0]), (kv[0], kv[1])))
                        .groupByKey().flatMap(lambda g: _scan_blobs(g, presets)))
    rdd = rdd.cache()
    group = f"aqe-lens-scan-{os.getpid()}-{sid}"
    sc.setJobGroup(group, f"AQE Lens fleet scan of {len(paths) + len({r for r, *_ in blobs})} logs", True)
    stop = threading.Event()
    if progress is not None:
        threading.Thread(target=_watch, args=(sc, group, progress, stop), daemon=True).start()
    try:
        # one job reads every log (a task per slice, so cores share uneven logs) and tallies its
        # rows; the cache keeps them for the writes, which then run in as many tasks as cores
        # (rows are small: fewer tasks, fewer Parquet files). Before, each write and the two
        # counts were a job of a task per slice, about 3 s of every scan on local[2].
        n_execs = n_errors = n_findings = n_queries = 0
        files: set[str] = set()
        for e, errors, f, q, names in rdd.mapPartitions(_tally).collect():
            n_execs, n_errors, n_findings, n_queries = n_execs + e, n_errors + errors, n_findings + f, n_queries + q
            files.update(names)
        rows = rdd.coalesce(max(1, min(slices, sc.defaultParallelism)))
        ex_schema, fi_schema, logs_schema, _, q_schema = _schemas()

        def table(kind: str, columns: list[str], schema: Any) -> Any:
            return spark.createDataFrame(rows.filter(lambda kv: kv[0] == kind).map(lambda kv: _tuple(kv[1], columns)), schema)

        read_now = paths + sorted({r for r, *_ in blobs})
        logs = spark.createDataFrame(as_log_rows(plan.prints, read_now), logs_schema)
        for df, name in ((table("e", EXECUTION_COLUMNS, ex_schema), "executions"),
                         (table("f", FINDING_COLUMNS, fi_schema), "findings"), (logs, LOGS_TABLE),
                         (table("q", QUERY_COLUMNS, q_schema), QUERIES_TABLE)):
            target = join_path(out, name, f"{SCAN_COLUMN}={sid}")
            w = df.write.mode("overwrite")
            w.option("header", "true").csv(target) if fmt == "csv" else w.parquet(target)
    finally:
        stop.set()
        rdd.unpersist()
        sc.setLocalProperty("spark.jobGroup.id", None)
    return len(files), n_execs, n_findings, n_errors, n_queries



def _read_and_write_here(plan: _Plan, out: str, sid: str, presets: bool,
                         progress: Optional[Callable[[int, int], None]], cores: int) -> tuple[int, int, int, int, int]:
    """:func:`_read_and_write` without Spark: the planned local logs read by ``cores`` processes
    of this machine, each table's partition written as one Parquet file."""
    execs: list[tuple] = []
    finds: list[tuple] = []
    queries: list[tuple] = []
    files: set[str] = set()
    errors = 0
    for e, f, q in read_here(plan.paths, cores, presets, progress):
        execs.extend(_tuple(r, EXECUTION_COLUMNS) for r in e)
        finds.extend(_tuple(r, FINDING_COLUMNS) for r in f)
        queries.extend(_tuple(r, QUERY_COLUMNS) for r in q)
        errors += sum(r.get("error") is not None for r in e)
        files.update(r["file"] for r in e)
    for rows, types, name in ((execs, EXECUTION_TYPES, "executions"), (finds, FINDING_TYPES, "findings"),
                              (as_log_rows(plan.prints, plan.paths), LOG_TYPES, LOGS_TABLE),
                              (queries, QUERY_TYPES, QUERIES_TABLE)):
        write_parquet(rows, types, join_path(out, name, f"{SCAN_COLUMN}={sid}"))
    return len(files), len(execs), len(finds), errors, len(queries)


def _tally(rows: Iterator[tuple[str, Any]]) -> Iterator[tuple[int, int, int, int, list[str]]]:
    """A slice's execution rows, error rows among them, finding rows, query rows, and the files
    its execution rows name (every log read has at least one: an error row when it cannot be read)."""
    e = errors = f = q = 0
    names: set[str] = set()
    for kind, row in rows:
        if kind == "e":
            e += 1
            errors += row.get("error") is not None
            names.add(row["file"])
        elif kind == "f":
            f += 1
        else:
            q += 1
    yield e, errors, f, q, sorted(names)


def read_history(spark: Any, out: str, fmt: str = "parquet") -> Any:
    """Every scan's execution rows of ``out`` (the columns a trend or a gate needs) less those of
    logs found gone, as pandas, read through Spark so an ``hdfs://`` output works as a local one."""
    df = spark_table(spark, out, "executions", fmt)
    texts = ("file", "app_id", "app_name", "description", "findings", "error", SCAN_COLUMN)
    numbers = ("execution_id", "app_start_ms", "wasted_task_ms")
    rows = df.selectExpr(*[f"CAST({c} AS string) AS {c}" for c in texts],
                         *[f"CAST({c} AS long) AS {c}" for c in numbers]).toPandas()
    return without_removed(rows, read_small_table(spark, out, REMOVED_TABLE, fmt, {"file": "string"}))


class ExecutorPythonError(RuntimeError):
    """The executors' Python cannot read logs: said before any log is read, naming what is missing."""


def check_executor_python(sc: Any) -> None:
    """One small job (a task per core) that imports what reading a log needs, so a Python
    without the project's packages fails the scan at once, naming the modules and the fix,
    instead of turning every compressed log into an error row. On a local master it runs once
    per application: its workers are the driver host's, started with the Python the context
    fixed at its start; a cluster may add executors on other hosts, so there it runs every scan."""
    local = str(sc.master).startswith("local")
    if local and sc.applicationId in _CHECKED:
        return
    n = max(1, min(sc.defaultParallelism, 64))
    try:
        seen = sc.parallelize(range(n), n).map(missing_modules).distinct().collect()
    except Exception as e:  # noqa: BLE001 - the worker itself did not start
        raise ExecutorPythonError(f"the executors' Python cannot run Spark's Python worker ({reason_line(e, 200)}): "
                                  + _PYTHON_FIX) from None
    bad = [(python, missing) for python, missing in seen if missing]
    if bad:
        said = "; ".join(f"{python} lacks {', '.join(missing)}" for python, missing in bad)
        raise ExecutorPythonError(f"the executors' Python cannot read logs: {said}. " + _PYTHON_FIX)
    if local:
        _CHECKED.add(sc.applicationId)


_PYTHON_FIX = ("Fix: PYSPARK_PYTHON naming a Python with requirements.txt on every node, or scan --ship-python"
               " (a venv of them shipped with spark.archives; README, Fleet)")


def _uri_fingerprints(blobs: list[tuple[str, str, int, int]]) -> dict[str, Fingerprint]:
    """Each Hadoop log's fingerprint from its files' statuses (a rolling log: all its parts)."""
    by_root: dict[str, list[tuple[int, int]]] = {}
    for root, _, length, mtime in blobs:
        by_root.setdefault(root, []).append((length, mtime))
    return {r: Fingerprint(sum(n for n, _ in v), max(m for _, m in v), len(v)) for r, v in by_root.items()}


def _adopt_unpartitioned(out: str) -> None:
    """A scan directory written before scans were partitioned (tables' part files directly in
    ``executions/``, ``findings/``): its files become the oldest scan, so the tables stay one
    readable layout."""
    if "://" in out:
        return
    for name in ("executions", "findings"):
        table = Path(out) / name
        parts = [p for p in table.glob("*") if p.is_file()] if table.is_dir() else []
        if parts:
            into = table / f"{SCAN_COLUMN}={UNPARTITIONED_SCAN}"
            into.mkdir(exist_ok=True)
            for p in parts:
                p.rename(into / p.name)


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
