"""The plan figure: one pure function from a plan (+ AQE changes, + selection) to a plotly
``go.Figure`` that the Streamlit app (``st.plotly_chart(..., on_select="rerun")``) and the
self-contained HTML report (``fig.to_html``) both use.

* boxes (:mod:`~aqe_core.figures.plan_blocks`): one per query stage, with its reads, joins,
  exchange and Spark's numbers listed inside, or one per operator in an expanded stage; laid
  out in layers by igraph's Sugiyama layout (:mod:`~aqe_core.figures.layered_layout`);
* every box is sized from its text (:mod:`~aqe_core.figures.text_width`) at 11 px, so at the
  default 1:1 view no label overlaps another or leaves its box;
* AQE's changes: a thick outline in the change's colour and a coloured line in the box;
* edges: one line trace with ``None`` breaks, routed between layers; reuse / subquery links
  dashed;
* every untrusted string (names, descriptions, metric names, explanations, title) is
  ``html.escape``d before our own ``<br>``/``<b>``/``<span>`` tags are added (plotly renders a
  subset of HTML in text, hover text and titles).

Deterministic: the same input gives the same figure JSON.
"""
from __future__ import annotations

import hashlib
from typing import Any, Callable, Collection, Iterable, Mapping

import plotly.graph_objects as go

from aqe_core.figures.plan_hover import (  # noqa: F401  (format_* are this module's public names too)
    _esc, _hover, format_bytes, format_metric, format_ms, stage_hover,
)
from aqe_core.figures.layered_layout import layered_layout
from aqe_core.figures.plan_blocks import STAGE_KEY, Box, BoxGraph, box_graph, changed_operator  # noqa: F401 (STAGE_KEY: public)
from aqe_core.figures.plan_paths import CODEGEN_PREFIX, INPUT_ADAPTER, codegen_stage_id, iter_paths, node_at
from aqe_core.figures.box_text import fit_line
from aqe_core.figures.text_width import text_px
from aqe_core.model.plan import PlanNode
from aqe_core.model.plan_walk import SHUFFLE_READ_NAMES, STAGE_WRAPPERS
from aqe_core.views import plan_diff as _diff

# --------------------------------------------------------------------------------------------
# operator kinds
# --------------------------------------------------------------------------------------------
NODE_KINDS: tuple[str, ...] = (
    "scan", "exchange / stage", "shuffle read", "join", "aggregate", "sort", "project / filter", "other",
)
#: Okabe–Ito based, colour-blind safe
KIND_COLORS: dict[str, str] = {
    "scan": "#009E73",
    "exchange / stage": "#0072B2",
    "shuffle read": "#56B4E9",
    "join": "#D55E00",
    "aggregate": "#CC79A7",
    "sort": "#E69F00",
    "project / filter": "#999999",
    "other": "#555555",
}
#: change kind -> (outline colour, open marker symbol)
CHANGE_STYLES: dict[str, tuple[str, str]] = {
    _diff.SMJ_TO_BROADCAST: ("#d62728", "diamond-open"),
    _diff.SMJ_TO_SHUFFLED_HASH: ("#d62728", "hexagon-open"),
    _diff.JOIN_CHANGED: ("#d62728", "circle-open"),
    _diff.SKEW_JOIN: ("#9467bd", "star-open"),
    _diff.COALESCED_AND_SKEWED: ("#9467bd", "hexagram-open"),
    _diff.SKEWED_READ: ("#9467bd", "diamond-open"),
    _diff.COALESCED_READ: ("#2ca02c", "square-open"),
    _diff.LOCAL_READ: ("#17becf", "circle-open"),
    _diff.SHUFFLE_READ: ("#7f7f7f", "square-open"),
    _diff.EMPTY_PRUNED: ("#000000", "x-open"),
    _diff.NEW_NODE: ("#ff7f0e", "triangle-up-open"),
    _diff.REMOVED: ("#8c564b", "x-open"),
}
CODEGEN_FILL = "rgba(0, 114, 178, 0.09)"
CODEGEN_LINE = "rgba(0, 114, 178, 0.55)"

