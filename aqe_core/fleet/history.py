"""A scan directory's history (issue 27): every scan adds a partition, ``scan=<id>``, to each of
its tables, and a ``logs`` table of what it read (path, size, modification time, parts), so a
rescan reads only the logs that are new or changed (a rolling log that got a new part counts as
changed) and the Fleet page can follow each application over time.

A log that is gone (deleted, or an ``.inprogress`` log renamed when its application finished) is
written to a ``removed`` table, only on a night that finds one gone: its rows leave the fleet,
its trend and the gate (:func:`without_removed`). A night with nothing new or gone writes nothing.

An application here is a job's name (``spark.app.name``): each nightly run is a new Spark
application with a new id and log, and the trend is the runs of one name by their start time.
"""
from __future__ import annotations

import datetime as _dt
import os
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Callable, Iterable, Mapping, Optional

if TYPE_CHECKING:  # pandas only where a table is built: the scan's executors import this module without it
    import pandas as pd

__all__ = ["LOGS_TABLE", "REMOVED_TABLE", "SCAN_COLUMN", "Fingerprint", "app_runs", "fingerprint_local", "gone_logs",
           "known_logs", "new_scan_id", "without_removed", "worse_since_last"]

#: the partition column every table of a scan directory carries
SCAN_COLUMN = "scan"
#: the table of logs each scan read, with their fingerprints
LOGS_TABLE = "logs"
LOG_COLUMNS = ["file", "size", "mtime_ms", "parts"]
#: the table of logs found gone, written by the scan that found them so (never an empty one)
REMOVED_TABLE = "removed"
#: the table of each log's queries (:class:`~aqe_core.fleet.rows.QueryRow`)
QUERIES_TABLE = "queries"
REMOVED_COLUMNS = ["file"]
#: the scan a directory's tables written before partitioning count as (sorts before any real one)
UNPARTITIONED_SCAN = "00000000T000000000Z"


def new_scan_id(now: Optional[_dt.datetime] = None) -> str:
    """A scan's partition value: its UTC start to the millisecond (two scans in one second stay
    apart), sortable as text.

    >>> new_scan_id(_dt.datetime(2026, 11, 26, 5, 58, 0, 123456, tzinfo=_dt.timezone.utc))
    '20261126T055800123Z'
    """
    now = (now or _dt.datetime.now(_dt.timezone.utc)).astimezone(_dt.timezone.utc)
    return now.strftime("%Y%m%dT%H%M%S") + f"{now.microsecond // 1000:03d}Z"


@dataclass(frozen=True)
class Fingerprint:
    """What says a log changed since it was read: its bytes, its newest modification, its
    number of files (a rolling log's parts, 1 for a plain file)."""

    size: int
    mtime_ms: int
    parts: int = 1


#: name prefixes of what Spark and Hadoop leave beside logs (``_SUCCESS``, ``.x.crc``, a part being written)
HIDDEN_PREFIXES = (".", "_")


def log_names(files: pd.Series) -> pd.Series:
    """Each log's own name (a path's last part; a rolling directory's name, trailing slash or not)."""
    return files.astype(str).str.rstrip("/").str.rsplit("/", n=1).str[-1]


