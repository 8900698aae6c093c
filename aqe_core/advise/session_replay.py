"""The queries of an application replayed under a fix set for the whole session, without
replaying the whole application once per fix (:func:`aqe_core.advise.recommend.application_effects`).

A fix's "set for the session" line compares every other query's replay of what Spark did
with its replay under the fix. Done plainly, that is two replays of the application per fix
(60 queries: ~120 ms a fix). Three facts make it cheaper without changing an answer:

- the replay of what Spark did does not depend on the fix: it is made once per capture;
- a replay is a function of the setting values its rules ask for
  (:meth:`aqe_core.config.AQEConf.record_reads`): a query whose what-if replay never asked
  for a key the fix sets answers under the fix exactly as under a what-if that sets nothing,
  which is also made once per capture. Only the queries that asked are replayed again;
- fixes repeat across queries (the same broadcast threshold for every query that misses one):
  the replays under one set of settings are kept, the last 32 sets per capture.

Kept per capture while the capture lives (the app's and the MCP server's source caches hold
it); :func:`warm` makes the two per-capture replays ahead of the first question, and the
replays under given fixes, kept for as long as the capture (a server warms every fix its
queries propose, so that no question waits for a replay of the application).
"""
from __future__ import annotations

import functools
import threading
import weakref
from collections import OrderedDict
from dataclasses import replace
from typing import Iterable, Optional

from aqe_core.config import keys_for
from aqe_core.engine.results import QueryResult
from aqe_core.engine.simulate import simulate, simulate_query
from aqe_core.model.capture import Capture, QueryCapture
from aqe_core.versions import as_version

__all__ = ["session_replays", "warm"]

#: sets of settings whose replays are kept per capture
KEPT_SETTINGS = 32


class _Session:
    """One capture's replays: what Spark did, a what-if that sets nothing (and the settings
    each query asked for), and the last few sets of settings."""

    def __init__(self, capture: Capture) -> None:
        v = as_version(capture.spark_version)
        self.known = set(keys_for(v))
        self.before: list[QueryResult] = simulate(capture).queries
        self.unset: list[QueryResult] = []
        self.asked: list[set[str]] = []
        for q in capture.queries:
            asked: set[str] = set()
            self.unset.append(simulate_query(q, {}, v, what_if=True, recorded_v=v, reads=asked))
            self.asked.append(asked)
        self.under: "OrderedDict[tuple[tuple[str, str], ...], dict[int, QueryResult]]" = OrderedDict()
        self.warmed: dict[tuple[tuple[str, str], ...], dict[int, QueryResult]] = {}  # never let go
        self.lock = threading.Lock()

    def replayed(self, capture: Capture, settings: dict[str, str], keep: bool = False) -> list[QueryResult]:
        key = tuple(sorted((str(k), str(v)) for k, v in settings.items()))
        with self.lock:
            fresh = self.warmed.get(key)
            if fresh is None:
                fresh = self.under.get(key)
                if fresh is not None:
                    self.under.move_to_end(key)
        if fresh is None:
            keys = {k for k, _ in key}
            everything = not keys <= self.known  # a key the release lacks: replay all, ask nothing
            ask = [i for i, asked in enumerate(self.asked) if everything or keys & asked]
            if ask:
                got = simulate(replace(capture, queries=[capture.queries[i] for i in ask]), settings)
                fresh = dict(zip(ask, got.queries))
            else:
                fresh = {}
            with self.lock:
                if keep:
                    self.warmed[key] = fresh
                else:
                    self.under[key] = fresh
                    while len(self.under) > KEPT_SETTINGS:
                        self.under.popitem(last=False)
        return [fresh.get(i, self.unset[i]) for i in range(len(capture.queries))]


_SESSIONS: dict[int, tuple["weakref.ref[Capture]", _Session]] = {}
_LOCK = threading.Lock()
_MAKING: dict[int, threading.Lock] = {}


def _session(capture: Capture) -> _Session:
    key = id(capture)
    with _LOCK:
        held = _SESSIONS.get(key)
        if held is not None and held[0]() is capture:
            return held[1]
        making = _MAKING.setdefault(key, threading.Lock())
    with making:  # one replay per capture: a second caller waits for the first
        with _LOCK:
            held = _SESSIONS.get(key)
            if held is not None and held[0]() is capture:
                return held[1]
        try:
            session = _Session(capture)
            with _LOCK:
                _SESSIONS[key] = (weakref.ref(capture, functools.partial(_forget_ref, key)), session)
        finally:
            with _LOCK:
                _MAKING.pop(key, None)
    return session


def _forget_ref(key: int, _ref: object) -> None:
    """The weak reference's callback: its capture is gone."""
    _forget(key)


def _forget(key: int) -> None:
    with _LOCK:
        _SESSIONS.pop(key, None)


def session_replays(capture: Capture, settings: dict[str, str],
                    skip: Optional[QueryCapture] = None) -> list[tuple[QueryCapture, QueryResult, QueryResult]]:
    """Each query of ``capture`` but ``skip``: (the query, the replay of what Spark did, the
    replay with ``settings`` set for the session), as ``simulate`` would give them."""
    s = _session(capture)
    after = s.replayed(capture, settings) if settings else s.before
    return [(q, b, a) for q, b, a in zip(capture.queries, s.before, after) if skip is None or q.index != skip.index]


def warm(capture: Capture, fixes: Iterable[dict[str, str]] = ()) -> None:
    """Make a capture's per-capture replays now, and its replays under each of ``fixes``,
    kept while the capture lives (a source cache calls it after a load)."""
    s = _session(capture)
    for settings in fixes:
        if settings:
            s.replayed(capture, settings, keep=True)
