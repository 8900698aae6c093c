"""A fix's histograms: the read's partition sizes as Spark read them next to the sizes the
replay predicts under the fix, on one shared axis so the split or merge shows at a glance.

Pure plotly; the app and the HTML report draw the same figure.
"""
from __future__ import annotations

import html
from typing import Optional, Sequence

import numpy as np
import plotly.graph_objects as go
from plotly.subplots import make_subplots

from aqe_core.figures.histograms import bin_edges
from aqe_core.units import mib

__all__ = ["fix_figure"]


def fix_figure(today: Optional[Sequence[int]], predicted: Optional[Sequence[int]], *, title: str = "",
               log: bool = True, bins: int = 30, height: int = 300) -> Optional[go.Figure]:
    """Two histograms side by side ("today: what Spark did", "predicted under the fix"), or None
    when either side's sizes are unknown (a broadcast or local read has no partitions to size)."""
    if not today or not predicted:
        return None
    every = [*today, *predicted]
    edges = bin_edges(every, log=log, bins=bins)
    centers = np.sqrt(edges[:-1] * edges[1:]) if log else (edges[:-1] + edges[1:]) / 2
    widths = (edges[1:] - edges[:-1]).tolist()
    panels = ((f"today (Spark): {len(today)} partitions, largest {mib(max(today))}", today, "#adb5bd"),
              (f"predicted: {len(predicted)} partitions, largest {mib(max(predicted))}", predicted, "#4dabf7"))
    fig = make_subplots(rows=1, cols=2, shared_yaxes=True, horizontal_spacing=0.06,
                        subplot_titles=[html.escape(p[0]) for p in panels])
    for col, (name, sizes, color) in enumerate(panels, start=1):
        counts, _ = np.histogram(np.clip(np.asarray(sizes, dtype=float), edges[0], edges[-1]), bins=edges)
        hover = [f"{mib(a)} - {mib(b)}: {int(c)} partitions" for a, b, c in zip(edges[:-1], edges[1:], counts)]
        fig.add_trace(go.Bar(x=centers.tolist(), y=counts.tolist(), width=widths, marker_color=color, showlegend=False,
                             hovertext=hover, hoverinfo="text", name=name), row=1, col=col)
        fig.update_xaxes(title_text="partition size (bytes)", type="log" if log else "linear", row=1, col=col)
    fig.update_yaxes(title_text="partitions", row=1, col=1)
    fig.update_layout(title=html.escape(title) if title else None, height=height, bargap=0.02, template="plotly_white",
                      margin=dict(l=40, r=20, t=60 if title else 40, b=40))
    return fig
