"""A plan as the text Spark prints for it, one line per operator, each tied to its graph node
(issue 40: the plan text beside the graph, linked both ways).

People read Spark plans as the ``explain()`` tree; the graph is easier to scan but its boxes
carry short labels. Showing the text beside it, with a click on a line ringing the node and a
click on a node finding its line, lets someone check the graph against the text they know.

The lines follow Spark's ``TreeNode.generateTreeString`` (the non-formatted explain):

* the root, then each child with ``:- `` (every child but the last) or ``+- `` (the last),
  under a continuation of ``:  `` (more siblings follow) or ``   `` (none);
* a ``WholeStageCodegen (N)`` prints no line of its own: its members carry ``*(N) `` (an
  ``InputAdapter``, a query stage or a subquery ends that prefix), and an ``InputAdapter``
  prints none either;
* a ``ReusedExchange`` / ``ReusedSubquery`` is a leaf (the event-log reader hangs a copy of the
  original under it, which the text leaves out, as Spark does);
* an ``AdaptiveSparkPlan`` whose plan has changed heads that plan with ``+- == Final Plan ==``
  (``== Current Plan ==`` while running; Spark 3.0 printed none: ``sections=False``). Our trees
  hold one version each (the initial plan is its own tree,
  :attr:`~aqe_core.views.query.QueryView.initial_plan`), so the ``== Initial Plan ==`` section
  Spark adds after it is the initial tree's own text. Spark pads a nested header with spaces,
  dropping the ``:`` bars of the levels above; they are kept here, so a subquery's plan does not
  seem to end its host's children;
* an operator's subqueries (the event log appends them to its children) come before its
  children, two levels in, as Spark prints its ``innerChildren``.

Each line shows the operator's ``simpleString`` (our ``description``) and ends with its node id
in parentheses: the id of Spark's SQL-tab graph (:class:`~aqe_core.model.plan.PlanNode`), which
is what the graph shows. These are *not* the operator ids of ``explain("formatted")`` (the text
Spark logs by default from 3.1), which numbers operators bottom-up and lists subqueries apart.
A description's line breaks become spaces (one operator, one line), a line stops at
:data:`MAX_LINE_CHARS` and a plan at :data:`MAX_LEVELS` levels.
tests/views/test_plan_text.py holds the lines to Spark's own text on every recorded log.

``path`` is the node's plan path (``"0"`` root, ``"0.1.0"``: first child of the root's second
child), the scheme of :func:`aqe_core.figures.plan_paths.iter_paths` the graph uses;
:func:`line_of` finds a node's line, also for a node that has none (a codegen wrapper: its first
member's line; a copy under a reused exchange: the reuse's line).
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Optional

from aqe_core.model.plan import PlanNode
from aqe_core.model.plan_walk import STAGE_WRAPPERS

__all__ = ["ELIDED", "MAX_LEVELS", "MAX_LINE_CHARS", "PlanTextLine", "line_of", "plan_text", "plan_text_lines"]

#: one line's cap: plan descriptions run to 100 KB on wide schemas, and a hostile log can make
#: one longer; the widget wraps or scrolls, this only keeps a single line from swamping it
MAX_LINE_CHARS = 2_000
#: nodes Spark prints no line for: their child takes their place (codegen wrapper, stage input)
_CODEGEN_PREFIX = "WholeStageCodegen"
_INPUT_ADAPTER = "InputAdapter"
#: leaves in Spark's tree whose event-log node carries a copy of the original as a child
_REUSE_LEAVES = ("ReusedExchange", "ReusedSubquery")
#: operators that start their children's lines afresh (no codegen prefix), as Spark does
_PREFIX_RESETS = (*STAGE_WRAPPERS, "AdaptiveSparkPlan", _INPUT_ADAPTER)
#: subquery plans (``BaseSubqueryExec``): Spark prints them as ``innerChildren``
_SUBQUERIES = ("Subquery", "SubqueryBroadcast", "SubqueryAdaptiveBroadcast", "ReusedSubquery")
_CODEGEN_ID = re.compile(r"WholeStageCodegen\s*\((\d+)\)")
_NEWLINES = re.compile(r"[\r\n]+")
#: how far :func:`line_of` walks down through wrappers that print no line
_MAX_WRAPPERS = 64
#: plan levels printed: the tree marks of 600 levels fill most of a capped line, so deeper
#: lines would show no operator, and a hostile plan 20,000 levels deep would cost gigabytes of
#: paths (each line's path grows with its depth); what lies deeper is one "…" line per subtree
MAX_LEVELS = 600
ELIDED = "… deeper operators not shown"


@dataclass(frozen=True)
class PlanTextLine:
    """One line of a plan's text.

    ``path``/``node_id`` are None on a section header (``+- == Final Plan ==``); ``node_id`` is
    None too on operators the SQL tab's graph folds away (query stages, reused exchanges).
    ``depth`` is the line's indentation in steps of three characters (what the tree prefix
    takes), so the widget can fold a subtree or indent wrapped text under its line.
    """

    text: str
    path: Optional[str]
    node_id: Optional[int]
    depth: int


@dataclass(frozen=True)
class _Item:
    """A node waiting to be printed: ``lead`` goes before its text, ``cont`` before its
    children's tree marks; ``codegen`` is the ``*(N) `` prefix it inherits."""

    node: PlanNode
    path: str
    lead: str
    cont: str
    codegen: str


