"""Shared views: a view's state saved server-side under a content id (``?report=<id>``).

The state is small JSON (source reference, query id, page, presets, what-if overrides); an
uploaded source is kept beside it, addressed by its digest, so a link works for anyone who can
reach the app. Ids are validated before any path is built from them.
"""
from __future__ import annotations

import hashlib
import json
import os
import re
from pathlib import Path
from typing import Any, Optional

from aqe_core import storage
from aqe_core.server_settings import lens_home
from aqe_core.units import format_bytes

# \Z, not $: "$" also matches before a trailing newline, and these name files
_ID_RE = re.compile(r"[0-9a-f]{16}\Z")
_DIGEST_RE = re.compile(r"[0-9a-f]{64}\Z")
MAX_STATE_BYTES = 256 * 1024


class ShareError(ValueError):
    """A report id or state that cannot be used (message for people)."""


def _dir(name: str) -> Path:
    d = lens_home() / name
    d.mkdir(parents=True, exist_ok=True)
    return d


def _state_text(state: dict[str, Any]) -> str:
    return json.dumps(state, sort_keys=True, separators=(",", ":"))


def _rid(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def save_view_state(state: dict[str, Any]) -> str:
    """Store ``state`` and return its content id (same state, same id).

    Written atomically under a lock; a file already under that id whose content does not hash
    to it (damaged) is moved aside and replaced, since the id fixes what it must hold."""
    text = _state_text(state)
    if len(text) > MAX_STATE_BYTES:
        raise ShareError("this view is too large to share as a link; download the report instead")
    rid = _rid(text)
    path = _dir("reports") / f"{rid}.json"
    with storage.locked(path):
        try:
            intact = path.read_text(encoding="utf-8") == text
        except (OSError, UnicodeDecodeError):  # missing or unreadable: write it anew
            intact = False
        if not intact:
            if path.exists():
                storage.quarantine(path)
            storage.atomic_write_text(path, text)
    return rid


def load_view_state(report_id: str) -> dict[str, Any]:
    """The state saved under ``report_id``; ShareError (message for people) otherwise. A file
    that does not parse, or no longer matches its id, is moved aside and reported."""
    if not isinstance(report_id, str) or not _ID_RE.match(report_id):
        raise ShareError("not a report id (16 hexadecimal characters expected)")
    path = _dir("reports") / f"{report_id}.json"
    if not path.is_file():  # before the lock: an unknown id leaves no lock file behind
        raise ShareError(f"no saved view {report_id} on this server")
    with storage.locked(path):
        try:
            if path.stat().st_size > MAX_STATE_BYTES:
                raise ShareError(f"saved view {report_id} is larger than a shared view can be")
        except FileNotFoundError:
            raise ShareError(f"no saved view {report_id} on this server") from None
        try:
            state = storage.read_json(path, None, lambda d: isinstance(d, dict) and _rid(_state_text(d)) == report_id)
        except storage.CorruptFile as exc:
            raise ShareError(f"saved view {report_id} is damaged and cannot be used: {exc}") from None
        except OSError as exc:
            raise ShareError(f"saved view {report_id} cannot be read ({type(exc).__name__})") from None
    if state is None:
        raise ShareError(f"no saved view {report_id} on this server")
    return state


class UploadRefused(ShareError):
    """An upload over the size cap (message for people)."""


def _upload_dirs(root: Path) -> list[tuple[float, int, Path]]:
    """(mtime, bytes, folder) of every kept upload."""
    out = []
    for d in root.iterdir() if root.is_dir() else []:
        if not (d.is_dir() and _DIGEST_RE.match(d.name)):
            continue
        try:
            files = [f for f in d.iterdir() if f.is_file()]
            size = sum(f.stat().st_size for f in files)
            mtime = max((f.stat().st_mtime for f in files), default=d.stat().st_mtime)
        except OSError:
            continue
        out.append((mtime, size, d))
    return out


def _remove_upload(d: Path) -> None:
    for f in d.iterdir():
        f.unlink(missing_ok=True)
    d.rmdir()


def store_upload(name: str, data: bytes, *, max_bytes: Optional[int] = None, quota_bytes: Optional[int] = None) -> str:
    """Keep an uploaded source so shared links can reopen it; returns its sha256 digest.

    Refuses more than ``max_bytes`` (default: the server's ``max_upload_mb``). Kept uploads
    stay under ``quota_bytes`` (default: ``upload_quota_mb``): the least recently stored ones
    are removed first. Written atomically, under a lock (several sessions upload at once)."""
    from aqe_core.server_settings import server_settings

    settings = server_settings()
    max_bytes = settings.max_upload_bytes if max_bytes is None else max_bytes
    quota_bytes = settings.upload_quota_bytes if quota_bytes is None else quota_bytes
    if len(data) > max_bytes:
        raise UploadRefused(f"this file is {format_bytes(len(data), 'limit')}; the server accepts uploads up to"
                            f" {format_bytes(max_bytes, 'limit')}")
    if len(data) > quota_bytes:
        raise UploadRefused(f"this file is {format_bytes(len(data), 'limit')}, more than the server keeps for all uploads "
                            f"({format_bytes(quota_bytes, 'limit')})")
    digest = hashlib.sha256(data).hexdigest()
    root = _dir("uploads")
    safe = re.sub(r"[^A-Za-z0-9._-]", "_", Path(name or "").name)[:120].lstrip(".") or "upload"
    with storage.locked(root / ".quota"):
        d = root / digest
        kept = [f for f in d.iterdir() if f.is_file() and not f.name.startswith(".")] if d.is_dir() else []
        if kept:
            os.utime(kept[0])  # stored again: now the most recent
            return digest
        others = sorted((e for e in _upload_dirs(root) if e[2] != d), key=lambda e: (e[0], e[2].name))
        total = sum(size for _, size, _ in others)
        while others and total + len(data) > quota_bytes:  # oldest first
            _, size, old = others.pop(0)
            try:
                _remove_upload(old)
            except OSError:
                continue
            total -= size
        storage.atomic_write_bytes(d / safe, data)
    return digest


def upload_path(digest: str) -> Optional[Path]:
    if not isinstance(digest, str) or not _DIGEST_RE.match(digest):
        return None
    d = lens_home() / "uploads" / digest
    files = sorted(f for f in d.iterdir() if f.is_file() and not f.name.startswith(".")) if d.is_dir() else []
    return files[0] if files else None
