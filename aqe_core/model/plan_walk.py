"""Walks over a :class:`~aqe_core.model.plan.PlanNode` tree that the event-log reader, the
outcome summary, the plan diff and the plan layout all need, and the Spark node names they
test against, spelled once.

The names are Spark's ``nodeName`` values: ``AQEShuffleReadExec`` (3.2+; ``CustomShuffleReaderExec``
in 3.0/3.1) and the query-stage wrappers of ``AdaptiveSparkPlanExec``'s executed plan, and the
engines' names for the same parts (:mod:`aqe_core.model.engines`: RAPIDS' read, Photon's exchange
of three nodes, Gluten's and Comet's exchanges), so a walk finds an engine's exchange as Spark's.
"""
from __future__ import annotations

import re
from typing import Callable

from aqe_core.model.engines import ENGINES, Role, operator_of
from aqe_core.model.plan import PlanNode

#: adaptive shuffle reads: ``AQEShuffleReadExec`` (3.2+), ``CustomShuffleReaderExec`` (3.0, 3.1), and
#: the engines' reads built from AQE's partition specs (RAPIDS' ``GpuCustomShuffleReader``)
SHUFFLE_READ_NAMES = ("AQEShuffleRead", "CustomShuffleReader") + tuple(
    op.name for e in ENGINES for op in e.operators if op.role == Role.SHUFFLE_READ)
#: query-stage wrappers of an executed adaptive plan (the stage's plan is their only child)
STAGE_WRAPPERS = ("ShuffleQueryStage", "BroadcastQueryStage", "TableCacheQueryStage", "ResultQueryStage")
#: the stage wrappers that run an exchange (``SparkPlanGraph`` points a reused one at its first occurrence)
EXCHANGE_STAGE_WRAPPERS = ("BroadcastQueryStage", "ShuffleQueryStage")
#: the stage wrappers that run something else (a cached relation, the result stage)
OTHER_STAGE_WRAPPERS = ("TableCacheQueryStage", "ResultQueryStage")


#: a scan of an RDD made from a Dataset (``RDDScanExec``: a ``foreachBatch`` batch DataFrame, a
#: checkpoint); Spark 4.x logs the plan that Dataset came from below it, a plan another
#: execution ran (a micro-batch's, with its own joins and reads), not part of this query
ORIGIN_SCAN_NAMES = ("Scan ExistingRDD",)


def is_origin_scan(node: PlanNode) -> bool:
    """A scan of a Dataset's RDD whose children, where the log has any, are the plan it came from.

    >>> is_origin_scan(PlanNode(1, "Scan ExistingRDD", "Scan ExistingRDD[k#4,id#3L]", [], []))
    True
    """
    return (node.name or "").strip().startswith(ORIGIN_SCAN_NAMES)


def own_walk(plan: PlanNode):
    """``plan``'s nodes in pre-order, not below an origin scan (:func:`is_origin_scan`): the
    operators this execution ran."""
    stack = [plan]
    while stack:
        node = stack.pop()
        yield node
        if not is_origin_scan(node):
            stack.extend(reversed(node.children))


def is_shuffle_exchange(node: PlanNode) -> bool:
    """A shuffle exchange node (``Exchange``, ``ShuffleExchange``, an engine's exchange that
    carries the partitioning: ``PhotonShuffleExchangeSink``, ``ColumnarExchange``), not a
    broadcast one, nor the other nodes of an engine's exchange."""
    name = node.name or ""
    hit = operator_of(name)
    if hit is not None:
        return hit[1].role == Role.EXCHANGE
    return name.endswith("Exchange") and "Broadcast" not in name


def _any_exchange(node: PlanNode) -> bool:
    hit = operator_of(node.name or "")
    if hit is not None:
        return hit[1].role in (Role.EXCHANGE, Role.BROADCAST)
    reused_what = (node.description or "").rsplit("], ", 1)[-1]  # "ReusedExchange [out], <what it reuses>"
    if node.name == "ReusedExchange" and "Exchange" not in reused_what and reuses_drawn_exchange(node):
        return False  # (Photon's "ReusedExchange [..], PhotonShuffleMapStage": the sink below carries the partitioning)
    return "Exchange" in node.name


