"""Finding a node in a drawn plan and zooming the view onto it (the Plans page's search)."""
from __future__ import annotations

import plotly.graph_objects as go


def node_position(fig: go.Figure, path: str) -> tuple[float, float] | None:
    """(x, y) of a node in a figure made by :func:`plan_figure`."""
    for tr in fig.data:
        cd = getattr(tr, "customdata", None)
        if cd is None or getattr(tr, "mode", None) == "lines":
            continue
        cd = list(cd)
        if path in cd:
            i = cd.index(path)
            return float(tr.x[i]), float(tr.y[i])
    return None


def zoom_ranges(fig: go.Figure, path: str, *, factor: float = 0.5) -> tuple[list[float], list[float]] | None:
    """Axis ranges (x, y) that centre the view on a node, or None if it is not in the figure.

    Both axes shrink by the same ``factor`` of the figure's own ranges: text keeps its size in
    pixels, so only a uniform zoom spreads labels apart (a fixed window wider than a small plan,
    or a y-range shrunk more than the x-range, pushed labels into each other)."""
    pos = node_position(fig, path)
    if pos is None:
        return None
    x, y = pos
    xr, yr = fig.layout.xaxis.range, fig.layout.yaxis.range
    if not xr or not yr:
        return None
    hx, hy = (xr[1] - xr[0]) * factor / 2, (yr[1] - yr[0]) * factor / 2
    return [x - hx, x + hx], [y - hy, y + hy]


def zoom_to_node(fig: go.Figure, path: str, **kw: float) -> bool:
    """Set the figure's axis ranges around a node (in place). False if the node is not drawn."""
    r = zoom_ranges(fig, path, **kw)
    if r is None:
        return False
    fig.update_xaxes(range=r[0])
    fig.update_yaxes(range=r[1])
    return True
