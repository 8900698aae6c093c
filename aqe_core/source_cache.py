"""Loaded sources a server keeps (the app's sessions share one cache, the MCP server has its
own), bounded by their estimated size, and the sources that could not be opened, remembered so
they are not read again on every rerun or tool call."""
from __future__ import annotations

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
