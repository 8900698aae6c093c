"""Loaded sources shared by every session of the server, bounded by their estimated size, and
the sources that could not be opened, remembered so they are not read again on every rerun."""
from __future__ import annotations

import threading
from collections import OrderedDict
from contextlib import contextmanager
from typing import Hashable, Iterator, Optional

from aqe_core.opening import LoadedSource

#: failures remembered (a message each: a few hundred bytes); the oldest are forgotten first
MAX_FAILURES = 4096


class SourceCache:
    """Sources up to ``max_bytes`` of :attr:`LoadedSource.memory_bytes` together, least
    recently used dropped first. A source is charged to the server's memory budget while it
    lives, so :meth:`reclaim` (the budget's reclaimer) lets sources go when a load needs room.

    Failures are kept by key (the source's content fingerprint and the settings it was
    refused under): the message comes back at once instead of a second read."""

    def __init__(self, max_bytes: int) -> None:
        self.max_bytes = max_bytes
        self._items: "OrderedDict[Hashable, LoadedSource]" = OrderedDict()
        self._bytes = 0
        self._failed: "OrderedDict[Hashable, str]" = OrderedDict()
        self._lock = threading.Lock()
        self._loading: dict[Hashable, threading.Lock] = {}

    @property
    def bytes(self) -> int:
        return self._bytes

    def get(self, key: Hashable) -> Optional[LoadedSource]:
        with self._lock:
            src = self._items.get(key)
            if src is not None:
                self._items.move_to_end(key)
            return src

    def put(self, key: Hashable, src: LoadedSource) -> None:
        with self._lock:
            old = self._items.pop(key, None)
            if old is not None:
                self._bytes -= old.memory_bytes
            if src.memory_bytes > self.max_bytes:
                return  # bigger than the cache may hold: used by this run only
            self._items[key] = src
            self._bytes += src.memory_bytes
            self._evict_until(self.max_bytes)

    def reclaim(self, short: int) -> None:
        """Let go of at least ``short`` bytes of sources, least recently used first."""
        with self._lock:
            self._evict_until(max(0, self._bytes - short))

    def _evict_until(self, target: int) -> None:
        while self._items and self._bytes > target:
            _, old = self._items.popitem(last=False)
            self._bytes -= old.memory_bytes

    def failure(self, key: Hashable) -> Optional[str]:
        with self._lock:
            return self._failed.get(key)

    def remember_failure(self, key: Hashable, message: str) -> None:
        with self._lock:
            self._failed[key] = message
            self._failed.move_to_end(key)
            while len(self._failed) > MAX_FAILURES:
                self._failed.popitem(last=False)

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
