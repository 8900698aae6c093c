"""Tidy layered layout of a physical-plan tree (root at the top, children below).

The plan is a tree (``PlanNode.children``); reused exchanges / subqueries add a few
cross-links that the layout ignores and the figure draws dashed. networkx has no
crossing-free layered layout (its ``multipartite_layout``/``bfs_layout`` order nodes in a
layer arbitrarily), so the x coordinates come from our own Reingold–Tilford tidy-tree
algorithm in the linear-time form of Buchheim, Jünger & Leipert (2002) ("Improving Walker's
algorithm to run in linear time"), generalised to nodes of different widths: two neighbours
``a`` (left) and ``b`` (right) on a level are at least ``(w(a) + w(b)) / 2 + node_sep``
apart, where a node's width is the length of its short label. The structure is an
``nx.DiGraph`` whose keys are stable path ids (``"0"`` root, ``"0.1.0"`` = first child of the
second child of the root; path ids always refer to the *unfolded* plan, so they are the same
whether codegen wrappers are folded or not, and :mod:`aqe_core.views.plan_diff` uses them
too).

Guarantees (tested): parents are one level above their children; on every level nodes keep
the plan's left-to-right order and never overlap; edges (straight parent→child segments
between adjacent levels) never cross; O(n) time, no recursion (chains of any depth).

Units: x is in *label characters* (a label of 20 characters is 20 wide); y is
``-depth * level_sep``.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Iterable

import networkx as nx

from aqe_core.model.plan import PlanNode
from aqe_core.model.plan_walk import SHUFFLE_READ_NAMES, STAGE_WRAPPERS

#: operator names that are wrappers of a codegen stage or of a stage input
CODEGEN_PREFIX = "WholeStageCodegen"
INPUT_ADAPTER = "InputAdapter"
#: nodes that leave the enclosing codegen stage (Spark's SparkPlanGraph does so for Subquery)
_CODEGEN_ESCAPE = ("Subquery", "SubqueryBroadcast", "ReusedSubquery")

DEFAULT_NODE_SEP = 3.0
DEFAULT_LEVEL_SEP = 1.0
MIN_LABEL_WIDTH = 6
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
# result types
# --------------------------------------------------------------------------------------------
@dataclass
class CodegenGroup:
    """One WholeStageCodegen stage: ``key`` is the path id of its WholeStageCodegen node
    (stage numbers repeat across subqueries, path ids do not)."""

    key: str
    stage: int | None
    node: PlanNode
    members: list[str] = field(default_factory=list)


@dataclass(frozen=True)
class CrossLink:
    """A dashed extra edge: ``source`` (a reference: ReusedExchange, a reused-stage copy,
    ReusedSubquery) points at ``target`` (the original)."""

    source: str
    target: str
    kind: str  # "reuse" | "subquery"


@dataclass
class PlanLayout:
    graph: nx.DiGraph
    #: displayed path ids in pre-order (parent before children, children left to right)
    order: list[str]
    pos: dict[str, tuple[float, float]]
    width: dict[str, float]
    depth: dict[str, int]
    label: dict[str, str]
    #: path id -> codegen group key (path of its WholeStageCodegen node), displayed nodes only
    codegen_of: dict[str, str]
    codegen: dict[str, CodegenGroup]
    links: list[CrossLink]
    #: folded wrapper path id -> the displayed path id that stands for it
    folded: dict[str, str]
    node_sep: float
    level_sep: float

    def node(self, path: str) -> PlanNode:
        return self.graph.nodes[path]["node"]

    def __len__(self) -> int:
        return len(self.order)

    def display_path(self, path: str) -> str | None:
        """The displayed path id for any path of the plan (folded wrappers map to the node
        that replaced them), or None if unknown."""
        if path in self.pos:
            return path
        return self.folded.get(path)

    def bbox(self) -> tuple[float, float, float, float]:
        """(xmin, xmax, ymin, ymax) including label widths."""
        if not self.order:
            return (0.0, 1.0, -1.0, 0.0)
        xs = [self.pos[p][0] - self.width[p] / 2 for p in self.order]
        xe = [self.pos[p][0] + self.width[p] / 2 for p in self.order]
        ys = [self.pos[p][1] for p in self.order]
        return (min(xs), max(xe), min(ys), max(ys))

    @property
    def max_depth(self) -> int:
        return max(self.depth.values(), default=0)


# --------------------------------------------------------------------------------------------
# tidy tree (Buchheim–Jünger–Leipert, iterative, variable widths)
# --------------------------------------------------------------------------------------------
def tidy_x(children: list[list[int]], widths: list[float], node_sep: float, root: int = 0) -> list[float]:
    """x centre of every node of a tree given as child-index lists (node ``root`` at top).

    Neighbours on a level are at least ``(w_left + w_right) / 2 + node_sep`` apart; a parent
    is centred over its first and last child. Result shifted so the leftmost extent is 0.
    """
    n = len(children)
    if n == 0:
        return []
    t = _Walker(children, widths, node_sep)
    for v in _post_order(children, root):
        _first_walk(t, v)
    return _second_walk(t, root)


class _Walker:
    """State of Walker's algorithm in its linear-time form (Buchheim, Jünger, Leipert): one
    array per field, indexed by node."""

    def __init__(self, children: list[list[int]], widths: list[float], node_sep: float) -> None:
        n = len(children)
        self.children = children
        self.node_sep = node_sep
        self.parent = [-1] * n
        self.number = [0] * n
        for v in range(n):
            for i, c in enumerate(children[v]):
                self.parent[c] = v
                self.number[c] = i
        self.prelim = [0.0] * n
        self.mod = [0.0] * n
        self.shift = [0.0] * n
        self.change = [0.0] * n
        self.thread = [-1] * n
        self.ancestor = list(range(n))
        self.default_anc = [-1] * n
        self.half = [w / 2.0 for w in widths]


def _post_order(children: list[list[int]], root: int) -> list[int]:
    """Post-order, iterative."""
    post: list[int] = []
    stack = [root]
    while stack:
        v = stack.pop()
        post.append(v)
        stack.extend(children[v])
    post.reverse()  # reversed (root, right..left) pre-order = post-order with children left→right
    return post


def _first_walk(t: _Walker, v: int) -> None:
    children, prelim, mod, half = t.children, t.prelim, t.mod, t.half
    ch = children[v]
    p = t.parent[v]
    lsib = children[p][t.number[v] - 1] if (p >= 0 and t.number[v] > 0) else -1
    if ch:
        # execute shifts
        s = 0.0
        c = 0.0
        for w in reversed(ch):
            prelim[w] += s
            mod[w] += s
            c += t.change[w]
            s += t.shift[w] + c
        mid = (prelim[ch[0]] + prelim[ch[-1]]) / 2.0
        if lsib >= 0:
            prelim[v] = prelim[lsib] + half[lsib] + half[v] + t.node_sep
            mod[v] = prelim[v] - mid
        else:
            prelim[v] = mid
    elif lsib >= 0:
        prelim[v] = prelim[lsib] + half[lsib] + half[v] + t.node_sep
    else:
        prelim[v] = 0.0
    if p < 0:
        return
    if lsib < 0:
        t.default_anc[p] = v
        return
    t.default_anc[p] = _apportion(t, v, p, lsib)


def _apportion(t: _Walker, v: int, p: int, lsib: int) -> int:
    """Push ``v``'s subtree right of its left siblings' contours; returns the new default ancestor."""
    children, prelim, mod, half, thread = t.children, t.prelim, t.mod, t.half, t.thread
    parent, number, ancestor, node_sep = t.parent, t.number, t.ancestor, t.node_sep
    da = t.default_anc[p]
    vip = vop = v
    vim = lsib
    vom = children[p][0]
    sip = mod[vip]
    sop = mod[vop]
    sim = mod[vim]
    som = mod[vom]
    chm = children[vim]
    nr = chm[-1] if chm else thread[vim]
    chp = children[vip]
    nl = chp[0] if chp else thread[vip]
    while nr >= 0 and nl >= 0:
        vim = nr
        vip = nl
        cho = children[vom]
        vom = cho[0] if cho else thread[vom]
        cho = children[vop]
        vop = cho[-1] if cho else thread[vop]
        ancestor[vop] = v
        sh = (prelim[vim] + sim) - (prelim[vip] + sip) + half[vim] + half[vip] + node_sep
        if sh > 0:
            a = ancestor[vim]
            wl = a if parent[a] == p else da
            subtrees = number[v] - number[wl]
            t.change[v] -= sh / subtrees
            t.shift[v] += sh
            t.change[wl] += sh / subtrees
            prelim[v] += sh
            mod[v] += sh
            sip += sh
            sop += sh
        sim += mod[vim]
        sip += mod[vip]
        som += mod[vom]
        sop += mod[vop]
        chm = children[vim]
        nr = chm[-1] if chm else thread[vim]
        chp = children[vip]
        nl = chp[0] if chp else thread[vip]
    if nr >= 0:
        cho = children[vop]
        if not cho and thread[vop] < 0:
            thread[vop] = nr
            mod[vop] += sim - sop
    if nl >= 0:
        cho = children[vom]
        if not cho and thread[vom] < 0:
            thread[vom] = nl
            mod[vom] += sip - som
            da = v
    return da


def _second_walk(t: _Walker, root: int) -> list[float]:
    n = len(t.children)
    x = [0.0] * n
    stack2 = [(root, 0.0)]
    while stack2:
        v, m = stack2.pop()
        x[v] = t.prelim[v] + m
        mm = m + t.mod[v]
        for c in t.children[v]:
            stack2.append((c, mm))
    left = min(x[i] - t.half[i] for i in range(n))
    return [xi - left for xi in x]


# --------------------------------------------------------------------------------------------
# plan -> displayed tree
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


def layout_plan(
    plan: PlanNode,
    *,
    fold_codegen: bool = True,
    node_sep: float = DEFAULT_NODE_SEP,
    level_sep: float = DEFAULT_LEVEL_SEP,
    max_label_chars: int = MAX_LABEL_CHARS,
) -> PlanLayout:
    """Lay out a plan tree.

    ``fold_codegen``: drop ``WholeStageCodegen (n)`` and ``InputAdapter`` wrapper nodes (only
    when they have exactly one child) the way Spark's SQL UI does; the nodes inside a stage
    keep the stage as ``codegen`` attribute (group key = path id of the WholeStageCodegen node,
    ``codegen_stage`` = n) so the figure can shade each stage. Without folding, the wrappers
    are drawn and still carry the group.
    """
    d = _displayed(plan, fold_codegen, max_label_chars)
    # the stack pops children left to right but appends them to the parent in pop order:
    # that is already left-to-right (we pushed in reverse).
    xs = tidy_x(d.children, d.widths, node_sep) if d.paths else []
    return _plan_layout(d, xs, node_sep, level_sep)


class _Displayed:
    """The displayed tree: pre-order arrays of the nodes left after folding."""

    def __init__(self) -> None:
        self.paths: list[str] = []
        self.nodes: list[PlanNode] = []
        self.children: list[list[int]] = []
        self.widths: list[float] = []
        self.labels: list[str] = []
        self.depths: list[int] = []
        self.cg_of: list[str | None] = []
        self.groups: dict[str, CodegenGroup] = {}
        self.folded: dict[str, str] = {}


def _displayed(plan: PlanNode, fold_codegen: bool, max_label_chars: int) -> _Displayed:
    d = _Displayed()
    paths, nodes, children, widths, labels = d.paths, d.nodes, d.children, d.widths, d.labels
    depths, cg_of, groups, folded = d.depths, d.cg_of, d.groups, d.folded
    # (node, path, displayed parent index, depth, codegen key, pending folded paths)
    stack: list[tuple[PlanNode, str, int, int, str | None, tuple[str, ...]]] = [(plan, "0", -1, 0, None, ())]
    while stack:
        node, path, pidx, depth, cg, pending = stack.pop()
        name = node.name or ""
        kids = node.children
        is_cg = name.startswith(CODEGEN_PREFIX)
        is_ia = name == INPUT_ADAPTER
        if is_cg:
            groups[path] = CodegenGroup(path, codegen_stage_id(name), node)
        if fold_codegen and (is_cg or is_ia) and len(kids) == 1:
            child_cg = path if is_cg else None
            stack.append((kids[0], f"{path}.0", pidx, depth, child_cg, pending + (path,)))
            continue
        own_cg = None if name in _CODEGEN_ESCAPE else cg
        if is_cg:
            own_cg = path
        idx = len(paths)
        paths.append(path)
        nodes.append(node)
        children.append([])
        lab = short_label(node, max_label_chars)
        labels.append(lab)
        widths.append(float(max(MIN_LABEL_WIDTH, len(lab))))
        depths.append(depth)
        cg_of.append(own_cg)
        for f in pending:
            folded[f] = path
        if pidx >= 0:
            children[pidx].append(idx)
        if own_cg is not None:
            groups[own_cg].members.append(path)
        child_cg = None if is_ia else own_cg
        for i in range(len(kids) - 1, -1, -1):
            stack.append((kids[i], f"{path}.{i}", idx, depth + 1, child_cg, ()))
    return d


def _plan_layout(d: _Displayed, xs: list[float], node_sep: float, level_sep: float) -> PlanLayout:
    paths, nodes, children, widths, labels = d.paths, d.nodes, d.children, d.widths, d.labels
    depths, cg_of, groups = d.depths, d.cg_of, d.groups
    g = nx.DiGraph()
    pos: dict[str, tuple[float, float]] = {}
    width: dict[str, float] = {}
    depth_of: dict[str, int] = {}
    label_of: dict[str, str] = {}
    codegen_of: dict[str, str] = {}
    for i, p in enumerate(paths):
        x = round(xs[i], 6)
        y = -depths[i] * level_sep
        pos[p] = (x, y)
        width[p] = widths[i]
        depth_of[p] = depths[i]
        label_of[p] = labels[i]
        key = cg_of[i]
        attrs = {"node": nodes[i], "label": labels[i], "x": x, "y": y, "depth": depths[i], "width": widths[i],
                 "codegen": key, "codegen_stage": groups[key].stage if key is not None else None}
        g.add_node(p, **attrs)
        if key is not None:
            codegen_of[p] = key
    for i, ch in enumerate(children):
        for c in ch:
            g.add_edge(paths[i], paths[c])

    groups = {k: v for k, v in groups.items() if v.members}
    links = _cross_links(paths, nodes, children)
    return PlanLayout(
        graph=g, order=paths, pos=pos, width=width, depth=depth_of, label=label_of, codegen_of=codegen_of,
        codegen=groups, links=links, folded=d.folded, node_sep=node_sep, level_sep=level_sep,
    )


_REUSED_EXCHANGE_REF = re.compile(r",\s*((?:Broadcast|Shuffle)?Exchange\s.*)$")
_REUSED_SUBQUERY_REF = re.compile(r"^ReusedSubquery\s+(.*)$")


def _cross_links(paths: list[str], nodes: list[PlanNode], children: list[list[int]]) -> list[CrossLink]:
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
        if i in linked:
            continue
        if n.name == "ReusedExchange":
            if any(c in linked for c in children[i]):
                continue
            m = _REUSED_EXCHANGE_REF.search(n.description or "")
            j = by_desc.get(m.group(1)) if m else None
            if j is not None and j != i:
                links.append(CrossLink(paths[i], paths[j], "reuse"))
        elif n.name == "ReusedSubquery":
            if any(c in linked for c in children[i]):
                continue
            m = _REUSED_SUBQUERY_REF.match(n.description or "")
            j = by_desc.get(m.group(1)) if m else None
            if j is not None and j != i:
                links.append(CrossLink(paths[i], paths[j], "subquery"))
    return links