def fingerprint_local(path: str) -> Optional[Fingerprint]:
    """A local log's fingerprint (a rolling directory: every part file's), None when gone."""
    try:
        p = Path(path)
        if p.is_dir():
            stats = [c.stat() for c in p.iterdir() if c.is_file() and not c.name.startswith(HIDDEN_PREFIXES)]
            return Fingerprint(sum(s.st_size for s in stats), max((s.st_mtime_ns for s in stats), default=0) // 10**6,
                               len(stats))
        st = p.stat()
        return Fingerprint(st.st_size, st.st_mtime_ns // 10**6, 1)
    except OSError:
        return None


def known_logs(read_before: Optional[pd.DataFrame], removed_before: Optional[pd.DataFrame] = None) -> dict[str, Fingerprint]:
    """Each log of the fleet as its latest read recorded it (``read_before``: the ``logs`` table
    of earlier scans), less the logs found gone since (``removed_before``: the ``removed`` table)."""
    if read_before is None or read_before.empty:
        return {}
    latest = read_before.sort_values(SCAN_COLUMN).groupby("file").tail(1)
    gone = _latest_removal(removed_before)
    return {str(r.file): Fingerprint(int(r.size), int(r.mtime_ms), int(r.parts)) for r in latest.itertuples()
            if gone.get(str(r.file), "") < str(getattr(r, SCAN_COLUMN))}


def _latest_removal(removed: Optional[pd.DataFrame]) -> dict[str, str]:
    """Each file's latest scan that found it gone."""
    if removed is None or removed.empty:
        return {}
    return {str(f): str(s) for f, s in removed.groupby("file")[SCAN_COLUMN].max().items()}


def unchanged(current: Mapping[str, Fingerprint], read_before: Optional[pd.DataFrame],
              removed_before: Optional[pd.DataFrame] = None) -> set[str]:
    """The logs whose fingerprint is the one their latest read recorded (``read_before``: the
    ``logs`` table of earlier scans; a log found gone since counts as new)."""
    seen = known_logs(read_before, removed_before) if current else {}
    return {f for f, fp in current.items() if seen.get(f) == fp}


def gone_logs(known: Iterable[str], listed: Iterable[str], exists: Callable[[str], bool]) -> list[str]:
    """The ``known`` logs this scan did not list and that no longer exist: deleted, or renamed
    (an ``.inprogress`` log its application completed). A log still there but outside this
    scan's sources (another folder scanned into the same output) stays in the fleet."""
    listed = set(listed)
    return sorted(f for f in known if f not in listed and not exists(f))


def without_removed(rows: pd.DataFrame, removed: Optional[pd.DataFrame]) -> pd.DataFrame:
    """``rows`` (of any table, with column ``scan``) less those a later scan found gone: a
    deleted log leaves the fleet, its trend and the gate; one put back counts from its new read."""
    gone = _latest_removal(removed)
    if not gone or rows.empty or SCAN_COLUMN not in rows.columns:
        return rows
    until = rows["file"].astype(str).map(gone)
    keep = until.isna() | (rows[SCAN_COLUMN].astype(str) > until.fillna(""))
    return rows[keep].reset_index(drop=True)


def current_rows(history: pd.DataFrame) -> pd.DataFrame:
    """Each log's rows from the latest scan that read it: the fleet as it is now."""
    if history.empty or SCAN_COLUMN not in history.columns:
        return history
    last = history.groupby("file")[SCAN_COLUMN].transform("max")
    return history[history[SCAN_COLUMN] == last].reset_index(drop=True)


def app_runs(history: pd.DataFrame) -> pd.DataFrame:
    """One row per application run (a log's latest read): its job name, start, SQL executions,
    findings and wasted task time, oldest first. A run without a name is named by its log."""
    import pandas as pd

    cols = ["app", "app_id", "file", "start", "executions", "findings", "wasted_task_s", SCAN_COLUMN]
    now = current_rows(history)
    if now.empty:
        return pd.DataFrame(columns=cols)
    ok = now[now["error"].isna()]
    if ok.empty:
        return pd.DataFrame(columns=cols)
    name = ok["app_name"].where(ok["app_name"].notna() & (ok["app_name"] != ""), log_names(ok["file"]))
    counted = ok.assign(app=name, n_findings=ok["findings"].fillna("").map(lambda t: len([f for f in t.split(",") if f])))
    runs = counted.groupby("file", sort=False).agg(
        app=("app", "first"), app_id=("app_id", "first"), start_ms=("app_start_ms", "min"),
        executions=("execution_id", "count"), findings=("n_findings", "sum"),
        wasted_ms=("wasted_task_ms", "sum"), scan=(SCAN_COLUMN, "first")).reset_index()
    runs["start"] = pd.to_datetime(runs["start_ms"], unit="ms", utc=True, errors="coerce")
    runs["wasted_task_s"] = (runs["wasted_ms"].fillna(0) / 1000).round(1)
    runs = runs.sort_values(["start", "file"], na_position="first", kind="stable")
    return runs[cols].reset_index(drop=True)


@dataclass(frozen=True)
class Change:
    """One application's latest run against its run before."""

    app: str
    before_file: str
    after_file: str
    wasted_before_s: float
    wasted_after_s: float
    findings_before: int
    findings_after: int

    @property
    def wasted_increase_pct(self) -> Optional[float]:
        """The rise in wasted task time, in percent of the run before (None from zero)."""
        if self.wasted_before_s <= 0:
            return None if self.wasted_after_s <= 0 else float("inf")
        return 100.0 * (self.wasted_after_s - self.wasted_before_s) / self.wasted_before_s

    @property
    def worse(self) -> bool:
        return self.wasted_after_s > self.wasted_before_s or self.findings_after > self.findings_before


def changes(history: pd.DataFrame, scans: Optional[Iterable[str]] = None) -> list[Change]:
    """Each application with a run read in ``scans`` (default: the latest scan) against its run
    before (in any scan), by start time. An application seen once has no change."""
    runs = app_runs(history)
    if runs.empty:
        return []
    wanted = set(scans) if scans is not None else {runs[SCAN_COLUMN].max()}
    out = []
    for app, group in runs.groupby("app", sort=True):
        group = group.reset_index(drop=True)
        idx = [i for i in range(len(group)) if group.at[i, SCAN_COLUMN] in wanted]
        if not idx or idx[-1] == 0:
            continue
        a, b = group.iloc[idx[-1] - 1], group.iloc[idx[-1]]
        out.append(Change(str(app), str(a["file"]), str(b["file"]), float(a["wasted_task_s"]), float(b["wasted_task_s"]),
                          int(a["findings"]), int(b["findings"])))
    return out


def worse_since_last(history: pd.DataFrame) -> list[Change]:
    """The applications whose run read in the latest scan wasted more task time or had more
    findings than their run before."""
    return [c for c in changes(history) if c.worse]


def as_log_rows(prints: Mapping[str, Fingerprint], files: Iterable[str]) -> list[tuple[str, int, int, int]]:
    """The ``logs`` table's rows for the ``files`` read (in LOG_COLUMNS order)."""
    return [(f, prints[f].size, prints[f].mtime_ms, prints[f].parts) for f in files if f in prints]


def join_path(base: str, *names: str) -> str:
    """A path under a scan directory that may be a Hadoop URI (``hdfs://nn/scans``) or local."""
    return "/".join([base.rstrip("/"), *names]) if "://" in base else os.path.join(base, *names)