_SCAN_NAMES = ("Range", "LocalTableScan", "InMemoryTableScan", "OneRowRelation", "EmptyRelation", "LocalRelation")
_AGG_MARKERS = ("Aggregate", "MergingSessions", "UpdatingSessions")
_SORT_NAMES = ("Sort", "TakeOrderedAndProject")
_PROJECT_FILTER = ("Project", "Filter", "ColumnarToRow", "RowToColumnar", "Expand", "Generate")


def node_kind(node: PlanNode) -> str:
    """One of :data:`NODE_KINDS`."""
    name = node.name or ""
    base = _diff.base_name(name)
    if name in SHUFFLE_READ_NAMES:
        return "shuffle read"
    if _diff.is_join(base):
        return "join"
    if (name.endswith("Exchange") or name in STAGE_WRAPPERS or name.endswith("QueryStage")
            or name in ("ReusedExchange", "Subquery", "SubqueryBroadcast", "ReusedSubquery")):
        return "exchange / stage"
    if name.startswith("Scan ") or "Scan" in name.split(" ")[0] or name in _SCAN_NAMES or name.startswith("FileScan"):
        return "scan"
    if any(m in base for m in _AGG_MARKERS):
        return "aggregate"
    if base in _SORT_NAMES:
        return "sort"
    if base in _PROJECT_FILTER:
        return "project / filter"
    return "other"


# --------------------------------------------------------------------------------------------
# changes input
# --------------------------------------------------------------------------------------------
def _norm_changes(changes: Any, side: str) -> dict[str, list[tuple[str, str, str]]]:
    """path -> [(kind, label, explanation)] for the given side, from a PlanDiff, a list of
    Change / dicts, or a mapping path -> kind (or list of kinds)."""
    out: dict[str, list[tuple[str, str, str]]] = {}
    if not changes:
        return out
    if isinstance(changes, Mapping) and not {"path", "kind"} <= set(changes):
        for path, v in changes.items():
            kinds = [v] if isinstance(v, str) else list(v)
            for k in kinds:
                if isinstance(k, str):
                    out.setdefault(str(path), []).append((k, k, ""))
                else:
                    c = _as_change(k)
                    if c:
                        out.setdefault(str(path), []).append(c[1:4])
        return out
    items = [changes] if isinstance(changes, Mapping) else list(changes)
    for item in items:
        c = _as_change(item)
        if c is None:
            continue
        path, kind, label, expl, s = c
        if s == side:
            out.setdefault(path, []).append((kind, label, expl))
        elif side == "before" and s == "after" and kind not in (_diff.NEW_NODE, _diff.SKEW_JOIN):
            # a change of a matched node (join strategy, empty relation...) marks its
            # earlier-plan partner too; a skew join is not: the initial join had no split
            bp = _before_path(item)
            if bp is not None:
                out.setdefault(bp, []).append((kind, label, expl))
    return out


def _as_change(item: Any) -> tuple[str, str, str, str, str] | None:
    if isinstance(item, _diff.Change):
        return item.path, item.kind, item.label, item.explanation, item.side
    if isinstance(item, Mapping) and "path" in item and "kind" in item:
        kind = str(item["kind"])
        return (str(item["path"]), kind, str(item.get("label") or kind), str(item.get("explanation") or ""),
                str(item.get("side") or "after"))
    return None


def _before_path(item: Any) -> str | None:
    bp = item.before_path if isinstance(item, _diff.Change) else (
        item.get("before_path") if isinstance(item, Mapping) else None)
    return str(bp) if bp else None


