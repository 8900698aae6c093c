"""Plan boxes and their layered layout: every plan node in exactly one box, stages cut where
Spark cuts them, boxes that never overlap, edges between adjacent layers that never cross, on
random trees (hypothesis) and on every plan of every sample event log."""
from __future__ import annotations

import sys
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from aqe_core.api import load_event_log as load
from aqe_core.figures.layered_layout import H_GAP, BoxLayout
from aqe_core.figures.plan_blocks import STAGE_KEY, BoxGraph, box_graph, split_blocks
from aqe_core.figures.plan_figure import _Frame, node_kind
from aqe_core.figures.plan_paths import iter_paths
from aqe_core.figures.synthetic import chain_plan, synthetic_plan
from aqe_core.model.plan import PlanNode
from aqe_core.figures.plan_paths import node_at
from aqe_core.readers.eventlog.planinfo import build_plan

REPO = Path(__file__).resolve().parents[2]
SAMPLES = REPO / "sample_logs" / "eventlogs"
EPS = 1e-6


# --------------------------------------------------------------------------------------------
# invariants
# --------------------------------------------------------------------------------------------
def _segments_cross(a, b) -> bool:
    """Proper intersection of two segments (touching at a shared endpoint does not count)."""
    (p1, p2), (q1, q2) = a, b
    if p1 in (q1, q2) or p2 in (q1, q2):
        return False

    def orient(o, u, v):
        return (u[0] - o[0]) * (v[1] - o[1]) - (u[1] - o[1]) * (v[0] - o[0])

    d1, d2 = orient(q1, q2, p1), orient(q1, q2, p2)
    d3, d4 = orient(p1, p2, q1), orient(p1, p2, q2)
    return (d1 * d2 < -EPS) and (d3 * d4 < -EPS)


def _segments(lay: BoxLayout) -> list[tuple[tuple[str, str], tuple, tuple]]:
    return [(e, p, q) for e, r in lay.routes.items() for p, q in zip(r, r[1:])]


def crossings(lay: BoxLayout) -> int:
    segs = _segments(lay)
    return sum(_segments_cross(segs[i][1:], segs[j][1:]) for i in range(len(segs)) for j in range(i + 1, len(segs))
               if segs[i][0] != segs[j][0])


def _through(p, q, rect) -> bool:
    """Does segment p-q pass through the inside of rect (x0, x1, y0, y1)? (Liang-Barsky)"""
    x0, x1, y0, y1 = rect
    x0, x1, y0, y1 = x0 + 0.5, x1 - 0.5, y0 + 0.5, y1 - 0.5
    t0, t1 = 0.0, 1.0
    dx, dy = q[0] - p[0], q[1] - p[1]
    for pk, qk in ((-dx, p[0] - x0), (dx, x1 - p[0]), (-dy, p[1] - y0), (dy, y1 - p[1])):
        if abs(pk) < 1e-12:
            if qk < 0:
                return False
            continue
        t = qk / pk
        if pk < 0:
            t0 = max(t0, t)
        else:
            t1 = min(t1, t)
        if t0 > t1:
            return False
    return t1 - t0 > 1e-9


def check_boxes(plan: PlanNode, bg: BoxGraph) -> None:
    """Every plan path stands in exactly one box; the boxes form a tree rooted at the root's."""
    paths = [p for p, _ in iter_paths(plan)]
    assert set(bg.box_of) == set(paths)
    members = [m for b in bg.boxes.values() for m in b.members]
    assert sorted(members) == sorted(paths), "boxes must partition the plan"
    for key, box in bg.boxes.items():
        assert all(bg.box_of[m] == key for m in box.members)
        assert box.collapsed == key.startswith(STAGE_KEY)
    parents: dict[str, str] = {}
    for a, b in bg.edges:
        assert b not in parents, f"{b} has two parents"
        parents[b] = a
    root = bg.box_of["0"]
    assert set(parents) == set(bg.boxes) - {root}


