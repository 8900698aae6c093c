"""The plan as a map (issue 40): the boxes, text, edges and details of :mod:`plan_figure`'s
layout as plain data, drawn in the browser by ``plan_map.js`` -- one SVG whose text is part of the
drawing, so it zooms with the boxes and never leaves them.

The same data and script draw the plan in the Streamlit app (a ``st.components.v2`` component)
and in the offline HTML report (inlined), so both behave alike: the wheel scrolls the page
until the plan is clicked or a modifier key is held, labels under 9 px are hidden with a note
that says so, a click opens the node's details beside it (no re-run, no re-layout), and the
plan text as Spark prints it sits beside the drawing, linked both ways.

Every string here is plain text: the script puts it in the page as text (``textContent``),
never as HTML, so a plan from a stranger's log cannot inject markup.
"""
from __future__ import annotations

from functools import lru_cache
from importlib import resources
from typing import Any, Callable, Collection, Optional

from aqe_core.figures.layered_layout import BoxLayout, layered_layout
from aqe_core.figures.plan_blocks import BoxGraph, box_graph
from aqe_core.figures.plan_figure import (AUTO_EXPAND, CODEGEN_FILL, EDGE_COLOR, FONT_FAMILY, FONT_PX, HIGHLIGHT_COLOR,
                                          KIND_COLORS, LINE_PX, MIN_FONT_PX, PAD_Y, STAGE_FILL, STAGE_LINE,
                                          _Frame, _norm_changes, _tint, box_rows, change_color, drawn_operators,
                                          highlighted_boxes, node_kind)
from aqe_core.figures.plan_hover import format_metric
from aqe_core.figures.plan_paths import node_at
from aqe_core.model.plan import PlanNode

__all__ = ["PLAN_MAP_JS", "plan_map_data", "plan_map_script"]


def plan_map_data(plan: PlanNode, *, changes: Any = None, change_side: str = "after", title: str = "",
                  expanded: Collection[str] | str = "auto", numbers: Optional[Callable[[PlanNode], list[str]]] = None,
                  highlight: Any = None, text: Optional[list[dict[str, Any]]] = None,
                  facts: Optional[Callable[[PlanNode], list[str]]] = None, source_kind: str = "",
                  stage_ms: Optional[Callable[[PlanNode], Optional[tuple[int, float]]]] = None) -> dict[str, Any]:
    """The map of one plan as JSON-ready data (see the module doc). ``expanded``, ``changes``,
    ``change_side``, ``numbers`` and ``highlight`` as for :func:`plan_figure.plan_figure`;
    ``text``: the plan text lines (``{"text", "path"}``) shown beside the drawing; ``facts(node)``:
    more lines for a node's details (its stage's task times); ``stage_ms(node)``: (stage id, duration) of
    the stage a boundary node stands for, which orders an overview's tiles critical path first."""
    if expanded == "auto":
        expanded = "all" if drawn_operators(plan) <= AUTO_EXPAND else ()
    bg = box_graph(plan, expanded, numbers=numbers, kind_of=node_kind, keep=_norm_changes(changes, change_side))
    f = _Frame(plan, bg, changes, change_side)
    lay = f.lay
    boxes = []
    for key in lay.keys:
        box = bg.boxes[key]
        rows, _w = box_rows(box, f.changes.get(key, []))
        color = STAGE_LINE if box.collapsed else KIND_COLORS[box.kind]
        boxes.append({
            "key": key, "w": round(lay.w[key], 2), "h": round(lay.h[key], 2),
            "stage": box.collapsed, "fill": STAGE_FILL if box.collapsed else _tint(color), "stroke": color,
            "lines": [{"text": t, "bold": s == "title", "color": change_color(s) if s and s != "title" else ""}
                      for s, t in rows],
            "changes": [{"color": change_color(k), "label": lbl} for k, lbl, _e in f.changes.get(key, [])],
            "details": _details(f, key, facts, source_kind), "paths": [box.head, *box.members],
        })
    layouts = [_layout(lay, bg)]
    size = {k: (lay.w[k], lay.h[k]) for k in lay.keys}
    for narrower in NARROWER_PX:  # for a narrow window: fan-outs pushed further down, the same boxes
        if lay.keys and narrower < layouts[-1]["width"]:
            layouts.append(_layout(layered_layout(list(bg.boxes), bg.edges, size, narrower), bg))
    return {"title": title, "font": FONT_PX, "line": LINE_PX, "pad": PAD_Y, "minFont": MIN_FONT_PX,
            "fontFamily": FONT_FAMILY, "edgeColor": EDGE_COLOR, "highlightColor": HIGHLIGHT_COLOR,
            "codegenFill": CODEGEN_FILL, "boxes": boxes, "layouts": layouts, "order": _critical_path_first(bg, _box_weight(plan, bg, stage_ms)),
            "orderBy": "the slowest path of stages first (the log's stage times)" if stage_ms else "the longest chain of stages first",
            "highlight": highlighted_boxes(bg, highlight), "text": text or [], "legend": _legend(bg, f)}


#: the narrower layouts a map carries besides the page-wide one (layout pixels per layer)
NARROWER_PX = (560.0, 400.0, 280.0)


