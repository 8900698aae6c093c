"""A fleet scan's result, read back for the Fleet page: the executions and findings tables,
filtered and sorted, and what a preset would change across the fleet (issue 14).

The tables are what ``python -m aqe_core scan`` wrote (Parquet or CSV directories). Reading one
never runs Spark and never opens a log: opening an execution goes through the app's usual
source loading, confined to the server's roots.
"""
from __future__ import annotations

import functools
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Mapping, Optional

import pandas as pd

from aqe_core.fleet.history import QUERIES_TABLE, REMOVED_TABLE, SCAN_COLUMN, UNPARTITIONED_SCAN, current_rows, without_removed
# (Unopenable, local_path, unopenable: here before the scan command said them before it reads)
from aqe_core.fleet.reach import Unopenable, local_path, unopenable
from aqe_core.opening import SourceError, read_checked_files, resolve_in_roots
from aqe_core.views.triage import FINDINGS

__all__ = ["FleetScan", "SORTS", "Unopenable", "load_scan", "local_path", "preset_impact", "unopenable"]

#: sort choice -> (column, descending)
SORTS = {"wasted task time": ("wasted_task_ms", True), "triage score": ("score", True),
         "duration": ("duration_ms", True), "file": ("file", False)}


@dataclass
class FleetScan:
    path: str
    executions: pd.DataFrame  # the fleet now: each log's rows from the latest scan that read it
    findings: pd.DataFrame  # the same logs' findings
    history: Optional[pd.DataFrame] = None  # every scan's execution rows (column ``scan``)
    #: each log's queries (its executions grouped by query, from its latest read); None: the
    #: scan wrote no queries table (before issue 41) or it is empty
    queries: Optional[pd.DataFrame] = None

    def repeated_queries(self) -> pd.DataFrame:
        """The queries run more than once (a streaming query's micro-batches, a statement run
        again), most executions first; empty without a queries table."""
        q = self.queries
        if q is None or q.empty or "executions" not in q.columns:
            return pd.DataFrame()
        q = q[q["executions"].fillna(0) > 1]
        return q.sort_values(["executions", "file"], ascending=[False, True], kind="stable").reset_index(drop=True)

    @property
    def scans(self) -> list[str]:
        rows = self.history if self.history is not None else self.executions
        return sorted(rows[SCAN_COLUMN].dropna().unique()) if SCAN_COLUMN in rows.columns else []

    @property
    def errors(self) -> pd.DataFrame:
        return self.executions[self.executions["error"].notna()]

    def finding_counts(self) -> dict[str, int]:
        counts = self.findings["finding"].value_counts().to_dict() if len(self.findings) else {}
        return {f: int(counts.get(f, 0)) for f in FINDINGS if counts.get(f)}

    def rows(self, findings: Optional[list[str]] = None, text: str = "", sort: str = "wasted task time") -> pd.DataFrame:
        """Executions (without error rows) having one of ``findings``, matching ``text``, sorted."""
        df = self.executions[self.executions["error"].isna()]
        if findings:
            has = df["findings"].fillna("").str.split(",").apply(lambda fs: bool(set(fs) & set(findings)))
            df = df[has]
        needle = text.strip().lower()
        if needle:
            hay = (df["file"].fillna("") + " " + df["description"].fillna("") + " " + df["outcome"].fillna("")).str.lower()
            df = df[hay.str.contains(needle, regex=False)]
        col, desc = SORTS.get(sort, SORTS["wasted task time"])
        return df.sort_values(col, ascending=not desc, na_position="last", kind="stable").reset_index(drop=True)


def _read(d: Path, roots: Optional[list[str]]) -> pd.DataFrame:
    """One table: the part files of each ``scan=<id>`` partition (with its ``scan`` column), or of
    the folder itself (a table written before scans were partitioned), each read from a
    descriptor opened under its checked folder."""
    scans = sorted(p for p in d.iterdir() if p.is_dir() and p.name.startswith(f"{SCAN_COLUMN}=")) if d.is_dir() else []
    frames = []
    for folder, scan in [(p, p.name.split("=", 1)[1]) for p in scans] or [(d, UNPARTITIONED_SCAN)]:
        frame = _read_parts(folder, roots)
        if frame is not None:
            frames.append(frame.assign(**{SCAN_COLUMN: scan}))
    if not frames:
        raise SourceError(f"{d.name}: no Parquet or CSV part files (is this a scan result?)")
    return pd.concat(frames, ignore_index=True) if len(frames) > 1 else frames[0]


def _read_parts(d: Path, roots: Optional[list[str]]) -> Optional[pd.DataFrame]:
    # Spark's CSV writer escapes a quote inside a value as \" (not "" as pandas assumes)
    csv = functools.partial(pd.read_csv, escapechar="\\")
    for suffix, read in ((".parquet", pd.read_parquet), (".csv", csv)):
        frames = read_checked_files(d, suffix, read, roots)
        if frames:
            return pd.concat(frames, ignore_index=True) if len(frames) > 1 else frames[0]
    return None


