"""Loaded sources a server keeps (the app's sessions share one cache, the MCP server has its
own), bounded by their estimated size, and the sources that could not be opened, remembered so
they are not read again on every rerun or tool call; a source's key is its path and
:func:`content_fingerprint`."""
from __future__ import annotations

import hashlib
import os
import stat
import threading
from collections import OrderedDict
from contextlib import contextmanager
from typing import Callable, Generic, Hashable, Iterator, Optional, Protocol, TypeVar

from aqe_core.opening import SourceError

#: failures remembered (a message each: a few hundred bytes); the oldest are forgotten first
MAX_FAILURES = 4096


class Sized(Protocol):
    """What the cache keeps: a :class:`aqe_core.opening.LoadedSource`, or a wrapper of one."""

    @property
    def memory_bytes(self) -> int: ...


S = TypeVar("S", bound=Sized)


class SourceCache(Generic[S]):
    """Sources up to ``max_bytes`` of :attr:`LoadedSource.memory_bytes` together, least
    recently used dropped first. A source is charged to the server's memory budget while it
    lives, so :meth:`reclaim` (the budget's reclaimer) lets sources go when a load needs room.

    A source bigger than ``max_bytes`` is not kept (the app's session holds the one it uses),
    unless ``keep_newest``: then the newest source always stays (the MCP server has no session
    to hold it, and a second question on a big log must not read it again).

    Failures are kept by key (the source's content fingerprint and the settings it was
    refused under): the message comes back at once instead of a second read."""

    def __init__(self, max_bytes: int, *, keep_newest: bool = False) -> None:
        self.max_bytes = max_bytes
        self.keep_newest = keep_newest
        self._items: "OrderedDict[Hashable, S]" = OrderedDict()
        self._bytes = 0
        self._failed: "OrderedDict[Hashable, str]" = OrderedDict()
        self._lock = threading.Lock()
        self._loading: dict[Hashable, threading.Lock] = {}

    @property
    def bytes(self) -> int:
        return self._bytes

    def __len__(self) -> int:
        return len(self._items)

    def get(self, key: Hashable) -> Optional[S]:
        with self._lock:
            src = self._items.get(key)
            if src is not None:
                self._items.move_to_end(key)
            return src

    def put(self, key: Hashable, src: S) -> None:
        with self._lock:
            old = self._items.pop(key, None)
            if old is not None:
                self._bytes -= old.memory_bytes
            if src.memory_bytes > self.max_bytes and not self.keep_newest:
                return  # bigger than the cache may hold: used by this run only
            self._items[key] = src
            self._bytes += src.memory_bytes
            self._evict_until(self.max_bytes, keep=1 if self.keep_newest else 0)

    def reclaim(self, short: int) -> int:
        """Let go of at least ``short`` bytes of sources, least recently used first (the newest
        too: the budget asks because a load needs the room). Returns the bytes let go."""
        with self._lock:
            return self._evict_until(max(0, self._bytes - short))

    def _evict_until(self, target: int, keep: int = 0) -> int:
        freed = 0
        while len(self._items) > keep and self._bytes > target:
            _, old = self._items.popitem(last=False)
            self._bytes -= old.memory_bytes
            freed += old.memory_bytes
        return freed

    def failure(self, key: Hashable) -> Optional[str]:
        with self._lock:
            return self._failed.get(key)

    def remember_failure(self, key: Hashable, message: str) -> None:
        with self._lock:
            self._failed[key] = message
            self._failed.move_to_end(key)
            while len(self._failed) > MAX_FAILURES:
                self._failed.popitem(last=False)

    def open(self, key: Hashable, load: Callable[[], S], failure_key: Optional[Hashable] = None) -> tuple[S, bool]:
        """The source kept under ``key`` and True; else ``load()`` once (callers asking for the
        same key meanwhile wait for it, then find it here), kept, and False. A refusal
        (:class:`SourceError`) that is not transient is remembered under ``failure_key``
        (default ``key``) and raised again at once, without a read."""
        failed_key = key if failure_key is None else failure_key
        with self.loading(key):
            hit = self.get(key)
            if hit is not None:
                return hit, True
            failed = self.failure(failed_key)
            if failed is not None:
                raise SourceError(failed)
            try:
                got = load()
            except SourceError as exc:
                if not getattr(exc, "transient", False):
                    self.remember_failure(failed_key, str(exc))
                raise
            self.put(key, got)
            return got, False

    @contextmanager
    def loading(self, key: Hashable) -> Iterator[None]:
        """One load per key at a time: sessions opening the same source together wait for the
        first, then find its result (or its failure) here instead of reading it again."""
        with self._lock:
            lock = self._loading.setdefault(key, threading.Lock())
        with lock:
            yield
        with self._lock:
            if self._loading.get(key) is lock and not lock.locked():
                del self._loading[key]


