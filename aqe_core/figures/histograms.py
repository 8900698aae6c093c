"""Partition-size figures with AQE's own lines (median, skew threshold, targets).

Pure plotly, no Streamlit: the app and the HTML report draw the same figure. Every line's value
comes from the rules (:mod:`aqe_core.engine.lines`) through :class:`aqe_core.views.query.ShuffleView`.
"""
from __future__ import annotations

import html
import math
from typing import Any, Optional, Sequence

import numpy as np
import plotly.graph_objects as go

from aqe_core.views.query import Line, ShuffleView
from aqe_core.model.evidence import Evidence
from aqe_core.units import mib

LINE_STYLE = {
    "median": ("#2b8a3e", "dot"),
    "skew_threshold": ("#c92a2a", "dash"),
    "factor_threshold": ("#c92a2a", "dash"),
    "threshold_bytes": ("#e8590c", "dash"),
    "coalesce_target": ("#1c7ed6", "longdash"),
    "split_target": ("#7048e8", "dashdot"),
}
SHORT_NAME = {
    "median": "median",
    "skew_threshold": "skew threshold",
    "factor_threshold": "factor x median",
    "threshold_bytes": "skew threshold bytes",
    "coalesce_target": "coalescing target",
    "split_target": "skew split target",
}


def bin_edges(values: Sequence[int], *, log: bool, bins: int = 40, lo: Optional[float] = None,
              hi: Optional[float] = None) -> np.ndarray:
    """Bin edges shared by several histograms (pass the same lo/hi to compare on one axis)."""
    arr = np.asarray(values, dtype=float)
    lo = float(arr.min()) if lo is None and len(arr) else (lo or 0.0)
    hi = float(arr.max()) if hi is None and len(arr) else (hi or 1.0)
    if log:
        lo = max(lo, 1.0)
        hi = max(hi, lo * 1.0001)
        return np.logspace(math.log10(lo), math.log10(hi * 1.0001), bins + 1)
    if hi <= lo:
        hi = lo + 1
    return np.linspace(lo, hi, bins + 1)


def _line_shapes(fig: go.Figure, lines: Sequence[Line], *, vertical: bool, log: bool = False) -> None:
    """Lines as shapes plus labelled annotations (annotations on a log axis take log10 positions)."""
    for k, ln in enumerate(lines):
        pos = math.log10(max(ln.value, 1)) if log else ln.value
        color, dash = LINE_STYLE.get(ln.kind, ("#495057", "dot"))
        estimate = ln.evidence is Evidence.ESTIMATE
        if estimate:  # an estimate is drawn differently and says so in the legend and its label
            dash = "dash"
        keys = ", ".join(ln.config_keys)
        text = f"{SHORT_NAME.get(ln.kind, ln.kind)} {mib(ln.value)}" + (" (estimate)" if estimate else "")
        if vertical:
            fig.add_shape(type="line", x0=ln.value, x1=ln.value, y0=0, y1=1, xref="x", yref="paper",
                          line=dict(color=color, dash=dash, width=2), name=ln.kind)
            fig.add_annotation(x=pos, y=1 - 0.09 * k, xref="x", yref="paper", text=html.escape(text),
                               showarrow=False, xanchor="left", font=dict(color=color, size=11),
                               bgcolor="rgba(255,255,255,0.8)", hovertext=html.escape(ln.label + (f" [{keys}]" if keys else "")))
        else:
            fig.add_shape(type="line", y0=ln.value, y1=ln.value, x0=0, x1=1, yref="y", xref="paper",
                          line=dict(color=color, dash=dash, width=2), name=ln.kind)
            fig.add_annotation(y=pos, x=1 - 0.2 * (k % 2), yref="y", xref="paper", text=html.escape(text),
                               showarrow=False, xanchor="right", yanchor="bottom", font=dict(color=color, size=11),
                               bgcolor="rgba(255,255,255,0.8)", hovertext=html.escape(ln.label + (f" [{keys}]" if keys else "")))
        # an invisible trace so each line also appears in the legend (and is findable in tests)
        fig.add_trace(go.Scatter(x=[None], y=[None], mode="lines", name=html.escape(
            f"{SHORT_NAME.get(ln.kind, ln.kind)}: {mib(ln.value)}" + (" (estimate)" if estimate else "")),
                                 line=dict(color=color, dash=dash), hoverinfo="skip", legendgroup=ln.kind))


