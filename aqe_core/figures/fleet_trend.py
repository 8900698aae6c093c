"""The Fleet page's trend: wasted task time of each application's runs over time (issue 27).

One line per application (a job's name), one point per run at its start, for the applications
that wasted the most task time in all; the hover names the run's log and its findings.
"""
from __future__ import annotations

import pandas as pd
import plotly.graph_objects as go

__all__ = ["trend_figure"]

#: lines drawn at most (the applications that wasted the most in all); the table has every one
MAX_LINES = 10


def trend_figure(runs: pd.DataFrame) -> go.Figure:
    """``runs``: :func:`aqe_core.fleet.history.app_runs`."""
    fig = go.Figure()
    if not runs.empty:
        top = runs.groupby("app")["wasted_task_s"].sum().sort_values(ascending=False).head(MAX_LINES).index
        for app in top:
            mine = runs[runs["app"] == app]
            x = mine["start"].where(mine["start"].notna(), None)
            fig.add_trace(go.Scatter(
                x=x, y=mine["wasted_task_s"], mode="lines+markers", name=str(app)[:40],
                customdata=list(zip(mine["app_id"].fillna("?"), mine["findings"], mine["executions"])),
                hovertemplate="%{fullData.name}<br>run %{customdata[0]} started %{x}<br>wasted task time %{y} s"
                              "<br>%{customdata[1]} findings in %{customdata[2]} SQL executions<extra></extra>"))
    fig.update_layout(height=340, margin=dict(l=10, r=10, t=30, b=10), legend_title_text="application",
                      showlegend=True,  # one application too: its name is the line's only label
                      title=dict(text="Wasted task time per run", font=dict(size=14)))
    fig.update_xaxes(title_text="run started (UTC)")
    fig.update_yaxes(title_text="wasted task time (s)", rangemode="tozero")
    return fig
