"""Turn a ``sparkPlanInfo`` JSON tree into a :class:`~aqe_core.model.plan.PlanNode` tree.

Node ids follow Spark's ``SparkPlanGraph`` numbering (pre-order counter, WholeStageCodegen
clusters numbered before their members, ``InputAdapter`` and query-stage wrappers folded away,
reused exchanges/subqueries pointing at the first occurrence), so they equal the ``nodeId``
values of the History Server's ``/sql`` REST API for the same plan.
"""
from __future__ import annotations

import json
import sys
from dataclasses import dataclass, field
from typing import Any

from aqe_core.model.engines import STAGE_PARTS
from aqe_core.model.eventlog import LazyPlan, SQLExecution
from aqe_core.model.plan import PlanNode
from aqe_core.model.plan_walk import EXCHANGE_STAGE_WRAPPERS, OTHER_STAGE_WRAPPERS, SHUFFLE_READ_NAMES, graph_nodes
from aqe_core.readers.eventlog.jsonfast import dump_json, parse_json
from aqe_core.readers.eventlog.packed import as_is, pack, unpack

__all__ = ["SHUFFLE_READ_NAMES", "build_plan", "graph_nodes", "plan_metrics", "physical_plan_description",
           "pack_plan_description"]

#: query-stage wrappers that point at a (possibly reused) exchange
_STAGE_WRAPPERS = EXCHANGE_STAGE_WRAPPERS
#: wrappers folded away without reuse handling
_PASS_THROUGH = OTHER_STAGE_WRAPPERS


_intern = sys.intern


def _metrics(info: dict) -> list[dict[str, Any]]:
    ms = info.get("metrics")
    if not ms:
        return []
    try:
        # names and types repeat across every node of every plan: intern them
        return [{"name": _intern(m["name"]), "type": _intern(m["metricType"]), "accumulator_id": m["accumulatorId"]}
                for m in ms if type(m["accumulatorId"]) is int and type(m["name"]) is str
                and type(m["metricType"]) is str]
    except (KeyError, TypeError):
        out = []
        for m in ms:
            if not isinstance(m, dict):
                continue
            acc = m.get("accumulatorId")
            out.append({"name": str(m.get("name", "")), "type": str(m.get("metricType", "sum")),
                        "accumulator_id": acc if isinstance(acc, int) and not isinstance(acc, bool) else None})
        return out


def _ref(node: PlanNode) -> PlanNode:
    """A childless copy standing for a reused exchange / subquery (same id as the original); an
    engine's exchange stage (Photon's map stage) keeps a copy of the exchange under it, which
    carries the partitioning."""
    out = PlanNode(node.id, node.name, node.description, [dict(m) for m in node.metrics], [])
    if node.name in STAGE_PARTS and len(node.children) == 1:
        out.children.append(_ref(node.children[0]))
    return out


