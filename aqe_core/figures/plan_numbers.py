"""Numbers in a plan's boxes: the metrics that matter for each node, and its output rows.

Spark's SQL UI shows rows on every edge and min/med/max per adaptive read; a plan without them
makes a user hover node after node. Everything written here is Spark's own metric (from the
event log or the capture's plans); nodes without metrics get no numbers.
"""
from __future__ import annotations

import re
from typing import Any, Callable, Mapping, Optional

from aqe_core.figures.box_text import count_text, rows_text
from aqe_core.figures.plan_hover import format_metric
from aqe_core.model.plan import PlanNode
from aqe_core.model.plan_walk import exchange_below, partitioning_count
from aqe_core.views.plan_stages import NodeTimes

_READS = ("AQEShuffleRead", "CustomShuffleReader")


def _metrics(node: PlanNode) -> dict[str, Mapping[str, Any]]:
    return {str(m.get("name", "")).strip(): m for m in node.metrics}


def _total(m: Optional[Mapping[str, Any]]) -> Optional[float]:
    """A count metric's total: its number, else its text read as one ("1,826"), else None."""
    if m is None or str(m.get("type") or "sum") != "sum":
        return None
    for v in (m.get("total"), m.get("value")):
        if isinstance(v, (int, float)) and not isinstance(v, bool):
            return float(v)
        if isinstance(v, str) and re.fullmatch(r"\d[\d,]*", v.strip()):
            return float(v.strip().replace(",", ""))
    return None


def _short(m: Optional[Mapping[str, Any]]) -> Optional[str]:
    """A metric's total as a box writes it: a count abbreviated whole (``28.7 M``), a size or a
    time as the hover writes it, without min/med/max (those stay in the hover and the details)."""
    total = _total(m)
    if total is not None:
        return count_text(total)
    text = format_metric(m) if m is not None else None
    return text.split(" (", 1)[0] if text else None


def node_numbers(node: PlanNode) -> list[str]:
    """Short texts for one node: an adaptive read's partitions (coalesced, skewed and split),
    an exchange's bytes written. Query stages carry their id in the label, and a join its build
    side (:func:`~aqe_core.figures.plan_blocks.operator_text`): each fact is written once.

    >>> read = PlanNode(1, "AQEShuffleRead", "AQEShuffleRead coalesced and skewed", [
    ...     {"name": "number of partitions", "value": "4"}, {"name": "number of coalesced partitions", "value": "2"},
    ...     {"name": "number of skewed partitions", "value": "1"}, {"name": "number of skewed partition splits", "value": "4"}])
    >>> node_numbers(read)  # no exchange below: the shuffle's own count is not known
    ['? -> 4 (2 coalesced, 1 skewed into 4)']
    >>> ex = PlanNode(3, "Exchange", "Exchange hashpartitioning(k#1L, 200), ENSURE_REQUIREMENTS")
    >>> node_numbers(PlanNode(1, "AQEShuffleRead", "AQEShuffleRead coalesced", [
    ...     {"name": "number of partitions", "value": "17"}, {"name": "number of coalesced partitions", "value": "17"}],
    ...     [PlanNode(2, "ShuffleQueryStage", "ShuffleQueryStage 0", [], [ex])]))
    ['200 -> 17 (coalesced)']
    >>> node_numbers(PlanNode(2, "BroadcastHashJoin", "BroadcastHashJoin [k#1L], [k#2L], Inner, BuildRight, false"))
    []
    """
    m = _metrics(node)
    if node.name in _READS:
        return [_read_numbers(node, m)] if m else []
    if node.name.startswith("Exchange"):
        for key, label in (("shuffle bytes written", "written"), ("data size", "data")):
            if _short(m.get(key)):
                return [f"{label} {_short(m.get(key))}"]
        return []
    return []


def _read_numbers(node: PlanNode, m: Mapping[str, Mapping[str, Any]]) -> str:
    """``200 -> 17 (coalesced)``: the shuffle's partitions (its exchange's ``number of
    partitions``, else its partitioning's count) and the read's, with what the read did."""
    n, coalesced = _short(m.get("number of partitions")), _short(m.get("number of coalesced partitions"))
    skewed, splits = _short(m.get("number of skewed partitions")), _short(m.get("number of skewed partition splits"))
    is_skewed = bool(skewed and skewed != "0")
    parts = [("coalesced" if coalesced == n and not is_skewed else f"{coalesced} coalesced")
             if coalesced and coalesced != "0" else "",
             f"{skewed} skewed into {splits}" if is_skewed else "",
             "local" if "local" in (node.description or "").split() else ""]
    detail = ", ".join(x for x in parts if x)
    ex = exchange_below(node)
    before = (_short(_metrics(ex).get("number of partitions")) or _count_text(partitioning_count(ex.description or ""))
              if ex is not None else None)
    head = f"{before or '?'} -> {n or '?'}"
    return head + (f" ({detail})" if detail else "")


def _count_text(n: Optional[int]) -> Optional[str]:
    return str(n) if n is not None else None


def output_rows(node: PlanNode) -> Optional[str]:
    """The node's ``number of output rows`` as Spark shows it, or None."""
    m = _metrics(node).get("number of output rows")
    return format_metric(m) if m is not None else None


def box_numbers(times: Optional[NodeTimes] = None) -> Callable[[PlanNode], list[str]]:
    """The numbers a plan box writes for a node, all Spark's own: :func:`node_numbers`, its
    stage's duration and task times (``times``), and its output rows, abbreviated whole.

    >>> box_numbers()(PlanNode(1, "SortMergeJoin", "SortMergeJoin [k#1], [k#2], LeftOuter", [
    ...     {"name": "number of output rows", "type": "sum", "value": "28,719,640", "total": 28719640}]))
    ['28.7 M rows']
    """

    def numbers(node: PlanNode) -> list[str]:
        lines = node_numbers(node)
        if times:
            lines = [*lines, *times.label(node)]
        rows = _total(_metrics(node).get("number of output rows"))
        return [*lines, rows_text(rows)] if rows is not None else lines

    return numbers
