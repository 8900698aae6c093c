"""Both runs' partition sizes of one matched shuffle on one axis (issue 28): run a and run b as
two lines over the partition's position, sizes before AQE (by reducer) where both runs have them,
else the sizes each run read after AQE (by read position), so a reducer that grew hot stands out.
"""
from __future__ import annotations

from typing import Optional, Sequence

import plotly.graph_objects as go

from aqe_core.figures.byte_axis import size_axis
from aqe_core.model.run_diff import ShuffleDiff
from aqe_core.units import format_bytes

__all__ = ["partition_overlay"]

_COLOURS = ("#7f7f7f", "#d62728")  # run a grey (the baseline), run b red


def partition_overlay(sd: ShuffleDiff,
                      sizes_before: Optional[tuple[Optional[Sequence[int]], Optional[Sequence[int]]]] = None,
                      *, log: bool = False, title: str = "") -> go.Figure:
    """Run a's and run b's partition sizes of ``sd`` on one byte axis. ``sizes_before``: each
    run's sizes before AQE by reducer (default: ``sd.sizes_before``), drawn when both have them;
    else the sizes after AQE in ``sd``."""
    if sizes_before is None:
        sizes_before = sd.sizes_before
    before = all(s for s in sizes_before)
    series = sizes_before if before else sd.sizes_after
    fig = go.Figure()
    values = [v for s in series if s for v in s]
    for run, sizes, colour in zip(("run a", "run b"), series, _COLOURS):
        if not sizes:
            continue
        fig.add_trace(go.Scatter(
            x=list(range(len(sizes))), y=list(sizes), mode="lines+markers", name=run, line={"color": colour, "shape": "hv"},
            hovertext=[f"{run}: {'reducer' if before else 'partition'} {i}: {format_bytes(v)}" for i, v in enumerate(sizes)],
            hoverinfo="text"))
    hi = max(values) if values else 1
    lo = max(1, min((v for v in values if v > 0), default=1))
    fig.update_layout(
        title=title or sd.label, height=320, margin={"l": 70, "r": 20, "t": 40, "b": 40},
        xaxis={"title": "reducer (before AQE)" if before else "partition read (after AQE)"},
        yaxis=size_axis(lo if log else 0, hi, log=log, title="bytes"), legend={"orientation": "h", "y": -0.2})
    return fig