def check_layout(lay: BoxLayout, edges: list[tuple[str, str]]) -> None:
    """Parents above their children, no two boxes overlap, routes join the boxes and pass
    through no other box."""
    for a, b in edges:
        assert lay.layer[b] >= lay.layer[a] + 1
        assert lay.y[a] > lay.y[b]
        route = lay.routes[(a, b)]
        assert route[0] == pytest.approx((lay.x[a], lay.y[a] - lay.h[a] / 2))
        assert route[-1] == pytest.approx((lay.x[b], lay.y[b] + lay.h[b] / 2))
    rows: dict[int, list[str]] = {}
    for k in lay.keys:
        rows.setdefault(lay.layer[k], []).append(k)
    for row in rows.values():
        row.sort(key=lambda k: lay.x[k])
        for a, b in zip(row, row[1:]):
            assert lay.rect(a)[1] + H_GAP <= lay.rect(b)[0] + 1e-6, (a, b)
    # layers are horizontal bands that do not overlap: no box of one reaches into another
    bands = sorted(((min(lay.rect(k)[2] for k in row), max(lay.rect(k)[3] for k in row)) for row in rows.values()),
                   reverse=True)
    for (lo_a, _hi_a), (_lo_b, hi_b) in zip(bands, bands[1:]):
        assert hi_b < lo_a
    assert min(lay.rect(k)[0] for k in lay.keys) == pytest.approx(0.0) if lay.keys else True
    if len(lay.keys) <= 150:
        for (a, b), p, q in _segments(lay):
            for k in lay.keys:
                if k not in (a, b):
                    assert not _through(p, q, lay.rect(k)), ((a, b), k)


def _frame(plan: PlanNode, expanded) -> _Frame:
    return _Frame(plan, box_graph(plan, expanded, kind_of=node_kind), None, "after")


# --------------------------------------------------------------------------------------------
# random trees
# --------------------------------------------------------------------------------------------
_NAMES = ["Project", "Filter", "SortMergeJoin(skew=true)", "Exchange", "AQEShuffleRead", "Range", "X",
          "Scan parquet spark_catalog.default.a_rather_long_table_name", "WholeStageCodegen (1)",
          "InputAdapter", "ShuffleQueryStage", "HashAggregate", "BroadcastExchange", "BroadcastQueryStage",
          "ReusedExchange", "Subquery", "AdaptiveSparkPlan"]


@st.composite
def plan_trees(draw, max_nodes: int = 80):
    n = draw(st.integers(1, max_nodes))
    nodes = [PlanNode(0, draw(st.sampled_from(_NAMES)), "", [], [])]
    for i in range(1, n):
        # bias towards recent nodes: chains and bushes both appear
        lo = draw(st.sampled_from([0, max(0, i - 3)]))
        parent = draw(st.integers(lo, i - 1))
        node = PlanNode(i, draw(st.sampled_from(_NAMES)), f"desc {i}", [], [])
        nodes[parent].children.append(node)
        nodes.append(node)
    return nodes[0]


@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(plan_trees(), st.sampled_from(["none", "all", "some"]), st.randoms(use_true_random=False))
def test_random_trees(plan, mode, rnd):
    blocks, _block_of, _nodes = split_blocks(plan)
    expanded = {"none": (), "all": "all"}[mode] if mode != "some" else tuple(h for h in blocks if rnd.random() < 0.5)
    f = _frame(plan, expanded)
    check_boxes(plan, f.bg)
    check_layout(f.lay, f.bg.edges)
    assert crossings(f.lay) == 0


