"""A scan directory's own small tables (``logs``, ``removed``) read back by the next scan.

Both are read with pandas on the driver, so a nightly scan that finds nothing new runs no Spark
job at all (a Spark read of the ``logs`` table took 6.6 s of an 11 s night that read nothing): a
local output from its folder, a Hadoop URI output (``hdfs://``, ``s3a://``) file by file through
Hadoop's FileSystem in the driver's JVM.
"""
from __future__ import annotations

import functools
from pathlib import Path
from typing import Any, Optional

from aqe_core.fleet.history import HIDDEN_PREFIXES, SCAN_COLUMN, join_path

__all__ = ["read_small_table", "spark_table"]


def spark_table(spark: Any, out: str, name: str, fmt: str) -> Any:
    """Every scan's partition of ``out``'s table ``name`` as one Spark DataFrame (column ``scan``)."""
    path = join_path(out, name)
    reader = spark.read.option("basePath", path)
    return reader.option("header", "true").csv(path) if fmt == "csv" else reader.parquet(path)


def read_small_table(spark: Any, out: str, name: str, fmt: str, columns: dict[str, str]) -> Optional[Any]:
    """``out``'s table ``name`` as pandas, with ``columns`` (name -> ``string`` or ``long``) and
    ``scan``; None when no scan wrote it yet. Read on the driver, without a Spark job: a local
    output from its folder, a Hadoop URI's part files through Hadoop's FileSystem."""
    if "://" not in out and not out.startswith("file:"):
        table = Path(out) / name
        if not table.is_dir():
            return None
        folders = [(p.name, sorted(p.iterdir())) for p in sorted(table.iterdir()) if p.is_dir()]
        return _frame([(f.split("=", 1)[1], part.name, part) for f, parts in folders
                       if f.startswith(f"{SCAN_COLUMN}=") for part in parts], fmt, columns)
    return _hadoop_table(spark, join_path(out, name), fmt, columns)


def _hadoop_table(spark: Any, table: str, fmt: str, columns: dict[str, str]) -> Optional[Any]:
    """A Hadoop URI table's part files, each read whole through the JVM's FileSystem (a small
    table: a few files per scan), parsed by pandas."""
    import io

    jvm = spark._jvm
    path = jvm.org.apache.hadoop.fs.Path(table)
    fs = path.getFileSystem(spark.sparkContext._jsc.hadoopConfiguration())
    if not fs.exists(path):
        return None
    parts: list[tuple[str, str, Any]] = []
    for folder in sorted(fs.listStatus(path), key=lambda st: st.getPath().getName()):
        fname = folder.getPath().getName()
        if not folder.isDirectory() or not fname.startswith(f"{SCAN_COLUMN}="):
            continue
        for st in sorted(fs.listStatus(folder.getPath()), key=lambda x: x.getPath().getName()):
            pname = st.getPath().getName()
            if st.isDirectory() or not _is_part(pname, fmt):
                continue
            stream = fs.open(st.getPath())
            try:
                data = bytes(jvm.org.apache.commons.io.IOUtils.toByteArray(stream))
            finally:
                stream.close()
            parts.append((fname.split("=", 1)[1], pname, io.BytesIO(data)))
    return _frame(parts, fmt, columns)


def _is_part(name: str, fmt: str) -> bool:
    return not name.startswith(HIDDEN_PREFIXES) and name.endswith(".csv" if fmt == "csv" else ".parquet")


def _frame(parts: list[tuple[str, str, Any]], fmt: str, columns: dict[str, str]) -> Any:
    """(scan id, part file name, path or bytes) of a table's part files as one pandas frame."""
    import pandas as pd

    # Spark's CSV writer escapes a quote inside a value as \" (not "" as pandas assumes)
    read = functools.partial(pd.read_csv, escapechar="\\", dtype={"file": str}) if fmt == "csv" else pd.read_parquet
    frames = []
    for scan, name, part in parts:
        if not _is_part(name, fmt):
            continue
        try:
            frame = read(part)
        except pd.errors.EmptyDataError:  # an empty CSV part: no header either
            continue
        frames.append(frame.assign(**{SCAN_COLUMN: scan}))
    if not frames:
        return pd.DataFrame(columns=[*columns, SCAN_COLUMN])
    df = pd.concat(frames, ignore_index=True)
    for c, t in columns.items():
        df[c] = df[c].astype(str) if t == "string" else pd.to_numeric(df[c]).astype("int64")
    return df[[*columns, SCAN_COLUMN]]
