"""Sources the app and reports open: bundled samples, event logs, captures, by path.

``load_source(path)`` tells a capture from an event log by its bytes and returns the same
:class:`LoadedSource` for both, so pages never care where a query came from. Errors come back
as :class:`SourceError` with one line for people.
"""
from __future__ import annotations

import gzip
import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Optional

from aqe_core.analysis import QueryView, views_from_eventlog

REPO_ROOT = Path(__file__).resolve().parents[1]
SAMPLES_DIR = REPO_ROOT / "sample_logs"

ProgressFn = Callable[[int, Optional[int]], None]


class SourceError(ValueError):
    """A source that cannot be opened; the message is one clear line."""


@dataclass
class LoadedSource:
    kind: str  # "eventlog" | "capture"
    label: str
    path: str
    spark_version: Optional[str]
    views: list[QueryView] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)

    def view(self, query_id: str) -> Optional[QueryView]:
        return next((v for v in self.views if v.query_id == str(query_id)), None)


@dataclass(frozen=True)
class Sample:
    key: str
    label: str
    path: str
    kind: str


def sample_sources() -> list[Sample]:
    """Bundled samples: captures first (they hold the most), then event logs per manifest."""
    out: list[Sample] = []
    cap_dir = SAMPLES_DIR / "captures"
    cap_manifest = _read_manifest(cap_dir / "MANIFEST.json")
    if cap_dir.is_dir():
        for p in sorted(cap_dir.iterdir()):
            if p.suffix in (".json", ".gz") and not p.name.startswith("MANIFEST"):
                entry = next((e for e in cap_manifest.values() if e.get("file") == p.name), {})
                version = entry.get("spark_version") or p.name.split("-", 1)[0]
                what = entry.get("description") or p.name.split(".json")[0]
                out.append(Sample(f"capture:{p.name}", f"capture (Spark {version}): {what}", str(p), "capture"))
    for key, entry in _read_manifest(SAMPLES_DIR / "eventlogs" / "MANIFEST.json").items():
        files = entry.get("files") or []
        path = SAMPLES_DIR / "eventlogs" / files[0] if files else None
        if path is not None and path.exists():
            out.append(Sample(f"eventlog:{key}", f"event log: {entry.get('description', key)}", str(path), "eventlog"))
    return out


def _read_manifest(path: Path) -> dict:
    try:
        data = json.loads(path.read_text())
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def default_sample() -> Optional[Sample]:
    """The sample the app opens on: the Spark 4.3 rolling event log if present (no JVM needed)."""
    samples = sample_sources()
    for s in samples:
        if "rolling" in s.key:
            return s
    return samples[0] if samples else None


def _looks_like_capture(path: Path) -> bool:
    if not path.is_file():
        return False
    with open(path, "rb") as fh:
        head = fh.read(4096)
    if head[:2] == b"\x1f\x8b":
        try:
            with gzip.open(path, "rb") as g:
                head = g.read(4096)
        except OSError:
            return False
    return head.lstrip().startswith(b"{") and b'"aqe-lens-capture"' in head


def load_source(path: str, *, progress: Optional[ProgressFn] = None) -> LoadedSource:
    p = Path(path)
    if not p.exists():
        raise SourceError(f"no such file or directory: {path}")
    if _looks_like_capture(p):
        try:
            from aqe_core.capture_view import views_from_capture_file
        except ImportError:
            raise SourceError("this is an AQE Lens capture, but capture support is not installed in this build") from None
        try:
            return views_from_capture_file(str(p))
        except ValueError as exc:  # CaptureFormatError and friends
            raise SourceError(f"cannot read this capture: {exc}") from None
    from aqe_core.eventlog import EventLogError, load

    try:
        log = load(str(p), progress=progress)
    except EventLogError as exc:
        raise SourceError(str(exc)) from None
    except OSError as exc:
        raise SourceError(f"cannot read {path}: {exc}") from None
    label = f"{log.application.name or p.name} ({log.application.id or '?'}), Spark {log.spark_version or '?'}"
    return LoadedSource("eventlog", label, str(p), log.spark_version, views_from_eventlog(log),
                        warnings=list(log.warnings), notes=list(log.notes))
