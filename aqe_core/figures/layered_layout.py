"""A layered (Sugiyama) layout of plan boxes, in pixels, from igraph.

Why igraph: its Sugiyama layout (C core, maintained, wheels for every platform) does the two
hard parts, crossing minimisation within layers and routing of edges that span layers through
dummy positions, in about a millisecond for 500 boxes. We only fix the layers (a box sits one
layer below its consumer, so the root is on top as in ``EXPLAIN``) and turn igraph's unit grid
into pixels: igraph places boxes on a grid of one typical box width; each layer is then packed
with the boxes' real widths, as close to igraph's positions as the gaps allow (isotonic
regression by pool-adjacent-violators, exact in linear time), and a layer is as tall as its
tallest box, so no two boxes overlap by construction.

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
    widths = sorted(w for w, _ in size.values())
    slot = widths[len(widths) // 2] + H_GAP
    g = ig.Graph(n=len(keys), edges=[(index[a], index[b]) for a, b in edges], directed=True)
    lay = g.layout_sugiyama(layers=[layer[k] for k in keys], hgap=slot, vgap=1.0, maxiter=100)
    coords = lay.coords  # a copy per access
    xs = {k: float(coords[index[k]][0]) for k in keys}
    _pack_layers(keys, layer, xs, {k: size[k][0] for k in keys})
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


def _pack_layers(keys: list[str], layer: dict[str, int], xs: dict[str, float], width: dict[str, float]) -> None:
    """Move the boxes of each layer, in igraph's order, as little as possible (least squares)
    so that neighbours are at least their half widths plus :data:`H_GAP` apart.

    >>> xs = {"a": 0.0, "b": 10.0, "c": 100.0}
    >>> _pack_layers(["a", "b", "c"], {"a": 0, "b": 0, "c": 0}, xs, {"a": 20, "b": 20, "c": 20})
    >>> [round(xs[k], 1) for k in "abc"]
    [-19.0, 29.0, 100.0]
    """
    rows: dict[int, list[str]] = {}
    for k in keys:
        rows.setdefault(layer[k], []).append(k)
    for row in rows.values():
        row.sort(key=lambda k: xs[k])
        # x[i+1] - x[i] >= gap[i]  <=>  y = x - offset is non-decreasing: fit y to the targets
        offset = [0.0]
        for a, b in zip(row, row[1:]):
            offset.append(offset[-1] + (width[a] + width[b]) / 2 + H_GAP)
        blocks: list[list[float]] = []  # [mean, count]
        for k, off in zip(row, offset):
            blocks.append([xs[k] - off, 1.0])
            while len(blocks) > 1 and blocks[-2][0] > blocks[-1][0]:
                m2, n2 = blocks.pop()
                m1, n1 = blocks[-1]
                blocks[-1] = [(m1 * n1 + m2 * n2) / (n1 + n2), n1 + n2]
        i = 0
        for mean, count in blocks:
            for _ in range(int(count)):
                xs[row[i]] = mean + offset[i]
                i += 1
