"""Shared views: a view's state saved server-side under a content id (``?report=<id>``).

The state is small JSON (source reference, query id, page, presets, what-if overrides); an
uploaded source is kept beside it, addressed by its digest, so a link works for anyone who can
reach the app. Ids are validated before any path is built from them.

An upload arrives on disk (ui.upload_spool spools it into :func:`spool_folder`, never into the
session's memory) and becomes the kept upload by a second name for the same file. Kept and
spooled uploads share the ``upload_quota_mb`` quota, each file counted once.
"""
from __future__ import annotations

import contextlib
import fcntl
import hashlib
import io
import json
import os
import re
import shutil
import stat
import tempfile
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, BinaryIO, Callable, Optional

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
    """An upload over the size cap or the upload quota (message for people)."""


#: uploads being received, and held by the sessions that sent them (ui.upload_spool): one
#: folder per server process (``<pid>-<random>``, alive while its process holds the flock on
#: its ``.alive`` file), a folder per session in it. They count in the upload quota.
SPOOL_DIR = "upload-spool"
_ALIVE = ".alive"
CHUNK = 1 << 20
_SPOOLS: dict[str, tuple[Path, BinaryIO]] = {}
_SPOOL_GUARD = threading.Lock()


@dataclass(frozen=True)
class _Kept:
    mtime: float
    size: int
    folder: Path
    inodes: frozenset[tuple[int, int]]


def _kept_uploads(root: Path) -> list[_Kept]:
    """Every kept upload: newest file time, bytes, folder and the inodes of its files."""
    out = []
    for d in root.iterdir() if root.is_dir() else []:
        if not (d.is_dir() and _DIGEST_RE.match(d.name)):
            continue
        try:
            stats = [f.lstat() for f in d.iterdir()]
            stats = [st for st in stats if stat.S_ISREG(st.st_mode)]
            mtime = max((st.st_mtime for st in stats), default=d.stat().st_mtime)
        except OSError:
            continue
        out.append(_Kept(mtime, sum(st.st_size for st in stats), d,
                         frozenset((st.st_dev, st.st_ino) for st in stats)))
    return out


def _spooled_inodes() -> dict[tuple[int, int], int]:
    """Bytes of every spooled file of every server process on this data directory, by inode (a
    spooled file that became a kept upload is one file under two names: counted once)."""
    out = {}
    for folder, _dirs, files in os.walk(lens_home() / SPOOL_DIR):  # links to folders not followed
        for name in files:
            try:
                st = os.lstat(os.path.join(folder, name))
            except OSError:
                continue
            if stat.S_ISREG(st.st_mode) and name != _ALIVE:
                out[(st.st_dev, st.st_ino)] = st.st_size
    return out


def _make_room(root: Path, need: int, quota_bytes: int, keep: Optional[Path] = None) -> None:
    """Remove the least recently stored uploads until ``need`` more bytes fit in the quota with
    everything kept and spooled; UploadRefused if they cannot (spooled files are open in
    sessions, and a kept upload that is also one of them frees nothing). Under the quota lock."""
    spooled = _spooled_inodes()
    kept = sorted((k for k in _kept_uploads(root) if k.folder != keep), key=lambda k: (k.mtime, k.folder.name))
    used = sum(spooled.values()) + sum(k.size for k in kept if not k.inodes & spooled.keys())
    for k in (k for k in kept if not k.inodes & spooled.keys()):  # oldest first
        if used + need <= quota_bytes:
            break
        try:
            _remove_upload(k.folder)
        except OSError:
            continue
        used -= k.size
    if used + need > quota_bytes:
        raise UploadRefused(f"the server's space for uploads ({format_bytes(quota_bytes, 'limit')}, upload_quota_mb) "
                            "is held by files open in other sessions; try again when they are closed")


def _remove_upload(d: Path) -> None:
    for f in d.iterdir():
        f.unlink(missing_ok=True)
    d.rmdir()