def _layout(lay: BoxLayout, bg: BoxGraph) -> dict[str, Any]:
    """Where each box and edge is in one layout, y growing downward from the top edge (plotly's
    grows upward, the root on top)."""
    if not lay.keys:
        return {"width": 0.0, "height": 0.0, "pos": {}, "edges": []}
    top = max(lay.y[k] + lay.h[k] / 2 for k in lay.keys)
    pos = {k: [round(lay.x[k] - lay.w[k] / 2, 2), round(top - lay.y[k] - lay.h[k] / 2, 2)] for k in lay.keys}
    edges = [{"points": [[round(x, 2), round(top - y, 2)] for x, y in route], "dashed": False}
             for route in lay.routes.values()]
    edges += [{"points": [[round(lay.x[a], 2), round(top - lay.y[a], 2)], [round(lay.x[b], 2), round(top - lay.y[b], 2)]],
               "dashed": True} for a, b, _kind in bg.links]
    return {"width": round(lay.width, 2), "height": round(top - min(lay.y[k] - lay.h[k] / 2 for k in lay.keys), 2),
            "pos": pos, "edges": edges}


def _box_weight(plan: PlanNode, bg: BoxGraph, stage_ms: Optional[Callable[[PlanNode], Optional[tuple[int, float]]]]
                ) -> Optional[Callable[[str], float]]:
    """A box's stage time: the durations of the stages its nodes stand for, each stage once (a
    join reading two shuffles in one stage); None when the source has no stage times."""
    if stage_ms is None:
        return None

    def weight(key: str) -> float:
        box = bg.boxes[key]
        nodes = [node_at(plan, p) for p in (box.head, *box.members)]
        stages = dict(t for t in (stage_ms(n) for n in nodes if n is not None) if t is not None)
        return sum(stages.values())
    return weight


def _critical_path_first(bg: BoxGraph, weight: Optional[Callable[[str], float]] = None) -> list[str]:
    """The boxes in the order an overview lists them: the root, then down the critical path
    first, each branch the same way. The critical path is the chain of boxes below the root whose
    stage times (``weight(box key)``, Spark's own: the log's stage durations) add up to the most;
    where the source has no times, the longest chain (the most stages one after another).

    >>> from aqe_core.figures.plan_blocks import BoxGraph
    >>> bg = BoxGraph({"r": None, "a": None, "a1": None, "b": None}, [("r", "a"), ("a", "a1"), ("r", "b")], [], {}, {})
    >>> _critical_path_first(bg), _critical_path_first(bg, {"b": 9.0}.get)
    (['r', 'a', 'a1', 'b'], ['r', 'b', 'a', 'a1'])
    """
    kids: dict[str, list[str]] = {}
    for a, b in bg.edges:
        kids.setdefault(a, []).append(b)
    depth: dict[str, float] = {}
    for k in reversed(list(bg.boxes)):  # pre-order reversed: children before their parent
        own = (weight(k) or 0.0) if weight is not None else 1.0
        depth[k] = own + max((depth.get(c, 0.0) for c in kids.get(k, [])), default=0.0)
    out: list[str] = []
    stack = [next(iter(bg.boxes))] if bg.boxes else []
    while stack:
        k = stack.pop()
        if k in out:
            continue
        out.append(k)
        stack.extend(sorted(kids.get(k, []), key=lambda c: depth.get(c, 0)))
    return out + [k for k in bg.boxes if k not in out]


def _details(f: _Frame, key: str, facts: Optional[Callable[[PlanNode], list[str]]] = None,
             source_kind: str = "") -> dict[str, Any]:
    """What the details panel shows for one box: a heading, its lines of facts (every metric
    with its exact value, AQE's changes with why), as plain text."""
    box = f.bg.boxes[key]
    node = None if box.collapsed else node_at(f.plan, box.head)
    if node is None:  # a query stage: its operators and numbers, whole
        return {"title": box.title, "id": None, "description": "",
                "rows": list(box.lines) + ([f.link_notes[key]] if key in f.link_notes else []),
                "changes": [f"AQE: {lbl}" + (f": {e}" if e else "") for _k, lbl, e in f.changes.get(key, [])]}
    metrics = [f"{m.get('name', '?')}: {v}" + (" (exact: the capture's partition specs)" if m.get("source") == "capture" else "")
               for m in node.metrics if (v := format_metric(m)) is not None]
    quiet = len(node.metrics) - len(metrics)
    if quiet:
        why = (": a capture records the names of a plan's metrics, not Spark's values" if source_kind == "capture"
               else ": Spark reported none")
        metrics.append(f"{quiet} metric{'s' if quiet != 1 else ''} without a value{why}")
    return {"title": node.name or "?", "id": node.id, "description": node.description or "",
            "rows": (facts(node) if facts else []) + metrics + ([f.link_notes[key]] if key in f.link_notes else []),
            "changes": [f"AQE: {lbl}" + (f": {e}" if e else "") for _k, lbl, e in f.changes.get(key, [])]}


def _legend(bg: Any, f: _Frame) -> list[dict[str, str]]:
    kinds = sorted({b.kind for b in bg.boxes.values() if not b.collapsed}, key=list(KIND_COLORS).index)
    out = ([{"label": "query stage", "color": STAGE_LINE}] if any(b.collapsed for b in bg.boxes.values()) else [])
    out += [{"label": k, "color": KIND_COLORS[k]} for k in kinds]
    seen: dict[str, str] = {}
    for items in f.changes.values():
        for kind, _label, _e in items:
            seen.setdefault(kind, change_color(kind))
    return out + [{"label": f"AQE: {k}", "color": c, "outline": "1"} for k, c in seen.items()]


@lru_cache(maxsize=1)
def plan_map_script() -> str:
    """The drawing script (``plan_map.js``): a function ``renderPlanMap(root, data, hooks)``."""
    return resources.files("aqe_core.figures").joinpath("plan_map.js").read_text(encoding="utf-8")


PLAN_MAP_JS = "plan_map.js"
