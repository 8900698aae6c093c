"""Partition-size figures with AQE's own lines (median, skew threshold, targets).

Up to :data:`BAR_LIMIT` partitions get one bar each (in order, or largest first), more get a
histogram; sizes are in bytes on every axis, counts on whole numbers, and every bar stays visible
(a minimum height, lines drawn under the bars, labels outside the plot). Pure plotly, no
Streamlit: the app and the HTML report draw the same figure. Every line's value comes from the
rules (:mod:`aqe_core.engine.histogram_lines`) through :class:`aqe_core.views.query.ShuffleView`.
"""
from __future__ import annotations

import html
import math
from typing import Any, Optional, Sequence

import numpy as np
import plotly.graph_objects as go

from aqe_core.figures.byte_axis import count_axis, count_labels, size_axis
from aqe_core.figures.chart_size import MIN_BAR_PX, left_margin, plot_width, title_layout, width_of
from aqe_core.figures.partition_bars import Bars, bars_of
from aqe_core.views.query import Line, ShuffleView
from aqe_core.model.evidence import Evidence
from aqe_core.units import mib

#: up to this many partitions, one bar each; above it, a histogram
BAR_LIMIT = 40
#: the smallest bar drawn, as a share of the plot's height (its hover keeps the true size)
MIN_BAR = 0.025

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


def _widen(lo: float, hi: float, log: bool) -> tuple[float, float]:
    """A range wide enough that the bars in it have width (all partitions one size: one bar)."""
    if log:
        lo = max(lo, 1.0)
        return (lo / 1.25, hi * 1.25) if hi / lo < 1.5 else (lo, hi)
    if hi - lo < 0.05 * max(abs(hi), 1.0):
        pad = max(0.1 * abs(hi), 1.0)
        return max(lo - pad, 0.0), hi + pad
    return lo, hi


def bin_edges(values: Sequence[float], *, log: bool, bins: int = 40, lo: Optional[float] = None,
              hi: Optional[float] = None) -> np.ndarray:
    """Bin edges shared by several histograms (pass the same lo/hi to compare on one axis)."""
    arr = np.asarray(values, dtype=float)
    lo = float(arr.min()) if lo is None and len(arr) else (lo or 0.0)
    hi = float(arr.max()) if hi is None and len(arr) else (hi or 1.0)
    lo, hi = _widen(lo, max(hi, lo), log)
    if log:
        return np.logspace(math.log10(lo), math.log10(hi * 1.0001), bins + 1)
    return np.linspace(lo, hi, bins + 1)


def _size_range(sizes: Sequence[int], lines: Sequence[Line], log: bool,
                given: Optional[tuple[float, float]] = None) -> tuple[float, float]:
    """The size axis of a bar chart: every partition, and the lines near them (a line far off the
    data is named at the edge instead of squashing the bars), with room so the smallest bar still
    shows; ``given``: the axis range to use as is."""
    if given is not None:  # shared by figures drawn side by side (see side_by_side)
        return float(given[0]), float(given[1])
    data = [float(x) for x in sizes]
    positive = [x for x in data if x > 0] or [1.0]
    top, low = max(positive), min(positive)
    near = [ln.value for ln in lines if ln.value > 0 and (low / 1000 <= ln.value <= top * 1000 if log else ln.value <= top * 3)]
    top = max([top, *near])
    if log:
        bottom = min([low, *near]) / 2.5
        return bottom, top * 1.6
    return 0.0, top * 1.1


def _fraction(v: float, lo: float, hi: float, log: bool) -> float:
    if log:
        v, lo, hi = math.log10(max(v, 1e-9)), math.log10(max(lo, 1e-9)), math.log10(max(hi, 1e-9))
    return (v - lo) / (hi - lo) if hi > lo else 0.5


def _line_text(ln: Line) -> str:
    return f"{SHORT_NAME.get(ln.kind, ln.kind)} {mib(ln.value)}" + (" (estimate)" if ln.evidence is Evidence.ESTIMATE else "")


