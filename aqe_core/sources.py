"""Sources the app and reports open: bundled samples, event logs, captures, by path.

``load_source(path)`` tells a capture from an event log by its bytes and returns the same
:class:`LoadedSource` for both, so pages never care where a query came from. Errors come back
as :class:`SourceError` with one line for people; nothing else escapes, whatever the bytes.

On a shared server the app opens sources with :func:`open_on_server`: the path must resolve
(symlinks followed) inside :meth:`ServerSettings.all_roots` (:func:`resolve_in_roots`), and
decoding is bounded by :func:`server_limits`. The CLI opens the user's own files unconfined.
"""
from __future__ import annotations

import json
import os
import zlib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Optional, Sequence

from aqe_core.model.capture import Capture, CaptureFormatError
from aqe_core.readers.capture_file import DEFAULT_MAX_CAPTURE_BYTES, load_capture
from aqe_core.readers.eventlog import EventLogError, load
from aqe_core.readers.eventlog.errors import Limits, LimitExceeded, internal_cause
from aqe_core.readers.eventlog.listener import listener_capture
from aqe_core.readers.eventlog.sources import OUTSIDE_ROOTS, Roots
from aqe_core.server_settings import SAMPLES_DIR, server_settings
from aqe_core.views.from_capture import capture_label, views_from_capture
from aqe_core.views.from_eventlog import carry_task_times, views_from_eventlog
from aqe_core.views.query import QueryView


ProgressFn = Callable[[int, Optional[int]], None]


class SourceError(ValueError):
    """A source that cannot be opened; the message is one clear line."""


_LIMIT_HINT = "the server's limits are max_decompressed_mb and max_decompress_s in server.toml"


def resolve_in_roots(path: str, roots: Optional[Sequence["str | os.PathLike[str]"]] = None) -> Path:
    """``path`` with symlinks resolved, if that lies inside one of ``roots`` (default: the
    server's :meth:`~aqe_core.server_settings.ServerSettings.all_roots`); else
    :class:`SourceError` with a message that does not tell whether the path exists."""
    if roots is None:
        roots = server_settings().all_roots()
    text = os.fspath(path) if isinstance(path, os.PathLike) else path
    if not isinstance(text, str) or not text.strip() or "\x00" in text:
        raise SourceError(OUTSIDE_ROOTS)
    try:
        real = Roots([os.fspath(r) for r in roots]).resolve(os.path.expanduser(text.strip()))
    except (OSError, ValueError):
        real = None
    if real is None:
        raise SourceError(OUTSIDE_ROOTS)
    return Path(real)


