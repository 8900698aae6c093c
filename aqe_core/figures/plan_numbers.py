"""Numbers on a plan figure: the metrics that matter beside each node, rows on the edges.

Spark's SQL UI shows rows on every edge and min/med/max per adaptive read; a plan without them
makes a user hover node after node. Everything drawn here is Spark's own metric (from the event
log or the capture's plans); nodes without metrics stay unlabelled.
"""
from __future__ import annotations

import re
from typing import Any, Mapping, Optional

import plotly.graph_objects as go

from aqe_core.figures.plan_hover import format_metric
from aqe_core.model.plan import PlanNode
from aqe_core.views.plan_stages import NodeTimes

_READS = ("AQEShuffleRead", "CustomShuffleReader")
_BUILD = re.compile(r"\b(BuildLeft|BuildRight)\b")
#: plans with more nodes than this keep only the hover (the numbers would overlap)
MAX_NODES = 150


def _metrics(node: PlanNode) -> dict[str, Mapping[str, Any]]:
    return {str(m.get("name", "")).strip(): m for m in node.metrics}


def _short(m: Optional[Mapping[str, Any]]) -> Optional[str]:
    """A metric's total without its min/med/max (those stay in the hover and the details)."""
    text = format_metric(m) if m is not None else None
    return text.split(" (", 1)[0] if text else None


def node_numbers(node: PlanNode) -> list[str]:
    """Short texts for one node: an adaptive read's partitions (coalesced, skewed and split),
    an exchange's bytes written, a join's build side. Query stages carry their id in the label.

    >>> read = PlanNode(1, "AQEShuffleRead", "AQEShuffleRead coalesced and skewed", [
    ...     {"name": "number of partitions", "value": "4"}, {"name": "number of coalesced partitions", "value": "2"},
    ...     {"name": "number of skewed partitions", "value": "1"}, {"name": "number of skewed partition splits", "value": "4"}])
    >>> node_numbers(read)
    ['4 partitions: 2 coalesced, 1 skewed into 4']
    >>> node_numbers(PlanNode(2, "BroadcastHashJoin", "BroadcastHashJoin [k#1L], [k#2L], Inner, BuildRight, false"))
    ['BuildRight']
    """
    m = _metrics(node)
    if node.name in _READS:
        n, coalesced = _short(m.get("number of partitions")), _short(m.get("number of coalesced partitions"))
        skewed, splits = _short(m.get("number of skewed partitions")), _short(m.get("number of skewed partition splits"))
        parts = [f"{coalesced} coalesced" if coalesced and coalesced != "0" else "",
                 f"{skewed} skewed into {splits}" if skewed and skewed != "0" else ""]
        detail = ", ".join(x for x in parts if x)
        return [f"{n} partitions" + (f": {detail}" if detail else "")] if n else ([detail] if detail else [])
    if node.name.startswith("Exchange"):
        for key, label in (("shuffle bytes written", "written"), ("data size", "data")):
            if _short(m.get(key)):
                return [f"{label} {_short(m.get(key))}"]
        return []
    if node.name.startswith(("SortMergeJoin", "ShuffledHashJoin", "BroadcastHashJoin")):
        build = _BUILD.search(node.description or "")
        return [build.group(1)] if build else []
    return []


def output_rows(node: PlanNode) -> Optional[str]:
    """The node's ``number of output rows`` as Spark shows it, or None."""
    m = _metrics(node).get("number of output rows")
    return format_metric(m) if m is not None else None