def _limits(max_bytes: Optional[int], quota_bytes: Optional[int]) -> tuple[int, int]:
    from aqe_core.server_settings import server_settings

    settings = server_settings()
    return (settings.max_upload_bytes if max_bytes is None else max_bytes,
            settings.upload_quota_bytes if quota_bytes is None else quota_bytes)


def _check_size(size: int, max_bytes: int, quota_bytes: int) -> None:
    if size > max_bytes:
        raise UploadRefused(f"this file is {format_bytes(size, 'limit')}; the server accepts uploads up to"
                            f" {format_bytes(max_bytes, 'limit')}")
    if size > quota_bytes:
        raise UploadRefused(f"this file is {format_bytes(size, 'limit')}, more than the server keeps for all uploads "
                            f"({format_bytes(quota_bytes, 'limit')})")


def _safe_name(name: str) -> str:
    return re.sub(r"[^A-Za-z0-9._-]", "_", Path(name or "").name)[:120].lstrip(".") or "upload"


def _keep(digest: str, size: int, quota_bytes: int, place: Callable[[Path, Path], None], name: str) -> str:
    """Under the quota lock: the upload ``digest`` is kept (made the most recent if it already
    was), else room is made for ``size`` more bytes and ``place(root, target)`` puts it there."""
    root = _dir("uploads")
    with storage.locked(root / ".quota"):
        d = root / digest
        kept = [f for f in d.iterdir() if f.is_file() and not f.name.startswith(".")] if d.is_dir() else []
        if kept:
            os.utime(kept[0])  # stored again: now the most recent
            return digest
        _make_room(root, size, quota_bytes, keep=d)
        d.mkdir(exist_ok=True)
        place(root, d / _safe_name(name))
    return digest


def store_upload(name: str, data: bytes, *, max_bytes: Optional[int] = None, quota_bytes: Optional[int] = None) -> str:
    """Keep an uploaded source so shared links can reopen it; returns its sha256 digest.

    Refuses more than ``max_bytes`` (default: the server's ``max_upload_mb``). Kept and spooled
    uploads stay under ``quota_bytes`` (default: ``upload_quota_mb``): the least recently stored
    ones are removed first. Written atomically, under a lock (several sessions upload at once)."""
    max_bytes, quota_bytes = _limits(max_bytes, quota_bytes)
    _check_size(len(data), max_bytes, quota_bytes)
    return store_upload_stream(name, io.BytesIO(data), max_bytes=max_bytes, quota_bytes=quota_bytes)


def store_upload_stream(name: str, stream: BinaryIO, *, max_bytes: Optional[int] = None,
                        quota_bytes: Optional[int] = None) -> str:
    """:func:`store_upload` from a readable file, copied and hashed a MiB at a time (an upload
    Streamlit holds in memory is not copied whole again)."""
    max_bytes, quota_bytes = _limits(max_bytes, quota_bytes)
    fd, tmp = tempfile.mkstemp(prefix=".incoming.", suffix=storage.TEMP_SUFFIX, dir=_dir("uploads"))
    try:
        with os.fdopen(fd, "wb") as fh:
            fcntl.flock(fh.fileno(), fcntl.LOCK_EX)  # a live save (storage.remove_interrupted_saves)
            h, size = hashlib.sha256(), 0
            while chunk := stream.read(CHUNK):
                size += len(chunk)
                _check_size(size, max_bytes, quota_bytes)
                h.update(chunk)
                fh.write(chunk)
            fh.flush()
            return _keep(h.hexdigest(), size, quota_bytes, lambda _root, target: os.replace(tmp, target), name)
    finally:
        with contextlib.suppress(OSError):
            os.unlink(tmp)


