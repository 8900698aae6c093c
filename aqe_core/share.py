"""Shared views: a view's state saved server-side under a content id (``?report=<id>``).

The state is small JSON (source reference, query id, page, presets, what-if overrides); an
uploaded source is kept beside it, addressed by its digest, so a link works for anyone who can
reach the app. Ids are validated before any path is built from them.
"""
from __future__ import annotations

import hashlib
import json
import re
from pathlib import Path
from typing import Any, Optional

from aqe_core import storage
from aqe_core.presets import lens_home

_ID_RE = re.compile(r"^[0-9a-f]{16}$")
_DIGEST_RE = re.compile(r"^[0-9a-f]{64}$")
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
        except FileNotFoundError:
            intact = False
        except (OSError, UnicodeDecodeError):
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


def store_upload(name: str, data: bytes) -> str:
    """Keep an uploaded source so shared links can reopen it; returns its sha256 digest."""
    digest = hashlib.sha256(data).hexdigest()
    d = _dir("uploads") / digest
    d.mkdir(exist_ok=True)
    safe = re.sub(r"[^A-Za-z0-9._-]", "_", Path(name).name)[:120] or "upload"
    target = d / safe
    if not target.exists():
        target.write_bytes(data)
    return digest


def upload_path(digest: str) -> Optional[Path]:
    if not _DIGEST_RE.match(digest or ""):
        return None
    d = lens_home() / "uploads" / digest
    files = sorted(d.iterdir()) if d.is_dir() else []
    return files[0] if files else None
