"""What each MCP tool answers, without the SDK: validated arguments in, one :class:`Answer` out
(the JSON, its evidence and a short summary), or :class:`ToolInputError` with one line.

Every answer is built by the same function as the CLI's ``--json`` for the same question
(:mod:`aqe_core.views.answers`, :func:`aqe_core.views.explain.explain_views`), so an assistant
quoting a number quotes what ``python -m aqe_core ... --json`` prints. Nothing here runs SQL or
Spark. Outputs are bounded: lists are paged (``offset``/``limit``, ``page.next_offset``) and
an answer past :data:`MAX_ANSWER_BYTES` is refused with the way to ask for less.
"""
from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any, Optional

from aqe_core.model.evidence import Evidence
from aqe_core.opening import SourceError
from aqe_core.views.answers import query_evidence, select_views
from aqe_core.views.query import QueryView
from aqe_core.mcp.sources import SourceStore

__all__ = ["Answer", "MAX_ANSWER_BYTES", "ToolInputError", "Tools"]

#: the largest answer a tool returns (JSON bytes); past it, the tool says how to page
MAX_ANSWER_BYTES = 1 << 20
#: most rows / reads / partitions one call may ask for
MAX_QUERIES, MAX_READS, MAX_PARTITIONS, MAX_SETTINGS, MAX_TEXT = 200, 50, 5000, 32, 500

_EVIDENCE_NOTE = {
    Evidence.EXACT: "exact: the statistics AQE itself decided with (a capture or a listener log), replayed by the rules",
    Evidence.SPARK_METRIC: "Spark's metric: a plain event log's sizes after AQE; lines and predictions derived from"
                           " them are estimates, labelled so",
    Evidence.ESTIMATE: "estimate: derived from Spark's sizes after AQE, with what it assumes",
}


class ToolInputError(ValueError):
    """A call the server refuses (bad argument, path outside the roots, a source that cannot be
    opened, an answer too big): the message is one line for the assistant."""


@dataclass
class Answer:
    tool: str
    summary: str
    answer: Any
    evidence: Evidence
    source: Optional[str] = None
    query: Optional[str] = None
    page: Optional[dict[str, Any]] = None
    notes: list[str] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        return {"tool": self.tool, "source": self.source, "query": self.query,
                "evidence": {"level": self.evidence.value, "label": self.evidence.label,
                             "note": _EVIDENCE_NOTE[self.evidence]},
                "summary": self.summary, "answer": self.answer, "page": self.page, "notes": self.notes}


def _worst(levels: list[Evidence]) -> Evidence:
    for e in (Evidence.ESTIMATE, Evidence.SPARK_METRIC):
        if e in levels:
            return e
    return Evidence.EXACT


def _int(name: str, value: Any, low: int, high: int) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
        raise ToolInputError(f"{name} must be a whole number from {low} to {high}, got {value!r}"[:300])
    return value


def _text(name: str, value: Any, limit: int = MAX_TEXT) -> str:
    if not isinstance(value, str) or len(value) > limit or "\x00" in value:
        raise ToolInputError(f"{name} must be text of at most {limit} characters")
    return value


def _page(items: list[Any], offset: int, limit: int) -> tuple[list[Any], dict[str, Any]]:
    got = items[offset:offset + limit]
    nxt = offset + limit if offset + limit < len(items) else None
    return got, {"offset": offset, "limit": limit, "total": len(items), "next_offset": nxt}


def listed_refusal(src: Any, what: str) -> str:
    """One line for a tool that needs every view of a log listed by query (issue 41): what it
    would do, and the way through such a log."""
    listing = src.listing
    return (f"{what}, but this log is listed by query ({listing.executions} SQL executions, more than the server's"
            f" max_executions, in {len(listing.groups)} queries): use list_query_groups, then explain_query (or this"
            " tool) with an execution id from it")


def bounded(answer: Answer) -> Answer:
    """``answer``, or :class:`ToolInputError` when its JSON passes :data:`MAX_ANSWER_BYTES`."""
    size = len(json.dumps(answer.to_dict()))
    if size > MAX_ANSWER_BYTES:
        raise ToolInputError(f"the answer would be {size} bytes, more than {MAX_ANSWER_BYTES}: ask for a smaller"
                             " page (limit) or one read (histogram)")
    return answer


