"""Tidy plan-tree layout: no overlapping nodes, no crossing edges, parents above children,
on random trees (hypothesis) and on every plan of every sample event log."""
from __future__ import annotations

import sys
import time
from pathlib import Path

import networkx as nx
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from aqe_core.eventlog import load
from aqe_core.readers.eventlog.planinfo import build_plan
from aqe_core.model.plan import PlanNode
from aqe_core.plan_graph import layout_plan, node_at, tidy_x
from aqe_core.figures.plan_layout import PlanLayout, iter_paths
from aqe_core.figures.synthetic import chain_plan, synthetic_plan

REPO = Path(__file__).resolve().parent.parent
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


def check_layout(lay: PlanLayout, *, brute_force: bool | None = None) -> None:
    g = lay.graph
    assert set(g.nodes) == set(lay.order) == set(lay.pos)
    if not lay.order:
        return
    assert nx.is_arborescence(g), "the displayed plan must be a tree"
    root = lay.order[0]
    assert g.in_degree(root) == 0
    # parents one level above their children; parent centred over its first and last child
    for u in lay.order:
        kids = list(g.successors(u))
        for v in kids:
            assert lay.depth[v] == lay.depth[u] + 1
            assert lay.pos[u][1] > lay.pos[v][1]
        if kids:
            mid = (lay.pos[kids[0]][0] + lay.pos[kids[-1]][0]) / 2
            assert abs(lay.pos[u][0] - mid) < 1e-3
    # children keep plan order (path ids sort like the plan)
    for u in lay.order:
        kids = list(g.successors(u))
        assert kids == sorted(kids, key=lambda p: [int(x) for x in p.split(".")])
    # no overlap on a level: pre-order is left-to-right order
    levels: dict[int, list[str]] = {}
    for p in lay.order:
        levels.setdefault(lay.depth[p], []).append(p)
    for row in levels.values():
        for a, b in zip(row, row[1:]):
            need = (lay.width[a] + lay.width[b]) / 2 + lay.node_sep
            assert lay.pos[b][0] - lay.pos[a][0] >= need - 1e-4, (a, b, lay.pos[a], lay.pos[b])
    # no crossing edges: within each band, children's order follows their parents' order
    bands: dict[int, list[tuple[tuple[float, float], tuple[float, float]]]] = {}
    for u, v in g.edges():
        bands.setdefault(lay.depth[u], []).append((lay.pos[u], lay.pos[v]))
    for segs in bands.values():
        ordered = sorted(segs, key=lambda s: (s[0][0], s[1][0]))
        for s, t in zip(ordered, ordered[1:]):
            assert t[1][0] >= s[1][0] - EPS, f"edges cross: {s} {t}"
    if brute_force or (brute_force is None and len(lay.order) <= 150):
        for segs in bands.values():
            for i in range(len(segs)):
                for j in range(i + 1, len(segs)):
                    assert not _segments_cross(segs[i], segs[j]), (segs[i], segs[j])


# --------------------------------------------------------------------------------------------
# random trees
# --------------------------------------------------------------------------------------------
_NAMES = ["Project", "Filter", "SortMergeJoin(skew=true)", "Exchange", "AQEShuffleRead", "Range", "X",
          "Scan parquet spark_catalog.default.a_rather_long_table_name", "WholeStageCodegen (1)",
          "InputAdapter", "ShuffleQueryStage", "HashAggregate"]


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
@given(plan_trees(), st.booleans(), st.sampled_from([0.5, 1.0, 3.0]))
def test_random_trees_tidy(plan, fold, sep):
    lay = layout_plan(plan, fold_codegen=fold, node_sep=sep)
    check_layout(lay, brute_force=True)
    total = sum(1 for _ in plan.walk())
    assert len(lay) + len(lay.folded) == total
    if not fold:
        assert len(lay) == total


@settings(max_examples=150, deadline=None)
@given(st.lists(st.integers(0, 1000), min_size=1, max_size=120), st.randoms(use_true_random=False))
def test_tidy_x_generic(parents_seed, rnd):
    n = len(parents_seed)
    children: list[list[int]] = [[] for _ in range(n)]
    for i in range(1, n):
        children[parents_seed[i] % i].append(i)
    widths = [float(rnd.choice([1, 4, 9, 30])) for _ in range(n)]
    xs = tidy_x(children, widths, 2.0)
    # pre-order per level is left-to-right
    depth = [0] * n
    order, stack = [], [0]
    while stack:
        v = stack.pop()
        order.append(v)
        for c in reversed(children[v]):
            depth[c] = depth[v] + 1
            stack.append(c)
    levels: dict[int, list[int]] = {}
    for v in order:
        levels.setdefault(depth[v], []).append(v)
    for row in levels.values():
        for a, b in zip(row, row[1:]):
            assert xs[b] - xs[a] >= (widths[a] + widths[b]) / 2 + 2.0 - 1e-6
    assert min(xs[i] - widths[i] / 2 for i in range(n)) == pytest.approx(0.0, abs=1e-9)


