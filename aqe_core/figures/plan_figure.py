"""The plan figure: one pure function from a plan (+ AQE changes, + selection) to a plotly
``go.Figure`` that the Streamlit app (``st.plotly_chart(..., on_select="rerun")``) and the
self-contained HTML report (``fig.to_html``) both use.

* nodes: square markers coloured by operator kind (legend), ``customdata`` = path id;
* AQE changes: a thick coloured outline with its own symbol per change kind (legend);
* codegen stages: light shaded outlines behind their operators (``layout.shapes``);
* edges: one line trace with ``None`` breaks; reuse / subquery links dashed;
* labels as text only up to ``label_threshold`` nodes; ``Scattergl`` above ``gl_threshold``;
* every untrusted string (names, descriptions, metric names, explanations, title) is
  ``html.escape``d before our own ``<br>``/``<b>`` tags are added (plotly renders a subset of
  HTML in hover text and titles).

Deterministic: the same input gives the same figure JSON.
"""
from __future__ import annotations

import hashlib
from typing import Any, Iterable, Mapping

import plotly.graph_objects as go

from aqe_core.figures.plan_hover import (  # noqa: F401  (format_* are this module's public names too)
    _MAX_HOVER_METRICS,
    _esc,
    _esc_lines,
    _fmt_value,
    _hover,
    _num,
    _wrap,
    format_bytes,
    format_metric,
    format_ms,
)
from aqe_core.figures.plan_layout import (
    CODEGEN_PREFIX, INPUT_ADAPTER, PlanLayout, codegen_stage_id, iter_paths, layout_plan, node_at, short_label,
)
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
def _codegen_shapes(lay: PlanLayout, with_labels: bool) -> tuple[list[dict], list[dict]]:
    """(shapes, annotations) shading each codegen stage.

    A stage whose bounding box holds none of the other drawn nodes is one rectangle;
    otherwise it is the union of one rectangle per level and run of adjacent members (rows
    touch, no outline, so they read as one region)."""
    level_sep = lay.level_sep
    pad = min(1.0, lay.node_sep * 0.4)
    # left-to-right order of the drawn nodes on every level
    levels: dict[int, list[str]] = {}
    level_index: dict[str, int] = {}
    for p in lay.order:
        row = levels.setdefault(lay.depth[p], [])
        level_index[p] = len(row)
        row.append(p)
    shapes: list[dict] = []
    notes: list[dict] = []
    for key in sorted(lay.codegen, key=lambda k: [int(x) for x in k.split(".")]):
        grp = lay.codegen[key]
        rows: dict[int, list[str]] = {}
        for p in grp.members:
            rows.setdefault(lay.depth[p], []).append(p)
        if not rows:
            continue
        top, bottom = min(rows), max(rows)
        members = set(grp.members)
        runs_by_row: dict[int, list[list[str]]] = {}
        contiguous = True
        for d in sorted(rows):
            ms = sorted(rows[d], key=lambda p: level_index[p])
            runs: list[list[str]] = [[ms[0]]]
            for p in ms[1:]:
                if level_index[p] == level_index[runs[-1][-1]] + 1:
                    runs[-1].append(p)
                else:
                    runs.append([p])
            runs_by_row[d] = runs
        x0 = min(lay.pos[p][0] - lay.width[p] / 2 for p in grp.members) - pad
        x1 = max(lay.pos[p][0] + lay.width[p] / 2 for p in grp.members) + pad
        for d in range(top, bottom + 1):
            for p in levels.get(d, ()):
                if p in members:
                    continue
                px, w = lay.pos[p][0], lay.width[p]
                if px + w / 2 > x0 and px - w / 2 < x1:
                    contiguous = False
                    break
            if not contiguous:
                break
        y_top = -top * level_sep + 0.32 * level_sep
        y_bot = -bottom * level_sep - 0.45 * level_sep
        if contiguous:
            path = f"M{x0:.3f},{y_bot:.3f} H{x1:.3f} V{y_top:.3f} H{x0:.3f} Z"
            label_x = x0
        else:
            segs = []
            for d, runs in sorted(runs_by_row.items()):
                y = -d * level_sep
                y_hi = y + (0.32 if d == top else 0.5) * level_sep
                y_lo = y - (0.45 if d == bottom else 0.5) * level_sep
                for run in runs:
                    a = min(lay.pos[p][0] - lay.width[p] / 2 for p in run) - pad
                    b = max(lay.pos[p][0] + lay.width[p] / 2 for p in run) + pad
                    segs.append(f"M{a:.3f},{y_lo:.3f} H{b:.3f} V{y_hi:.3f} H{a:.3f} Z")
            path = " ".join(segs)
            label_x = min(lay.pos[p][0] - lay.width[p] / 2 for p in runs_by_row[top][0]) - pad
        shapes.append({
            "type": "path", "path": path, "xref": "x", "yref": "y", "layer": "below",
            "fillcolor": CODEGEN_FILL, "line": {"width": 0},
        })
        if with_labels and grp.stage is not None:
            notes.append({"x": label_x, "y": y_top, "xref": "x", "yref": "y", "xanchor": "left", "yanchor": "top",
                          "text": f"codegen {grp.stage}", "showarrow": False,
                          "font": {"size": 9, "color": CODEGEN_LINE}})
    return shapes, notes


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


