"""A scan directory's own small tables (``logs``, ``removed``) read back by the next scan.

A local output is read with pandas on the driver: a nightly scan that finds nothing new then
runs no Spark job at all (a Spark read of the ``logs`` table took 6.6 s of an 11 s night that
read nothing). A Hadoop URI output (``hdfs://``, ``s3a://``) is read through Spark.
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
    ``scan``; None when no scan wrote it yet."""
    if "://" not in out and not out.startswith("file:"):
        return _local_table(Path(out) / name, fmt, columns)
    hpath = spark._jvm.org.apache.hadoop.fs.Path(join_path(out, name))
    if not hpath.getFileSystem(spark.sparkContext._jsc.hadoopConfiguration()).exists(hpath):
        return None
    return spark_table(spark, out, name, fmt).selectExpr(*[f"CAST({c} AS {t}) AS {c}" for c, t in columns.items()],
                                                         f"CAST({SCAN_COLUMN} AS string) AS {SCAN_COLUMN}").toPandas()


def _local_table(table: Path, fmt: str, columns: dict[str, str]) -> Optional[Any]:
    """The part files of each ``scan=<id>`` folder of a local table, read on the driver."""
    import pandas as pd

    if not table.is_dir():
        return None
    suffix = ".csv" if fmt == "csv" else ".parquet"
    # Spark's CSV writer escapes a quote inside a value as \" (not "" as pandas assumes)
    read = functools.partial(pd.read_csv, escapechar="\\", dtype={"file": str}) if fmt == "csv" else pd.read_parquet
    frames = []
    for folder in sorted(p for p in table.iterdir() if p.is_dir() and p.name.startswith(f"{SCAN_COLUMN}=")):
        scan = folder.name.split("=", 1)[1]
        for part in sorted(folder.iterdir()):
            if part.name.startswith(HIDDEN_PREFIXES) or not part.name.endswith(suffix):
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
