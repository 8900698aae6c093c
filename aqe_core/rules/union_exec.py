"""Spark's ``UnionExec.outputPartitioning`` (4.1.0 - 4.3.0): the partitioning a Union reports,
which decides whether ``CoalesceShufflePartitions`` coalesces its children apart or together.

Spark 4.1 (SPARK-52921, ``SQLConf.UNION_OUTPUT_PARTITIONING``, ``spark.sql.unionOutputPartitioning``,
internal, default true, since 4.1.0) lets ``UnionExec`` (``basicPhysicalOperators.scala``) report
its children's output partitioning when they agree: ``prepareOutputPartitioning`` maps every
child's partitioning onto the first child's output attributes by position and
``comparePartitioning`` accepts two ``SinglePartition`` or two equal ``HashPartitioningLike``
(never two ``RangePartitioning``); otherwise the union keeps ``UnknownPartitioning``. From 4.2
Spark reads the setting once per physical preparation and latches the decision on the node
(``UnionExec.isPlainUnion``, ``StampUnionDecisions``); only 4.3's
``CoalesceShufflePartitions.childrenNeedCompatiblePartitioning`` reads it, treating a non-plain
union like any node whose children must stay aligned: its shuffles are one coalesce group
(docs/spark-releases.md, from the released jars). Before 4.1 every union is plain.

A recording from 4.3+ carries Spark's answer (the Union's ``partitioning`` in the final plan).
4.1 and 4.2 report a partitioning too but still coalesce the children apart, so their final plan
records "unknown" whatever the union reported before coalescing. For those and older
recordings :func:`inferred_union_partitioning` reimplements the comparison on what the recorded
plan shows: each child's partitioning is that of the exchange below it, carried up through
single-child operators that keep it (a ``Project`` must still list the key's attribute; an
aggregate must group by it). The recorded plan does not list each operator's output, so the
positional attribute mapping is taken to hold when the children hash on the same number of keys
into the same number of partitions, as a ``UNION ALL`` of the same grouping does.

    >>> from aqe_core.model.plan import PlanNode
    >>> def agg(i):
    ...     ex = PlanNode(None, "Exchange", f"Exchange hashpartitioning(k#{i}L, 40), ENSURE_REQUIREMENTS")
    ...     return PlanNode(None, "HashAggregate", f"HashAggregate(keys=[k#{i}L], functions=[count(1)])", [], [ex])
    >>> inferred_union_partitioning(PlanNode(None, "Union", "Union", [], [agg(1), agg(2)]))
    'hashpartitioning(k#1L, 40)'
    >>> inferred_union_partitioning(PlanNode(None, "Union", "Union", [], [agg(1), PlanNode(None, "Range", "Range", [], [])]))
"""
from __future__ import annotations

import re
from typing import Any, Optional, Protocol, Sequence

from aqe_core import config
from aqe_core.config import AQEConf

__all__ = ["inferred_union_partitioning", "partitioning_of", "union_reports_partitioning", "unknown"]

_PASS_THROUGH = ("WholeStageCodegen", "InputAdapter", "ColumnarToRow", "RowToColumnar", "AQEShuffleRead",
                 "CustomShuffleReader", "ShuffleQueryStage", "Filter", "Sort", "CollectLimit", "LocalLimit",
                 "ReusedExchange", "Coalesce", "Window", "SortAggregate", "HashAggregate", "ObjectHashAggregate")
_ATTR = re.compile(r"#(\d+)")


class _Node(Protocol):
    name: str
    description: str

    @property
    def children(self) -> Sequence[Any]: ...  # (read only: a list of plan nodes is one)


def unknown(partitioning: Optional[str]) -> bool:
    """Is a recorded partitioning string Spark's ``UnknownPartitioning`` (or missing)?"""
    return not partitioning or partitioning.startswith("UnknownPartitioning")


def _exchange_partitioning(desc: str) -> Optional[str]:
    """``hashpartitioning(k#1L, 40)`` out of ``Exchange hashpartitioning(k#1L, 40), ENSURE_REQUIREMENTS, ...``."""
    text = desc.split(" ", 1)[1] if " " in desc else ""
    depth = 0
    for i, ch in enumerate(text):
        depth += ch == "("
        depth -= ch == ")"
        if ch == "," and depth == 0:
            return text[:i].strip()
    return text.strip() or None


def _parts(p: str) -> Optional[tuple[str, int, int]]:
    """(kind, number of partitions, number of keys) of a partitioning Spark's union compares."""
    if p.startswith("SinglePartition"):
        return ("single", 1, 0)
    m = re.match(r"^hashpartitioning\((.*), (\d+)\)$", p)
    if m is None:
        return None  # range / round-robin / unknown: never equal for the union
    depth, keys = 0, 1
    for ch in m.group(1):
        depth += ch in "(["
        depth -= ch in ")]"
        keys += ch == "," and depth == 0
    return ("hash", int(m.group(2)), keys)


def partitioning_of(node: _Node) -> Optional[str]:
    """The output partitioning of a recorded plan node as its union parent sees it, None if unknown."""
    name = node.name.split(" (")[0]
    if name == "Exchange":
        return _exchange_partitioning(node.description)
    if name == "Union":
        return inferred_union_partitioning(node)
    if name == "Project" or name in _PASS_THROUGH:
        if len(node.children) != 1:
            return None
        below = partitioning_of(node.children[0])
        if below is None or name not in ("Project", "HashAggregate", "ObjectHashAggregate", "SortAggregate"):
            return below
        # a Project / aggregate keeps a hash partitioning only over attributes it still outputs
        kept = set(_ATTR.findall(node.description if name == "Project" else _keys(node.description)))
        return below if set(_ATTR.findall(below)) <= kept else None
    return None


def _keys(desc: str) -> str:
    m = re.search(r"keys=\[([^\]]*)\]", desc)
    return m.group(1) if m else ""


def inferred_union_partitioning(union: _Node) -> Optional[str]:
    """``UnionExec.outputPartitioning`` with the setting on, from the recorded children: the first
    child's partitioning when every child's agrees with it, else None (``UnknownPartitioning``)."""
    parts = [partitioning_of(ch) for ch in union.children]
    if not parts or any(p is None for p in parts):
        return None
    shapes = [_parts(p) for p in parts if p is not None]
    if shapes[0] is None or any(s != shapes[0] for s in shapes):
        return None
    return parts[0]


def union_reports_partitioning(union: _Node, recorded: Optional[str], conf: AQEConf,
                               recorded_conf: Optional[AQEConf]) -> bool:
    """Does ``UnionExec`` report a partitioning (not a plain union) under ``conf``'s release?

    ``recorded`` is the partitioning the run's own Spark recorded for the Union; it is Spark's
    answer when the recording's release (4.3+: the caller passes no ``recorded_conf`` for older
    ones) and settings had ``unionOutputPartitioning`` on.
    Otherwise (an older release's recording, or the setting off when recorded) the answer is
    inferred from the recorded children (:func:`inferred_union_partitioning`).
    """
    if not conf.get_or(config.UNION_OUTPUT_PARTITIONING, False):
        return False
    if recorded_conf is not None and recorded_conf.get_or(config.UNION_OUTPUT_PARTITIONING, False) and recorded:
        return not unknown(recorded)
    return inferred_union_partitioning(union) is not None
