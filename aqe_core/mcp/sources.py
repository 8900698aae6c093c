"""The sources an MCP server has opened, kept as the app keeps them: one read per source, then
every tool call on it answers from memory (a 470 MB log is read once, not once per question).

Sources open through :func:`aqe_core.opening.open_on_server`: the path must lie under the
server's roots (symlinks resolved, opened by descriptor), decoding is bounded by the server's
limits and every source is charged to the server's memory budget. A source is known by its
resolved path and a fingerprint of its bytes, so a log that grew or changed is read again.
The cache holds at most ``memory_budget_mb`` of sources, least recently used dropped first.
"""
from __future__ import annotations

import gc
import time
from dataclasses import dataclass, field
from typing import Optional

from aqe_core.advise.fixes import prepare_fixes
from aqe_core.opening import (
    LoadedSource, SourceError, open_on_server, resolve_in_roots, server_budget,
)
from aqe_core.server_settings import server_settings
from aqe_core.source_cache import SourceCache, content_fingerprint
from aqe_core.views.triage import ranked_views

__all__ = ["Opened", "SourceStore"]

#: longest path text a tool accepts
MAX_PATH_CHARS = 4096


@dataclass
class Opened:
    """A source in the store: what was loaded, and how long the first read took."""

    source: LoadedSource
    key: str
    load_s: float
    cached: bool = False
    #: answers worth keeping with the source (the triage ranking), shared by every later open
    memo: dict = field(default_factory=dict)

    @property
    def memory_bytes(self) -> int:
        return self.source.memory_bytes


class SourceStore:
    """Sources by resolved path and content fingerprint, bounded by the memory budget: the
    app's :class:`~aqe_core.source_cache.SourceCache`, keeping the newest source whatever its
    size (a server without sessions would otherwise read a big log for every question)."""

    def __init__(self, max_bytes: Optional[int] = None) -> None:
        self._max_bytes = max_bytes
        self._cache: SourceCache[Opened] = SourceCache(self.max_bytes, keep_newest=True)
        server_budget().add_reclaimer(self.reclaim)  # a load short of memory lets cached sources go first

    @property
    def max_bytes(self) -> int:
        return self._max_bytes if self._max_bytes is not None else server_settings().memory_budget_bytes

    def open(self, path: object) -> Opened:
        """The source at ``path`` (under the roots), from memory when already read; raises
        :class:`SourceError` with one line for people."""
        real = str(resolve_in_roots(_path_text(path)))
        try:
            key = (real, content_fingerprint(real))
        except OSError as exc:
            raise SourceError(f"cannot read {real.rsplit('/', 1)[-1]}: {exc.strerror or type(exc).__name__}") from None
        self._cache.max_bytes = self.max_bytes

        def load() -> Opened:
            start = time.perf_counter()
            # one server, one user: its loads one at a time; a log past max_executions is listed by query
            # (issue 41): no views kept, each execution's read again when a tool names it
            src = open_on_server(real, owner="mcp")
            if src.listing is not None:  # nothing to rank or replay ahead: the tools that need every view refuse
                return Opened(src, real, time.perf_counter() - start)
            # the application's replays for recommend, made once with the read, top-ranked queries first;
            # frozen meanwhile so that their collections do not walk the log's objects (2.2 s -> 1.3 s
            # on bench_mcp's 472 MB log); _settle collects after
            gc.freeze()
            try:
                prepare_fixes(ranked_views(src.views))
            except BaseException:
                gc.unfreeze()
                raise
            return Opened(src, real, time.perf_counter() - start)

        # one read per source: calls meanwhile wait for it. A refusal is remembered with the settings
        # it was refused under (as the app does): raising a limit reads the source again (issue 38)
        got, cached = self._cache.open(key, load, (key, server_settings()))
        listing = got.source.listing
        if cached and listing is not None and listing.executions <= server_settings().max_executions:
            # listed under a lower max_executions: the operator raised it, so the log is read whole now
            # (as a refusal is read again); the listing goes when its place is taken
            got, cached = load(), False
            self._cache.put(key, got)
        if cached:
            return Opened(got.source, got.key, got.load_s, cached=True, memo=got.memo)
        _settle()
        return got

    def reclaim(self, short: int) -> None:
        """Let go of at least ``short`` bytes of sources, least recently used first (the
        budget's reclaimer)."""
        if self._cache.reclaim(short):
            _settle()

    def __len__(self) -> int:
        return len(self._cache)


def _settle() -> None:
    """After a source is kept or let go: collect once, then freeze what lives on, so that no
    later tool call's garbage collection walks a big log's objects again. On a 470 MB log a
    full collection inside a call took 0.1-0.8 s, against ~10 ms for the answer itself.
    Unfreezing first lets the objects of a source let go be collected."""
    gc.unfreeze()
    gc.collect()
    gc.freeze()


def _path_text(path: object) -> str:
    if not isinstance(path, str) or not path.strip():
        raise SourceError("give the path of an event log, a listener log or a capture (text)")
    if len(path) > MAX_PATH_CHARS or "\x00" in path:
        raise SourceError(f"a path is at most {MAX_PATH_CHARS} characters, with no NUL")
    return path
