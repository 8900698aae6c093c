"""Aligning two runs of one job: queries by a plan fingerprint, shuffle reads by their place.

A query's **fingerprint** is the normalised logical shape of its initial plan (the final plan
where a source has no initial one): the operators with the wrappers of executed adaptive plans
dropped (:func:`aqe_core.views.plan_match.is_wrapper`), each with its description stripped of
what changes from run to run of the same job: expression and plan ids, numbers, file paths, JVM
object identities (``MemoryStreamingWrite@6d7a1b2``: one per micro-batch), and
literals as Spark prints them (:func:`normal_text`: strings unquoted, so an operand with no
``#id`` is a literal; IN lists and INSETs of any length). The SQL text, where a source keeps it, is
normalised too (:func:`normal_sql`). Queries match on the same shape and text first, then the same
shape, then the same shape with join strategies aside (a join the planner broadcast in one run
and sort-merged in the other, :func:`plan_shape` ``neutral``), then the same text, then the same
inputs, filters and joins in plan order (:func:`plan_inputs`: a release that plans the aggregates
otherwise).

Within a matched query the reads are matched by their place in the plan: both final plans,
normalised the same way, go through the one matcher the plan diff uses
(:mod:`aqe_core.views.plan_match`), and each shuffle read of one run takes the read its plan
node was matched to, unless that read feeds another join or side; then each read takes the one
feeding the same join (the join's match) on the same side, through a broadcast exchange too (a
build side's aggregate); the rest are paired by their role (join side or not) and order.
"""
from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass
from typing import Callable, Iterable, Optional, Sequence

from aqe_core.model.plan import PlanNode
from aqe_core.model.plan_walk import SHUFFLE_READ_NAMES, is_origin_scan
from aqe_core.views.plan_literals import normal_sql, normal_text
from aqe_core.views.plan_match import REUSED_EXCHANGE, _match, _Tree, base_name, is_join, is_wrapper
from aqe_core.views.query import QueryView, ShuffleView

__all__ = ["EMPTY_DIGEST", "QueryMatch", "align_queries", "align_shuffles", "fingerprint", "normal_text", "plan_shape",
           "strategy_free_shape"]

#: a JVM object's identity in its ``toString`` (``MemoryStreamingWrite@6d7a1b2``): new in every
#: run and every micro-batch, never part of what the query is
_RE_IDENTITY = re.compile(r"(?<=[A-Za-z0-9_$])@[0-9a-f]{1,8}\b")


def _normal_node(node: PlanNode) -> tuple[str, str]:
    """A node's name and description as the fingerprint compares them.

    >>> _normal_node(PlanNode(1, "WriteToDataSourceV2", "WriteToDataSourceV2 MicroBatchWrite[epoch: 3, writer: x.MemoryStreamingWrite@3b2c2e1]"))
    ('WriteToDataSourceV2', 'MicroBatchWrite[epoch: N, writer: x.MemoryStreamingWrite@]')
    """
    name = base_name(node.name or "")
    desc = node.description or ""
    if desc.startswith(node.name or "\0"):
        desc = desc[len(node.name):]
    return name, normal_text(_RE_IDENTITY.sub("@", desc.replace("(skew=true)", "")))


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


_RE_JOIN_KEYS = re.compile(r"^\s*(\[[^\]]*\]),\s*(\[[^\]]*\])")
_RE_JOIN_TYPE = re.compile(r"\b(Inner|Cross|LeftOuter|RightOuter|FullOuter|LeftSemi|LeftAnti|ExistenceJoin)\b")
_RE_LOCAL_SORT = re.compile(r"\],\s*false,\s*\d+\s*$")


def _neutral(node: PlanNode, name: str, desc: str) -> Optional[tuple[str, str]]:
    """An operator as a join strategy leaves it, None for one a strategy adds: every join is one
    ``Join`` with its type and keys (a sort-merge join planned where the other run broadcast); the
    exchanges and the local sorts (``Sort [..], false``) a strategy needs are dropped."""
    if is_join(name):
        keys = _RE_JOIN_KEYS.match(desc)
        kind = _RE_JOIN_TYPE.search(desc)  # a cartesian product is the inner join of no keys
        jt = kind.group(1) if kind else ("Inner" if name == "CartesianProduct" else "")
        return "Join", f"{jt} {', '.join(keys.groups()) if keys else ''}".strip()
    if name.endswith("Exchange") and name != REUSED_EXCHANGE:
        return None
    if name == "Sort" and _RE_LOCAL_SORT.search(node.description or ""):
        return None
    return name, desc