def _label_text(lns: list[Line]) -> str:
    """One label for the lines at one value: "skew split target = coalescing target 96 KiB"."""
    if len(lns) == 1:
        return _line_text(lns[0])
    estimate = any(ln.evidence is Evidence.ESTIMATE for ln in lns)
    return (" =<br>".join(SHORT_NAME.get(ln.kind, ln.kind) for ln in lns) + f" {mib(lns[0].value)}"
            + (" (estimate)" if estimate else ""))


def _merged(lines: Sequence[Line]) -> list[tuple[float, list[Line]]]:
    """Lines at one value share one label (split and coalescing targets are often equal)."""
    out: dict[int, list[Line]] = {}
    for ln in lines:
        out.setdefault(ln.value, []).append(ln)
    return sorted(((float(v), lns) for v, lns in out.items()), key=lambda x: x[0])


def _style(ln: Line) -> tuple[str, str]:
    color, dash = LINE_STYLE.get(ln.kind, ("#495057", "dot"))
    return color, ("dash" if ln.evidence is Evidence.ESTIMATE else dash)


def _legend_entries(fig: go.Figure, lines: Sequence[Line], row: Optional[int] = None) -> None:
    """An invisible trace per line, named as its label (for readers of the figure's data)."""
    for ln in lines:
        color, dash = _style(ln)
        fig.add_trace(go.Scatter(x=[None], y=[None], mode="lines", name=html.escape(
            f"{SHORT_NAME.get(ln.kind, ln.kind)}: {mib(ln.value)}" + (" (estimate)" if ln.evidence is Evidence.ESTIMATE else "")),
            line=dict(color=color, dash=dash), hoverinfo="skip", legendgroup=ln.kind, showlegend=False),
            **({"row": row, "col": 1} if row else {}))  # the label beside the line names it


def _hover(lns: list[Line]) -> str:
    return html.escape("; ".join(ln.label + (f" [{', '.join(ln.config_keys)}]" if ln.config_keys else "") for ln in lns))


def _vertical_lines(fig: go.Figure, lines: Sequence[Line], lo: float, hi: float, log: bool, labels: bool = True,
                    plot_px: float = 620.0) -> int:
    """Lines across a histogram, drawn under the bars; labels above the plot, in as many rows as
    it takes for none to overlap. Returns the number of label rows."""
    rows_end: list[float] = []
    for value, lns in _merged(lines):
        color, dash = _style(lns[0])
        fig.add_shape(type="line", x0=value, x1=value, y0=0, y1=1, xref="x", yref="paper", layer="below",
                      line=dict(color=color, dash=dash, width=2), name=lns[0].kind)
        if not labels:
            continue
        f = _fraction(value, lo, hi, log)
        off = f < 0 or f > 1
        text = _label_text(lns) + ((" (off the chart, " + ("left)" if f < 0 else "right)")) if off else "")
        f = min(max(f, 0.0), 1.0)
        width = (len(text.replace("=<br>", "= ")) * 6.3 + 8) / plot_px
        left = f - width / 2
        left = min(max(left, 0.0), 1.0 - width)
        row = next((r for r, end in enumerate(rows_end) if left > end + 0.01), len(rows_end))
        if row == len(rows_end):
            rows_end.append(0.0)
        rows_end[row] = left + width
        fig.add_annotation(x=left + width / 2, y=1, xref="paper", yref="paper", yanchor="bottom", yshift=2 + 17 * row,
                           text=html.escape(text.replace("=<br>", "= ")), showarrow=False, font=dict(color=color, size=11),
                           bgcolor="rgba(255,255,255,0.9)", hovertext=_hover(lns))
    return len(rows_end)