def exchange_below(node: PlanNode, *, through: Callable[[PlanNode], bool] | None = None) -> PlanNode | None:
    """The first exchange under ``node`` (``node`` itself excluded), in pre-order.

    ``through=None``: any node whose name holds ``Exchange`` (a reused or broadcast one too),
    anywhere below: what the reader and the outcome summary use to find the exchange an
    adaptive read reads. ``through=pred``: only a shuffle exchange (:func:`is_shuffle_exchange`),
    descending only through the nodes ``pred`` accepts (the plan diff passes wrappers and
    ``ReusedExchange``), so an exchange deeper in another stage is not taken.
    """
    match = _any_exchange if through is None else is_shuffle_exchange
    stack = list(reversed(node.children))
    while stack:
        n = stack.pop()
        if match(n):
            return n
        if through is None or through(n):
            stack.extend(reversed(n.children))
    return None


def exchange_parts(plan: PlanNode) -> dict[int, list[PlanNode]]:
    """``id(exchange)`` -> the other nodes of that exchange in an engine's plan (Photon's
    ``PhotonShuffleExchangeSource`` and ``PhotonShuffleMapStage`` above its sink), found down the
    single-child chain from each part (through AQE's reads and stage wrappers)."""
    out: dict[int, list[PlanNode]] = {}
    for n in plan.walk():
        hit = operator_of(n.name or "")
        if hit is None or hit[1].role != Role.EXCHANGE_PART:
            continue
        c = n
        while len(c.children) == 1 and not is_shuffle_exchange(c):
            c = c.children[0]
        if c is not n and is_shuffle_exchange(c):
            out.setdefault(id(c), []).append(n)
    return out


def reuses_drawn_exchange(node: PlanNode) -> bool:
    """A ``ReusedExchange`` whose reused exchange is drawn below it (Photon's log: ``ReusedExchange
    > PhotonShuffleMapStage > PhotonShuffleExchangeSink``): that exchange is the one shuffle."""
    if node.name != "ReusedExchange":
        return False
    c = node
    while len(c.children) == 1:
        c = c.children[0]
        if is_shuffle_exchange(c):
            return True
    return False


def graph_nodes(plan: PlanNode, *, own: bool = False) -> list[PlanNode]:
    """The nodes of the UI graph (those with an id), each once, in id order.

    ``own=True``: only this execution's own nodes, without the plan a ``Scan ExistingRDD`` shows
    below it. A scan of an RDD made from a Dataset (a ``foreachBatch`` batch DataFrame, from 4.x)
    shows the Dataset's own executed plan as its child, accumulators and all; that plan ran in
    another SQL execution (a streaming micro-batch's), and Spark posts its metrics there."""
    seen: dict[int, PlanNode] = {}
    stack = [plan]
    while stack:
        n = stack.pop()
        if n.id is not None and n.id not in seen:
            seen[n.id] = n
        if not (own and is_rdd_scan(n)):
            stack.extend(reversed(n.children))
    return [seen[i] for i in sorted(seen)]


def is_rdd_scan(node: PlanNode) -> bool:
    """``RDDScanExec`` of a ``LogicalRDD`` (``Scan ExistingRDD``): a leaf whose children, when the
    log shows any, are the plan of the Dataset the RDD came from (see :func:`graph_nodes`)."""
    return (node.name or "").startswith("Scan ExistingRDD")


def partitioning_count(desc: str) -> int | None:
    """Number of partitions of an Exchange description (``hashpartitioning(k#1, 40)``).

    >>> partitioning_count("Exchange hashpartitioning(coalesce(k#1, 0), 40), ENSURE_REQUIREMENTS, [plan_id=7]")
    40
    >>> partitioning_count("Exchange SinglePartition, ENSURE_REQUIREMENTS")
    1
    """
    if "SinglePartition" in desc:
        return 1
    lower = desc.lower()
    i = lower.find("partitioning(")
    if i < 0:
        return None
    j = i + len("partitioning(")
    depth, start = 1, j
    while j < len(desc) and depth:
        if desc[j] == "(":
            depth += 1
        elif desc[j] == ")":
            depth -= 1
        j += 1
    inner = desc[start: j - 1]
    m = re.search(r"(\d+)\s*$", inner)
    return int(m.group(1)) if m else None