def _cut(text: str) -> str:
    return text if len(text) <= MAX_LINE_CHARS else text[: MAX_LINE_CHARS - 1] + "…"


def _grow(prefix: str, step: str) -> str:
    """A longer tree prefix; past the line cap it stops growing (subqueries take two steps a
    level, so :data:`MAX_LEVELS` alone does not bound it)."""
    return prefix if len(prefix) > MAX_LINE_CHARS else prefix + step


def _line(item: _Item) -> PlanTextLine:
    node = item.node
    body = _NEWLINES.sub(" ", node.description or node.name or "?")
    suffix = f" ({node.id})" if node.id is not None else ""
    return PlanTextLine(_cut(item.lead + item.codegen + body + suffix), item.path, node.id, len(item.lead) // 3)


def _header(node: PlanNode) -> Optional[str]:
    """Spark's section header over an adaptive plan's current plan: none while the plan is the
    initial one (no query stage yet), ``Final Plan`` once ``isFinalPlan=true``."""
    if len(node.children) != 1:
        return None
    if "isFinalPlan=true" in (node.description or ""):
        return "Final Plan"
    staged = any(n.name in STAGE_WRAPPERS for n in node.children[0].walk())
    return "Current Plan" if staged else None


def _children(item: _Item) -> list[_Item]:
    """The items printed under ``item``'s line, in order, with Spark's tree marks.

    The event log appends an operator's subqueries after its children; Spark prints them first
    (its ``innerChildren``), two levels in, under a ``:  `` bar when children follow."""
    node = item.node
    if node.name in _REUSE_LEAVES:
        return []
    codegen = "" if node.name in _PREFIX_RESETS else item.codegen
    kids = list(enumerate(node.children))
    subs = [(i, c) for i, c in kids if c.name in _SUBQUERIES]
    regular = [(i, c) for i, c in kids if c.name not in _SUBQUERIES]
    out = []
    inner = _grow(item.cont, ":  " if regular else "   ")
    for k, (i, child) in enumerate(subs):
        last = k == len(subs) - 1
        out.append(_Item(child, f"{item.path}.{i}", _grow(inner, "+- " if last else ":- "),
                         _grow(inner, "   " if last else ":  "), ""))
    for k, (i, child) in enumerate(regular):
        last = k == len(regular) - 1
        out.append(_Item(child, f"{item.path}.{i}", _grow(item.cont, "+- " if last else ":- "),
                         _grow(item.cont, "   " if last else ":  "), codegen))
    return out


def _unwrap(item: _Item) -> _Item:
    """The item whose line stands for ``item``: through codegen wrappers (their members get
    ``*(N) ``) and stage inputs, which print no line of their own."""
    while len(item.node.children) == 1:
        node = item.node
        if node.name.startswith(_CODEGEN_PREFIX):
            m = _CODEGEN_ID.match(node.name)
            codegen = f"*({m.group(1)}) " if m else "* "
        elif node.name == _INPUT_ADAPTER:
            codegen = ""
        else:
            break
        item = _Item(node.children[0], item.path + ".0", item.lead, item.cont, codegen)
    return item


def plan_text_lines(plan: PlanNode, *, sections: bool = True) -> list[PlanTextLine]:
    """``plan`` as Spark's explain prints it, one :class:`PlanTextLine` per printed operator.

    ``sections=False`` prints no ``== Final Plan ==`` header, as Spark 3.0 did (3.1 added the
    headers, with the initial plan after the final one). Iterative (the reader builds plans up
    to 20,000 levels deep); below :data:`MAX_LEVELS` levels a subtree is one :data:`ELIDED`
    line, with the path of its top node.

    >>> scan = PlanNode(3, "Range", "Range (0, 10, step=1, splits=2)")
    >>> join = PlanNode(2, "SortMergeJoin", "SortMergeJoin [k#1L], [k#2L], Inner",
    ...                 children=[PlanNode(None, "InputAdapter", children=[scan]),
    ...                           PlanNode(None, "InputAdapter", children=[
    ...                               PlanNode(None, "ReusedExchange", "ReusedExchange [k#2L], Exchange",
    ...                                        children=[PlanNode(9, "Exchange", "Exchange")])])])
    >>> plan = PlanNode(0, "AdaptiveSparkPlan", "AdaptiveSparkPlan isFinalPlan=true", children=[
    ...     PlanNode(1, "WholeStageCodegen (1)", "WholeStageCodegen (1)", children=[join])])
    >>> for line in plan_text_lines(plan):
    ...     print(line.text, "|", line.path, line.depth)
    AdaptiveSparkPlan isFinalPlan=true (0) | 0 0
    +- == Final Plan == | None 1
       *(1) SortMergeJoin [k#1L], [k#2L], Inner (2) | 0.0.0 1
       :- Range (0, 10, step=1, splits=2) (3) | 0.0.0.0.0 2
       +- ReusedExchange [k#2L], Exchange | 0.0.0.1.0 2
    >>> lines = plan_text_lines(plan)
    >>> line_of(lines, "0.0"), line_of(lines, "0.0.0.1.0.0")  # codegen wrapper; copy under the reuse
    (2, 4)
    """
    out: list[PlanTextLine] = []
    stack = [_unwrap(_Item(plan, "0", "", "", ""))]
    while stack:
        item = stack.pop()
        if item.path.count(".") >= MAX_LEVELS:
            out.append(PlanTextLine(_cut(item.lead + ELIDED), item.path, None, len(item.lead) // 3))
            continue
        out.append(_line(item))
        header = _header(item.node) if sections and item.node.name == "AdaptiveSparkPlan" else None
        if header is not None:
            # the header as the node's only child, the plan one step further in (with the bars
            # of the levels above, where Spark pads with spaces: see the module's docstring)
            out.append(PlanTextLine(_cut(f"{item.cont}+- == {header} =="), None, None, len(item.cont) // 3 + 1))
            inner = _grow(item.cont, "   ")
            stack.append(_unwrap(_Item(item.node.children[0], item.path + ".0", inner, inner, "")))
            continue
        stack.extend(_unwrap(c) for c in reversed(_children(item)))
    return out


def plan_text(lines: list[PlanTextLine]) -> str:
    """The lines as one text (a copy button's payload, a plain-text export)."""
    return "\n".join(line.text for line in lines)


def line_of(lines: list[PlanTextLine], path: str) -> Optional[int]:
    """The index of the line that stands for the node at ``path``, or None.

    A node with no line of its own is found as the text folds it: a codegen wrapper or stage
    input by its child's line (down the first child), a copy under a reused exchange or
    subquery by the reuse's line (up to the nearest ancestor whose line is a leaf of the text).
    """
    index = {line.path: i for i, line in enumerate(lines) if line.path is not None}
    if not path:
        return None
    down = path
    for _ in range(_MAX_WRAPPERS):
        if down in index:
            return index[down]
        down += ".0"
    up = path
    while "." in up:
        up = up.rsplit(".", 1)[0]
        i = index.get(up)
        if i is not None:
            below = next((line.path for line in lines[i + 1:] if line.path is not None), None)
            leaf = below is None or not below.startswith(up + ".")
            return i if leaf else None
    return None
