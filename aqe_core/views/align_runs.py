"""Aligning two runs of one job: queries by a plan fingerprint, shuffle reads by their place.

A query's **fingerprint** is the normalised logical shape of its initial plan (the final plan
where a source has no initial one): the operators with the wrappers of executed adaptive plans
dropped (:func:`aqe_core.views.plan_match.is_wrapper`), each with its description stripped of
what changes from run to run of the same job: expression and plan ids, numbers (literals,
partition counts, sizes, ``Range`` bounds), quoted strings, and file paths. The SQL text, where
a source keeps it, is normalised the same way and kept beside the shape: two queries with the
same shape and text match first, then the same shape, then the same text (a plan whose shape a
release changed).

Within a matched query the reads are matched by their place in the plan: both final plans,
normalised the same way, go through the one matcher the plan diff uses
(:mod:`aqe_core.views.plan_match`), and each shuffle read of one run takes the read its plan
node was matched to; reads whose node cannot be found are paired by their role (join side or
not) and order.
"""
from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass
from typing import Iterable, Optional, Sequence

from aqe_core.model.plan import PlanNode
from aqe_core.model.plan_walk import SHUFFLE_READ_NAMES
from aqe_core.views.plan_match import _match, _Tree, base_name, is_wrapper
from aqe_core.views.query import QueryView, ShuffleView

__all__ = ["QueryMatch", "align_queries", "align_shuffles", "fingerprint", "normal_text", "plan_shape"]

_RE_IDS = re.compile(r"#\d+L?|\[(?:plan_id=\d+|id=#\d+)\]|isFinalPlan=\w+")
_RE_PATH = re.compile(r"(?:[a-z][a-z0-9+.-]*:/+|/)[^\s,\]\)]+", re.I)
_RE_STRING = re.compile(r"'(?:[^'\\]|\\.)*'|\"(?:[^\"\\]|\\.)*\"")
_RE_NUMBER = re.compile(r"(?<![A-Za-z_])-?\d+(?:\.\d+)?(?:[eE][+-]?\d+)?[LDSYBF]?\b")
_RE_STATS = re.compile(r",?\s*Statistics\(.*$")


def normal_text(text: Optional[str]) -> str:
    """``text`` without what changes between runs of one job (ids, paths, strings, numbers).

    >>> normal_text("Filter (isnotnull(v#12L) AND (v#12L > 10))")
    'Filter (isnotnull(v) AND (v > N))'
    >>> normal_text("Exchange hashpartitioning(k#3L, 200), ENSURE_REQUIREMENTS, [plan_id=41]")
    'Exchange hashpartitioning(k, N), ENSURE_REQUIREMENTS,'
    >>> normal_text("FileScan parquet [a#1] Location: InMemoryFileIndex[file:/data/2026-11-25/t]")
    'FileScan parquet [a] Location: InMemoryFileIndex[P]'
    """
    t = _RE_STATS.sub("", text or "")
    t = _RE_IDS.sub("", t)
    t = _RE_PATH.sub("P", t)
    t = _RE_STRING.sub("S", t)
    t = _RE_NUMBER.sub("N", t)
    return " ".join(t.split())


def _normal_node(node: PlanNode) -> tuple[str, str]:
    name = base_name(node.name or "")
    desc = node.description or ""
    if desc.startswith(node.name or "\0"):
        desc = desc[len(node.name):]
    return name, normal_text(desc.replace("(skew=true)", ""))


def normal_plan(plan: PlanNode) -> tuple[PlanNode, dict[int, PlanNode]]:
    """A copy of ``plan`` with every name and description normalised, and a map from each copy
    node's ``id()`` back to its original (so a match of copies is a match of originals)."""
    back: dict[int, PlanNode] = {}

    def copy(node: PlanNode) -> PlanNode:
        name, desc = _normal_node(node)
        new = PlanNode(node.id, name, f"{name} {desc}".strip(), [], [])
        back[id(new)] = node
        return new

    return plan.copied(copy), back


def plan_shape(plan: Optional[PlanNode]) -> str:
    """The normalised operator tree of ``plan`` as one line (wrappers and adaptive reads dropped);
    iterative, so no plan is too deep for it."""
    if plan is None:
        return ""
    out: list[str] = []
    stack: list[Optional[PlanNode]] = [plan]  # None closes the operator opened before it
    while stack:
        node = stack.pop()
        if node is None:
            out.append(")")
            continue
        kids = node.children
        if is_wrapper(node) and len(kids) <= 1 or (node.name or "") in SHUFFLE_READ_NAMES:
            stack.extend(reversed(kids))
            continue
        name, desc = _normal_node(node)
        out.append(f"{name}[{desc}](")
        stack.append(None)
        stack.extend(reversed(kids))
    return "".join(out)


_RE_SQL = re.compile(r"^\s*(?:select|with|insert|create|merge|update|delete|from)\b", re.I)


def _sql_of(view: QueryView) -> str:
    """The query's SQL text: a capture's, or an event log's description when it is a statement
    (spark-sql and the Thrift server log the statement there; PySpark logs a call site)."""
    model = view.model
    if model is not None and model.kind == "capture" and model.raw is not None:
        capture, index = model.raw
        q = next((x for x in capture.queries if x.index == index), None)
        if q is not None:
            return capture.sql_of(q) or ""
    return view.description if view.source_kind == "eventlog" and _RE_SQL.match(view.description or "") else ""


