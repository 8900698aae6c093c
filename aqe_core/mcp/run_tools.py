"""The MCP tools that run Spark, ``verify_fix`` and ``count_hot_keys``, served only when the operator starts the
server with ``--allow-runs``: the query of a capture (or listener log) runs again on Spark with a
fix of ``recommend`` and each read is scored against the prediction (``recommend --verify``).

Every run is guarded whatever the ``trusted`` server setting says: the captured SQL, its setup
statements and the settings pass the SQL and conf guards (:mod:`aqe_core.live.sql_guard`) before
anything runs; it runs on the first of the server's ``allowed_masters`` and is cancelled at
``run_time_limit_s``; one run at a time (a second call while one runs is refused, not queued).
"""
from __future__ import annotations

import threading
from typing import Any

from aqe_core.model.evidence import Evidence
from aqe_core.mcp.advice_tools import AdviceTools
from aqe_core.mcp.tools import Answer, ToolInputError, _int, bounded

__all__ = ["RunTools"]


class RunTools(AdviceTools):
    """:class:`AdviceTools` with ``verify_fix``."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._running = threading.Lock()

    def verify_fix(self, source: Any, execution: Any = None, fix: Any = 0) -> Answer:
        from aqe_core.advise.fixes import fixes_for_view
        from aqe_core.cli.recommend import verify_fix
        from aqe_core.live.runner import RunCancelled
        from aqe_core.server_settings import server_settings
        from aqe_core.views.answers import query_evidence

        opened = self._source(source)
        view = self._view(opened.source, execution)
        if query_evidence(view) is not Evidence.EXACT or view.model is None or view.model.raw is None:
            raise ToolInputError("only a capture's or a listener log's query can be run again (a plain log holds"
                                 " no statistics to predict from)")
        fixes = fixes_for_view(view)
        if not fixes:
            raise ToolInputError(f"recommend finds no fix for query {view.query_id}: nothing to verify")
        index = _int("fix", fix, 0, len(fixes) - 1)
        chosen = fixes[index]
        if not chosen.exact:
            raise ToolInputError("this fix is an estimate: only exact predictions are scored against a run")
        settings = server_settings()
        if not self._running.acquire(blocking=False):
            raise ToolInputError("another run is in progress on this server: try again when it ends")
        try:
            line, score = verify_fix(view, chosen, settings.allowed_masters[0], time_limit_s=settings.run_time_limit_s,
                                     trusted=False)
        except RunCancelled as exc:
            raise ToolInputError(f"the run was cancelled: {str(exc).splitlines()[0][:300] if str(exc) else 'time limit'}"
                                 f" (run_time_limit_s = {settings.run_time_limit_s:g})") from None
        finally:
            self._running.release()
        answer = {"query": view.query_id, "fix": chosen.to_dict(), "verified": score is not None, "result": line,
                  "score": score}
        return bounded(Answer("verify_fix", f"#{view.query_id} {chosen.finding}: {line}", answer,
                              Evidence.EXACT if score is not None else Evidence.ESTIMATE, source=opened.key,
                              query=view.query_id, notes=["run on Spark: the SQL and settings passed the SQL and conf"
                                                          " guards first"]))

    def count_hot_keys(self, source: Any, execution: Any = None, top: Any = 5) -> Answer:
        """The top keys of every skewed reducer of a query, counted on Spark with the exchange's own
        partitioning (hot-keys): a capture's query planned again, an event log's SQL written from
        its plan run on the tables of the same names the server's Spark has (hot-keys --spark);
        guarded SQL, the time limit, one run at a time."""
        import argparse

        from aqe_core.cli.hot_keys import hot_keys_doc
        from aqe_core.server_settings import server_settings

        opened = self._source(source)
        view = self._view(opened.source, execution)
        settings = server_settings()
        args = argparse.Namespace(no_spark=False, spark=True, top=_int("top", top, 1, 20),
                                  time_limit=settings.run_time_limit_s or 300.0, trusted=False,
                                  master=settings.allowed_masters[0])
        if not self._running.acquire(blocking=False):
            raise ToolInputError("another run is in progress on this server: try again when it ends")
        try:
            doc = hot_keys_doc([view], args)
        finally:
            self._running.release()
        verified = [e for e in doc if e.get("keys") is not None and e.get("verified")]
        summary = f"#{view.query_id}: keys of {len(doc)} skewed reducer(s), {len(verified)} verified against Spark's record"
        return bounded(Answer("count_hot_keys", summary, doc, Evidence.EXACT if verified else Evidence.ESTIMATE,
                              source=opened.key, query=view.query_id,
                              notes=["counted on Spark: the SQL and its views passed the SQL guard first"]))
