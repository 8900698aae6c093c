"""The list of past runs of one server: ``$AQE_LENS_HOME/runs/index.json``.

The app's run queue lives in memory, but its results are capture files on disk; the index
keeps what a listing needs (label, kind, state, times, file) so past runs are shown after a
restart, to every browser session of the server. Writes are atomic and locked (see
:mod:`aqe_core.storage`). A corrupt index is moved aside and rebuilt from the capture files
present; files the index misses (a crash between saving and indexing) are listed too.
"""
from __future__ import annotations

import json
import re
import time
from dataclasses import asdict, dataclass, fields
from pathlib import Path
from typing import Any, Optional

from aqe_core.server_settings import lens_home
from aqe_core.storage import CorruptFile, atomic_write_text, locked, read_json

INDEX_NAME = "index.json"
MAX_ENTRIES = 500  # the oldest entries are dropped from the index (their files stay)
_FILE = re.compile(r"(?P<stamp>\d{8}-\d{6})-(?P<job>[0-9a-f]{6,32})\.json(\.gz)?\Z")


@dataclass
class RunEntry:
    job_id: str
    label: str
    kind: str
    state: str
    started: float
    finished: Optional[float] = None
    file: Optional[str] = None  # name inside the runs folder (never a path elsewhere)
    message: str = ""

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> "RunEntry":
        names = {f.name for f in fields(cls)}
        return cls(**{k: v for k, v in d.items() if k in names})


def _valid(data: Any) -> bool:
    return (isinstance(data, dict) and isinstance(data.get("runs"), list) and
            all(isinstance(r, dict) and isinstance(r.get("job_id"), str) and isinstance(r.get("label"), str)
                and isinstance(r.get("started"), (int, float)) and (r.get("file") is None or isinstance(r.get("file"), str))
                for r in data["runs"]))


def _from_file(path: Path) -> RunEntry:
    """An entry for a capture file the index does not know (its name holds time and job id)."""
    m = _FILE.match(path.name)
    job = m.group("job") if m else path.name.split(".")[0]
    try:
        started = time.mktime(time.strptime(m.group("stamp"), "%Y%m%d-%H%M%S")) if m else path.stat().st_mtime
    except (ValueError, OSError):
        started = 0.0
    return RunEntry(job, f"run {job}", "unknown", "done", started, started, path.name, "recovered from the runs folder")


class RunIndex:
    """Past runs kept under ``folder`` (default ``$AQE_LENS_HOME/runs``, read at each call)."""

    def __init__(self, folder: Optional[Path] = None) -> None:
        self._folder = Path(folder) if folder is not None else None
        self.note: Optional[str] = None  # set when a corrupt index was kept aside and rebuilt

    @property
    def folder(self) -> Path:
        return self._folder if self._folder is not None else lens_home() / "runs"

    @property
    def path(self) -> Path:
        return self.folder / INDEX_NAME

    def record(self, entry: RunEntry) -> None:
        """Add or replace the entry of ``entry.job_id``."""
        with locked(self.path):
            runs = [r for r in self._read() if r.job_id != entry.job_id]
            runs.append(entry)
            self._write(runs)

    def entries(self, limit: Optional[int] = 20) -> list[RunEntry]:
        """Past runs, newest first; capture files missing from the index are included."""
        if not self.folder.is_dir():
            return []
        with locked(self.path):
            runs = self._read()
            known = {r.file for r in runs if r.file}
            extra = [_from_file(p) for p in self._capture_files() if p.name not in known]
            if extra:
                runs.extend(extra)
                self._write(runs)
        runs = [r for r in runs if r.file is None or (self.folder / r.file).is_file()]
        runs.sort(key=lambda r: r.started, reverse=True)
        return runs[:limit] if limit else runs

    def file_of(self, entry: RunEntry) -> Optional[Path]:
        """The capture file of ``entry``, only if it lies directly in the runs folder."""
        if not entry.file or Path(entry.file).name != entry.file:
            return None
        p = self.folder / entry.file
        return p if p.is_file() else None

    # -- internals (caller holds the lock) -------------------------------------------------
    def _capture_files(self) -> list[Path]:
        return [p for p in self.folder.glob("*.json*") if p.name != INDEX_NAME and _FILE.match(p.name)]

    def _read(self) -> list[RunEntry]:
        try:
            data = read_json(self.path, {"runs": []}, _valid)
        except CorruptFile as exc:
            runs = [_from_file(p) for p in self._capture_files()]
            self.note = f"{exc}; the list of past runs was rebuilt from {len(runs)} capture file(s)"
            self._write(runs)
            return runs
        return [RunEntry.from_dict(r) for r in data["runs"]]

    def _write(self, runs: list[RunEntry]) -> None:
        runs = sorted(runs, key=lambda r: r.started)[-MAX_ENTRIES:]
        atomic_write_text(self.path, json.dumps({"runs": [asdict(r) for r in runs]}, indent=1))