def load_scan(path: str, roots: Optional[list[str]] = None) -> FleetScan:
    """The scan result directory at ``path`` (confined to ``roots``, default the server's): the
    fleet now (each log's rows from the latest scan that read it) and every scan's rows, less
    the logs a later scan found gone.
    Raises :class:`SourceError` with a message for people."""
    base = resolve_in_roots(path, roots)
    ex_dir, fi_dir = base / "executions", base / "findings"
    if not ex_dir.is_dir() or not fi_dir.is_dir():
        raise SourceError(f"{base.name}: not a fleet scan result (it has no executions/ and findings/ tables)")
    try:
        ex, fi, gone = _read(ex_dir, roots), _read(fi_dir, roots), _removed(base / REMOVED_TABLE, roots)
    except SourceError:
        raise
    except Exception as e:  # noqa: BLE001 - a damaged table is a message, not a traceback
        raise SourceError(f"{base.name}: the scan tables cannot be read ({type(e).__name__})") from None
    need = {"file", "execution_id", "findings", "error", "preset_changes", "wasted_task_ms"}
    if not need <= set(ex.columns):
        raise SourceError(f"{base.name}: the executions table lacks {sorted(need - set(ex.columns))}")
    if "finding" not in fi.columns:
        raise SourceError(f"{base.name}: the findings table lacks ['finding']")
    history, found = without_removed(_typed(ex, _EX_TYPES), gone), without_removed(_typed(fi, _FI_TYPES), gone)
    now = current_rows(history)
    latest = now.groupby("file")[SCAN_COLUMN].first().to_dict() if len(now) else {}
    found_now = found[found["file"].map(latest) == found[SCAN_COLUMN]].reset_index(drop=True)
    return FleetScan(str(base), now, found_now, history, _queries_now(base, roots, gone, latest))


def _queries_now(base: Path, roots: Optional[list[str]], gone: Optional[pd.DataFrame],
                 latest: Mapping[str, str]) -> Optional[pd.DataFrame]:
    """The queries table's rows of each log's latest read (None: no such table, or no rows)."""
    table = base / QUERIES_TABLE
    if not table.is_dir():
        return None
    try:
        rows = without_removed(_typed(_read(table, roots), _Q_TYPES), gone)
    except Exception:  # noqa: BLE001 - no part file (logs without SQL executions) or a damaged table: the rest reads
        return None
    if rows.empty:  # (_typed gave it every column)
        return None
    return rows[rows["file"].map(latest) == rows[SCAN_COLUMN]].reset_index(drop=True)


def _removed(table: Path, roots: Optional[list[str]]) -> Optional[pd.DataFrame]:
    """The ``removed`` table (logs found gone, by scan), None when no scan found one gone."""
    return _typed(_read(table, roots), {"file": str, SCAN_COLUMN: str}) if table.is_dir() else None


#: what each column the Fleet page reads holds (a CSV guesses types; a damaged table may lie)
_EX_TYPES = {**{c: str for c in ("file", "description", "findings", "error", "preset_changes", "outcome", "app_id",
                                 "source_label", "spark_version", "status", "evidence", "joins", "unsplit_why",
                                 "read_stage_tasks", "app_name", SCAN_COLUMN)},
             **{c: float for c in ("execution_id", "app_start_ms", "wasted_task_ms", "duration_ms", "score", "partitions_before",
                                   "partitions_after", "skew_splits")}}
_FI_TYPES = {c: str for c in ("file", "finding", "label", "detail", "app_id", SCAN_COLUMN)}
_Q_TYPES = {**{c: str for c in ("file", "app_id", "app_name", "query", "name", "evidence", "decisions",
                                "change_sentences", SCAN_COLUMN)},
            **{c: float for c in ("executions", "first_execution", "last_execution", "first_start_ms", "last_end_ms",
                                  "span_ms", "not_final", "changes")}}


def _typed(df: pd.DataFrame, types: Mapping[str, type]) -> pd.DataFrame:
    """``df`` with every known column of its type: numbers that are not become missing, any
    other value of a text column its text; a missing column is empty. The page code then meets
    only the types it expects, whatever the table held."""
    df = df.copy()
    for col, kind in types.items():
        if col not in df.columns:
            df[col] = None
        elif kind is float:
            num = pd.to_numeric(df[col], errors="coerce")
            df[col] = num.where(num.abs() < 2**63)  # (inf and past a Long: missing, never int(inf))
        else:
            df[col] = df[col].map(lambda x: None if x is None or (isinstance(x, float) and x != x)
                                  else x if isinstance(x, str) else str(x)).astype(object)
    return df


def preset_impact(scan: FleetScan, preset: str) -> tuple[dict[str, int], pd.DataFrame]:
    """How many executions the preset would change, by what (partitions, skew splits, join
    strategies), and those executions with the change in words."""
    ok = scan.executions[scan.executions["error"].isna()]
    change = ok["preset_changes"].fillna("{}").apply(lambda t: _change(t, preset))
    changed = ok.assign(change=change)[change != ""]
    counts = {"executions": len(ok), "changed": len(changed),
              "partitions": int(changed["change"].str.contains("partitions").sum()),
              "skew splits": int(changed["change"].str.contains("skew splits").sum()),
              "join strategy": int(changed["change"].str.contains("joins").sum()),
              "not simulated": int((changed["change"] == "not simulated").sum())}
    return counts, changed[["file", "execution_id", "description", "change"]].reset_index(drop=True)


def _change(text: str, preset: str) -> str:
    """What ``preset`` changes, from a row's JSON object of changes ("" when none or unreadable)."""
    try:
        got = json.loads(text).get(preset, "") if text else ""
    except (ValueError, AttributeError, RecursionError):
        return ""
    return got if isinstance(got, str) else ""
