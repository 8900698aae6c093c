"""Figures drawn once per view and setting, shared by every session of the server.

A view belongs to a source the server keeps (``aqe_core.source_cache``) and never changes, so the
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
_items: "OrderedDict[tuple, tuple[weakref.ref, Any, Any]]" = OrderedDict()
_lock = threading.Lock()


def cached_figure(owner: Any, key: Hashable, build: Callable[[], T], partner: Any = None) -> T:
    """``build()`` once per (``owner``, ``key``); ``owner`` is the view the figure draws.
    ``partner``: a second object the value depends on (the other run of a comparison), held
    weakly and checked like ``owner``, so an id reused by a new object never returns a stale value."""
    k = (id(owner), None if partner is None else id(partner), key)
    with _lock:
        hit = _items.get(k)
        if hit is not None and hit[0]() is owner and (partner is None or hit[1]() is partner):
            _items.move_to_end(k)
            return hit[2]
    value = build()
    with _lock:
        _items[k] = (weakref.ref(owner), None if partner is None else weakref.ref(partner), value)
        _items.move_to_end(k)
        while len(_items) > _SIZE:
            _items.popitem(last=False)
    return value
