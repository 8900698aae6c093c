"""A small thread-safe LRU of loaded sources, shared by every session of the server."""
from __future__ import annotations

import threading
from collections import OrderedDict
from typing import Hashable, Optional

from aqe_core.sources import LoadedSource


class SourceCache:
    """At most ``size`` sources, least recently used dropped first."""

    def __init__(self, size: int) -> None:
        self.size = size
        self._items: "OrderedDict[Hashable, LoadedSource]" = OrderedDict()
        self._lock = threading.Lock()

    def get(self, key: Hashable) -> Optional[LoadedSource]:
        with self._lock:
            src = self._items.get(key)
            if src is not None:
                self._items.move_to_end(key)
            return src

    def put(self, key: Hashable, src: LoadedSource) -> None:
        with self._lock:
            self._items[key] = src
            self._items.move_to_end(key)
            while len(self._items) > self.size:
                self._items.popitem(last=False)