def plan_figure(
    plan: PlanNode,
    *,
    changes: Any = None,
    highlight: str | Iterable[str] | None = None,
    title: str = "",
    height: int | None = None,
    layout: PlanLayout | None = None,
    fold_codegen: bool = True,
    change_side: str = "after",
    label_threshold: int = 300,
    gl_threshold: int = 1000,
    validate: bool | None = None,
) -> go.Figure:
    """Figure of one plan tree.

    ``changes``: a :class:`~aqe_core.views.plan_diff.PlanDiff`, a list of ``Change`` (or of dicts
    with ``path``/``kind``/``label``/``explanation``/``side``), or ``{path: kind}``; only those
    on ``change_side`` are drawn: ``"after"`` for the later plan; ``"before"`` for the earlier
    plan (removed operators, and the earlier partner of every changed matched operator). ``highlight``: path id(s) to ring (selection, search hits).
    ``layout``: a precomputed :func:`layout_plan` result (cache it per plan).
    ``validate``: run plotly's property validation (default: only up to ``gl_threshold``
    nodes; big figures skip it, which is several times faster).

    Trace order: edges, [reuse/subquery links], [codegen legend entry], AQE change outlines
    (one per change kind), operator markers (one per operator kind), [labels, up to
    ``label_threshold`` nodes], [selection ring]. Every marker and label trace has
    ``customdata`` = path ids.
    """
    lay = layout if layout is not None else layout_plan(plan, fold_codegen=fold_codegen)
    f = _Frame(lay, changes, change_side, height, bool(title), label_threshold, gl_threshold)
    traces = _edge_traces(f) + _change_traces(f) + _operator_traces(f) + _highlight_traces(f, highlight)
    for t in traces:
        keep_when_selected(t)
    if validate is None:
        validate = not f.big
    return go.Figure(data=traces, layout=_figure_layout(f, title, _legend_px(traces)), _validate=validate)


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
    """Sizes, scales and per-node facts every trace of one plan figure shares."""

    def __init__(self, lay: PlanLayout, changes: Any, change_side: str, height: int | None, titled: bool,
                 label_threshold: int, gl_threshold: int) -> None:
        self.lay = lay
        n = self.n = len(lay.order)
        self.show_text = n <= label_threshold
        self.big = n > gl_threshold
        self.ttype = "scattergl" if self.big else "scatter"
        self.msize = 13 if n <= label_threshold else (9 if n <= gl_threshold else 6)
        self.xmin, self.xmax, ymin, ymax = lay.bbox()
        L = lay.level_sep
        self.yrange = [ymin - 0.9 * L, ymax + 0.5 * L]
        if height is None:
            height = int(min(1400, max(320, 110 + (lay.max_depth + 1) * 46)))
        self.height = height
        self.top_margin = 40 if titled else 10
        self.px_per_unit = max(1.0, (height - self.top_margin - 10)) / max(1e-9, self.yrange[1] - self.yrange[0])
        self.ring = self.msize + 10  # size of the AQE change outline markers
        self.ch_by_path: dict[str, list[tuple[str, str, str]]] = {}
        for path, items in _norm_changes(changes, change_side).items():
            dp = lay.display_path(path)
            if dp is not None:
                self.ch_by_path.setdefault(dp, []).extend(items)
        self.link_notes: dict[str, str] = {}
        for lk in lay.links:
            what = "reuses" if lk.kind == "reuse" else "refers to"
            target = lay.node(lk.target)
            ref = f" #{target.id}" if target.id is not None else ""
            self.link_notes[lk.source] = f"{what} {lay.label.get(lk.target, lk.target)}{ref} (dashed link)"
        self._label_offsets(L)

    def _label_offsets(self, L: float) -> None:
        # labels sit below the marker (lower under an AQE outline); edges leave a parent below its
        # label so lines do not run through the text
        self.label_dy: dict[str, float] = {}
        self.gap: dict[str, float] = {}
        if self.show_text:
            ch, ring, msize, ppu = self.ch_by_path, self.ring, self.msize, self.px_per_unit
            for p in self.lay.order:
                half = ring * 0.65 if p in ch else msize / 2  # open symbols draw larger
                self.label_dy[p] = min(0.4 * L, (half + (10 if p in ch else 8)) / ppu)
                self.gap[p] = min(0.62 * L, (half + (21 if p in ch else 19)) / ppu)

    def trace(self, **kw: Any) -> dict[str, Any]:
        d = {"type": self.ttype}
        d.update((k, v) for k, v in kw.items() if v is not None)
        return d