# --------------------------------------------------------------------------------------------
# the figure
# --------------------------------------------------------------------------------------------
#: text sizes in pixels (Spark engineers read these on a laptop: never under 9)
FONT_PX = 11
LINE_PX = 15
PAD_X = 9.0
PAD_Y = 7.0
MIN_BOX_W = 90.0
MAX_BOX_W = {True: 260.0, False: 250.0}  # collapsed stage, single operator
#: plans with at most this many drawn operators open with every stage expanded
AUTO_EXPAND = 45
#: plans up to this wide (pixels at 1:1) fit half a wide page: initial and final side by side
VIEW_PX = 420.0
#: the plot width a plan's default view is made for (a page-wide plot at 1440 pixels)
FIT_PX = 900.0
#: the smallest text of the default view: a wider plan is drawn smaller down to this, then pans
MIN_FONT_PX = 9.0
#: a layer of boxes is at most this wide; wider fan-outs go to the layers below
PLAN_MAX_PX = 800.0
FONT_FAMILY = "Arial, 'Liberation Sans', Helvetica, 'DejaVu Sans', sans-serif"
#: blank pixels around the plan in its view
VIEW_PAD = 12.0
EDGE_COLOR = "#8c8c8c"
HIGHLIGHT_COLOR = "#f0b400"
STAGE_FILL = "#eef4fa"
STAGE_LINE = "#0072B2"


def _codegen_stage_of(plan: PlanNode, path: str) -> int | None:
    """The codegen stage a node belongs to (nearest WholeStageCodegen ancestor not behind an
    InputAdapter or a subquery)."""
    parts = path.split(".")
    chain: list[PlanNode] = []
    node = plan
    chain.append(node)
    for p in parts[1:]:
        node = node.children[int(p)]
        chain.append(node)
    target = chain[-1]
    if (target.name or "").startswith(CODEGEN_PREFIX):
        return codegen_stage_id(target.name)
    for anc in reversed(chain[:-1]):
        n = anc.name or ""
        if n.startswith(CODEGEN_PREFIX):
            return codegen_stage_id(n)
        if n == INPUT_ADAPTER:
            return None
    return None


def view_scale(width: float) -> float:
    """Pixels per layout pixel of a plan's default view: 1 when it fits :data:`FIT_PX`, else as
    small as fits, but never with text under :data:`MIN_FONT_PX`.

    >>> view_scale(600), round(view_scale(1000), 3), round(view_scale(5000), 3)
    (1.0, 0.879, 0.818)
    """
    need = width + 2 * VIEW_PAD
    return 1.0 if need <= FIT_PX else max(MIN_FONT_PX / FONT_PX, FIT_PX / need)


def drawn_operators(plan: PlanNode) -> int:
    """How many operator boxes the plan has with every stage expanded (wrappers folded)."""
    n = 0
    for _path, node in iter_paths(plan):
        name = node.name or ""
        if not ((name.startswith(CODEGEN_PREFIX) or name == INPUT_ADAPTER) and len(node.children) == 1):
            n += 1
    return n


def plan_figure(
    plan: PlanNode,
    *,
    changes: Any = None,
    highlight: str | Iterable[str] | None = None,
    title: str = "",
    expanded: Collection[str] | str = "auto",
    numbers: Callable[[PlanNode], list[str]] | None = None,
    change_side: str = "after",
    focus: str | None = None,
    validate: bool | None = None,
) -> go.Figure:
    """Figure of one plan: a box per query stage, or per operator in the expanded stages.

    ``expanded``: head paths of the stages drawn operator by operator, ``"all"``, or
    ``"auto"`` (all when the plan has at most :data:`AUTO_EXPAND` operators, else none).
    ``changes``: a :class:`~aqe_core.views.plan_diff.PlanDiff`, a list of ``Change`` (or dicts
    with ``path``/``kind``/``label``/``explanation``/``side``) or ``{path: kind}``; only those
    on ``change_side`` are marked (``"before"``: the earlier partner of each change).
    ``highlight``: plan path(s) to ring (selection, search hits); ``focus``: a plan path the
    default view is centred on. ``numbers(node)``: Spark's numbers written in the boxes.

    Boxes are sized from their text at :data:`FONT_PX`. The default view shows the whole plan
    in :data:`FIT_PX`, drawn smaller (text and boxes alike, so text never overlaps) down to
    :data:`MIN_FONT_PX`; a plan wider still shows its middle (or ``focus``) at that size, the rest
    a pan away. The x axis follows the y axis' pixel scale, so a wider page shows more at the
    same size. Drag to pan, scroll to zoom, double-click to fit.

    Every box's marker and text carry ``customdata`` = its key: a plan path for an operator,
    ``"stage:<head path>"`` for a collapsed stage.
    """
    if expanded == "auto":
        expanded = "all" if drawn_operators(plan) <= AUTO_EXPAND else ()
    bg = box_graph(plan, expanded, numbers=numbers, kind_of=node_kind, keep=_norm_changes(changes, change_side))
    f = _Frame(plan, bg, changes, change_side)
    traces = (_edge_traces(f) + _box_traces(f) + _change_traces(f) + _highlight_traces(f, highlight)
              + _text_traces(f) + _hover_traces(f))
    for t in traces:
        keep_when_selected(t)
    if validate is None:
        validate = len(bg) <= 1000
    fig = go.Figure(data=traces, layout=_figure_layout(f, title, _legend_px(traces), focus), _validate=validate)
    return fig