def _source_answer(opened: Any, executions: int, exact: int, queries: list[dict[str, Any]],
                   listed: Optional[int]) -> dict[str, Any]:
    """``open_source``'s answer, for a source held whole and for one listed by query (``listed``:
    its queries; None: every view held)."""
    src = opened.source
    return {"kind": src.kind, "label": src.label, "spark_version": src.spark_version, "app_id": src.app_id,
            "app_name": src.app_name, "executions": executions, "exact_executions": exact, "queries": queries,
            "warnings": src.warnings[:20], "notes": src.notes[:20], "incomplete": src.incomplete[:20],
            "load_seconds": round(opened.load_s, 3), "cached": opened.cached, "listed_queries": listed}


def _how_read(opened: Any) -> str:
    return " (from memory)" if opened.cached else f" (read in {opened.load_s:.2f} s)"


def _check_execution(execution: Any) -> None:
    if isinstance(execution, bool) or not isinstance(execution, (int, str)) or len(str(execution)) > 20:
        raise ToolInputError("execution must be a SQL execution id (a number, as list_queries gives it)")


def _listed_view(src: Any, execution: Any) -> QueryView:
    """Execution ``execution`` of a log listed by query: its view read from the log again (the
    last few kept), or one line saying which id to give."""
    if execution is None:
        raise ToolInputError(listed_refusal(src, "give execution: without one this tool would need every view"))
    _check_execution(execution)
    qid = str(execution).strip()
    try:
        view = src.view(qid)
    except SourceError as exc:
        raise ToolInputError(str(exc)) from None
    if view is None:
        raise ToolInputError(f"no SQL execution {qid[:20]} in this log (list_query_groups lists each query's execution"
                             " ids)")
    return view