def _edge_traces(f: _Frame) -> list[dict[str, Any]]:
    """Edges, reuse / subquery links (dashed), and the codegen legend entry."""
    lay = f.lay
    traces: list[dict[str, Any]] = []
    ex: list[float | None] = []
    ey: list[float | None] = []
    for u, v in lay.graph.edges():
        (x0, y0), (x1, y1) = lay.pos[u], lay.pos[v]
        ex += [x0, x1, None]
        ey += [y0 - f.gap.get(u, 0.0), y1, None]
    traces.append(f.trace(x=ex, y=ey, mode="lines", line={"color": "#9a9a9a", "width": 1.2},
                          hoverinfo="skip", showlegend=False, name="edges"))
    if lay.links:
        lx: list[float | None] = []
        ly: list[float | None] = []
        for lk in lay.links:
            (x0, y0), (x1, y1) = lay.pos[lk.source], lay.pos[lk.target]
            lx += [x0, x1, None]
            ly += [y0, y1, None]
        traces.append(f.trace(x=lx, y=ly, mode="lines", line={"color": "#7f7f7f", "width": 1.2, "dash": "dash"},
                              hoverinfo="skip", name="reuse / subquery link", legendgroup="links"))
    if lay.codegen:
        traces.append({"type": "scatter", "x": [None], "y": [None], "mode": "markers",
                       "name": "codegen stage (shaded)", "hoverinfo": "skip", "legendgroup": "codegen",
                       "marker": {"symbol": "square", "size": 14, "color": CODEGEN_FILL,
                                  "line": {"color": CODEGEN_LINE, "width": 1}}})
    return traces