def keep_when_selected(trace: dict[str, Any]) -> None:
    """A click selects a node (its details open beside the plan); plotly would fade every other
    marker and label to show the selection, leaving the plan unreadable: keep them as drawn."""
    mode = str(trace.get("mode") or "")
    unselected: dict[str, Any] = {}
    if "markers" in mode:
        unselected["marker"] = {"opacity": 1}
    if "text" in mode and isinstance(trace.get("textfont"), dict) and trace["textfont"].get("color"):
        unselected["textfont"] = {"color": trace["textfont"]["color"]}
    if unselected:
        trace["unselected"] = unselected
        trace["selected"] = {"marker": {"opacity": 1}} if "markers" in mode else trace.get("selected")


def _legend_px(traces: list[dict[str, Any]]) -> int:
    """Room under the plot for the legend: each group's entries stacked, groups wrapping onto
    new rows in half a page (the plot keeps its own height, so the labels keep their spacing)."""
    per_group: dict[str, int] = {}
    for t in traces:
        if t.get("showlegend", True) and t.get("name"):
            g = t.get("legendgroup") or ""
            per_group[g] = per_group.get(g, 0) + 1
    return 30 + 21 * sum(per_group.values()) + 24 * len(per_group)


class _Frame:
    """The boxes, their text and sizes, the layout, and the AQE changes per box."""

    def __init__(self, plan: PlanNode, bg: BoxGraph, changes: Any, change_side: str) -> None:
        self.plan, self.bg = plan, bg
        ch_by_path = _norm_changes(changes, change_side)
        self.changes: dict[str, list[tuple[str, str, str]]] = {}
        for path, items in ch_by_path.items():
            key = bg.box_of.get(path)
            if key is not None:  # a change to one operator of a stage names it, not the stage
                op = changed_operator(bg.boxes[key], path, node_at(plan, path))
                self.changes.setdefault(key, []).extend((k, f"{lbl}: {op}" if op else lbl, e) for k, lbl, e in items)
        self.text: dict[str, list[str]] = {}
        size: dict[str, tuple[float, float]] = {}
        for key, box in bg.boxes.items():
            lines, width = _box_lines(box, self.changes.get(key, []))
            self.text[key] = lines
            size[key] = (width, 2 * PAD_Y + LINE_PX * len(lines))
        self.lay = layered_layout(list(bg.boxes), bg.edges, size, PLAN_MAX_PX)
        #: the default view's pixels per layout pixel
        self.scale = view_scale(self.lay.width)
        self.link_notes: dict[str, str] = {}
        for a, b, kind in bg.links:
            what = "reuses" if kind == "reuse" else "refers to"
            target = bg.boxes[b]
            node = node_at(plan, target.head)
            ref = f" #{node.id}" if node is not None and node.id is not None else ""
            self.link_notes[a] = f"{what} {target.title}{ref} (dashed link)"

    def trace(self, **kw: Any) -> dict[str, Any]:
        d: dict[str, Any] = {"type": "scatter"}
        d.update((k, v) for k, v in kw.items() if v is not None)
        return d


