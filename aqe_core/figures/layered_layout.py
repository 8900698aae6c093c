"""A layered (Sugiyama) layout of plan boxes, in pixels, from igraph.

Why igraph: its Sugiyama layout (C core, maintained, wheels for every platform) does the two
hard parts, ordering the boxes of each layer to avoid crossings and routing edges that span
layers through dummy positions, in milliseconds for 500 boxes. We fix the layers (a box one
layer below its consumer, so the root is on top as in ``EXPLAIN``; a layer holds a page's
width of boxes, further children go lower) and turn igraph's order into pixels: each layer is
packed with the boxes' real widths, each box as near its neighbours in the next layer as the
gaps allow (least squares by pool-adjacent-violators, exact in linear time, a few sweeps up
and down), and a layer is as tall as its tallest box, so no two boxes overlap by construction.

Coordinates are screen pixels at the default zoom: x to the right, y *up* (plotly's), so a
layer below its parent has a smaller y.
"""
from __future__ import annotations

from dataclasses import dataclass

import igraph as ig

H_GAP = 28.0
V_GAP = 44.0
#: the width an edge takes in a layer it crosses
BEND_W = 4.0


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


def layered_layout(keys: list[str], edges: list[tuple[str, str]], size: dict[str, tuple[float, float]],
                   max_width: float | None = None) -> BoxLayout:
    """Lay out boxes ``keys`` (the first is the root) joined by ``edges`` (parent, child).

    ``max_width``: a layer holds boxes up to this many pixels; further children of a wide
    fan-out (a stage joining eight broadcasts) go to the layers below, their edges routed down
    between the boxes, so a plan's width stays that of a page.

    >>> lay = layered_layout(["r", "a", "b"], [("r", "a"), ("r", "b")], {"r": (100, 30), "a": (80, 20), "b": (80, 40)})
    >>> lay.layer, lay.x["a"] < lay.x["b"], lay.y["r"] > lay.y["a"]
    ({'r': 0, 'a': 1, 'b': 1}, True, True)
    >>> layered_layout(["r", "a", "b"], [("r", "a"), ("r", "b")], {"r": (100, 30), "a": (80, 20), "b": (80, 40)},
    ...                max_width=150).layer
    {'r': 0, 'a': 1, 'b': 2}
    """
    if not keys:
        return BoxLayout([], {}, {}, {}, {}, {}, {}, 0.0, 0.0)
    index = {k: i for i, k in enumerate(keys)}
    width_of = {k: size[k][0] for k in keys}
    layer = _layers(keys, edges, width_of, max_width)
    widths = sorted(width_of.values())
    slot = widths[len(widths) // 2] + H_GAP
    g = ig.Graph(n=len(keys), edges=[(index[a], index[b]) for a, b in edges], directed=True)
    lay = g.layout_sugiyama(layers=[layer[k] for k in keys], hgap=slot, vgap=1.0, maxiter=100)
    coords = lay.coords  # a copy per access
    xs = {k: float(coords[index[k]][0]) for k in keys}
    # an edge crossing a layer holds a thin place in it, placed like a box
    bends: dict[tuple[str, str], list[str]] = {}
    row_of = dict(layer)
    for e, (a, b) in enumerate(edges):
        names = []
        for j, (px, py) in enumerate(lay.edge_routing[e]):
            name = f"\0{e}.{j}"
            xs[name], row_of[name], width_of[name] = float(px), int(round(py)), BEND_W
            names.append(name)
        bends[(a, b)] = names
    _place(row_of, xs, width_of, [[a, *bends[(a, b)], b] for a, b in edges], max_width)
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
    left = min(xs[k] - width_of[k] / 2 for k in row_of)
    xs = {k: v - left for k, v in xs.items()}
    width = max(xs[k] + width_of[k] / 2 for k in row_of)
    w = {k: size[k][0] for k in keys}
    h = {k: size[k][1] for k in keys}
    routes: dict[tuple[str, str], list[tuple[float, float]]] = {}
    for a, b in edges:
        # down from the box to the bottom of its layer's band, through each crossed layer's band
        # at the edge's own place, into the child's band and down onto its top: never through a box
        route = [(xs[a], ys[a] - h[a] / 2), (xs[a], -(top[layer[a]] + tall[layer[a]]))]
        for name in bends[(a, b)]:
            d = row_of[name]
            route += [(xs[name], -top[d]), (xs[name], -(top[d] + tall[d]))]
        route += [(xs[b], -top[layer[b]]), (xs[b], ys[b] + h[b] / 2)]
        routes[(a, b)] = _dedupe(route)
    return BoxLayout(list(keys), {k: xs[k] for k in keys}, ys, w, h, layer, routes, width, height)


def _dedupe(route: list[tuple[float, float]]) -> list[tuple[float, float]]:
    out = [route[0]]
    for p in route[1:]:
        if abs(p[0] - out[-1][0]) > 1e-9 or abs(p[1] - out[-1][1]) > 1e-9:
            out.append(p)
    return out


def _layers(keys: list[str], edges: list[tuple[str, str]], width: dict[str, float],
            max_width: float | None) -> dict[str, int]:
    """Layer of each box: one below its parent, or lower where that layer is full.

    Boxes are placed parents first, children in plan order (a tree of boxes: each has one
    parent), each in the first layer below its parent with room for it; an edge that skips
    layers takes :data:`BEND_W` of each."""
    kids: dict[str, list[str]] = {}
    for a, b in edges:
        kids.setdefault(a, []).append(b)
    layer = {keys[0]: 0}
    used: list[float] = [width[keys[0]] + H_GAP]
    queue = [keys[0]]
    i = 0
    while i < len(queue):  # breadth first: every parent is placed before any child
        k = queue[i]
        i += 1
        for c in kids.get(k, ()):
            if c in layer:
                continue
            d = layer[k] + 1
            need = width[c] + H_GAP
            while max_width is not None and d < len(used) and used[d] > 0 and used[d] + need > max_width:
                d += 1
            while len(used) <= d:
                used.append(0.0)
            used[d] += need
            for skipped in range(layer[k] + 1, d):
                used[skipped] += BEND_W + H_GAP
            layer[c] = d
            queue.append(c)
    for k in keys:
        layer.setdefault(k, 0)
    return layer


def _place(row_of: dict[str, int], xs: dict[str, float], width: dict[str, float], chains: list[list[str]],
           max_width: float | None, sweeps: int = 12) -> None:
    """x of every box and bend, keeping igraph's order within each layer: a layer at a time,
    each place as near the mean of its neighbours in the layer above (sweeping down) or below
    (sweeping up) as the gaps allow, the layer kept within ``max_width`` from the left. Packing
    from the neighbours, not from igraph's grid (where a bend takes a whole box's slot), keeps a
    plan only as wide as its widest layer needs."""
    up: dict[str, list[str]] = {}
    down: dict[str, list[str]] = {}
    for chain in chains:
        for a, b in zip(chain, chain[1:]):
            down.setdefault(a, []).append(b)
            up.setdefault(b, []).append(a)
    keys = list(row_of)
    rows: dict[int, list[str]] = {}
    for k in keys:
        rows.setdefault(row_of[k], []).append(k)
    depth = sorted(rows)
    rows[depth[0]].sort(key=lambda k: xs[k])
    for d in depth[1:]:
        # igraph's order, regrouped under the order of the layer above: every place has one
        # neighbour above (a plan's boxes form a tree, a long edge a chain of bends), so this
        # draws a tree with no crossing at all (igraph's heuristic left a few on big plans)
        above = {k: i for i, k in enumerate(rows[d - 1])} if d - 1 in rows else {}
        rows[d].sort(key=lambda k: (min((above.get(n, 0) for n in up.get(k, ())), default=0), xs[k]))
    pos = 0.0
    for k in rows.get(0, []):  # start: every layer packed from the left, in igraph's order
        xs[k] = pos + width[k] / 2
        pos += width[k] + H_GAP
    for row in rows.values():
        _pack_row(row, xs, width)
    for _ in range(sweeps):
        for order, near in ((depth[1:], up), (depth[-2::-1], down)):
            for d in order:
                for k in rows[d]:
                    if near.get(k):
                        xs[k] = sum(xs[n] for n in near[k]) / len(near[k])
                _pack_row(rows[d], xs, width)
                if max_width is not None:
                    _within(rows[d], xs, width, max_width)


def _within(row: list[str], xs: dict[str, float], width: dict[str, float], max_width: float) -> None:
    """Shift a packed layer into [0, max_width] (it fits: :func:`_layers` filled it so)."""
    left = xs[row[0]] - width[row[0]] / 2
    right = xs[row[-1]] + width[row[-1]] / 2
    shift = -left if left < 0 else (max_width - right if right > max_width else 0.0)
    if right - left > max_width:
        shift = -left
    for k in row:
        xs[k] += shift


def _pack_row(row: list[str], xs: dict[str, float], width: dict[str, float]) -> None:
    """Move the boxes of one layer, in their order, as little as possible (least squares) so
    that neighbours are at least their half widths plus :data:`H_GAP` apart.

    >>> xs = {"a": 0.0, "b": 10.0, "c": 100.0}
    >>> _pack_row(["a", "b", "c"], xs, {"a": 20, "b": 20, "c": 20})
    >>> [round(xs[k], 1) for k in "abc"]
    [-19.0, 29.0, 100.0]
    """
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