def _horizontal_lines(fig: go.Figure, lines: Sequence[Line], lo: float, hi: float, log: bool, *, plot_px: int,
                      yref: str = "y", domain: tuple[float, float] = (0.0, 1.0), labels: bool = True) -> int:
    """Lines across the bars, drawn under them; labels in the right margin, nudged apart so none
    overlaps another. Returns the widest label's length in characters."""
    placed: list[tuple[float, int]] = []  # (pixels from the bottom, label height)
    widest = 0
    for value, lns in _merged(lines):
        color, dash = _style(lns[0])
        fig.add_shape(type="line", y0=value, y1=value, x0=0, x1=1, yref=yref, xref="paper", layer="below",
                      line=dict(color=color, dash=dash, width=2), name=lns[0].kind)
        if not labels:
            continue
        f = _fraction(value, lo, hi, log)
        off = f < 0 or f > 1
        text = _label_text(lns) + ((" (above)" if f > 1 else " (below)") if off else "")
        tall = 13 * (text.count("<br>") + 1)
        px = min(max(f, 0.0), 1.0) * plot_px
        while any(abs(px - p) < (tall + t) / 2 + 1 for p, t in placed):
            px += 7
        placed.append((px, tall))
        widest = max([widest, *map(len, text.split("<br>"))])
        y = domain[0] + (domain[1] - domain[0]) * px / max(plot_px, 1)
        fig.add_annotation(x=1, y=y, xref="paper", yref="paper", xanchor="left", yanchor="middle", xshift=4, align="left",
                           text="<br>".join(html.escape(t) for t in text.split("<br>")), showarrow=False,
                           font=dict(color=color, size=11), hovertext=_hover(lns))
    return widest


def _shown(values: Sequence[float], floor: float) -> list[float]:
    """Heights to draw: at least ``floor``, so a small (or empty) partition is still a bar."""
    return [max(float(v), floor) for v in values]