def box_rows(box: Box, changes: list[tuple[str, str, str]]) -> tuple[list[tuple[str, str]], float]:
    """The box's text lines as (style, text) -- ``"title"``, an AQE change's kind, or ``""`` for
    the operators or numbers -- fitted to the box (wrapped or cut between fields, never inside a
    number), and the box's width in pixels."""
    max_w = MAX_BOX_W[box.collapsed]
    room = max_w - 2 * PAD_X
    raw: list[tuple[str, str]] = [("title", box.title)]
    seen: set[str] = set()
    for kind, label, _ in changes:
        if label not in seen:
            seen.add(label)
            raw.append((kind, f"AQE: {label}"))
    raw += [("", line) for line in box.lines]
    out: list[tuple[str, str]] = []
    widest = 0.0
    fitted = [(style, cut) for style, text in raw for cut in fit_line(text, FONT_PX, room)]
    for style, cut in fitted:
        widest = max(widest, text_px(cut, FONT_PX))
        out.append((style, cut))
    return out, max(MIN_BOX_W, min(max_w, widest + 2 * PAD_X))


def _box_lines(box: Box, changes: list[tuple[str, str, str]]) -> tuple[list[str], float]:
    """The box's text lines as HTML (escaped): title in bold, then AQE's changes in their
    colour, then the operators or numbers; and the box's width in pixels."""
    rows, width = box_rows(box, changes)
    out: list[str] = []
    for style, cut in rows:
        if style == "title":
            out.append(f"<b>{_esc(cut)}</b>")
        elif style:
            out.append(f'<span style="color:{change_color(style)}">{_esc(cut)}</span>')
        else:
            out.append(_esc(cut))
    return out, width


def change_color(kind: str) -> str:
    """The outline colour of an AQE change kind."""
    return CHANGE_STYLES.get(kind, ("#d62728", ""))[0]


def _rect_path(f: _Frame, keys: Iterable[str], grow: float = 0.0) -> tuple[list[float | None], list[float | None]]:
    xs: list[float | None] = []
    ys: list[float | None] = []
    for k in keys:
        x0, x1, y0, y1 = f.lay.rect(k)
        x0, x1, y0, y1 = x0 - grow, x1 + grow, y0 - grow, y1 + grow
        xs += [x0, x1, x1, x0, x0, None]
        ys += [y0, y0, y1, y1, y0, None]
    return xs, ys


def _edge_traces(f: _Frame) -> list[dict[str, Any]]:
    """Tree edges (through their bend points) and dashed reuse / subquery links, drawn first so
    the opaque boxes cover any part that runs behind them."""
    ex: list[float | None] = []
    ey: list[float | None] = []
    for route in f.lay.routes.values():
        ex += [p[0] for p in route] + [None]
        ey += [p[1] for p in route] + [None]
    traces = [f.trace(x=ex, y=ey, mode="lines", line={"color": EDGE_COLOR, "width": 1.3},
                      hoverinfo="skip", showlegend=False, name="edges")]
    if f.bg.links:
        lx: list[float | None] = []
        ly: list[float | None] = []
        for a, b, _kind in f.bg.links:
            lx += [f.lay.x[a], f.lay.x[b], None]
            ly += [f.lay.y[a], f.lay.y[b], None]
        traces.append(f.trace(x=lx, y=ly, mode="lines", line={"color": "#7f7f7f", "width": 1.2, "dash": "dash"},
                              hoverinfo="skip", name="reuse / subquery link", legendgroup="links"))
    return traces


def _tint(hex_color: str, amount: float = 0.16) -> str:
    """An opaque light tint of a colour (boxes must hide the edges behind them)."""
    r, g, b = (int(hex_color[i:i + 2], 16) for i in (1, 3, 5))
    mix = [round(255 - (255 - c) * amount) for c in (r, g, b)]
    return "#%02x%02x%02x" % tuple(mix)