def histogram_figure(view: ShuffleView, *, which: str = "auto", log: bool = True, bins: int = 40,
                     x_range: Optional[tuple[float, float]] = None, title: Optional[str] = None,
                     height: int = 340) -> go.Figure:
    """How many partitions have which size, with AQE's lines as vertical lines.

    ``which``: "before" (pre-AQE reducer sizes), "after" (sizes as read after AQE), "both"
    (overlaid, where both are known) or "auto" (before when known)."""
    both = which == "both" and view.sizes_before is not None and view.sizes_after is not None
    series = ([("before AQE", view.sizes_before, "#adb5bd"), ("after AQE", view.sizes_after, "#4dabf7")] if both
              else [("partitions", _pick(view, "auto" if which == "both" else which), "#adb5bd")])
    fig = go.Figure()
    every = [x for _n, sz, _c in series for x in (sz or [])]
    if every:
        edges = bin_edges(every, log=log, bins=bins, lo=x_range[0] if x_range else None, hi=x_range[1] if x_range else None)
        centers = np.sqrt(edges[:-1] * edges[1:]) if log else (edges[:-1] + edges[1:]) / 2
        widths = edges[1:] - edges[:-1]
        for name, sizes, color in series:
            if not sizes:
                continue
            counts, _ = np.histogram(np.clip(np.asarray(sizes, dtype=float), edges[0], edges[-1]), bins=edges)
            hover = [f"{name}: {mib(a)} - {mib(b)}: {int(c)} partitions" for a, b, c in zip(edges[:-1], edges[1:], counts)]
            fig.add_trace(go.Bar(x=centers.tolist(), y=counts.tolist(), width=widths.tolist(), name=name,
                                 marker_color=color, opacity=0.65 if both else 1.0, hovertext=hover, hoverinfo="text"))
            if sizes is view.sizes_before:
                _label_hot_reducers(fig, view, edges, counts, log)
    _line_shapes(fig, view.lines, vertical=True, log=log)
    fig.update_layout(
        title=html.escape(title or view.label), height=height, bargap=0.02, barmode="overlay",
        margin=dict(l=40, r=20, t=50, b=40),
        xaxis=dict(title="partition size (bytes)", type="log" if log else "linear"),
        yaxis=dict(title="partitions"), legend=dict(orientation="h", y=-0.25), template="plotly_white",
    )
    if x_range:
        fig.update_xaxes(range=[math.log10(max(x_range[0], 1)), math.log10(max(x_range[1], 1))] if log else list(x_range))
    return fig


def _label_hot_reducers(fig: go.Figure, view: ShuffleView, edges: Any, counts: Any, log: bool, most: int = 6) -> None:
    """Name the largest skewed reducers (exact sources: pre-AQE sizes by reducer id) above the
    bars that hold them; reducers in one bin share one label."""
    by_bin: dict[int, list[int]] = {}
    for r in sorted(view.skew_rows, key=lambda r: -r.size)[:most]:
        b = int(min(max(np.searchsorted(edges, r.size, side="right") - 1, 0), len(counts) - 1))
        by_bin.setdefault(b, []).append(r.partition)
    for b, ids in by_bin.items():
        x = float(np.sqrt(edges[b] * edges[b + 1])) if log else float((edges[b] + edges[b + 1]) / 2)
        text = "reducer " + ", ".join(map(str, sorted(ids))) if len(ids) <= 3 else f"reducers {', '.join(map(str, sorted(ids)[:3]))}, ..."
        fig.add_annotation(x=math.log10(max(x, 1)) if log else x, y=int(counts[b]), text=text, showarrow=True,
                           arrowhead=0, ay=-22, font=dict(color="#e03131", size=11))


def partition_bars_figure(view: ShuffleView, *, which: str = "auto", log: bool = False, height: int = 300,
                          title: Optional[str] = None) -> go.Figure:
    """Every partition in order (reducer order before AQE, read order after), lines horizontal."""
    sizes = _pick(view, which)
    by_reducer = sizes is not None and sizes is view.sizes_before  # reducer ids only before AQE
    skewed = {r.partition for r in view.skew_rows} if by_reducer else set()
    what = "reducer" if by_reducer else "read position"
    colors = ["#e03131" if i in skewed else "#868e96" for i in range(len(sizes or []))]
    hover = [f"{what} {i}: {mib(s)}" for i, s in enumerate(sizes or [])]
    if not by_reducer and view.after_reducers and view.after_split and len(view.after_reducers) == len(sizes or []):
        colors, hover = _after_kinds(view, sizes or [])
    fig = go.Figure(go.Bar(x=list(range(len(sizes or []))), y=list(sizes or []), marker_color=colors, name="partition size",
                           hovertext=hover, hoverinfo="text"))
    for r in sorted(skewed)[:12]:  # the hot reducers, by id
        if sizes and 0 <= r < len(sizes):
            fig.add_annotation(x=r, y=math.log10(max(sizes[r], 1)) if log else sizes[r], text=f"reducer {r}",
                               showarrow=True, arrowhead=0, ay=-24, font=dict(color="#e03131", size=11))
    _line_shapes(fig, view.lines, vertical=False, log=log)
    fig.update_layout(title=html.escape(title or view.label), height=height, margin=dict(l=40, r=20, t=50, b=40),
                      xaxis=dict(title="reducer id" if by_reducer else "position in the adaptive read (not a reducer id)"),
                      yaxis=dict(title="bytes", type="log" if log else "linear"),
                      template="plotly_white", showlegend=False)
    return fig


_SPLIT_COLORS = ("#e03131", "#f76707", "#ae3ec9", "#1c7ed6", "#0ca678")


def _after_kinds(view: ShuffleView, sizes: list[int]) -> tuple[list[str], list[str]]:
    """Post-AQE partitions of an exact source: the parts of one split reducer share a colour,
    coalesced ranges are grey; the hover names the reducers each reads."""
    reducers, split = view.after_reducers or [], view.after_split or []
    split_ids = sorted({r[0] for r, sp in zip(reducers, split) if sp})
    colour = {rid: _SPLIT_COLORS[k % len(_SPLIT_COLORS)] for k, rid in enumerate(split_ids)}
    colors, hover = [], []
    for i, ((a, b), sp) in enumerate(zip(reducers, split)):
        colors.append(colour[a] if sp else "#868e96")
        what = f"part of skewed reducer {a}" if sp else (f"reducers {a}-{b - 1} coalesced" if b - a > 1 else f"reducer {a}")
        hover.append(f"read position {i}: {what}, {mib(sizes[i])}")
    return colors, hover


def _pick(view: ShuffleView, which: str) -> Optional[list[int]]:
    if which == "before":
        return view.sizes_before
    if which == "after":
        return view.sizes_after
    return view.sizes_before if view.sizes_before is not None else view.sizes_after