def fingerprint(view: QueryView) -> tuple[str, str]:
    """(shape hash, SQL-text hash) of a query; the text hash is "" when the source has no SQL."""
    shape = plan_shape(view.initial_plan or view.final_plan)
    sql = normal_text(_sql_of(view))
    digest = hashlib.sha256(shape.encode()).hexdigest()[:16]
    return digest, (hashlib.sha256(sql.encode()).hexdigest()[:16] if sql else "")


@dataclass(frozen=True)
class QueryMatch:
    """Query views of run a and run b that are the same query (``how``: what matched)."""

    a: QueryView
    b: QueryView
    how: str


def align_queries(a: Sequence[QueryView], b: Sequence[QueryView]
                  ) -> tuple[list[QueryMatch], list[QueryView], list[QueryView]]:
    """Matched queries (in run a's order), then those only in a, those only in b. Each pass
    pairs the n-th unmatched query of a key in a with the n-th in b (a job runs in order)."""
    fa = [fingerprint(v) for v in a]
    fb = [fingerprint(v) for v in b]
    pa: dict[int, int] = {}
    how_of: dict[int, str] = {}
    passes = (("shape and SQL text", lambda f: f if f[1] else None), ("plan shape", lambda f: f[0]),
              ("SQL text", lambda f: f[1] or None))
    for how, keyf in passes:
        free_b: dict[object, list[int]] = {}
        for j, f in enumerate(fb):
            k = keyf(f)
            if k is not None and j not in pa.values():
                free_b.setdefault(k, []).append(j)
        for i, f in enumerate(fa):
            k = keyf(f)
            if i in pa or k is None or not free_b.get(k):
                continue
            pa[i] = free_b[k].pop(0)
            how_of[i] = how
    matches = [QueryMatch(a[i], b[j], how_of[i]) for i, j in sorted(pa.items())]
    taken = set(pa.values())
    return matches, [v for i, v in enumerate(a) if i not in pa], [v for j, v in enumerate(b) if j not in taken]


def _read_nodes(view: QueryView) -> dict[str, PlanNode]:
    """shuffle key -> its node in the final plan: the read (or exchange) with the view's node id,
    else (captures) the final plan's reads in order when they are as many as the shuffles."""
    plan = view.final_plan
    if plan is None:
        return {}
    nodes = list(plan.walk())
    by_id = {n.id: n for n in nodes if n.id is not None}
    out = {s.key: by_id[s.node_id] for s in view.shuffles if s.node_id is not None and s.node_id in by_id}
    if out:
        return out
    reads = [n for n in nodes if (n.name or "").startswith(SHUFFLE_READ_NAMES)]
    if len(reads) == len(view.shuffles):
        return {s.key: n for s, n in zip(view.shuffles, reads)}
    return {}


def _role(s: ShuffleView) -> str:
    return f"join {s.side}" if s.join else ("rebalance" if s.rebalance else "read")


def align_shuffles(a: QueryView, b: QueryView) -> list[tuple[Optional[ShuffleView], Optional[ShuffleView]]]:
    """Each shuffle of run a with its partner in run b (None where one run has no partner), in
    run a's order, then b's leftovers: by plan place first (the plan diff's matcher over the
    normalised final plans), then by role and order."""
    pairs: dict[str, str] = {}
    na, nb = _read_nodes(a), _read_nodes(b)
    if na and nb and a.final_plan is not None and b.final_plan is not None:
        ca, back_a = normal_plan(a.final_plan)
        cb, back_b = normal_plan(b.final_plan)
        intern: dict = {}
        ta, tb = _Tree(ca, intern), _Tree(cb, intern)
        ma, _mb = _match(ta, tb)
        node_to_b = {id(back_a[id(ta.nodes[i])]): back_b[id(tb.nodes[j])] for i, j in enumerate(ma) if j >= 0}
        key_b = {id(n): k for k, n in nb.items()}
        for ka, node in na.items():
            partner = node_to_b.get(id(node))
            kb = key_b.get(id(partner)) if partner is not None else None
            if kb is not None and kb not in pairs.values():
                pairs[ka] = kb
    by_key_b = {s.key: s for s in b.shuffles}
    left_b = [s for s in b.shuffles if s.key not in pairs.values()]
    out: list[tuple[Optional[ShuffleView], Optional[ShuffleView]]] = []
    for s in a.shuffles:
        if s.key in pairs:
            out.append((s, by_key_b[pairs[s.key]]))
            continue
        same_role = next((x for x in left_b if _role(x) == _role(s)), None)
        if same_role is not None:
            left_b.remove(same_role)
        out.append((s, same_role))
    out.extend((None, s) for s in left_b)
    return out


def describe(views: Iterable[QueryView]) -> list[tuple[str, str, str]]:
    """(query id, description, shape hash) per view, for the unmatched lists."""
    return [(v.query_id, v.description, fingerprint(v)[0]) for v in views]