def test_stages_are_cut_at_exchanges():
    """A stage wrapper and its exchange are one stage; a read belongs to the stage reading it."""
    rng = PlanNode(5, "Range", "Range (0, 9)")
    ex = PlanNode(4, "Exchange", "Exchange hashpartitioning(k#1, 4), ENSURE_REQUIREMENTS, [plan_id=3]", children=[rng])
    qs = PlanNode(3, "ShuffleQueryStage", "ShuffleQueryStage 0", children=[ex])
    read = PlanNode(2, "AQEShuffleRead", "AQEShuffleRead coalesced", children=[qs])
    root = PlanNode(0, "AdaptiveSparkPlan", "AdaptiveSparkPlan isFinalPlan=true", children=[
        PlanNode(6, "ResultQueryStage", "ResultQueryStage 1", children=[PlanNode(1, "HashAggregate", "h", children=[read])])])
    blocks, block_of, _ = split_blocks(root)
    assert list(blocks) == ["0", "0.0.0.0.0"]
    assert block_of["0.0.0.0"] == "0" and block_of["0.0.0.0.0.0"] == "0.0.0.0.0"
    assert blocks["0"].title == "ResultQueryStage 1" and blocks["0.0.0.0.0"].title == "ShuffleQueryStage 0"
    bg = box_graph(root)
    assert list(bg.boxes) == ["stage:0", "stage:0.0.0.0.0"] and bg.edges == [("stage:0", "stage:0.0.0.0.0")]
    assert bg.boxes["stage:0"].lines == ["HashAggregate", "AQEShuffleRead coalesced"]
    assert bg.boxes["stage:0.0.0.0.0"].lines == ["Exchange hashpartitioning(k, 4)", "Range"]  # (ids: in the hover)
    opened = box_graph(root, ["0.0.0.0.0"])
    assert "stage:0" in opened.boxes and "0.0.0.0.0.0.0" in opened.boxes and "stage:0.0.0.0.0" not in opened.boxes


# --------------------------------------------------------------------------------------------
# real plans
# --------------------------------------------------------------------------------------------
def _sample_logs():
    return sorted(p for p in SAMPLES.iterdir() if p.name != "MANIFEST.json")


@pytest.fixture(scope="module")
def sample_plans():
    out = []
    for path in _sample_logs():
        log = load(str(path))
        for ex in log.executions.values():
            for i, plan in enumerate([ex.initial_plan] + list(ex.plan_versions)):
                if plan is not None:
                    out.append((f"{path.name}#{ex.id}v{i - 1}", plan))
    assert len(out) > 50
    return out


@pytest.mark.parametrize("expanded", [(), "all"])
def test_every_sample_plan(sample_plans, expanded):
    """Real plans lay out with no overlapping box, no edge through a box and no crossing edge;
    every folded codegen wrapper stands in the box of the operator below it, or, when what is
    below starts another stage (an InputAdapter over a query stage), of the one above it."""
    for name, plan in sample_plans:
        f = _frame(plan, expanded)
        check_boxes(plan, f.bg)
        check_layout(f.lay, f.bg.edges)
        assert crossings(f.lay) == 0, name
        for key, box in f.bg.boxes.items():
            if not box.collapsed:
                assert node_at(plan, key) is not None
                for m in box.members:
                    below_stage = m.startswith(key + ".") and f.bg.box_of[m + ".0"] != key
                    assert key == m or key.startswith(m + ".") or below_stage, (name, key, m)
                    shown = node_at(plan, m).name
                    assert m == key or shown == "InputAdapter" or shown.startswith("WholeStageCodegen")


def test_every_adaptive_stage_has_its_own_box(sample_plans):
    """Collapsed, every query stage Spark made is a box titled by its id, except a broadcast
    stage with no stage below it: that is a line of the stage that joins it (or among the
    operators it lists when opened)."""
    for name, plan in sample_plans:
        _blocks, block_of, _nodes = split_blocks(plan)
        bg = box_graph(plan)
        for p, n in iter_paths(plan):
            if n.name not in ("ShuffleQueryStage", "BroadcastQueryStage"):
                continue
            box = bg.boxes[bg.box_of[p]]
            if box.head == block_of[p]:
                assert box.title.startswith(n.name), (name, p, box.title)
            else:
                assert n.name == "BroadcastQueryStage", (name, p)
                assert any("⟵" in line or "more operators" in line for line in box.lines), (name, p)


# --------------------------------------------------------------------------------------------
# reuse / subquery cross-links
# --------------------------------------------------------------------------------------------
def _info(name, desc=None, children=(), metrics=()):
    return {"nodeName": name, "simpleString": desc or name, "children": list(children), "metadata": {},
            "metrics": [{"name": m, "accumulatorId": a, "metricType": "sum"} for m, a in metrics]}


