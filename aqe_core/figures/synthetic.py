"""Plan-like random trees for benchmarks and property tests (no Spark needed).

Shapes follow real adaptive plans: long operator chains, binary joins, occasional unions,
codegen stages (``WholeStageCodegen (n)`` … ``InputAdapter``), shuffle stages with adaptive
reads below them, scans as leaves; every operator has a few metrics with values.
"""
from __future__ import annotations

import random

from aqe_core.model.plan import PlanNode

_CHAIN = [
    ("Project", "Project [{c}#{i}L, v#{j}L, (w#{k}L * 2) AS w2#{i}L]", 6),
    ("Filter", "Filter (isnotnull({c}#{i}L) AND ({c}#{i}L > {j}))", 4),
    ("HashAggregate", "HashAggregate(keys=[{c}#{i}L], functions=[sum(v#{j}L), count(1)])", 3),
    ("Sort", "Sort [{c}#{i}L ASC NULLS FIRST], false, 0", 2),
    ("Exchange", "Exchange hashpartitioning({c}#{i}L, 200), ENSURE_REQUIREMENTS, [plan_id={k}]", 3),
    ("AQEShuffleRead", "AQEShuffleRead coalesced", 2),
    ("Window", "Window [row_number() windowspecdefinition({c}#{i}L) AS rn#{j}]", 1),
]
_JOINS = [
    ("SortMergeJoin", "SortMergeJoin [{c}#{i}L], [{c}#{j}L], Inner"),
    ("SortMergeJoin(skew=true)", "SortMergeJoin(skew=true) [{c}#{i}L], [{c}#{j}L], Inner"),
    ("BroadcastHashJoin", "BroadcastHashJoin [{c}#{i}L], [{c}#{j}L], Inner, BuildRight, false"),
    ("ShuffledHashJoin", "ShuffledHashJoin [{c}#{i}L], [{c}#{j}L], LeftOuter, BuildRight"),
]
_SCANS = [
    ("Scan parquet spark_catalog.db.t{i}", "FileScan parquet spark_catalog.db.t{i}[{c}#{i}L,v#{j}L] Batched: true"),
    ("Range", "Range (0, {k}, step=1, splits=8)"),
    ("LocalTableScan", "LocalTableScan [{c}#{i}L, v#{j}L]"),
]
_COLS = ["key", "id", "user_id", "ts", "country", "amount"]
_METRICS = [
    ("number of output rows", "sum"), ("peak memory", "size"), ("spill size", "size"),
    ("time in aggregation build", "timing"), ("shuffle write time", "nsTiming"), ("data size", "size"),
]


def _fmt(rng: random.Random, template: str) -> str:
    return template.format(c=rng.choice(_COLS), i=rng.randint(1, 999), j=rng.randint(1, 999), k=rng.randint(1, 99999))


def _metrics(rng: random.Random, acc: list[int]) -> list[dict]:
    out = []
    for name, typ in rng.sample(_METRICS, rng.randint(1, 4)):
        acc[0] += 1
        total = rng.randint(0, 1 << 34)
        out.append({"name": name, "type": typ, "accumulator_id": acc[0], "total": total,
                    "min": total // 10, "med": total // 5, "max": total // 3})
    return out


def synthetic_plan(n: int, seed: int = 0, *, codegen: bool = True) -> PlanNode:
    """A plan-like tree with exactly ``n`` nodes (``n >= 1``)."""
    rng = random.Random(seed)
    acc = [0]
    ids = [0]

    def make(name: str, desc: str) -> PlanNode:
        ids[0] += 1
        return PlanNode(ids[0], name, desc, _metrics(rng, acc), [])

    root = PlanNode(0, "AdaptiveSparkPlan", "AdaptiveSparkPlan isFinalPlan=true", [], [])
    if n <= 1:
        return root
    count = 1
    # open slots: parent nodes that still need one child; (node, inside_codegen)
    open_: list[tuple[PlanNode, bool]] = [(root, False)]
    stage = [0]
    chain_w = [w for _, _, w in _CHAIN]
    while open_ and count + len(open_) < n:
        # mostly depth-first (chains), sometimes elsewhere (bushier)
        k = len(open_) - 1 if rng.random() < 0.8 else rng.randrange(len(open_))
        parent, in_cg = open_.pop(k)
        budget = n - count - len(open_)  # nodes we may still add beyond closing the slots
        r = rng.random()
        if codegen and not in_cg and r < 0.25 and budget >= 2:
            stage[0] += 1
            node = make(f"WholeStageCodegen ({stage[0]})", f"WholeStageCodegen ({stage[0]})")
            parent.children.append(node)
            count += 1
            open_.append((node, True))
            continue
        if codegen and in_cg and r < 0.12 and budget >= 2:
            node = PlanNode(None, "InputAdapter", "InputAdapter", [], [])
            parent.children.append(node)
            count += 1
            open_.append((node, False))
            continue
        if r < 0.22 and budget >= 3:
            name, desc = rng.choice(_JOINS)
            node = make(name, _fmt(rng, desc))
            parent.children.append(node)
            count += 1
            open_.append((node, in_cg))
            open_.append((node, in_cg))
            continue
        if r < 0.235 and budget >= 5:
            node = make("Union", "Union")
            parent.children.append(node)
            count += 1
            for _ in range(min(rng.randint(3, 5), budget - 1)):  # stays within n
                open_.append((node, in_cg))
            continue
        if r < 0.30 and open_:  # never close the last open slot early
            name, desc = rng.choice(_SCANS)
            parent.children.append(make(_fmt(rng, name), _fmt(rng, desc)))
            count += 1
            continue
        name, desc, _ = rng.choices(_CHAIN, weights=chain_w)[0]
        node = make(name, _fmt(rng, desc))
        parent.children.append(node)
        count += 1
        open_.append((node, in_cg))
    for parent, _ in open_:
        name, desc = rng.choice(_SCANS)
        parent.children.append(make(_fmt(rng, name), _fmt(rng, desc)))
    return root


def chain_plan(n: int) -> PlanNode:
    """A single chain of ``n`` operators (deep-plan tests)."""
    root = PlanNode(0, "Project", "Project [a#1]", [], [])
    node = root
    for i in range(1, n):
        child = PlanNode(i, "Filter" if i % 2 else "Project", f"op {i}", [], [])
        node.children.append(child)
        node = child
    return root