class _Builder:
    def __init__(self) -> None:
        self.next_id = 0
        self.exchanges: dict[int, PlanNode] = {}
        self._keys: dict[int, int] = {}
        self._intern: dict[tuple, int] = {}

    def key(self, info: dict) -> int:
        """Structural identity of a plan subtree (Spark compares SparkPlanInfo by value): equal
        subtrees get the same small int. Computed bottom-up once per node."""
        k = self._keys.get(id(info))
        if k is not None:
            return k
        stack = [(info, False)]
        while stack:
            node, ready = stack.pop()
            if id(node) in self._keys:
                continue
            accs = tuple(m.get("accumulatorId") for m in (node.get("metrics") or ()) if isinstance(m, dict))
            if accs:
                # accumulator ids belong to one SparkPlan instance: equal ids mean the same subtree.
                # Every node with metrics is keyed so, whether asked for itself or met under an
                # ancestor (two ways gave a reused exchange two keys, and it was not seen as reused)
                acc_sig = ("#acc", node.get("nodeName"), node.get("simpleString"), accs)
                self._keys[id(node)] = self._intern.setdefault(acc_sig, len(self._intern))
                continue
            kids = [c for c in (node.get("children") or []) if isinstance(c, dict)]
            if not ready:
                stack.append((node, True))
                stack.extend((c, False) for c in kids if id(c) not in self._keys)
                continue
            meta = node.get("metadata")
            sig = (
                node.get("nodeName"), node.get("simpleString"),
                tuple((m.get("name"), m.get("accumulatorId"), m.get("metricType"))
                      for m in (node.get("metrics") or ()) if isinstance(m, dict)),
                json.dumps(meta, sort_keys=True, default=str) if meta else None,
                tuple(self._keys[id(c)] for c in kids),
            )
            self._keys[id(node)] = self._intern.setdefault(sig, len(self._intern))
        return self._keys[id(info)]

    def take_id(self) -> int:
        i = self.next_id
        self.next_id += 1
        return i

    def build(self, info: Any, in_cluster: bool) -> PlanNode:
        if not isinstance(info, dict):
            return PlanNode(None, "?", "malformed plan node", [], [])
        name = _intern(str(info.get("nodeName", "")))
        desc = str(info.get("simpleString", ""))
        children = [c for c in (info.get("children") or []) if isinstance(c, dict)]
        first = children[0] if children else None
        if name.startswith("WholeStageCodegen"):
            node = PlanNode(self.take_id(), name, desc, _metrics(info), [])
            if first is not None:
                node.children.append(self.build(first, True))
            return node
        if name == "InputAdapter":
            node = PlanNode(None, name, desc, _metrics(info), [])
            if first is not None:
                node.children.append(self.build(first, False))
            return node
        if name in _STAGE_WRAPPERS:
            node = PlanNode(None, name, desc, _metrics(info), [])
            if first is not None:
                orig = self.exchanges.get(self.key(first))
                node.children.append(_ref(orig) if orig is not None else self.build(first, False))
            return node
        if name in _PASS_THROUGH:
            node = PlanNode(None, name, desc, _metrics(info), [])
            if first is not None:
                node.children.append(self.build(first, False))
            return node
        if name == "Subquery" and in_cluster:
            return self.build(info, False)
        if name == "Subquery" and self.key(info) in self.exchanges:
            return _ref(self.exchanges[self.key(info)])
        if name == "ReusedSubquery":
            node = PlanNode(None, name, desc, _metrics(info), [])
            if first is not None:
                node.children.append(self.build(first, in_cluster))
            return node
        if name == "ReusedExchange" and first is not None and self.key(first) in self.exchanges:
            return PlanNode(None, name, desc, _metrics(info), [_ref(self.exchanges[self.key(first)])])
        node = PlanNode(self.take_id(), name, desc, _metrics(info), [])
        if "Exchange" in name or name == "Subquery" or name in STAGE_PARTS:
            # (an engine's exchange is reused by its stage node: Photon's ``ReusedExchange [..],
            # PhotonShuffleMapStage`` points at the map stage, not at the sink under it)
            self.exchanges[self.key(info)] = node
        for c in children:
            node.children.append(self.build(c, in_cluster))
        return node


def build_plan(info: Any) -> PlanNode:
    """PlanNode tree for one ``sparkPlanInfo``. Very deep plans raise the recursion limit."""
    b = _Builder()
    limit = sys.getrecursionlimit()
    try:
        sys.setrecursionlimit(max(limit, 20000))
        return b.build(info, False)
    finally:
        sys.setrecursionlimit(limit)


#: nodes the UI graph folds away (no id): their own metrics are not the graph's
_FOLDED = {"InputAdapter", "ReusedSubquery", "ReusedExchange", *_STAGE_WRAPPERS, *_PASS_THROUGH}


@dataclass
class PlanFacts:
    """What the reader needs of a plan version while it reads, without building it."""

    metrics: dict[int, tuple[str, str]] = field(default_factory=dict)  # the graph's: acc -> (name, type)
    exchange_metrics: list[tuple[str, int]] = field(default_factory=list)  # (name, acc) on exchanges
    adaptive: bool = False
    size_accs: set[int] = field(default_factory=set)  # shuffle reads' "partition data size"
    nodes: int = 0  # nodes of the tree (what the server's per-source plan-node limit counts)