def content_fingerprint(path: str, edge: int = 64 * 1024) -> str:
    """What identifies a source's bytes, cheaply: sha256 over each file's size, mtime and its
    first and last ``edge`` bytes (a rolling directory: every part's name, size and mtime).
    Reads at most ``2 * edge`` bytes of a file, so a refused source is known again at once;
    never blocks (a FIFO or device is opened non-blocking and not read)."""
    h = hashlib.sha256()
    if os.path.isdir(path):
        for rel, size, mtime in _dir_parts(path):
            h.update(f"{rel}\0{size}\0{mtime}\n".encode())
        return "dir:" + h.hexdigest()
    fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK)
    with os.fdopen(fd, "rb") as fh:
        st_ = os.fstat(fd)
        h.update(f"{st_.st_mode}\0{st_.st_size}\0{st_.st_mtime_ns}\0".encode())
        if not stat.S_ISREG(st_.st_mode):
            return "other:" + h.hexdigest()
        h.update(fh.read(edge))
        if st_.st_size > edge:
            fh.seek(max(edge, st_.st_size - edge))
            h.update(fh.read(edge))
    return "file:" + h.hexdigest()


#: the parts of rolling directories listed lately, by the folder's identity and mtime
_DIR_PARTS: "OrderedDict[tuple[str, int, int, int], list[tuple[str, int, int]]]" = OrderedDict()
_DIR_PARTS_MAX = 64
_DIR_PARTS_LOCK = threading.Lock()


def _dir_parts(path: str) -> list[tuple[str, int, int]]:
    """(relative name, size, mtime) of every file under ``path``, names sorted per folder. A flat
    folder (a rolling event log) is listed again only when its own mtime changes (a part added
    or removed); in between only its newest part, the one Spark appends to, is looked at again.
    Every page switch asks for the fingerprint: 90,001 parts took 1.2 s to list each time."""
    st_ = os.stat(path)
    key = (path, st_.st_dev, st_.st_ino, st_.st_mtime_ns)
    with _DIR_PARTS_LOCK:
        parts = _DIR_PARTS.get(key)
    if parts is not None and parts:
        latest = max(p[2] for p in parts)  # (parts written in the same clock tick share it)
        parts = list(parts)
        for i, (rel, _size, mtime) in enumerate(parts):
            if mtime == latest:
                now = os.stat(os.path.join(path, rel))
                parts[i] = (rel, now.st_size, now.st_mtime_ns)
    else:
        parts, flat = [], True
        for root, dirs, files in os.walk(path):
            flat = flat and not dirs
            for f in sorted(files):
                full = os.path.join(root, f)
                fst = os.stat(full)
                parts.append((os.path.relpath(full, path), fst.st_size, fst.st_mtime_ns))
        if not flat:
            return parts
    with _DIR_PARTS_LOCK:
        _DIR_PARTS[key] = parts
        _DIR_PARTS.move_to_end(key)
        while len(_DIR_PARTS) > _DIR_PARTS_MAX:
            _DIR_PARTS.popitem(last=False)
    return parts
