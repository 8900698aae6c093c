"""Small files the server keeps (presets, shared views, run index), written so nothing is lost.

Every write goes to a unique temporary file in the same folder and is renamed over the target
(readers see the old file or the new one, never half of one); read-modify-write runs under
:func:`locked` (a thread lock plus an ``flock`` on a sidecar file, so several server processes
on one data directory also take turns). A file that does not parse is moved aside, never
overwritten, and the caller reports it.

A temporary file is named ``.<target>.<random>.tmp`` and ``flock``-ed by its writer until the
rename; a writer killed mid-save leaves it behind, unlocked, and :func:`remove_interrupted_saves`
(run at server start-up) removes it. The lock, not the writer's pid, tells a live save: pids
are reused and are not unique across containers sharing a data directory.
"""
from __future__ import annotations

import contextlib
import fcntl
import json
import os
import stat
import tempfile
import threading
import time
from pathlib import Path
from typing import Any, Callable, Iterator, Optional

_THREAD_LOCKS: dict[str, threading.RLock] = {}
_GUARD = threading.Lock()


TEMP_SUFFIX = ".tmp"
#: an unlocked temporary file younger than this may be one whose writer has not locked it yet
STALE_AFTER_S = 60.0


def atomic_write_bytes(path: Path, data: bytes) -> None:
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=TEMP_SUFFIX, dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as fh:
            fcntl.flock(fh.fileno(), fcntl.LOCK_EX)  # held to the rename: the save is alive
            fh.write(data)
            fh.flush()
            os.fsync(fh.fileno())
            os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise


def atomic_write_text(path: Path, text: str) -> None:
    atomic_write_bytes(path, text.encode("utf-8"))


def _is_temp_name(name: str) -> bool:
    return name.startswith(".") and name.endswith(TEMP_SUFFIX) and len(name) > 1 + len(TEMP_SUFFIX)


def remove_interrupted_saves(folder: Path, *, older_than_s: float = STALE_AFTER_S) -> list[Path]:
    """Remove the temporary files of saves whose writer died (killed mid-save) under ``folder``;
    returns what was removed. A file is left alone while a writer holds its lock (a save in
    progress, in any process), and while younger than ``older_than_s`` (a writer between
    creating it and locking it). Symbolic links are neither followed nor removed."""
    removed: list[Path] = []
    now = time.time()
    for root, _dirs, files in os.walk(folder):  # (os.walk does not follow links to folders)
        for name in files:
            if _is_temp_name(name) and _remove_if_stale(Path(root) / name, now - older_than_s):
                removed.append(Path(root) / name)
    return removed


def _remove_if_stale(path: Path, cutoff: float) -> bool:
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0))
    except OSError:  # gone meanwhile (renamed by its writer), a link, unreadable
        return False
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode) or st.st_mtime > cutoff:
            return False
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:  # a live writer holds it
            return False
        try:  # still the same file under that name (not renamed away and replaced meanwhile)
            if os.lstat(path).st_ino != st.st_ino:
                return False
            os.unlink(path)
        except OSError:
            return False
        return True
    finally:
        os.close(fd)


@contextlib.contextmanager
def locked(path: Path) -> Iterator[None]:
    """Exclusive access to ``path`` for a read-modify-write, across threads and processes."""
    path = Path(path)
    key = str(path.resolve())
    with _GUARD:
        tlock = _THREAD_LOCKS.setdefault(key, threading.RLock())
    with tlock:
        path.parent.mkdir(parents=True, exist_ok=True)
        with open(path.with_name(path.name + ".lock"), "a+b") as fh:
            fcntl.flock(fh.fileno(), fcntl.LOCK_EX)
            try:
                yield
            finally:
                fcntl.flock(fh.fileno(), fcntl.LOCK_UN)


class CorruptFile(ValueError):
    """A stored file did not parse; it was moved to :attr:`kept_as` (message for people)."""

    def __init__(self, message: str, kept_as: Optional[Path]) -> None:
        super().__init__(message)
        self.kept_as = kept_as


def quarantine(path: Path) -> Optional[Path]:
    """Move a file that does not parse aside (``<name>.corrupt-<time>``) and return where."""
    target = path.with_name(f"{path.name}.corrupt-{time.strftime('%Y%m%d-%H%M%S')}-{os.getpid()}")
    try:
        os.replace(path, target)
        return target
    except OSError:
        return None


def read_json(path: Path, default: Any, check: Callable[[Any], bool] = lambda _: True) -> Any:
    """The JSON in ``path`` (``default`` when missing). A file that is not JSON, or fails
    ``check``, is moved aside and :class:`CorruptFile` raised: the caller must not write over it
    as if it were empty."""
    path = Path(path)
    try:
        raw = path.read_bytes()
    except FileNotFoundError:
        return default
    try:
        data = json.loads(raw)
        if not check(data):
            raise ValueError("unexpected structure")
    except (ValueError, UnicodeDecodeError) as exc:
        kept = quarantine(path)
        where = f"; kept as {kept.name}" if kept else ""
        raise CorruptFile(f"{path.name} could not be read ({type(exc).__name__}){where}", kept) from None
    return data