def test_compact_siblings_nest():
    """Tidy, not just 'one column per leaf': a narrow subtree tucks under a wide one."""
    root = PlanNode(0, "R")
    a = PlanNode(1, "A")
    b = PlanNode(2, "B")
    root.children = [a, b]
    a.children = [PlanNode(3, "a1"), PlanNode(4, "a2")]
    b.children = [PlanNode(5, "b1")]
    lay = layout_plan(root, node_sep=1.0)
    check_layout(lay)
    # level 2 nodes are packed at minimum distance
    xs = sorted(lay.pos[p][0] for p in lay.order if lay.depth[p] == 2)
    assert xs[1] - xs[0] == pytest.approx(lay.width["0.0.0"] / 2 + lay.width["0.0.1"] / 2 + 1.0)


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


def _expected_stage(plan: PlanNode, path: str) -> int | None:
    """Codegen stage from the plan strings: nearest 'WholeStageCodegen (n)' ancestor, unless
    an InputAdapter or a Subquery comes first."""
    parts = path.split(".")
    chain = [plan]
    for p in parts[1:]:
        chain.append(chain[-1].children[int(p)])
    if chain[-1].name in ("Subquery", "SubqueryBroadcast", "ReusedSubquery"):
        return None
    for anc in reversed(chain[:-1]):
        if anc.name.startswith("WholeStageCodegen ("):
            return int(anc.name[len("WholeStageCodegen ("):-1])
        if anc.name in ("InputAdapter", "Subquery", "SubqueryBroadcast", "ReusedSubquery"):
            return None
    return None


@pytest.mark.parametrize("fold", [True, False])
def test_every_sample_plan(sample_plans, fold):
    for name, plan in sample_plans:
        lay = layout_plan(plan, fold_codegen=fold)
        check_layout(lay)
        names = {lay.node(p).name for p in lay.order}
        if fold:
            assert "InputAdapter" not in names, name
            assert not any(n.startswith("WholeStageCodegen") for n in names), name
            for p in lay.order:
                stage = lay.graph.nodes[p]["codegen_stage"]
                assert stage == _expected_stage(plan, p), (name, p, lay.node(p).name)
        else:
            assert len(lay) == sum(1 for _ in plan.walk())
        for p in lay.order:
            assert node_at(plan, p) is lay.node(p)


def test_codegen_groups_on_skew_join_plan():
    log = load(str(SAMPLES / "eventlog_v2_local-1795308995034"))
    ex = next(e for e in log.executions.values() if e.description == "skewed join")
    plan = ex.final_plan
    lay = layout_plan(plan)
    smj = [p for p in lay.order if lay.node(p).name == "SortMergeJoin(skew=true)"]
    assert len(smj) == 1
    group = lay.codegen[lay.codegen_of[smj[0]]]
    # the plan string puts the join in the stage whose WholeStageCodegen node is its ancestor
    assert smj[0].startswith(group.key + ".")
    assert node_at(plan, group.key).name == f"WholeStageCodegen ({group.stage})"
    # stages above an InputAdapter are not members
    for p in group.members:
        assert lay.graph.nodes[p]["codegen_stage"] == group.stage
    # every folded wrapper maps to a drawn node below it
    for f, shown in lay.folded.items():
        assert shown.startswith(f + ".")
        assert node_at(plan, f).name == "InputAdapter" or node_at(plan, f).name.startswith("WholeStageCodegen")


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
    lay = layout_plan(plan)
    check_layout(lay)
    assert len(lay.links) == 1
    link = lay.links[0]
    assert link.kind == "reuse"
    assert lay.node(link.target).name == "Exchange" and lay.node(link.target).children
    src = lay.node(link.source)
    assert src.id == lay.node(link.target).id and not src.children
    assert link.source.startswith("0.1.0.")  # under the ReusedExchange


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
    lay = layout_plan(plan)
    links = {(lk.source, lk.target, lk.kind) for lk in lay.links}
    assert links == {("0.1", "0.0.0", "reuse"), ("0.2", "0.0.1", "subquery")}


# --------------------------------------------------------------------------------------------
# scale and depth
# --------------------------------------------------------------------------------------------
def test_deep_chain_no_recursion():
    limit = sys.getrecursionlimit()
    n = max(3000, limit + 500)
    plan = chain_plan(n)
    lay = layout_plan(plan)
    assert len(lay) == n and lay.max_depth == n - 1
    assert len({lay.pos[p][0] for p in lay.order}) == 1  # a chain is one straight column
    assert sys.getrecursionlimit() == limit


def test_synthetic_plans_and_speed():
    for seed in range(3):
        check_layout(layout_plan(synthetic_plan(600, seed=seed)))
    plan = synthetic_plan(1000, seed=11)
    assert sum(1 for _ in plan.walk()) == 1000
    best = min(_timed(lambda: layout_plan(plan)) for _ in range(5))
    assert best <= 0.3, f"layout of a 1,000-node plan took {best:.3f}s"


def _timed(fn) -> float:
    t = time.perf_counter()
    fn()
    return time.perf_counter() - t


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