class Tools:
    """The tools over one :class:`SourceStore` (one per server: sources stay read)."""

    def __init__(self, store: Optional[SourceStore] = None) -> None:
        self.store = store if store is not None else SourceStore()

    # -- sources ---------------------------------------------------------------------------
    def _source(self, path: Any):
        try:
            opened = self.store.open(path)
        except SourceError as exc:
            raise ToolInputError(str(exc)) from None
        if not opened.cached and opened.source.listing is None:  # ranked with the read, so no later call pays for it
            self._ranking(opened, "", [])
        return opened

    @staticmethod
    def _ranking(opened, text: str, findings: list[str]) -> list[dict[str, Any]]:
        """The triage ranking of the source (filtered), kept with it."""
        from aqe_core.views.answers import triage_entries

        if opened.source.listing is not None:
            raise ToolInputError(listed_refusal(opened.source, "ranking needs every SQL execution"))
        key = ("triage", text, tuple(sorted(findings)))
        rows = opened.memo.get(key)
        if rows is None:
            rows = triage_entries(opened.source.views, text, findings)
            if len(opened.memo) > 64:
                opened.memo.clear()
            opened.memo[key] = rows
        return rows

    def _view(self, src, execution: Any) -> QueryView:
        if src.listing is not None:
            return _listed_view(src, execution)
        views = src.views
        if execution is None:
            if len(views) == 1:
                return views[0]
            ids = ", ".join(v.query_id for v in views[:20]) + (" ..." if len(views) > 20 else "")
            raise ToolInputError(f"this source has {len(views)} SQL executions: give execution (one of {ids};"
                                 " list_queries ranks them)")
        _check_execution(execution)
        got = select_views(views, str(execution).strip())
        if not got:
            raise ToolInputError(f"no SQL execution {str(execution)[:20]} in this source (list_queries lists them)")
        return got[0]

    def open_source(self, path: Any) -> Answer:
        opened = self._source(path)
        src = opened.source
        if src.listing is not None:
            return self._open_listed(opened)
        levels = [query_evidence(v) for v in src.views]
        exact = sum(1 for e in levels if e is Evidence.EXACT)
        queries = [{"query": v.query_id, "description": v.description[:120], "evidence": query_evidence(v).value}
                   for v in src.views[:MAX_QUERIES]]
        notes = [] if len(src.views) <= MAX_QUERIES else [
            f"the first {MAX_QUERIES} of {len(src.views)} SQL executions are listed: list_queries ranks and pages them all"]
        answer = _source_answer(opened, len(src.views), exact, queries, None)
        summary = f"{src.label}: {len(src.views)} SQL executions, {exact} exact" + _how_read(opened)
        return bounded(Answer("open_source", summary, answer, _worst(levels) if levels else Evidence.EXACT,
                              source=opened.key, notes=notes))

    @staticmethod
    def _open_listed(opened) -> Answer:
        """``open_source`` on a log past ``max_executions``: its queries listed, no execution held."""
        src, listing = opened.source, opened.source.listing
        levels = [Evidence(e) for g in listing.groups for e in g.evidence]
        exact = sum(g.count for g in listing.groups if set(g.evidence) == {Evidence.EXACT.value})
        answer = _source_answer(opened, listing.executions, exact, [], len(listing.groups))
        how = (f"{listing.executions} SQL executions listed as {len(listing.groups)} queries (more than the server's"
               " max_executions): executions open one at a time on demand, each read again from the log; use"
               " list_query_groups, then explain_query with execution=<an id it lists>")
        summary = f"{src.label}: {how}" + _how_read(opened)
        return bounded(Answer("open_source", summary, answer, _worst(levels) if levels else Evidence.EXACT,
                              source=opened.key, notes=[how]))

    def list_queries(self, source: Any, text: Any = "", findings: Any = None, offset: Any = 0,
                     limit: Any = 50) -> Answer:
        from aqe_core.views.triage import FINDINGS

        text = _text("text", text or "")
        findings = findings or []
        if not isinstance(findings, list) or any(not isinstance(f, str) or f not in FINDINGS for f in findings):
            raise ToolInputError(f"findings must be a list of: {', '.join(FINDINGS)}")
        offset, limit = _int("offset", offset, 0, 10_000_000), _int("limit", limit, 1, MAX_QUERIES)
        opened = self._source(source)
        rows = self._ranking(opened, text, findings)
        got, page = _page(rows, offset, limit)
        top = "; ".join(f"#{r['query']} {r['findings'] or 'no finding'}" for r in got[:5])
        summary = f"{len(rows)} of {len(opened.source.views)} SQL executions match, ranked" + (f": {top}" if top else "")
        levels = [Evidence(r["evidence"]) for r in got]
        return bounded(Answer("list_queries", summary, got, _worst(levels), source=opened.key, page=page))

    def list_query_groups(self, source: Any, offset: Any = 0, limit: Any = 20) -> Answer:
        """The source's executions grouped by query (explain --json's ``query_groups``), most
        executions first, paged; each with its count, span, decisions and change sentences."""
        from aqe_core.views.query_groups import group_views, groups_json

        offset, limit = _int("offset", offset, 0, 10_000_000), _int("limit", limit, 1, MAX_QUERIES)
        opened = self._source(source)
        listing = opened.source.listing
        groups = opened.memo.get("query_groups")
        if groups is None:
            made = listing.groups if listing is not None else group_views(opened.source.views)
            groups = opened.memo["query_groups"] = groups_json(made, ids=200)
        got, page = _page(groups, offset, limit)
        repeated = [g for g in groups if g["executions"] > 1]
        executions = listing.executions if listing is not None else len(opened.source.views)
        summary = (f"{executions} SQL executions, {len(groups)} queries, {len(repeated)} run more than once"
                   + "".join(f"; {g['executions']} x {g['name'][:60]!r}" + (f": {g['changes'][0]}" if g["changes"] else "")
                             for g in repeated[:3]))
        levels = [Evidence(e) for g in got for e in ([g["evidence"]] if isinstance(g["evidence"], str) else g["evidence"])]
        return bounded(Answer("list_query_groups", summary, got, _worst(levels), source=opened.key, page=page))

    def explain_query(self, source: Any, execution: Any = None, offset: Any = 0, limit: Any = 20) -> Answer:
        from aqe_core.cli.explain import trace_lines
        from aqe_core.views.explain import explain_views

        offset, limit = _int("offset", offset, 0, 10_000_000), _int("limit", limit, 1, MAX_READS)
        opened = self._source(source)
        view = self._view(opened.source, execution)
        doc = explain_views([view])
        ex = doc["executions"][0]
        ex["reads"], page = _page(ex["reads"], offset, limit)
        lines = [f"#{ex['id']} {ex['description'][:80]}" + (f" [{ex['engine']}]" if ex.get("engine") else "")]
        lines += [f"the engine changed a join (not AQE): {c}" for c in ex.get("engine_changes") or []]
        for r in ex["reads"][:8]:
            after = r.get("partitions_after", len(r["partitions"]))
            lines.append(f"read node {r['node_id']} [{r['evidence']}]: {r['partitions_before'] or '?'} -> {after} partitions")
            lines += [f"  - {x}" for x in r["sentences"][-3:]]
            lines += trace_lines(r.get("trace") or [], "  ")
        lines += [f"join: {j['decision']}" for j in ex["joins"][:8]]
        answer = Answer("explain_query", "\n".join(lines), doc, query_evidence(view), source=opened.key,
                        query=view.query_id, page=page)
        return self._fit_explain(answer)

    def _fit_explain(self, answer: Answer) -> Answer:
        """An explanation too big for one answer keeps its reads' sentences, lines and traces and
        leaves out their partition lists (the histogram tool pages them)."""
        if len(json.dumps(answer.to_dict())) <= MAX_ANSWER_BYTES:
            return answer
        for r in answer.answer["executions"][0]["reads"]:
            r["partitions_count"], r["partitions"] = len(r["partitions"]), []
        answer.notes.append("partition lists left out to keep the answer small: the histogram tool pages them")
        return bounded(answer)

    def histogram(self, source: Any, execution: Any = None, node_id: Any = None, offset: Any = 0,
                  limit: Any = 1000) -> Answer:
        from aqe_core.views.explain import explain_views

        offset, limit = _int("offset", offset, 0, 100_000_000), _int("limit", limit, 1, MAX_PARTITIONS)
        opened = self._source(source)
        view = self._view(opened.source, execution)
        reads = explain_views([view])["executions"][0]["reads"]
        if node_id is None and len(reads) != 1:
            raise ToolInputError(f"this query has {len(reads)} reads: give node_id (one of"
                                 f" {', '.join(str(r['node_id']) for r in reads[:30])})")
        if node_id is not None:
            node_id = _int("node_id", node_id, 0, 10_000_000)
        read = reads[0] if node_id is None else next((r for r in reads if r["node_id"] == node_id), None)
        if read is None:
            raise ToolInputError(f"no read node {node_id} in query {view.query_id} (reads:"
                                 f" {', '.join(str(r['node_id']) for r in reads[:30]) or 'none'})")
        shuffle = next((s for s in view.shuffles if read["stage_id"] is not None and s.stage_id == read["stage_id"]),
                       None) or next((s for s in view.shuffles if s.node_id == read["node_id"]), None)
        before = shuffle.sizes_before if shuffle is not None else None
        sizes = [p["bytes"] for p in read["partitions"] if p["bytes"] is not None]
        parts, page = _page(read["partitions"], offset, limit)
        answer = {**{k: v for k, v in read.items() if k not in ("partitions", "trace")}, "partitions": parts,
                  "sizes_before": before[offset:offset + limit] if before is not None else None,
                  "partitions_before_total": len(before) if before is not None else None,
                  # the partitions Spark read after AQE; the skew rule's median (over the reducers before
                  # AQE) is a line of kind "median": two meanings, two names (issue 38)
                  "largest_after_aqe": max(sizes) if sizes else None,
                  "median_after_aqe": sorted(sizes)[len(sizes) // 2] if sizes else None}
        shown = "; ".join(f"{ln['kind']} {ln['value']} B [{ln['evidence']}]" for ln in read["lines"])
        summary = (f"read node {read['node_id']} of #{view.query_id} [{read['evidence']}]: {len(read['partitions'])}"
                   f" partitions after AQE" + (f", largest {answer['largest_after_aqe']} B, median"
                                               f" {answer['median_after_aqe']} B after AQE" if sizes else "")
                   + (f"; lines: {shown}" if shown else ""))
        return bounded(Answer("histogram", summary, answer, Evidence(read["evidence"]), source=opened.key,
                              query=view.query_id, page=page))