def test_reused_exchange_links():
    exch = _info("Exchange", "Exchange hashpartitioning(k#1L, 40), ENSURE_REQUIREMENTS, [plan_id=7]",
                 [_info("Range", "Range (0, 10, step=1, splits=2)", metrics=[("number of output rows", 2)])],
                 metrics=[("shuffle records written", 1)])
    reused = _info("ReusedExchange", "ReusedExchange [k#9L], Exchange hashpartitioning(k#1L, 40), "
                                     "ENSURE_REQUIREMENTS, [plan_id=7]", [exch])
    root = _info("Union", children=[_info("ShuffleQueryStage", "ShuffleQueryStage 0", [exch]),
                                    _info("ShuffleQueryStage", "ShuffleQueryStage 1", [reused])])
    plan = build_plan(root)
    bg = box_graph(plan)
    assert bg.links == [("stage:0.1", "stage:0.0", "reuse")]
    assert bg.boxes["stage:0.1"].title == "ShuffleQueryStage 1 (reused)"
    opened = box_graph(plan, "all")
    (src, dst, kind), = opened.links
    assert kind == "reuse" and node_at(plan, dst).name == "Exchange" and src.startswith("0.1.0.")


def test_reused_exchange_and_subquery_links_by_description():
    ex = PlanNode(3, "Exchange", "Exchange hashpartitioning(k#1L, 40), ENSURE_REQUIREMENTS, [plan_id=7]",
                  children=[PlanNode(4, "Range", "Range (0, 10, step=1, splits=2)")])
    sub = PlanNode(6, "Subquery", "Subquery subquery#44, [id=#555]", children=[PlanNode(7, "HashAggregate", "h")])
    plan = PlanNode(0, "Union", "Union", children=[
        PlanNode(1, "Filter", "Filter (x > Subquery subquery#44, [id=#555])", children=[ex, sub]),
        PlanNode(None, "ReusedExchange", "ReusedExchange [k#9L], Exchange hashpartitioning(k#1L, 40), "
                                         "ENSURE_REQUIREMENTS, [plan_id=7]"),
        PlanNode(None, "ReusedSubquery", "ReusedSubquery Subquery subquery#44, [id=#555]"),
    ])
    links = set(box_graph(plan, "all").links)
    assert links == {("0.1", "0.0.0", "reuse"), ("0.2", "0.0.1", "subquery")}
    assert set(box_graph(plan).links) == {("stage:0.1", "stage:0.0.0", "reuse"), ("stage:0.2", "stage:0.0.1", "subquery")}


# --------------------------------------------------------------------------------------------
# scale and depth
# --------------------------------------------------------------------------------------------
def test_deep_chain_no_recursion():
    limit = sys.getrecursionlimit()
    n = max(3000, limit + 500)
    plan = chain_plan(n)
    f = _frame(plan, "all")
    assert len(f.lay.keys) == n and max(f.lay.layer.values()) == n - 1
    assert len({round(f.lay.x[k], 6) for k in f.lay.keys}) == 1  # a chain is one straight column
    assert sys.getrecursionlimit() == limit


def test_synthetic_plans_and_speed():
    for seed in range(3):
        plan = synthetic_plan(600, seed=seed)
        for expanded in ((), "all"):
            f = _frame(plan, expanded)
            check_boxes(plan, f.bg)
            check_layout(f.lay, f.bg.edges)
    plan = synthetic_plan(1000, seed=11)
    f = _frame(plan, "all")
    check_layout(f.lay, f.bg.edges)
    assert len(f.lay.keys) > 800  # speed: bench/bench_plan_layout.py


def test_path_ids_are_plan_paths():
    plan = synthetic_plan(200, seed=5)
    paths = dict(iter_paths(plan))
    for p, node in paths.items():
        assert node_at(plan, p) is node
    assert node_at(plan, "1") is None and node_at(plan, "0.99") is None and node_at(plan, "0.x") is None


@settings(max_examples=60, deadline=None)
@given(st.integers(1, 200), st.integers(0, 10_000), st.booleans())
def test_synthetic_plan_size(n, seed, codegen):
    assert sum(1 for _ in synthetic_plan(n, seed=seed, codegen=codegen).walk()) == n