def _box_traces(f: _Frame) -> list[dict[str, Any]]:
    """Box fills: collapsed stages in one trace, operators one trace per kind (the legend)."""
    traces: list[dict[str, Any]] = []
    stages = [k for k, b in f.bg.boxes.items() if b.collapsed]
    if stages:
        xs, ys = _rect_path(f, stages)
        traces.append(f.trace(x=xs, y=ys, mode="lines", fill="toself", fillcolor=STAGE_FILL,
                              line={"color": STAGE_LINE, "width": 1.2}, hoverinfo="skip",
                              name="query stage", legendgroup="kind",
                              legendgrouptitle={"text": "box"}))
    per_kind: dict[str, list[str]] = {}
    for k, b in f.bg.boxes.items():
        if not b.collapsed:
            per_kind.setdefault(b.kind, []).append(k)
    for kind in NODE_KINDS:
        keys = per_kind.get(kind)
        if not keys:
            continue
        xs, ys = _rect_path(f, keys)
        traces.append(f.trace(x=xs, y=ys, mode="lines", fill="toself", fillcolor=_tint(KIND_COLORS[kind]),
                              line={"color": KIND_COLORS[kind], "width": 1.2}, hoverinfo="skip",
                              name=kind, legendgroup="kind",
                              legendgrouptitle=None if traces else {"text": "box"}))
    return traces


def _change_traces(f: _Frame) -> list[dict[str, Any]]:
    """AQE's changes: a thick outline in the change's colour around each box it touched."""
    per_change: dict[str, list[str]] = {}
    for key in f.bg.boxes:
        for kind, _label, _expl in f.changes.get(key, []):
            lst = per_change.setdefault(kind, [])
            if not lst or lst[-1] != key:
                lst.append(key)
    kinds = [k for k in _diff.CHANGE_KINDS if k in per_change] + sorted(k for k in per_change if k not in _diff.CHANGE_KINDS)
    traces = []
    for i, kind in enumerate(kinds):
        color = CHANGE_STYLES.get(kind, ("#d62728", ""))[0]
        xs, ys = _rect_path(f, per_change[kind], grow=2.0 + 2.5 * i)
        traces.append(f.trace(x=xs, y=ys, mode="lines", line={"color": color, "width": 3}, hoverinfo="skip",
                              name=f"AQE: {kind}", legendgroup="aqe",
                              legendgrouptitle={"text": "AQE change"} if i == 0 else None))
    return traces


def _highlight_traces(f: _Frame, highlight: str | Iterable[str] | None) -> list[dict[str, Any]]:
    """The selection / search ring around the boxes that hold the highlighted paths."""
    keys = highlighted_boxes(f.bg, highlight)
    if not keys:
        return []
    xs, ys = _rect_path(f, keys, grow=5.0)
    return [f.trace(x=xs, y=ys, mode="lines", line={"color": HIGHLIGHT_COLOR, "width": 4}, hoverinfo="skip",
                    name="selected / found")]


def highlighted_boxes(bg: BoxGraph, highlight: str | Iterable[str] | None) -> list[str]:
    """Keys of the boxes standing for the given plan paths (or box keys), each once."""
    if not highlight:
        return []
    raw = [highlight] if isinstance(highlight, str) else list(highlight)
    out: list[str] = []
    for h in raw:
        key = str(h) if str(h) in bg.boxes else bg.box_of.get(str(h))
        if key is not None and key not in out:
            out.append(key)
    return out


def _text_traces(f: _Frame) -> list[dict[str, Any]]:
    """Every box's text, centred in it (one trace; a click on the text selects its box)."""
    keys = list(f.bg.boxes)
    return [f.trace(x=[f.lay.x[k] for k in keys], y=[f.lay.y[k] for k in keys], mode="text",
                    text=["<br>".join(f.text[k]) for k in keys], textposition="middle center",
                    textfont={"size": round(FONT_PX * f.scale, 2), "color": "#222222", "family": FONT_FAMILY},
                    customdata=keys, hoverinfo="none", showlegend=False, name="labels")]


