"""``model.plan_walk.exchange_below`` replaces three copies (issue 9): the reader's and the
summary's (any ``Exchange`` anywhere below) and the plan diff's (a shuffle exchange, only
through wrappers and ``ReusedExchange``). Both behaviours are checked against the old code on
every node of every plan of the bundled logs."""
from __future__ import annotations

import json
from pathlib import Path

from aqe_core.model.plan import PlanNode
from aqe_core.model.plan_walk import (
    EXCHANGE_STAGE_WRAPPERS,
    OTHER_STAGE_WRAPPERS,
    SHUFFLE_READ_NAMES,
    STAGE_WRAPPERS,
    exchange_below,
    graph_nodes,
)
from aqe_core.readers.eventlog import load

SAMPLES = Path(__file__).resolve().parents[2] / "sample_logs" / "eventlogs"


def _old_any(node: PlanNode) -> PlanNode | None:  # eventlog/reader.py and eventlog/summary.py
    for n in node.walk():
        if n is not node and "Exchange" in n.name:
            return n
    return None


def _is_wrapper(node: PlanNode) -> bool:
    n = node.name or ""
    return n in STAGE_WRAPPERS + ("InputAdapter",) or n.startswith("WholeStageCodegen")


def _old_diff(node: PlanNode) -> PlanNode | None:  # plan_graph/diff.py
    stack = list(reversed(node.children))
    while stack:
        n = stack.pop()
        if (n.name or "").endswith("Exchange") and "Broadcast" not in n.name:
            return n
        if _is_wrapper(n) or n.name == "ReusedExchange":
            stack.extend(reversed(n.children))
    return None


def _plans():
    manifest = json.loads((SAMPLES / "MANIFEST.json").read_text())
    for entry in manifest.values():
        log = load(str(SAMPLES / entry["files"][0]))
        for ex in log.executions.values():
            yield from (p for p in [ex.initial_plan, *ex.plan_versions] if p is not None)


def test_exchange_below_matches_the_old_walks():
    through = lambda n: _is_wrapper(n) or n.name == "ReusedExchange"  # noqa: E731 - a one-line local helper
    checked = found = 0
    for plan in _plans():
        for node in plan.walk():
            assert exchange_below(node) is _old_any(node)
            got = exchange_below(node, through=through)
            assert got is _old_diff(node)
            checked += 1
            found += got is not None
    assert checked > 1000 and found > 10


def test_exchange_below_on_a_small_tree():
    ex = PlanNode(3, "Exchange", "Exchange hashpartitioning(k, 200)")
    bx = PlanNode(4, "BroadcastExchange")
    stage = PlanNode(None, "ShuffleQueryStage", children=[ex])
    read = PlanNode(1, "AQEShuffleRead", "AQEShuffleRead coalesced", children=[stage])
    root = PlanNode(0, "SortMergeJoin", children=[read, PlanNode(5, "Project", children=[bx])])
    assert exchange_below(read) is ex
    assert exchange_below(root) is ex
    assert exchange_below(root.children[1]) is bx
    assert exchange_below(root.children[1], through=_is_wrapper) is None
    assert exchange_below(root, through=_is_wrapper) is None  # AQEShuffleRead is no wrapper
    assert exchange_below(ex) is None
    assert [n.id for n in graph_nodes(root)] == [0, 1, 3, 4, 5]


def test_name_tuples():
    assert set(EXCHANGE_STAGE_WRAPPERS) | set(OTHER_STAGE_WRAPPERS) == set(STAGE_WRAPPERS)
    # Spark's (3.2+, 3.0/3.1), then the engines' reads built from AQE's partition specs (RAPIDS')
    assert SHUFFLE_READ_NAMES == ("AQEShuffleRead", "CustomShuffleReader", "GpuCustomShuffleReader")