_Norm = Callable[[PlanNode], tuple[str, str]]


def _strategy_only(node: PlanNode) -> bool:
    """An operator :func:`_neutral` drops (an exchange, a local sort), told from its name and raw
    text alone."""
    name = base_name(node.name or "")
    return (name.endswith("Exchange") and name != REUSED_EXCHANGE
            or name == "Sort" and _RE_LOCAL_SORT.search(node.description or "") is not None)


def plan_shape(plan: Optional[PlanNode], neutral: bool = False, norm: _Norm = _normal_node) -> str:
    """The normalised operator tree of ``plan`` as one line (wrappers and adaptive reads dropped;
    ``neutral``: join strategies aside, :func:`_neutral`); iterative, so no plan is too deep.
    ``norm``: a node's normal name and text (one memo for every form of one plan)."""
    if plan is None:
        return ""
    out: list[str] = []
    stack: list[Optional[PlanNode]] = [plan]  # None closes the operator opened before it
    while stack:
        node = stack.pop()
        if node is None:
            out.append(")")
            continue
        kids = [] if is_origin_scan(node) else node.children  # (another execution's plan below)
        if is_wrapper(node) and len(kids) <= 1 or (node.name or "") in SHUFFLE_READ_NAMES:
            stack.extend(reversed(kids))
            continue
        if neutral and _strategy_only(node):  # (dropped before its text is normalised: the costly part)
            stack.extend(reversed(kids))
            continue
        got: Optional[tuple[str, str]] = norm(node)
        if neutral and got is not None:
            got = _neutral(node, *got)
        if got is None:
            stack.extend(reversed(kids))
            continue
        out.append(f"{got[0]}[{got[1]}](")
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