def plan_facts(info: Any) -> PlanFacts:
    """The metrics of a ``sparkPlanInfo`` tree as :func:`plan_metrics` finds them on the built
    graph (the nodes the graph folds away carry none of their own in Spark's plans), its
    exchanges' metrics, whether it is adaptive, and its shuffle reads' size accumulators.

    >>> f = plan_facts({"nodeName": "AdaptiveSparkPlan", "children": [{"nodeName": "AQEShuffleRead",
    ...     "metrics": [{"name": "partition data size", "accumulatorId": 7, "metricType": "size"}]}]})
    >>> f.metrics, f.adaptive, f.size_accs
    ({7: ('partition data size', 'size')}, True, {7})
    """
    out = PlanFacts()
    stack = [info]
    while stack:
        node = stack.pop()
        if not isinstance(node, dict):
            continue
        out.nodes += 1
        name = str(node.get("nodeName", ""))
        if name == "AdaptiveSparkPlan":
            out.adaptive = True
        if name not in _FOLDED and node.get("metrics"):
            _node_facts(out, name, node)
        kids = node.get("children")
        if isinstance(kids, list):
            stack.extend(kids)
    return out


def _node_facts(out: PlanFacts, name: str, node: dict) -> None:
    """One node's metrics into ``out``, read in place: the same entries :func:`_metrics` would
    give, without building its dicts (a third of the reader's time outside task lines)."""
    try:
        pairs = [(m["accumulatorId"], m["name"], m["metricType"]) for m in node["metrics"]]
        regular = all(type(a) is int and type(n) is str and type(t) is str for a, n, t in pairs)
    except (KeyError, TypeError):
        regular = False
    if not regular:
        pairs = [(m["accumulator_id"], m["name"], m["type"]) for m in _metrics(node) if m["accumulator_id"] is not None]
    metrics = out.metrics
    for acc, mname, mtype in pairs:
        metrics[acc] = (mname, mtype)
    if "Exchange" in name:
        out.exchange_metrics.extend((mname, acc) for acc, mname, _ in pairs)
    elif name in SHUFFLE_READ_NAMES:
        out.size_accs.update(acc for acc, mname, _ in pairs if mname == "partition data size")


#: what a plan tree that cannot be built becomes (a hostile or damaged log): one node
MALFORMED = "malformed plan tree"


def _build_raw(raw: bytes) -> PlanNode:
    try:
        return build_plan(parse_json(unpack(raw)))
    except (KeyError, TypeError, ValueError, AttributeError, IndexError, RecursionError, OverflowError) as e:
        return PlanNode(None, "?", f"{MALFORMED} (unexpected structure: {type(e).__name__})", [], [])


def is_malformed(plan: PlanNode | None) -> bool:
    return plan is not None and plan.id is None and plan.name == "?" and plan.description.startswith(MALFORMED)


def lazy_plan(info: Any, facts: PlanFacts, packed: bool = True) -> LazyPlan:
    """``info`` kept compressed, built by :func:`build_plan` when a view asks for it.
    ``packed=False``: kept as its JSON (a listing reader's plan, gone once its execution is
    summarised: compressing it would be work for nothing)."""
    data = dump_json(info)
    return LazyPlan(pack(data) if packed else data, _build_raw, facts.adaptive, frozenset(facts.size_accs), len(data))


def plan_metrics(plan: PlanNode) -> dict[int, tuple[str, str]]:
    """accumulator id -> (name, type) for every metric of the UI graph's nodes."""
    out: dict[int, tuple[str, str]] = {}
    for n in graph_nodes(plan):
        for m in n.metrics:
            acc = m.get("accumulator_id")
            if acc is not None:
                out[acc] = (m["name"], m["type"])
    return out


def pack_plan_description(text: str | None, packed: bool = True) -> bytes | None:
    """Spark's ``physicalPlanDescription`` as the model keeps it (``SQLExecution.physical_plan_z``);
    ``packed=False``: not compressed (a listing reader's, as :func:`lazy_plan`'s)."""
    if text is None:
        return None
    data = text.encode("utf-8", "surrogatepass")
    return pack(data) if packed else as_is(data)


def physical_plan_description(execution: SQLExecution) -> str | None:
    """The latest plan version's ``physicalPlanDescription`` as Spark logged it (None: not logged)."""
    packed = execution.physical_plan_z
    return None if packed is None else unpack(packed).decode("utf-8", "surrogatepass")
