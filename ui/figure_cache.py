"""Figures drawn once per view and setting, shared by every session of the server.

A view belongs to a source the server keeps (``ui.source_cache``) and never changes, so the
figure drawn for it with the same settings is the same figure; drawing a histogram or a plan
costs more than the rest of a page. Entries are keyed by the view object itself (held weakly:
a source dropped from the source cache drops its figures).
"""
from __future__ import annotations

import threading
import weakref
from collections import OrderedDict
from typing import Any, Callable, Hashable, TypeVar

T = TypeVar("T")

_SIZE = 256
_items: "OrderedDict[tuple, tuple[weakref.ref, Any]]" = OrderedDict()
_lock = threading.Lock()


def cached_figure(owner: Any, key: Hashable, build: Callable[[], T]) -> T:
    """``build()`` once per (``owner``, ``key``); ``owner`` is the view the figure draws."""
    k = (id(owner), key)
    with _lock:
        hit = _items.get(k)
        if hit is not None and hit[0]() is owner:
            _items.move_to_end(k)
            return hit[1]
    value = build()
    with _lock:
        _items[k] = (weakref.ref(owner), value)
        _items.move_to_end(k)
        while len(_items) > _SIZE:
            _items.popitem(last=False)
    return value
