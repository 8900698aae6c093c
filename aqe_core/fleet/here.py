"""The fleet scan on a local master, without a JVM (issue 41): the logs read by processes of this
machine, the tables written with pyarrow.

On a local master (``local``, ``local[N]``, ``local[*]``) Spark's executors are this machine's
cores and its Python workers run this interpreter: the Spark job of :mod:`aqe_core.fleet.scan`
reads each log with :func:`~aqe_core.fleet.rows.scan_file` in one of them. Here the same calls
run in a pool of as many processes (forked from this one, so the reader's modules come loaded),
and the rows, a few thousand, are written on the driver as the same Parquet part files. What the
Spark job cost beside the reading (about 2-4 s on an idle machine, much more on a busy one: the
JVM's start, the Python workers' start and check, a job per table) is gone; a scan of a dozen
mid-size logs is mostly that cost (bench/bench_scan.py ``--cli``).

Hadoop URIs, CSV output, a cluster master, Spark settings or a ``PYSPARK_PYTHON`` naming another
Python (the workers the user chose, which the Spark job checks for the packages) keep the Spark job.
"""
from __future__ import annotations

import multiprocessing
import os
import re
import shutil
import sys
import threading
import uuid
from typing import Any, Callable, Iterator, Optional, Sequence

from aqe_core.fleet.history import LOG_COLUMNS
from aqe_core.fleet.rows import EXECUTION_COLUMNS, FINDING_COLUMNS, QUERY_COLUMNS, scan_file

__all__ = ["local_cores", "read_here", "workers_run_this_python", "write_parquet"]

_LOCAL = re.compile(r"local(?:\[(\*|\d+)(?:,\d+)?\])?")

#: a log's execution rows, finding rows and query rows
Rows = tuple[list[dict[str, Any]], list[dict[str, Any]], list[dict[str, Any]]]


def local_cores(master: Optional[str]) -> Optional[int]:
    """The cores of a local master URL (``local[*]``: this machine's), None for any other.

    >>> local_cores("local[3]"), local_cores("local"), local_cores("local[2,4]"), local_cores("spark://h:7077")
    (3, 1, 2, None)
    >>> local_cores("local-cluster[2,1,1024]") is None
    True
    """
    m = _LOCAL.fullmatch(master or "")
    if m is None:
        return None
    n = m.group(1)
    if n is None:
        return 1
    if n == "*":
        return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)
    return max(1, int(n))


def workers_run_this_python() -> bool:
    """Whether Spark's Python workers would run this interpreter: ``PYSPARK_PYTHON`` unset, or
    naming this very Python (processes forked from it stand for them only then)."""
    chosen = os.environ.get("PYSPARK_PYTHON")
    if not chosen:
        return True
    found = shutil.which(chosen) or chosen
    # (the paths as named, links not followed: a venv's python links to the system's, whose
    # packages are not the venv's)
    return os.path.abspath(found) == os.path.abspath(sys.executable)


def _scan_one(job: tuple[int, str, bool]) -> tuple[int, Rows]:
    i, path, presets = job
    queries: list[dict[str, Any]] = []
    execs, finds = scan_file(path, presets=presets, queries=queries)
    return i, (execs, finds, queries)


def read_here(paths: Sequence[str], cores: int, presets: bool,
              progress: Optional[Callable[[int, int], None]] = None) -> Iterator[Rows]:
    """Each log's rows (:func:`~aqe_core.fleet.rows.scan_file`), in ``paths``' order, read by
    ``cores`` processes (one log, or one core: in this process). The largest logs start first,
    so the last log read is a small one and no core waits long for the others."""
    jobs = [(i, p, presets) for i, p in enumerate(paths)]
    jobs.sort(key=lambda j: -_size(j[1]))
    got: dict[int, Rows] = {}
    if cores <= 1 or len(jobs) <= 1:
        results: Iterator[tuple[int, Rows]] = map(_scan_one, jobs)
        got = _collect(results, len(jobs), progress)
    else:
        # forked (the reader's modules come loaded) where this process runs no other thread: a fork
        # copies no thread, only the locks they may hold (a JVM's gateway, a server's handlers)
        fork = "fork" in multiprocessing.get_all_start_methods() and threading.active_count() == 1
        ctx = multiprocessing.get_context("fork" if fork else "spawn")
        with ctx.Pool(min(cores, len(jobs))) as pool:
            got = _collect(pool.imap_unordered(_scan_one, jobs, chunksize=1), len(jobs), progress)
    return (got[i] for i in range(len(jobs)))