def server_limits() -> Limits:
    """Decoding limits for sources opened in the app, from the server settings."""
    s = server_settings()
    return Limits(max_decompressed_bytes=s.max_decompressed_bytes, max_seconds=s.max_decompress_s,
                  max_task_slots=max(1 << 20, s.max_decompressed_bytes // 16))


def open_on_server(path: str, *, progress: Optional["ProgressFn"] = None) -> "LoadedSource":
    """:func:`load_source` as the app does it: confined to the roots, bounded by the limits."""
    roots = [str(r) for r in server_settings().all_roots()]
    return load_source(str(resolve_in_roots(path, roots)), progress=progress, limits=server_limits(), roots=roots)


@dataclass
class LoadedSource:
    kind: str  # "eventlog" | "capture"
    label: str
    path: str
    spark_version: Optional[str]
    views: list[QueryView] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    app_id: Optional[str] = None  # the Spark application (event logs)
    #: why events are missing (a cut or damaged part, no ApplicationEnd); also in warnings or notes
    incomplete: list[str] = field(default_factory=list)

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
    """A capture starts (after gzip, if any) with a JSON object naming its format; only the
    first 4 KiB are decoded, so this is cheap and bounded whatever the file holds."""
    if not path.is_file():
        return False
    with open(path, "rb") as fh:
        head = fh.read(4096)
        if head[:2] == b"\x1f\x8b":
            d = zlib.decompressobj(wbits=31)
            try:
                out = d.decompress(head, 4096)
                while len(out) < 4096 and not d.eof:
                    more = fh.read(4096)
                    if not more and not d.unconsumed_tail:
                        break
                    out += d.decompress(d.unconsumed_tail + more, 4096 - len(out))
            except zlib.error:
                return False
            head = out
    return head.lstrip().startswith(b"{") and b'"aqe-lens-capture"' in head


def load_source(path: str, *, progress: Optional[ProgressFn] = None, limits: Optional[Limits] = None,
                roots: Optional[Sequence[str]] = None) -> LoadedSource:
    """Open an event log or a capture and build its views. Raises only :class:`SourceError`.

    ``limits`` bound decoding (default: the reader's generous CLI limits); ``roots``, when
    given, confine every file read (the app passes both, see :func:`open_on_server`)."""
    try:
        return _load_source(path, progress, limits, roots)
    except SourceError:
        raise
    except Exception as exc:  # the last line of defence; the fuzz tests keep this unreached
        raise SourceError(f"cannot open this source (internal error: {internal_cause(exc)})") from None



def _load_source(path: str, progress: Optional[ProgressFn], limits: Optional[Limits],
                 roots: Optional[Sequence[str]]) -> LoadedSource:
    if roots is not None:
        p = resolve_in_roots(path, roots)
    else:
        p = Path(path)
    if not p.exists():
        raise SourceError(f"no such file or directory: {path}")
    try:
        is_capture = _looks_like_capture(p)
    except OSError as exc:
        raise SourceError(f"cannot read {p.name}: {exc.strerror or type(exc).__name__}") from None
    if is_capture:
        return _open_capture(p, limits)
    try:
        log = load(str(p), progress=progress, roots=list(roots) if roots is not None else None,
                   **({"limits": limits} if limits is not None else {}))
    except LimitExceeded as exc:
        raise SourceError(f"{exc}" + (f"; {_LIMIT_HINT}" if roots is not None else "")) from None
    except EventLogError as exc:
        raise SourceError(str(exc)) from None
    except OSError as exc:
        raise SourceError(f"cannot read {p.name}: {exc.strerror or type(exc).__name__}") from None
    label = f"{log.application.name or p.name} ({log.application.id or '?'}), Spark {log.spark_version or '?'}"
    views, notes = views_from_eventlog(log), list(log.notes)
    exact = listener_capture(log)
    if exact is not None:
        exact_views, report = views_from_capture(exact)
        by_id = {v.query_id: v for v in exact_views}
        for v in views:
            if v.query_id in by_id:
                carry_task_times(v, by_id[v.query_id])
        views = [by_id.pop(v.query_id, v) for v in views] + list(by_id.values())
        label += f"; listener: {len(exact_views)} executions exact ({report.agreement.summary()})"
        notes += report.notes
    return LoadedSource("eventlog", label, str(p), log.spark_version, views, warnings=list(log.warnings), notes=notes,
                        app_id=log.application.id, incomplete=list(log.cut))


def _open_capture(p: Path, limits: Optional[Limits]) -> LoadedSource:
    """A capture's views, decoding bounded by ``limits``; errors as :class:`SourceError`."""
    max_bytes = DEFAULT_MAX_CAPTURE_BYTES if limits is None else min(DEFAULT_MAX_CAPTURE_BYTES, limits.max_decompressed_bytes)
    try:
        return views_from_capture_file(str(p), max_bytes=max_bytes, max_seconds=None if limits is None else limits.max_seconds)
    except CaptureFormatError as exc:
        raise SourceError(f"cannot read this capture: {exc}") from None
    except OSError as exc:
        raise SourceError(f"cannot read {p.name}: {exc.strerror or type(exc).__name__}") from None


def views_from_capture_file(path: str, *, max_bytes: int = DEFAULT_MAX_CAPTURE_BYTES,
                            max_seconds: Optional[float] = None) -> LoadedSource:
    """Views of every query of a capture file. Raises :class:`CaptureFormatError` for a file
    that is not a well-formed capture (bounded by ``max_bytes`` decoded / ``max_seconds``)."""
    capture = load_capture(path, max_bytes=max_bytes, max_seconds=max_seconds)
    views, report = views_from_capture(capture)
    return LoadedSource("capture", capture_label(capture, report), path, capture.spark_version, views,
                        warnings=list(capture.warnings), notes=list(report.notes))


def load_exact(path: str) -> Capture:
    """What ``simulate`` replays: a capture file, or the listener's executions of an event log
    (docs/listener.md). A plain event log holds sizes after AQE only: :class:`SourceError`."""
    p = Path(path)
    if not p.exists():
        raise SourceError(f"no such file or directory: {path}")
    try:
        if _looks_like_capture(p):
            return load_capture(str(p))
        log = load(str(p))
    except CaptureFormatError as exc:
        raise SourceError(f"cannot read this capture: {exc}") from None
    except EventLogError as exc:
        raise SourceError(str(exc)) from None
    except OSError as exc:
        raise SourceError(f"cannot read {p.name}: {exc.strerror or type(exc).__name__}") from None
    cap = listener_capture(log)
    if cap is None:
        raise SourceError("this event log has no AQE Lens listener events: a plain log holds partition sizes after"
                          " AQE only, so it cannot be replayed exactly (run the job with the listener,"
                          " docs/listener.md; `inspect` summarises a plain log)")
    return cap