def histogram_figure(view: ShuffleView, *, which: str = "auto", log: bool = True, bins: int = 40,
                     x_range: Optional[tuple[float, float]] = None, title: Optional[str] = None,
                     height: int = 340, compact: bool = False) -> go.Figure:
    """How many partitions have which size, with AQE's lines as vertical lines.

    ``which``: "before" (pre-AQE reducer sizes), "after" (sizes as read after AQE), "both"
    (overlaid, where both are known) or "auto" (before when known). ``x_range``: the size range
    to draw (bytes), shared by figures compared side by side. At most as many bins as
    :data:`~aqe_core.figures.chart_size.MIN_BAR_PX`-wide bars fit the partitions' stretch of the
    axis at the chart's default width: a thinner bar does not read."""
    both = which == "both" and view.sizes_before is not None and view.sizes_after is not None
    series = ([("before AQE", view.sizes_before, "#adb5bd"), ("after AQE", view.sizes_after, "#4dabf7")] if both
              else [(_series_name(view, which), _pick(view, "auto" if which == "both" else which), "#adb5bd")])
    fig = go.Figure()
    every = [x for _n, sz, _c in series for x in (sz or [])]
    vals = [float(x) for x in [*every, *(x_range or ())]] or [1.0, 2.0]
    lo, hi = _widen(max(min(vals), 1.0) if log else min(vals), max(vals), log)
    near = [float(ln.value) for ln in view.lines
            if ln.value > 0 and (lo / 1000 <= ln.value <= hi * 1000 if log else ln.value <= 3 * hi)]
    a, b = min([lo, *near]), max([hi, *near])
    pad = (a / 1.3, b * 1.3) if log else (a - 0.03 * (b - a), b + 0.03 * (b - a))  # no bar under the y axis
    width = width_of(compact)
    margin = dict(l=left_margin(count_labels(max((len(sz or []) for _n, sz, _c in series), default=1))),
                  r=10 if compact else 20)
    data_px = plot_width(width, margin["l"], margin["r"]) * (_fraction(hi, *pad, log) - _fraction(lo, *pad, log))
    # a few distinct sizes: wide bars, not hairlines; never more bins than bars of MIN_BAR_PX fit
    bins = max(1, min(bins, max(5, len(set(every))), int(data_px // MIN_BAR_PX)))
    edges = bin_edges([lo, hi], log=log, bins=bins, lo=lo, hi=hi)
    most = _histogram_bars(fig, view, series, edges, log, both) if every else 1
    margin["l"] = left_margin(count_labels(most))
    rows = _vertical_lines(fig, view.lines, *pad, log, labels=not compact,
                           plot_px=plot_width(width, margin["l"], margin["r"]))
    _legend_entries(fig, view.lines)
    head, title_px = title_layout(title or view.label, width=width, size=13 if compact else 17)
    top = title_px + 12 + 17 * rows
    fig.update_layout(
        title=head, height=height + top - 42, bargap=0.02, barmode="overlay",
        margin=dict(**margin, t=top, b=40), meta=dict(width_px=width),
        xaxis=size_axis(pad[0], pad[1], log=log, title="partition size"),
        yaxis=count_axis(most), legend=dict(orientation="h", y=-0.25), template="plotly_white", showlegend=not compact,
    )
    return fig


def _histogram_bars(fig: go.Figure, view: ShuffleView, series: list, edges: Any, log: bool, both: bool) -> int:
    """A bar per bin holding partitions, per series; returns the largest count. Each bar is
    centred between its edges in bytes, so a log axis draws it from edge to edge."""
    centers = (edges[:-1] + edges[1:]) / 2
    widths = edges[1:] - edges[:-1]
    counts_all = [np.histogram(np.clip(np.asarray(sz, dtype=float), edges[0], edges[-1]), bins=edges)[0]
                  for _n, sz, _c in series if sz]
    most = int(max(int(c.max()) for c in counts_all))
    for (name, sizes, color), counts in zip([x for x in series if x[1]], counts_all):
        hover = [f"{html.escape(name)}: {mib(a)} - {mib(b)}: {int(c)} partition{'s' if c != 1 else ''}"
                 for a, b, c in zip(edges[:-1], edges[1:], counts)]
        keep = counts > 0  # only bins that hold partitions: a bar drawn is a bar that exists
        fig.add_trace(go.Bar(x=centers[keep].tolist(), y=_shown(counts[keep].tolist(), MIN_BAR * most),
                             width=widths[keep].tolist(), name=html.escape(name), marker_color=color,
                             marker_line=dict(color="#495057", width=0.5), opacity=0.7 if both else 1.0,
                             hovertext=[h for h, k in zip(hover, keep) if k], hoverinfo="text"))
        if sizes is view.sizes_before:
            _label_hot_reducers(fig, view, edges, counts, log)
    return most


def _series_name(view: ShuffleView, which: str) -> str:
    bars = bars_of(view, "auto" if which == "both" else which)
    return html.unescape(bars.legend) if bars else "partitions"


def _label_hot_reducers(fig: go.Figure, view: ShuffleView, edges: Any, counts: Any, log: bool, most: int = 6) -> None:
    """Name the largest skewed reducers (exact sources: pre-AQE sizes by reducer id) above the
    bars that hold them; reducers in one bin share one label."""
    by_bin: dict[int, list[int]] = {}
    for r in sorted(view.skew_rows, key=lambda r: -r.size)[:most]:
        b = min(max(int(np.searchsorted(edges, r.size, side="right")) - 1, 0), len(counts) - 1)
        by_bin.setdefault(b, []).append(r.partition)
    for b, ids in by_bin.items():
        x = float(np.sqrt(edges[b] * edges[b + 1])) if log else float((edges[b] + edges[b + 1]) / 2)
        text = "reducer " + ", ".join(map(str, sorted(ids))) if len(ids) <= 3 else f"reducers {', '.join(map(str, sorted(ids)[:3]))}, ..."
        fig.add_annotation(x=math.log10(max(x, 1)) if log else x, y=int(counts[b]), text=text, showarrow=True,
                           arrowhead=0, ay=-22, font=dict(color="#e03131", size=11))


def _bar_trace(bars: Bars, order: str, lo: float, hi: float, log: bool) -> tuple[go.Bar, list[int]]:
    """The bars in the order asked, each at least :data:`MIN_BAR` of the plot high."""
    idx = list(range(len(bars.sizes)))
    if order == "size":
        idx.sort(key=lambda i: (-bars.sizes[i], i))
    floor = lo * 10 ** (MIN_BAR * 1.6 * math.log10(hi / lo)) if log else lo + MIN_BAR * (hi - lo)
    trace = go.Bar(x=[bars.ids[i] for i in idx], y=_shown([bars.sizes[i] for i in idx], floor),
                   marker=dict(color=[bars.colors[i] for i in idx], line=dict(color="#343a40", width=0.6)),
                   hovertext=[bars.hover[i] for i in idx], hoverinfo="text", name=bars.legend, showlegend=False)
    return trace, idx


def _swatch(bars: Bars) -> go.Bar:
    """The legend entry of a bar trace, in its usual colour (not the first bar's, which may be a hot one)."""
    usual = max(set(bars.colors), key=bars.colors.count) if bars.colors else "#868e96"
    return go.Bar(x=[None], y=[None], marker_color=usual, name=bars.legend, hoverinfo="skip")


def partition_bars_figure(view: ShuffleView, *, which: str = "auto", log: bool = False, order: str = "reducer",
                          height: int = 300, title: Optional[str] = None,
                          size_range: Optional[tuple[float, float]] = None, compact: bool = False) -> go.Figure:
    """Every partition as a bar, in order (reducer order before AQE, read order after) or largest
    first (``order="size"``), with AQE's lines across. ``which="both"``: before above after.
    ``compact`` (a narrow column): no legend and no label beside a line (the title says what the
    bars are; a compact figure's caller passes a view without lines)."""
    panels = ([bars_of(view, "before"), bars_of(view, "after")]
              if which == "both" and view.sizes_before is not None and view.sizes_after is not None
              else [bars_of(view, "auto" if which == "both" else which)])
    shown = [p for p in panels if p is not None] or [Bars([], [], [], [], "partition", "partitions")]
    lo, hi = _size_range([x for p in shown for x in p.sizes], view.lines, log, size_range)
    rows = len(shown)
    if rows > 1:
        from plotly.subplots import make_subplots

        fig = make_subplots(rows=rows, cols=1, vertical_spacing=0.22)
        height = max(height, 260 * rows)
    else:
        fig = go.Figure()
    margin = dict(l=64, t=50, b=80)
    widest = 0
    for row, bars in enumerate(shown, start=1):
        trace, idx = _bar_trace(bars, order, lo, hi, log)
        fig.add_trace(trace, **({"row": row, "col": 1} if rows > 1 else {}))
        fig.add_trace(_swatch(bars), **({"row": row, "col": 1} if rows > 1 else {}))
        suffix = "" if row == 1 else str(row)
        domain = tuple(getattr(fig.layout, f"yaxis{suffix}").domain or (0.0, 1.0)) if rows > 1 else (0.0, 1.0)
        plot_px = int((height - margin["t"] - margin["b"]) * (domain[1] - domain[0]))
        widest = max(widest, _horizontal_lines(fig, view.lines, lo, hi, log, plot_px=plot_px, yref=f"y{suffix}",
                                               domain=domain, labels=not compact))
        if bars.ids and bars.axis_title == "reducer id":
            _label_hot_bars(fig, view, bars, idx, log, suffix)
        axis = size_axis(lo, hi, log=log, title="partition size")
        fig.update_layout({f"yaxis{suffix}": axis, f"xaxis{suffix}": dict(
            type="category", title=(bars.axis_title.split(" (")[0] if compact else bars.axis_title)
            + (", largest first" if order == "size" else ""),
            categoryorder="array", categoryarray=[bars.ids[i] for i in idx])})
    _legend_entries(fig, view.lines, 1 if rows > 1 else None)
    n = max(len(b.sizes) for b in shown)
    head, title_px = title_layout(title or view.label, width=width_of(compact), size=13 if compact else 17)
    fig.update_layout(title=head,
                      height=height + max(0, title_px + 12 - margin["t"]), bargap=max(0.15, 0.6 - 0.05 * n), template="plotly_white", showlegend=not compact,
                      margin=dict(l=margin["l"], t=max(margin["t"], title_px + 12), b=margin["b"],
                                  r=10 if compact else 24 + min(int(widest * 6.2), 220)),
                      legend=dict(orientation="h", y=-0.3 if rows == 1 else -0.12, yanchor="top",
                                  font=dict(size=10 if compact else 12)))
    return fig


def _label_hot_bars(fig: go.Figure, view: ShuffleView, bars: Bars, idx: list[int], log: bool, suffix: str) -> None:
    """The hot reducers, named above their bars."""
    for r in sorted({r.partition for r in view.skew_rows})[:12]:
        if 0 <= r < len(bars.sizes):
            y = bars.sizes[r]
            fig.add_annotation(x=bars.ids[r], y=math.log10(max(y, 1)) if log else y, text=f"reducer {r}",
                               xref=f"x{suffix}", yref=f"y{suffix}", showarrow=True, arrowhead=0, ay=-24,
                               font=dict(color="#e03131", size=11))


CHARTS = ("auto", "in order", "by size", "histogram")


def partition_figure(view: ShuffleView, *, which: str = "auto", log: bool = True, chart: str = "auto",
                     size_range: Optional[tuple[float, float]] = None, title: Optional[str] = None,
                     height: int = 360, compact: bool = False) -> go.Figure:
    """The chart that fits the data: up to :data:`BAR_LIMIT` partitions a bar each (``chart="auto"``
    or "in order"; "by size": largest first), more a histogram (or ``chart="histogram"``)."""
    sizes = [view.sizes_before, view.sizes_after] if which == "both" else [_pick(view, which)]
    n = max((len(s) for s in sizes if s is not None), default=0)
    if chart == "auto":
        chart = "in order" if n <= BAR_LIMIT else "histogram"
    if chart == "histogram":
        return histogram_figure(view, which=which, log=log, x_range=size_range, title=title, height=height, compact=compact)
    return partition_bars_figure(view, which=which, log=log, order="size" if chart == "by size" else "reducer",
                                 height=height, title=title, size_range=size_range, compact=compact)


def _pick(view: ShuffleView, which: str) -> Optional[list[int]]:
    if which == "before":
        return view.sizes_before
    if which == "after":
        return view.sizes_after
    return view.sizes_before if view.sizes_before is not None else view.sizes_after


def side_by_side(views: Sequence[ShuffleView], titles: Sequence[str], *, log: bool = True,
                 height: int = 360, compact: bool = False) -> list[go.Figure]:
    """Figures read against each other (a read as run and under a what-if; one read under each
    preset): their partitions after AQE, one chart kind (a bar each while every view has at most
    :data:`BAR_LIMIT`) and one size range, so a bar of one is the same height in the other."""
    sizes = [x for v in views for x in (v.sizes_after or [])]
    lines = [ln for v in views for ln in v.lines]
    size_range = _size_range(sizes, lines, log) if sizes else None
    most = max((len(v.sizes_after or []) for v in views), default=0)
    chart = "in order" if most <= BAR_LIMIT else "histogram"
    if size_range is not None and chart == "histogram":
        positive = [x for x in sizes if x > 0] or [1]
        size_range = (min(positive), max(positive))
    return [partition_figure(v, which="after", log=log, chart=chart, size_range=size_range, title=t, height=height,
                             compact=compact)
            for v, t in zip(views, titles)]
