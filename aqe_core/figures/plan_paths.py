"""Plan paths, labels and references of a drawn plan.

Path ids address the nodes of the *unfolded* plan tree (``"0"`` root, ``"0.1.0"`` = first child
of the second child of the root); the boxes of :mod:`aqe_core.figures.plan_blocks`, the AQE diff
of :mod:`aqe_core.views.plan_diff` and the app's clicks all use them. A reused exchange or
subquery is drawn as a dashed link to its original (:func:`cross_links`).
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Iterable

from aqe_core.model.plan import PlanNode
from aqe_core.model.plan_walk import SHUFFLE_READ_NAMES, STAGE_WRAPPERS

#: operator names that are wrappers of a codegen stage or of a stage input
CODEGEN_PREFIX = "WholeStageCodegen"
INPUT_ADAPTER = "InputAdapter"
#: nodes that leave the enclosing codegen stage (Spark's SparkPlanGraph does so for Subquery)

MAX_LABEL_CHARS = 36

_CODEGEN_ID = re.compile(r"WholeStageCodegen\s*\((\d+)\)")
_STATS = re.compile(r",?\s*Statistics\(.*$")
_SKEW_DESC = re.compile(r"^(\d+) skewed partitions? with size")


# --------------------------------------------------------------------------------------------
# labels
# --------------------------------------------------------------------------------------------
def _truncate(s: str, n: int) -> str:
    return s if len(s) <= n else s[: n - 1] + "…"


def short_label(node: PlanNode, max_chars: int = MAX_LABEL_CHARS) -> str:
    """A short display label: the operator name plus the one qualifier that matters."""
    name = node.name or "?"
    desc = node.description or ""
    if name in SHUFFLE_READ_NAMES:
        rest = desc[len(name):].strip() if desc.startswith(name) else desc.strip()
        m = _SKEW_DESC.match(rest)
        if m:
            rest = f"skewed ({m.group(1)})"
        elif rest == "no skewed partition":
            rest = "no skew"
        label = f"{name} {rest}".strip()
    elif name in STAGE_WRAPPERS or name == "AdaptiveSparkPlan":
        label = _STATS.sub("", desc).strip() or name
        if name == "AdaptiveSparkPlan":
            label = label.replace("isFinalPlan=", "final=")
    else:
        label = name
    return _truncate(" ".join(label.split()), max_chars)


def codegen_stage_id(name: str) -> int | None:
    m = _CODEGEN_ID.match(name or "")
    return int(m.group(1)) if m else None


# --------------------------------------------------------------------------------------------
# references
# --------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class CrossLink:
    """A dashed extra edge: ``source`` (a reference: ReusedExchange, a reused-stage copy,
    ReusedSubquery) points at ``target`` (the original)."""

    source: str
    target: str
    kind: str  # "reuse" | "subquery"


# --------------------------------------------------------------------------------------------
# paths
# --------------------------------------------------------------------------------------------
def iter_paths(plan: PlanNode) -> Iterable[tuple[str, PlanNode]]:
    """(path id, node) in pre-order. Iterative."""
    stack: list[tuple[str, PlanNode]] = [("0", plan)]
    while stack:
        path, node = stack.pop()
        yield path, node
        kids = node.children
        for i in range(len(kids) - 1, -1, -1):
            stack.append((f"{path}.{i}", kids[i]))


def node_at(plan: PlanNode, path: str) -> PlanNode | None:
    """The node at a path id, or None."""
    parts = path.split(".")
    if not parts or parts[0] != "0":
        return None
    node = plan
    for p in parts[1:]:
        try:
            i = int(p)
        except ValueError:
            return None
        if i < 0 or i >= len(node.children):
            return None
        node = node.children[i]
    return node


_REUSED_EXCHANGE_REF = re.compile(r",\s*((?:Broadcast|Shuffle)?Exchange\s.*)$")
_REUSED_SUBQUERY_REF = re.compile(r"^ReusedSubquery\s+(.*)$")
#: a reference node -> how its description quotes the original's, and the link's kind
_BY_DESCRIPTION = {"ReusedExchange": (_REUSED_EXCHANGE_REF.search, "reuse"),
                   "ReusedSubquery": (_REUSED_SUBQUERY_REF.match, "subquery")}


def cross_links(paths: list[str], nodes: list[PlanNode], children: list[list[int]]) -> list[CrossLink]:
    """Reuse / subquery references among displayed nodes.

    * the event-log reader stands a reused exchange or subquery by a childless copy carrying
      the original's UI node id: a childless node whose id equals an earlier node's id
      (that has children) points at that node;
    * a ``ReusedExchange`` without such a child points at the exchange whose description is
      the tail of its own (``ReusedExchange [..], Exchange hashpartitioning(..), [plan_id=7]``);
    * a ``ReusedSubquery`` points at the ``Subquery`` with the description it quotes.
    """
    first_by_id: dict[int, int] = {}
    by_desc: dict[str, int] = {}
    for i, n in enumerate(nodes):
        if n.id is not None and children[i] and n.id not in first_by_id:
            first_by_id[n.id] = i
        if n.description and n.description not in by_desc and not n.name.startswith("Reused"):
            by_desc[n.description] = i
    links: list[CrossLink] = []
    linked: set[int] = set()
    for i, n in enumerate(nodes):
        if n.id is not None and not children[i]:
            j = first_by_id.get(n.id)
            if j is not None and j != i:
                kind = "subquery" if "Subquery" in n.name else "reuse"
                links.append(CrossLink(paths[i], paths[j], kind))
                linked.add(i)
    for i, n in enumerate(nodes):
        ref = _BY_DESCRIPTION.get(n.name)
        if i in linked or ref is None or any(c in linked for c in children[i]):
            continue
        find, kind = ref
        m = find(n.description or "")
        j = by_desc.get(m.group(1)) if m else None
        if j is not None and j != i:
            links.append(CrossLink(paths[i], paths[j], kind))
    return links
