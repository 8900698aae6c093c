"""A fix's partitions: the read's partition sizes as Spark read them next to the sizes the
replay predicts under the fix, on one shared size axis so the split or merge shows at a glance.

Up to :data:`~aqe_core.figures.histograms.BAR_LIMIT` partitions a side, one bar each; more, a
histogram. Pure plotly; the app and the HTML report draw the same figure.
"""
from __future__ import annotations

import html
import math
from typing import Optional, Sequence

import numpy as np
import plotly.graph_objects as go
from plotly.subplots import make_subplots

from aqe_core.figures.byte_axis import count_axis, size_axis
from aqe_core.figures.chart_size import MIN_BAR_PX, WIDTH_PX, plot_width, title_layout
from aqe_core.figures.histograms import BAR_LIMIT, MIN_BAR, bin_edges
from aqe_core.units import mib

__all__ = ["fix_figure"]

MARGIN_L, MARGIN_R, SPACING = 64, 20, 0.06
_SIDES = (("today (Spark)", "as run", "#868e96"), ("predicted", "predicted by our rules", "#4dabf7"))


def fix_figure(today: Optional[Sequence[int]], predicted: Optional[Sequence[int]], *, title: str = "",
               log: bool = True, bins: int = 30, height: int = 300) -> Optional[go.Figure]:
    """Two panels side by side ("today: what Spark did", "predicted under the fix"), or None
    when either side's sizes are unknown (a broadcast or local read has no partitions to size)."""
    if not today or not predicted:
        return None
    panels = [(f"{name}: {len(sizes)} partition{'s' if len(sizes) != 1 else ''}, largest {mib(max(sizes))}",
               how, color, list(sizes)) for (name, how, color), sizes in zip(_SIDES, (today, predicted))]
    bars = max(len(today), len(predicted)) <= BAR_LIMIT
    fig = make_subplots(rows=1, cols=2, shared_yaxes=True, horizontal_spacing=SPACING,
                        subplot_titles=[html.escape(p[0]) for p in panels])
    (_bars if bars else _histograms)(fig, panels, log, bins)
    head, title_px = title_layout(title, width=WIDTH_PX, size=17) if title else (None, 0)
    top = max(60, title_px + 30) if title else 40
    fig.update_layout(title=head, height=height + top - (60 if title else 40), bargap=0.15 if bars else 0.02,
                      template="plotly_white", showlegend=False, margin=dict(l=MARGIN_L, r=MARGIN_R, t=top, b=40),
                      meta=dict(width_px=WIDTH_PX))
    return fig


def _bars(fig: go.Figure, panels: list, log: bool, _bins: int) -> None:
    """One bar per partition in read order; sizes on the shared y axis, each bar visible."""
    every = [x for p in panels for x in p[3]]
    top = max(max(every), 1)
    lo = max(min([x for x in every if x > 0] or [1]) / 2.5, 1.0) if log else 0.0
    hi = top * (1.6 if log else 1.1)
    floor = lo * 10 ** (MIN_BAR * 1.6 * math.log10(hi / lo)) if log else MIN_BAR * hi
    for col, (_t, how, color, sizes) in enumerate(panels, start=1):
        fig.add_trace(go.Bar(x=[str(i) for i in range(len(sizes))], y=[max(float(s), floor) for s in sizes],
                             marker=dict(color=color, line=dict(color="#343a40", width=0.6)),
                             hovertext=[f"read position {i}: {mib(s)} ({how})" for i, s in enumerate(sizes)],
                             hoverinfo="text"), row=1, col=col)
        fig.update_xaxes(type="category", title_text="position in the read", row=1, col=col)
    fig.update_yaxes(**size_axis(lo, hi, log=log, title="partition size"), row=1, col=1)


def _histograms(fig: go.Figure, panels: list, log: bool, bins: int) -> None:
    """Partitions per size bin, the bins shared; counts on whole numbers."""
    every = [x for p in panels for x in p[3]]
    edges = bin_edges(every, log=log, bins=bins)
    # each panel's data stretch (its axis pads the bins by 1.3x or 3% a side) holds bars of MIN_BAR_PX
    span = math.log10(edges[-1] / edges[0]) if log else 1.0
    share = span / (span + 2 * math.log10(1.3)) if log else 1 / 1.06
    panel_px = plot_width(WIDTH_PX, MARGIN_L, MARGIN_R) * (1 - SPACING) / 2
    fit = max(1, int(panel_px * share // MIN_BAR_PX))
    if fit < bins:
        edges = bin_edges(every, log=log, bins=fit)
    centers = (edges[:-1] + edges[1:]) / 2  # centred in bytes: on a log axis too, a bar spans its bin
    widths = edges[1:] - edges[:-1]
    counts = [np.histogram(np.clip(np.asarray(p[3], dtype=float), edges[0], edges[-1]), bins=edges)[0] for p in panels]
    most = int(max(int(c.max()) for c in counts))
    lo, hi = (edges[0] / 1.3, edges[-1] * 1.3) if log else (edges[0] - 0.03 * (edges[-1] - edges[0]),
                                                              edges[-1] + 0.03 * (edges[-1] - edges[0]))
    for col, ((_t, how, color, _s), c) in enumerate(zip(panels, counts), start=1):
        keep = c > 0
        hover = [f"{mib(a)} - {mib(b)}: {int(n)} partition{'s' if n != 1 else ''} ({how})"
                 for a, b, n in zip(edges[:-1], edges[1:], c) if n > 0]
        fig.add_trace(go.Bar(x=centers[keep].tolist(), y=[max(float(n), MIN_BAR * most) for n in c[keep]],
                             width=widths[keep].tolist(), marker_color=color, hovertext=hover, hoverinfo="text"),
                      row=1, col=col)
        fig.update_xaxes(**size_axis(lo, hi, log=log, title="partition size"), row=1, col=col)
    fig.update_yaxes(**count_axis(most), row=1, col=1)