def _collect(results: Iterator[tuple[int, Rows]], total: int,
             progress: Optional[Callable[[int, int], None]]) -> dict[int, Rows]:
    got: dict[int, Rows] = {}
    for i, rows in results:
        got[i] = rows
        if progress is not None:
            progress(len(got), total)
    return got


def _size(path: str) -> int:
    try:
        if os.path.isdir(path):
            return sum(e.stat().st_size for e in os.scandir(path) if e.is_file())
        return os.path.getsize(path)
    except OSError:
        return 0


def arrow_type(kind: str) -> Any:
    import pyarrow as pa

    return {"long": pa.int64(), "double": pa.float64()}.get(kind, pa.string())


def write_parquet(rows: Sequence[tuple], columns: Sequence[tuple[str, str]], target: str) -> None:
    """``rows`` (tuples in ``columns``' order; ``columns``: name and ``string`` / ``long`` /
    ``double``) as one Parquet part file in the folder ``target``, replaced if there, named and
    compressed as Spark's writer does (``part-00000-<uuid>-c000.snappy.parquet``, ``_SUCCESS``)."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    schema = pa.schema([pa.field(c, arrow_type(k)) for c, k in columns])
    data: list[Sequence[Any]] = list(zip(*rows)) if rows else [() for _ in columns]
    table = pa.Table.from_arrays([_column(list(col), kind) for col, (_, kind) in zip(data, columns)], schema=schema)
    shutil.rmtree(target, ignore_errors=True)
    os.makedirs(target)
    pq.write_table(table, os.path.join(target, f"part-00000-{uuid.uuid4()}-c000.snappy.parquet"), compression="snappy")
    open(os.path.join(target, "_SUCCESS"), "wb").close()


#: Python types a column of each kind is built from without ``pyarrow.array`` (anything else: by it)
_PLAIN = {"string": (str,), "long": (int,), "double": (float, int)}


def _column(values: list[Any], kind: str) -> Any:
    """``pyarrow.array(values, type=arrow_type(kind))``, built from its buffers where every value
    is None or of the kind's plain type: ``pyarrow.array`` imports pandas on its first call, 0.3-0.4 s
    of the scan command's CPU for a scan that reads no earlier table. The same array either way;
    any other value (a bool, an int past a double's exact range, text with a lone surrogate, more
    than 2 GiB of text) goes to ``pyarrow.array`` as before.

    >>> _column(["a", None, "é"], "string").to_pylist(), _column([3, None], "long").to_pylist()
    (['a', None, 'é'], [3, None])
    >>> _column([0.5, 2, None], "double").to_pylist()
    [0.5, 2.0, None]
    """
    import array
    import itertools

    import pyarrow as pa

    plain = _PLAIN[kind]
    n, nulls = len(values), values.count(None)
    if not all(v is None or type(v) in plain for v in values) or (
            kind == "double" and any(type(v) is int and abs(v) > 2**53 for v in values)):
        return pa.array(values, type=arrow_type(kind))
    valid = bytearray((n + 7) // 8)
    for i, v in enumerate(values):
        if v is not None:
            valid[i >> 3] |= 1 << (i & 7)
    try:
        if kind == "string":
            text = [v.encode() if v is not None else b"" for v in values]
            offsets = array.array("i", [0, *itertools.accumulate(map(len, text))])
            buffers = [pa.py_buffer(offsets), pa.py_buffer(b"".join(text))]
        else:
            buffers = [pa.py_buffer(array.array("q" if kind == "long" else "d",
                                                (0 if v is None else v for v in values)))]
    except (UnicodeEncodeError, OverflowError):  # (lone surrogates; past int32 offsets or int64)
        return pa.array(values, type=arrow_type(kind))
    return pa.Array.from_buffers(arrow_type(kind), n, [pa.py_buffer(valid) if nulls else None, *buffers],
                                 null_count=nulls)


#: the executions table's columns that are not text (the rest are)
_EXECUTION_KINDS = {"execution_id": "long", "app_start_ms": "long", "duration_ms": "long", "partitions_before": "long",
                    "partitions_after": "long", "skew_splits": "long", "wasted_task_ms": "long", "score": "double"}
EXECUTION_TYPES = [(c, _EXECUTION_KINDS.get(c, "string")) for c in EXECUTION_COLUMNS]
FINDING_TYPES = [(c, "long" if c == "execution_id" else "string") for c in FINDING_COLUMNS]
_QUERY_TEXT = {"file", "app_id", "app_name", "query", "name", "evidence", "decisions", "decisions_json", "change_sentences"}
QUERY_TYPES = [(c, "string" if c in _QUERY_TEXT else "long") for c in QUERY_COLUMNS]
LOG_TYPES = [(c, "string" if c == "file" else "long") for c in LOG_COLUMNS]