def _change_traces(f: _Frame) -> list[dict[str, Any]]:
    """AQE change outlines, one trace per change kind (below the operator markers)."""
    lay, ch_by_path = f.lay, f.ch_by_path
    traces: list[dict[str, Any]] = []
    per_change: dict[str, list[str]] = {}
    for p in lay.order:
        for kind, _label, _expl in ch_by_path.get(p, []):
            lst = per_change.setdefault(kind, [])
            if not lst or lst[-1] != p:
                lst.append(p)
    kinds_order = [k for k in _diff.CHANGE_KINDS if k in per_change]
    kinds_order += sorted(k for k in per_change if k not in _diff.CHANGE_KINDS)
    for i, kind in enumerate(kinds_order):
        paths = per_change[kind]
        color, symbol = CHANGE_STYLES.get(kind, ("#d62728", "circle-open"))
        hover = []
        for p in paths:
            items = [c for c in ch_by_path[p] if c[0] == kind]
            hover.append("<br>".join(f"<b>AQE: {_esc(lbl)}</b>" + ("<br>" + _esc_lines(ex_, 90, 6) if ex_ else "")
                                     for _, lbl, ex_ in items) + f"<br><i>{_esc(lay.label[p])}</i>")
        traces.append(f.trace(
            x=[lay.pos[p][0] for p in paths], y=[lay.pos[p][1] for p in paths], mode="markers",
            marker={"symbol": symbol, "size": f.ring, "color": color, "line": {"color": color, "width": 3}},
            customdata=list(paths), hovertext=hover, hoverinfo="text",
            name=f"AQE: {kind}", legendgroup="aqe", legendgrouptitle={"text": "AQE change"} if i == 0 else None,
        ))
    return traces


def _operator_traces(f: _Frame) -> list[dict[str, Any]]:
    """Operators, one trace per kind, then the labels (one text trace)."""
    lay = f.lay
    traces: list[dict[str, Any]] = []
    per_kind: dict[str, list[str]] = {k: [] for k in NODE_KINDS}
    for p in lay.order:
        per_kind[node_kind(lay.node(p))].append(p)
    first_kind = _first(per_kind)
    for kind in NODE_KINDS:
        paths = per_kind[kind]
        if not paths:
            continue
        hover = []
        for p in paths:
            grp = lay.codegen_of.get(p)
            stage = lay.codegen[grp].stage if grp is not None and grp in lay.codegen else None
            hover.append(_hover(p, lay.node(p), stage, f.ch_by_path.get(p, []), f.link_notes.get(p)))
        traces.append(f.trace(
            x=[lay.pos[p][0] for p in paths], y=[lay.pos[p][1] for p in paths], mode="markers",
            marker={"symbol": "square", "size": f.msize, "color": KIND_COLORS[kind],
                    "line": {"color": "#ffffff", "width": 1}},
            customdata=list(paths), hovertext=hover, hoverinfo="text",
            name=kind, legendgroup="kind", legendgrouptitle={"text": "operator"} if kind == first_kind else None,
        ))
    if f.show_text and lay.order:
        # one text trace; clicks on a label select its node (customdata), no hover box
        traces.append(f.trace(
            x=[lay.pos[p][0] for p in lay.order], y=[lay.pos[p][1] - f.label_dy[p] for p in lay.order],
            mode="text", text=[_esc(lay.label[p]) for p in lay.order], textposition="middle center",
            textfont={"size": 10, "color": "#333333"}, customdata=list(lay.order), hoverinfo="none",
            showlegend=False, name="labels",
        ))
    return traces


def _highlight_traces(f: _Frame, highlight: str | Iterable[str] | None) -> list[dict[str, Any]]:
    """The selection ring around the highlighted nodes (none when nothing is highlighted)."""
    lay = f.lay
    hl: list[str] = []
    if highlight:
        raw = [highlight] if isinstance(highlight, str) else list(highlight)
        seen: set[str] = set()
        for h in raw:
            dp = lay.display_path(str(h))
            if dp is not None and dp not in seen:
                seen.add(dp)
                hl.append(dp)
    if not hl:
        return []
    return [f.trace(
        x=[lay.pos[p][0] for p in hl], y=[lay.pos[p][1] for p in hl], mode="markers",
        marker={"symbol": "circle-open", "size": f.msize + 20, "color": "#f0b400",
                "line": {"color": "#f0b400", "width": 4}},
        customdata=hl, hovertext=[_esc(lay.label[p]) for p in hl], hoverinfo="text", name="selected",
    )]


