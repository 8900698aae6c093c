"""A layered (Sugiyama) layout of plan boxes, in pixels, from igraph.

Why igraph: its Sugiyama layout (C core, maintained, wheels for every platform) does the two
hard parts, crossing minimisation within layers and routing of edges that span layers through
dummy positions, in about a millisecond for 500 boxes. We only fix the layers (a box sits one
layer below its consumer, so the root is on top as in ``EXPLAIN``) and turn igraph's unit grid
into pixels: every box of a layer is as wide as the widest box (``hgap`` is that width plus a
gap), a layer is as tall as its tallest box, so no two boxes overlap by construction, and a
final pass keeps that true whatever igraph returns.

Coordinates are screen pixels at the default zoom: x to the right, y *up* (plotly's), so a
layer below its parent has a smaller y.
"""
from __future__ import annotations

from dataclasses import dataclass

import igraph as ig

H_GAP = 28.0
V_GAP = 44.0


@dataclass
class BoxLayout:
    """Centre of each box, its size, and each tree edge's route (parent bottom -> child top,
    through igraph's bend points for an edge that spans layers)."""

    keys: list[str]
    x: dict[str, float]
    y: dict[str, float]
    w: dict[str, float]
    h: dict[str, float]
    layer: dict[str, int]
    routes: dict[tuple[str, str], list[tuple[float, float]]]
    width: float
    height: float

    def rect(self, key: str) -> tuple[float, float, float, float]:
        """(x0, x1, y0, y1) of a box."""
        x, y, hw, hh = self.x[key], self.y[key], self.w[key] / 2, self.h[key] / 2
        return x - hw, x + hw, y - hh, y + hh


def layered_layout(keys: list[str], edges: list[tuple[str, str]], size: dict[str, tuple[float, float]]) -> BoxLayout:
    """Lay out boxes ``keys`` (the first is the root) joined by ``edges`` (parent, child).

    >>> lay = layered_layout(["r", "a", "b"], [("r", "a"), ("r", "b")], {"r": (100, 30), "a": (80, 20), "b": (80, 40)})
    >>> lay.layer, lay.x["a"] < lay.x["b"], lay.y["r"] > lay.y["a"]
    ({'r': 0, 'a': 1, 'b': 1}, True, True)
    """
    if not keys:
        return BoxLayout([], {}, {}, {}, {}, {}, {}, 0.0, 0.0)
    index = {k: i for i, k in enumerate(keys)}
    layer = _layers(keys, edges)
    slot = max(w for w, _ in size.values()) + H_GAP
    g = ig.Graph(n=len(keys), edges=[(index[a], index[b]) for a, b in edges], directed=True)
    lay = g.layout_sugiyama(layers=[layer[k] for k in keys], hgap=slot, vgap=1.0, maxiter=100)
    xs = {k: float(lay.coords[index[k]][0]) for k in keys}
    _keep_apart(keys, layer, xs, slot)
    # layers top-down: each as tall as its tallest box, boxes centred on the layer's line
    depth = max(layer.values()) + 1
    tall = [0.0] * depth
    for k in keys:
        tall[layer[k]] = max(tall[layer[k]], size[k][1])
    top = [0.0] * depth
    for d in range(1, depth):
        top[d] = top[d - 1] + tall[d - 1] + V_GAP
    height = top[-1] + tall[-1]
    ys = {k: -(top[layer[k]] + tall[layer[k]] / 2) for k in keys}
    left = min(xs[k] - size[k][0] / 2 for k in keys)
    xs = {k: v - left for k, v in xs.items()}
    width = max(xs[k] + size[k][0] / 2 for k in keys)
    w = {k: size[k][0] for k in keys}
    h = {k: size[k][1] for k in keys}
    layer_y = {d: -(top[d] + tall[d] / 2) for d in range(depth)}
    routes: dict[tuple[str, str], list[tuple[float, float]]] = {}
    for e, (a, b) in enumerate(edges):
        bends = [(float(px) - left, layer_y.get(round(py), ys[b])) for px, py in lay.edge_routing[e]]
        routes[(a, b)] = [(xs[a], ys[a] - h[a] / 2), *bends, (xs[b], ys[b] + h[b] / 2)]
    return BoxLayout(list(keys), xs, ys, w, h, layer, routes, width, height)


def _layers(keys: list[str], edges: list[tuple[str, str]]) -> dict[str, int]:
    """Layer of each box: one below its parent (a plan is a tree of boxes; a box with two
    parents goes below the lower one)."""
    kids: dict[str, list[str]] = {}
    for a, b in edges:
        kids.setdefault(a, []).append(b)
    layer = {k: 0 for k in keys}
    stack = [keys[0]]
    seen = {keys[0]}
    while stack:
        k = stack.pop()
        for c in kids.get(k, ()):
            if layer[c] < layer[k] + 1:
                layer[c] = layer[k] + 1
            if c not in seen:
                seen.add(c)
                stack.append(c)
    return layer


def _keep_apart(keys: list[str], layer: dict[str, int], xs: dict[str, float], slot: float) -> None:
    """Neighbours on a layer at least one slot apart, in igraph's order (a no-op when igraph
    kept its own ``hgap``; a guarantee either way)."""
    rows: dict[int, list[str]] = {}
    for k in keys:
        rows.setdefault(layer[k], []).append(k)
    for row in rows.values():
        row.sort(key=lambda k: xs[k])
        for a, b in zip(row, row[1:]):
            if xs[b] - xs[a] < slot:
                xs[b] = xs[a] + slot