def keep_spooled_upload(name: str, spooled: Path, digest: str, *, quota_bytes: Optional[int] = None) -> str:
    """Keep a spooled upload whose sha256 is ``digest``: the spooled file becomes the kept one (a
    second name for the same bytes, nothing copied or counted twice), or is copied when the file
    system cannot link it."""
    if not _DIGEST_RE.match(digest or ""):
        raise UploadRefused("this upload has no valid digest")
    _, quota_bytes = _limits(None, quota_bytes)

    def place(root: Path, target: Path) -> None:
        try:
            os.link(spooled, target)
        except OSError:
            _make_room(root, os.path.getsize(spooled), quota_bytes, keep=target.parent)
            with open(spooled, "rb") as src:
                _copy(src, target)

    return _keep(digest, 0, quota_bytes, place, name)


def _copy(src: BinaryIO, target: Path) -> None:
    fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", suffix=storage.TEMP_SUFFIX, dir=target.parent)
    try:
        with os.fdopen(fd, "wb") as fh:
            fcntl.flock(fh.fileno(), fcntl.LOCK_EX)
            while chunk := src.read(CHUNK):
                fh.write(chunk)
            fh.flush()
            os.replace(tmp, target)
    finally:
        with contextlib.suppress(OSError):
            os.unlink(tmp)


def reserve_upload_space(nbytes: int, *, pending: int = 0, quota_bytes: Optional[int] = None) -> None:
    """Make room for an upload of ``nbytes`` about to be spooled, beside ``pending`` bytes other
    uploads being received by this process still expect (what is already written is on disk and
    counted); the least recently stored uploads go first. UploadRefused (one line) if it cannot fit."""
    _, quota_bytes = _limits(None, quota_bytes)
    if nbytes > quota_bytes:
        raise UploadRefused(f"this file is {format_bytes(nbytes, 'limit')}, more than the server keeps for all uploads "
                            f"({format_bytes(quota_bytes, 'limit')}, upload_quota_mb)")
    root = _dir("uploads")
    with storage.locked(root / ".quota"):
        _make_room(root, nbytes + pending, quota_bytes)


def spool_folder() -> Path:
    """This server process's private folder for uploads being received and held by sessions
    (0700, under the data directory). Made once per process; the folders of server processes
    that are gone (a killed server's) are removed first."""
    base = lens_home() / SPOOL_DIR
    with _SPOOL_GUARD:
        got = _SPOOLS.get(str(base))
        if got is not None and got[0].is_dir():
            return got[0]
        base.mkdir(mode=0o700, parents=True, exist_ok=True)
        os.chmod(base, 0o700)
        remove_dead_spools(base)
        mine = Path(tempfile.mkdtemp(prefix=f"{os.getpid()}-", dir=base))  # 0700
        alive = open(mine / _ALIVE, "a+b")  # held open, and locked, for the process's life
        fcntl.flock(alive.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
        if got is not None:
            got[1].close()
        _SPOOLS[str(base)] = (mine, alive)
        return mine


def remove_dead_spools(base: Path) -> list[Path]:
    """Remove the spool folders under ``base`` whose server process is gone: nobody holds the
    lock on their ``.alive`` file (one without it is left alone while younger than a minute: its
    process is between making it and locking it)."""
    removed = []
    for d in base.iterdir() if base.is_dir() else []:
        try:
            if not d.is_dir() or d.is_symlink():
                continue
            alive = d / _ALIVE
            if not alive.exists():
                if time.time() - d.stat().st_mtime > storage.STALE_AFTER_S:
                    shutil.rmtree(d, ignore_errors=True)
                    removed.append(d)
                continue
            with open(alive, "rb") as fh:
                try:
                    fcntl.flock(fh.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
                except OSError:  # its process is alive (this one included)
                    continue
                shutil.rmtree(d, ignore_errors=True)
                removed.append(d)
        except OSError:
            continue
    return removed


def upload_path(digest: str) -> Optional[Path]:
    if not isinstance(digest, str) or not _DIGEST_RE.match(digest):
        return None
    d = lens_home() / "uploads" / digest
    files = sorted(f for f in d.iterdir() if f.is_file() and not f.name.startswith(".")) if d.is_dir() else []
    return files[0] if files else None