def _digest(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()[:16] if text else ""


#: a fingerprint component of a plan without that part (no inputs, an empty shape)
EMPTY_DIGEST = _digest(" ")


def plan_inputs(plan: Optional[PlanNode], norm: _Norm = _normal_node) -> str:
    """What a query reads and how it combines it, in plan order: its leaves (scans, ranges,
    local relations), filters and joins (strategies aside), normalised -- what two releases keep
    when one plans the aggregates above them otherwise (4.x drops a partial aggregate over a
    child already partitioned by its keys: one ``SortAggregate`` where 3.5 had two ``HashAggregate``)."""
    if plan is None:
        return ""
    out: list[str] = []
    stack = [plan]
    while stack:
        node = stack.pop()
        name = base_name(node.name or "")
        kids = [] if is_origin_scan(node) else node.children  # (a leaf here: another execution's plan below)
        if not kids or name == "Filter" or is_join(name):
            neutral = _neutral(node, *norm(node))
            if neutral is not None:
                out.append(f"{neutral[0]}[{neutral[1]}]")
        stack.extend(reversed(kids))
    return " ".join(out)


def fingerprint(view: QueryView) -> tuple[str, str, str, str]:
    """(shape hash, SQL-text hash, shape hash with join strategies aside, inputs hash) of a
    query; the text hash is "" when the source has no SQL."""
    plan = view.initial_plan or view.final_plan
    memo: dict[int, tuple[str, str]] = {}

    def norm(node: PlanNode) -> tuple[str, str]:
        got = memo.get(id(node))
        if got is None:
            got = memo[id(node)] = _normal_node(node)
        return got

    return (_digest(plan_shape(plan, norm=norm) or " "), _digest(normal_sql(_sql_of(view))),
            _digest(plan_shape(plan, True, norm) or " "), _digest(plan_inputs(plan, norm) or " "))


def strategy_free_shape(view: QueryView) -> str:
    """:func:`fingerprint`'s third component alone (the shape hash with join strategies aside),
    without the other three's walks: what query groups key on (a view built without its initial
    plan, the fleet scan's, keeps the plan's key in ``query_shape``)."""
    if view.initial_plan is None and view.query_shape:
        return view.query_shape
    return plan_key(view.initial_plan or view.final_plan)


def plan_key(plan: Optional[PlanNode]) -> str:
    """:func:`strategy_free_shape` of a plan itself (the initial plan, else the final one)."""
    return _digest(plan_shape(plan, True) or " ")


def shape_key(plan: Optional[PlanNode]) -> str:
    """:func:`plan_key` of a plan, "" for none (a view's ``query_shape`` where it has no initial plan)."""
    return plan_key(plan) if plan is not None else ""


@dataclass(frozen=True)
class QueryMatch:
    """Query views of run a and run b that are the same query (``how``: what matched)."""

    a: QueryView
    b: QueryView
    how: str


#: the keys queries are paired by, most exact first: the shape as planned, then the shape with the
#: join strategies aside (a join the planner broadcast in one run and sort-merged in the other),
#: the SQL text, and last what the plan reads, filters and joins (another release's aggregates)
_PASSES: tuple[tuple[str, Callable[[tuple[str, str, str, str]], object]], ...] = (
    ("shape and SQL text", lambda f: (f[0], f[1]) if f[1] else None),
    ("plan shape", lambda f: f[0]),
    ("plan shape, join strategies aside, and SQL text", lambda f: (f[2], f[1]) if f[1] else None),
    ("plan shape, join strategies aside", lambda f: f[2]),
    ("SQL text", lambda f: f[1] or None),
    ("the same inputs, filters and joins, planned otherwise", lambda f: f[3]))


def align_queries(a: Sequence[QueryView], b: Sequence[QueryView],
                  prints: Optional[dict[int, tuple[str, str, str, str]]] = None,
                  ) -> tuple[list[QueryMatch], list[QueryView], list[QueryView]]:
    """Matched queries (in run a's order), then those only in a, those only in b. Each pass
    pairs the n-th unmatched query of a key in a with the n-th in b (a job runs in order).
    ``prints``: each view's fingerprint by ``id(view)``, where the caller has them already."""
    fa = [prints[id(v)] if prints is not None else fingerprint(v) for v in a]
    fb = [prints[id(v)] if prints is not None else fingerprint(v) for v in b]
    pa: dict[int, int] = {}
    how_of: dict[int, str] = {}
    for how, keyf in _PASSES:
        taken = set(pa.values())
        free_b: dict[object, list[int]] = {}
        for j, f in enumerate(fb):
            k = keyf(f)
            if k is not None and j not in taken:
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
    else (captures) the final plan's reads in order when they are as many as the adaptive reads,
    and for a shuffle read as planned the exchange of its query stage."""
    plan = view.final_plan
    if plan is None:
        return {}
    nodes = list(plan.walk())
    by_id = {n.id: n for n in nodes if n.id is not None}
    out = {s.key: by_id[s.node_id] for s in view.shuffles if s.node_id is not None and s.node_id in by_id}
    if out:
        return out
    reads = [n for n in nodes if (n.name or "").startswith(SHUFFLE_READ_NAMES)]
    adaptive = [s for s in view.shuffles if s.adaptive_read]
    if len(reads) != len(adaptive):
        return {}
    found = {s.key: n for s, n in zip(adaptive, reads)}
    # a shuffle read as planned: the exchange of its query stage ("ShuffleQueryStage <stage id>")
    stages = {(n.description or "").split()[-1]: n for n in nodes
              if (n.name or "").startswith("ShuffleQueryStage") and (n.description or "").split()}
    for s in view.shuffles:
        stage = stages.get(str(s.stage_id)) if not s.adaptive_read else None
        if stage is not None:
            found[s.key] = next((c for c in stage.children if "Exchange" in (c.name or "")), stage)
    return found


def _role(s: ShuffleView) -> str:
    return f"join {s.side}" if s.join else ("rebalance" if s.rebalance else "read")


def _fed_joins(plan: PlanNode, nodes: dict[str, PlanNode]) -> dict[str, tuple[PlanNode, str]]:
    """shuffle key -> (the join its rows feed, side): up from its node through aggregates,
    projections and a broadcast exchange (a broadcast join's build side), not through another
    shuffle's exchange (those rows feed that shuffle)."""
    parent = {id(c): n for n in plan.walk() for c in n.children}
    out: dict[str, tuple[PlanNode, str]] = {}
    for key, node in nodes.items():
        child, cur = node, parent.get(id(node))
        while cur is not None:
            name = base_name(cur.name or "")
            if is_join(name) and len(cur.children) == 2:
                out[key] = (cur, "left" if cur.children[0] is child else "right")
                break
            if name.endswith("Exchange") and "Broadcast" not in name:
                break
            child, cur = cur, parent.get(id(cur))
    return out


def _joins_in(plan: PlanNode) -> list[PlanNode]:
    return [n for n in plan.walk() if is_join(n.name or "") and len(n.children) == 2]


def _exchange_under(node: PlanNode) -> PlanNode:
    """The shuffle exchange a read reads (below its query stage), else the node itself."""
    cur: Optional[PlanNode] = node
    while cur is not None and not base_name(cur.name or "").endswith("Exchange"):
        cur = cur.children[0] if len(cur.children) == 1 else None
    return cur if cur is not None else node


def _node_partners(a: PlanNode, b: PlanNode) -> dict[int, PlanNode]:
    """id() of each node of plan a -> its partner in plan b (the plan diff's matcher)."""
    ca, back_a = normal_plan(a)
    cb, back_b = normal_plan(b)
    intern: dict = {}
    ta, tb = _Tree(ca, intern), _Tree(cb, intern)
    ma, _mb = _match(ta, tb)
    return {id(back_a[id(ta.nodes[i])]): back_b[id(tb.nodes[j])] for i, j in enumerate(ma) if j >= 0}


_NO_JOIN = (0, "")


def _place_pairs(a: QueryView, b: QueryView) -> dict[str, str]:
    """a's shuffle key -> b's: by plan place (a read, or the exchange it reads: one run may read a
    shuffle as planned) where both feed the same join and side, or no join; then by the join each
    feeds (the join's partner in b, else the join in the same place among the joins) and side."""
    na, nb = _read_nodes(a), _read_nodes(b)
    if not (na and nb and a.final_plan is not None and b.final_plan is not None):
        return {}
    node_to_b = _node_partners(a.final_plan, b.final_plan)
    fa, fb = _fed_joins(a.final_plan, na), _fed_joins(b.final_plan, nb)
    ja, jb = _joins_in(a.final_plan), _joins_in(b.final_plan)
    by_order = {id(x): y for x, y in zip(ja, jb)} if len(ja) == len(jb) else {}

    def want(ka: str) -> Optional[tuple[int, str]]:
        """(id of the b join, side) a's shuffle should feed; None where its join has no partner."""
        if ka not in fa:
            return _NO_JOIN
        join, side = fa[ka]
        partner = node_to_b.get(id(join)) or by_order.get(id(join))
        return (id(partner), side) if partner is not None else None

    def feeds(kb: str) -> tuple[int, str]:
        return (id(fb[kb][0]), fb[kb][1]) if kb in fb else _NO_JOIN

    key_b: dict[int, str] = {}
    for k, n in nb.items():
        key_b.setdefault(id(n), k)
        key_b.setdefault(id(_exchange_under(n)), k)
    pairs: dict[str, str] = {}
    for ka, node in na.items():
        partners = [node_to_b.get(id(node)), node_to_b.get(id(_exchange_under(node)))]
        kb = next((key_b[id(x)] for x in partners if x is not None and id(x) in key_b), None)
        w = want(ka)
        if kb is not None and kb not in pairs.values() and (w is None or w == feeds(kb)):
            pairs[ka] = kb
    for ka in na:
        w = want(ka)
        if ka in pairs or w is None or w == _NO_JOIN:
            continue
        kb = next((k for k in nb if feeds(k) == w and k not in pairs.values()), None)
        if kb is not None:
            pairs[ka] = kb
    return pairs


def align_shuffles(a: QueryView, b: QueryView) -> list[tuple[Optional[ShuffleView], Optional[ShuffleView]]]:
    """Each shuffle of run a with its partner in run b (None where one run has no partner), in
    run a's order, then b's leftovers: by plan place first (the plan diff's matcher over the
    normalised final plans), then by the join each feeds and its side, then by role and order."""
    pairs = _place_pairs(a, b)
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