def _hover_traces(f: _Frame) -> list[dict[str, Any]]:
    """Invisible square markers over the boxes: the hover box and the click target."""
    keys = list(f.bg.boxes)
    hover = [_box_hover(f, k) for k in keys]
    return [f.trace(x=[f.lay.x[k] for k in keys], y=[f.lay.y[k] for k in keys], mode="markers",
                    marker={"symbol": "square", "size": [max(10.0, f.scale * min(f.lay.w[k], f.lay.h[k])) for k in keys],
                            "color": "rgba(0,0,0,0)", "line": {"width": 0}},
                    customdata=keys, hovertext=hover, hoverinfo="text", showlegend=False, name="boxes")]


def _box_hover(f: _Frame, key: str) -> str:
    box = f.bg.boxes[key]
    changes = f.changes.get(key, [])
    if not box.collapsed:
        node = node_at(f.plan, box.head)
        return (_hover(box.head, node, _codegen_stage_of(f.plan, box.head), changes, f.link_notes.get(key))
                if node else _esc(box.title))
    return stage_hover(box.title, changes, box.lines, f.link_notes.get(key))


def _figure_layout(f: _Frame, title: str, legend_px: int, focus: str | None) -> dict[str, Any]:
    """Axes at 1:1 (y fixed to the plan's height in pixels, x following y's scale), the view
    window, the legend below, and a digest of the drawing that keeps the user's zoom while the
    same picture is redrawn (``uirevision``)."""
    lay = f.lay
    pad = VIEW_PAD
    top_margin = 40 if title else 8
    x0, x1 = -pad, lay.width + pad
    y0, y1 = -lay.height - pad, pad
    # a plan too wide even at the smallest text shows its middle (or the focus); plotly widens
    # this window to the page's width at the same scale
    centre = lay.width / 2
    key = f.bg.box_of.get(focus) if focus else None
    if key is not None:
        centre = lay.x[key]
    if (x1 - x0) * f.scale > FIT_PX + 1e-6:
        half = min(x1 - x0, FIT_PX / f.scale) / 2
        x0, x1 = centre - half, centre + half
    digest = hashlib.sha1("\n".join(f"{k}\t{'|'.join(f.text[k])}" for k in lay.keys).encode()).hexdigest()[:16]
    fig_layout: dict[str, Any] = {
        "height": int(round((y1 - y0) * f.scale)) + top_margin + 8 + legend_px,
        "margin": {"l": 4, "r": 4, "t": top_margin, "b": legend_px + 8},
        "xaxis": {"visible": False, "range": [x0, x1], "showgrid": False, "zeroline": False,
                  "scaleanchor": "y", "scaleratio": 1, "constrain": "range"},
        "yaxis": {"visible": False, "range": [y0, y1], "showgrid": False, "zeroline": False, "fixedrange": False},
        "dragmode": "pan",
        "hovermode": "closest",
        "hoverlabel": {"align": "left", "font": {"size": 11}},
        "plot_bgcolor": "#ffffff",
        "paper_bgcolor": "#ffffff",
        "showlegend": True,
        "legend": {"groupclick": "toggleitem", "font": {"size": 11}, "orientation": "h", "x": 0, "xanchor": "left",
                   "y": -0.01, "yanchor": "top"},
        "uirevision": digest,
        # the browser test reads the boxes back to check every drawn label against its box
        "meta": {"aqe_lens_plan": digest, "box_count": len(f.bg), "plan_width": lay.width, "plan_height": lay.height,
                 "scale": f.scale,
                 "box_rects": {k: [round(v, 2) for v in lay.rect(k)] for k in lay.keys}},
    }
    if title:
        fig_layout["title"] = {"text": _esc(title), "x": 0.01, "font": {"size": 15}}
    return fig_layout