def _figure_layout(f: _Frame, title: str, legend_px: int) -> dict[str, Any]:
    """Axes, legend, codegen shading (shapes and their labels), and a digest of the plan that
    keeps the user's zoom while the same plan is redrawn (``uirevision``)."""
    lay = f.lay
    shapes, notes = _codegen_shapes(lay, f.show_text)
    digest = hashlib.sha1("\n".join(f"{p}\t{lay.label[p]}" for p in lay.order).encode()).hexdigest()[:16]
    fig_layout: dict[str, Any] = {
        "height": f.height + legend_px,
        "margin": {"l": 10, "r": 10, "t": f.top_margin, "b": legend_px},
        "xaxis": {"visible": False, "range": [f.xmin - 2, f.xmax + 2], "showgrid": False, "zeroline": False},
        "yaxis": {"visible": False, "range": f.yrange, "showgrid": False, "zeroline": False},
        "dragmode": "pan",
        "hovermode": "closest",
        "hoverlabel": {"align": "left", "font": {"size": 11}},
        "plot_bgcolor": "#ffffff",
        "paper_bgcolor": "#ffffff",
        "showlegend": True,
        # under the graph, not beside it: a plan in half a page needs the whole width for its labels
        "legend": {"groupclick": "toggleitem", "font": {"size": 11}, "orientation": "h", "x": 0, "xanchor": "left",
                   "y": -0.01, "yanchor": "top"},
        "shapes": shapes,
        "annotations": notes,
        "uirevision": digest,
        "meta": {"aqe_lens_plan": digest, "nodes": f.n},
    }
    if title:
        fig_layout["title"] = {"text": _esc(title), "x": 0.01, "font": {"size": 15}}
    return fig_layout


def _first(per_kind: dict[str, list[str]]) -> str | None:
    for k in NODE_KINDS:
        if per_kind[k]:
            return k
    return None


# --------------------------------------------------------------------------------------------
# search and details (zoom: plan_zoom)
# --------------------------------------------------------------------------------------------
def plan_search(plan: PlanNode, text: str, *, fold_codegen: bool = True) -> list[str]:
    """Path ids of the nodes whose name or description contains ``text`` (case-insensitive),
    in plan order. With ``fold_codegen`` a hit on a folded wrapper (``WholeStageCodegen``,
    ``InputAdapter``) is reported as the displayed node that stands for it."""
    needle = (text or "").strip().casefold()
    if not needle or plan is None:
        return []
    hits: list[str] = []
    seen: set[str] = set()
    for path, node in iter_paths(plan):
        if needle in (node.name or "").casefold() or needle in (node.description or "").casefold():
            p = path
            if fold_codegen:
                p = _display_of(node, path)
            if p not in seen:
                seen.add(p)
                hits.append(p)
    return hits


def _display_of(node: PlanNode, path: str) -> str:
    while ((node.name or "").startswith(CODEGEN_PREFIX) or node.name == INPUT_ADAPTER) and len(node.children) == 1:
        node = node.children[0]
        path += ".0"
    return path


def node_details(plan: PlanNode, path: str) -> dict[str, Any] | None:
    """Everything a details panel shows for one node, or None for an unknown path:
    ``path, id, name, description, kind, label, codegen_stage, parent, children,
    metrics`` (rows ``{name, type, value, total, min, med, max, accumulator_id}``; ``value`` is
    the formatted text or ``""``)."""
    node = node_at(plan, path) if plan is not None and isinstance(path, str) else None
    if node is None:
        return None
    rows = []
    for m in node.metrics:
        rows.append({
            "name": str(m.get("name", "")), "type": str(m.get("type", "")), "value": format_metric(m) or "",
            "total": m.get("total"), "min": m.get("min"), "med": m.get("med"), "max": m.get("max"),
            "accumulator_id": m.get("accumulator_id"),
        })
    return {
        "path": path,
        "id": node.id,
        "name": node.name,
        "description": node.description,
        "kind": node_kind(node),
        "label": short_label(node),
        "codegen_stage": _codegen_stage_of(plan, path),
        "parent": path.rsplit(".", 1)[0] if "." in path else None,
        "children": [f"{path}.{i}" for i in range(len(node.children))],
        "metrics": rows,
    }
