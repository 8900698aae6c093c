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


def save_view_state(state: dict[str, Any]) -> str:
    """Store ``state`` and return its content id (same state, same id)."""
    text = json.dumps(state, sort_keys=True, separators=(",", ":"))
    if len(text) > MAX_STATE_BYTES:
        raise ShareError("this view is too large to share as a link; download the report instead")
    rid = hashlib.sha256(text.encode()).hexdigest()[:16]
    path = _dir("reports") / f"{rid}.json"
    if not path.exists():
        tmp = path.with_suffix(".tmp")
        tmp.write_text(text)
        tmp.replace(path)
    return rid


def load_view_state(report_id: str) -> dict[str, Any]:
    if not isinstance(report_id, str) or not _ID_RE.match(report_id):
        raise ShareError("not a report id (16 hexadecimal characters expected)")
    path = _dir("reports") / f"{report_id}.json"
    if not path.exists():
        raise ShareError(f"no saved view {report_id} on this server")
    try:
        return json.loads(path.read_text())
    except (OSError, ValueError) as exc:
        raise ShareError(f"saved view {report_id} cannot be read: {exc}") from None


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