def add_numbers(fig: go.Figure, plan: PlanNode, times: Optional[NodeTimes] = None) -> go.Figure:
    """Add the numbers to a figure made by :func:`~aqe_core.figures.plan_figure.plan_figure`
    (in place): one text trace beside the nodes, one on the edges (rows flowing up); with
    ``times``, exchanges and reads also carry their stage's duration and task times."""
    pos = _positions(fig)
    if not pos or len(pos) > MAX_NODES:
        return fig
    nodes = _nodes_by_path(plan)
    side: dict[str, list] = {"middle right": [[], [], [], []], "bottom center": [[], [], [], []]}
    right = float("-inf")
    level = _level_sep(pos)
    ex, ey, etexts = [], [], []
    for path, (x, y) in pos.items():
        node = nodes.get(path)
        if node is None:
            continue
        parent = _displayed_parent(path, pos)
        lines = node_numbers(node)
        if times:
            lines = [*lines, *times.label(node)]
        if lines:  # a left branch writes under its label, so siblings' numbers do not run into each other
            below = _left_branch(path, pos)
            where = "bottom center" if below else "middle right"
            text = "<br>".join(lines if below else [f"{PAD}{line}" for line in lines])
            for col, v in zip(side[where], (x, y - (0.45 * level if below else 0.0), text, path)):
                col.append(v)
            if not below:
                right = max(right, x + _TEXT_UNITS * max(len(PAD) + len(line) for line in lines))
        rows = output_rows(node)
        if rows and parent in pos:
            px, py = pos[parent]
            ex.append((x + px) / 2), ey.append((y + py) / 2), etexts.append(f"{rows} rows")
    for where, (xs, ys, texts, paths) in side.items():
        if texts:
            fig.add_trace(go.Scatter(x=xs, y=ys, mode="text", text=texts, textposition=where,
                                     textfont={"size": 8, "color": "#555555"}, customdata=paths, hoverinfo="none",
                                     showlegend=False, name="numbers", cliponaxis=False,
                                     unselected={"textfont": {"color": "#555555"}}))
    xr = fig.layout.xaxis.range
    if xr and right + 1 > xr[1]:  # the numbers right of the rightmost nodes stay in the picture
        fig.update_xaxes(range=[xr[0], right + 1])
    if etexts:
        fig.add_trace(go.Scatter(x=ex, y=ey, mode="text", text=etexts, textposition="middle left",
                                 textfont={"size": 8, "color": "#2a6fb0"}, hoverinfo="none", showlegend=False,
                                 name="rows", unselected={"textfont": {"color": "#2a6fb0"}}))
    return fig


PAD = "\u00a0" * 4
#: x units (label characters) one character of the 8 pt numbers takes
_TEXT_UNITS = 0.7


def _level_sep(pos: dict[str, tuple[float, float]]) -> float:
    """The vertical distance between a node and its parent (the layout's level separation)."""
    gaps = [abs(pos[p][1] - pos[q][1]) for p in pos for q in [_displayed_parent(p, pos)] if q is not None]
    gaps = [g for g in gaps if g > 1e-9]
    return min(gaps) if gaps else 1.0


def _left_branch(path: str, pos: dict[str, tuple[float, float]]) -> bool:
    """Is the node on a left branch (left of the first ancestor not straight above it)?"""
    x = pos[path][0]
    anc = _displayed_parent(path, pos)
    while anc is not None:
        if abs(pos[anc][0] - x) > 1e-6:
            return x < pos[anc][0]
        anc = _displayed_parent(anc, pos)
    return False


def _displayed_parent(path: str, pos: dict[str, tuple[float, float]]) -> Optional[str]:
    """The nearest ancestor drawn in the figure (codegen wrappers are folded away)."""
    while "." in path:
        path = path.rsplit(".", 1)[0]
        if path in pos:
            return path
    return None


def _positions(fig: go.Figure) -> dict[str, tuple[float, float]]:
    """Node path -> (x, y) from the figure's operator marker traces."""
    out: dict[str, tuple[float, float]] = {}
    for tr in fig.data:
        if getattr(tr, "mode", None) != "markers" or getattr(tr, "legendgroup", None) != "kind":
            continue
        for p, x, y in zip(tr.customdata or [], tr.x or [], tr.y or []):
            out[str(p)] = (float(x), float(y))
    return out


def _nodes_by_path(plan: PlanNode) -> dict[str, PlanNode]:
    """Path ids as the figures use them: "0" for the root, "0.1" for its second child, ..."""
    out: dict[str, PlanNode] = {}
    stack = [("0", plan)]
    while stack:
        path, node = stack.pop()
        out[path] = node
        stack.extend((f"{path}.{i}", c) for i, c in enumerate(node.children))
    return out
