"""A small, generic physical-plan tree shared by the event-log reader and live capture.

``PlanNode(id, name, description, metrics, children)``:

* ``id``: the node's id in Spark's SQL UI graph (``SparkPlanGraph``), the ``nodeId`` of the
  History Server REST API; ``None`` for nodes the UI graph folds away (``InputAdapter``, query
  stage wrappers, reused subqueries) or when the producer has no such numbering.
* ``name``: Spark's ``nodeName`` (``AQEShuffleRead``, ``SortMergeJoin(skew=true)``).
* ``description``: Spark's ``simpleString`` (``AQEShuffleRead coalesced``).
* ``metrics``: list of dicts with at least ``name``, ``type`` (Spark metric type: ``sum``,
  ``size``, ``timing``, ``nsTiming``, ``average``, ``v2Custom_*``) and ``accumulator_id``; a
  producer may add value fields (``value``, ``total``, ``min``, ``med``, ``max`` ...).
* ``children``: list of PlanNode.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable, Iterator


@dataclass(slots=True)  # plans of every version of every execution: no per-node __dict__
class PlanNode:
    id: int | None
    name: str
    description: str = ""
    metrics: list[dict[str, Any]] = field(default_factory=list)
    children: list["PlanNode"] = field(default_factory=list)

    # -- traversal -------------------------------------------------------------------------
    def walk(self) -> Iterator["PlanNode"]:
        """Pre-order traversal (parent before children, children in order). Iterative, so
        deep plans do not hit the recursion limit."""
        stack: list[PlanNode] = [self]
        while stack:
            node = stack.pop()
            yield node
            stack.extend(reversed(node.children))

    def copied(self, node_copy: Callable[["PlanNode"], "PlanNode"]) -> "PlanNode":
        """A copy of the tree: each node made by ``node_copy`` (a childless node), children in
        order. Iterative, so deep plans do not hit the recursion limit."""
        root = node_copy(self)
        stack = [(self, root)]
        while stack:
            src, out = stack.pop()
            for child in src.children:
                c = node_copy(child)
                out.children.append(c)
                stack.append((child, c))
        return root

    def find(self, predicate: Callable[["PlanNode"], bool]) -> list["PlanNode"]:
        return [n for n in self.walk() if predicate(n)]

    def find_by_name(self, *names: str) -> list["PlanNode"]:
        return self.find(lambda n: n.name in names)

    def metric(self, name: str) -> dict[str, Any] | None:
        for m in self.metrics:
            if m.get("name") == name:
                return m
        return None

    # -- (de)serialisation -----------------------------------------------------------------
    def to_dict(self, metrics: Callable[[list[dict[str, Any]]], list[dict[str, Any]]] | None = None) -> dict[str, Any]:
        """``{"id", "name", "description", "metrics", "children"}``, recursively. ``metrics``:
        what makes a node's own copy of its metrics (default: each dict copied)."""
        copy = metrics if metrics is not None else (lambda ms: [dict(m) for m in ms])
        out_root: dict[str, Any] = {}
        stack: list[tuple[PlanNode, dict[str, Any]]] = [(self, out_root)]
        while stack:
            node, out = stack.pop()
            out["id"] = node.id
            out["name"] = node.name
            out["description"] = node.description
            out["metrics"] = copy(node.metrics)
            kids: list[dict[str, Any]] = []
            out["children"] = kids
            for child in node.children:
                d: dict[str, Any] = {}
                kids.append(d)
                stack.append((child, d))
        return out_root

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> "PlanNode":
        root = cls(data.get("id"), str(data.get("name", "")), str(data.get("description", "")),
                   [dict(m) for m in data.get("metrics") or []])
        stack = [(root, data)]
        while stack:
            node, d = stack.pop()
            for cd in d.get("children") or []:
                child = cls(cd.get("id"), str(cd.get("name", "")), str(cd.get("description", "")),
                            [dict(m) for m in cd.get("metrics") or []])
                node.children.append(child)
                stack.append((child, cd))
        return root
