"""Numbers in a plan's boxes: the metrics that matter for each node, and its output rows.

Spark's SQL UI shows rows on every edge and min/med/max per adaptive read; a plan without them
makes a user hover node after node. Everything written here is Spark's own metric (from the
event log or the capture's plans); nodes without metrics get no numbers.
"""
from __future__ import annotations

import re
from typing import Any, Callable, Mapping, Optional

from aqe_core.figures.plan_hover import format_metric
from aqe_core.model.plan import PlanNode
from aqe_core.views.plan_stages import NodeTimes

_READS = ("AQEShuffleRead", "CustomShuffleReader")
_BUILD = re.compile(r"\b(BuildLeft|BuildRight)\b")


def _metrics(node: PlanNode) -> dict[str, Mapping[str, Any]]:
    return {str(m.get("name", "")).strip(): m for m in node.metrics}


def _short(m: Optional[Mapping[str, Any]]) -> Optional[str]:
    """A metric's total without its min/med/max (those stay in the hover and the details)."""
    text = format_metric(m) if m is not None else None
    return text.split(" (", 1)[0] if text else None


def node_numbers(node: PlanNode) -> list[str]:
    """Short texts for one node: an adaptive read's partitions (coalesced, skewed and split),
    an exchange's bytes written, a join's build side. Query stages carry their id in the label.

    >>> read = PlanNode(1, "AQEShuffleRead", "AQEShuffleRead coalesced and skewed", [
    ...     {"name": "number of partitions", "value": "4"}, {"name": "number of coalesced partitions", "value": "2"},
    ...     {"name": "number of skewed partitions", "value": "1"}, {"name": "number of skewed partition splits", "value": "4"}])
    >>> node_numbers(read)
    ['4 partitions: 2 coalesced, 1 skewed into 4']
    >>> node_numbers(PlanNode(2, "BroadcastHashJoin", "BroadcastHashJoin [k#1L], [k#2L], Inner, BuildRight, false"))
    ['BuildRight']
    """
    m = _metrics(node)
    if node.name in _READS:
        n, coalesced = _short(m.get("number of partitions")), _short(m.get("number of coalesced partitions"))
        skewed, splits = _short(m.get("number of skewed partitions")), _short(m.get("number of skewed partition splits"))
        parts = [f"{coalesced} coalesced" if coalesced and coalesced != "0" else "",
                 f"{skewed} skewed into {splits}" if skewed and skewed != "0" else ""]
        detail = ", ".join(x for x in parts if x)
        return [f"{n} partitions" + (f": {detail}" if detail else "")] if n else ([detail] if detail else [])
    if node.name.startswith("Exchange"):
        for key, label in (("shuffle bytes written", "written"), ("data size", "data")):
            if _short(m.get(key)):
                return [f"{label} {_short(m.get(key))}"]
        return []
    if node.name.startswith(("SortMergeJoin", "ShuffledHashJoin", "BroadcastHashJoin")):
        build = _BUILD.search(node.description or "")
        return [build.group(1)] if build else []
    return []


def output_rows(node: PlanNode) -> Optional[str]:
    """The node's ``number of output rows`` as Spark shows it, or None."""
    m = _metrics(node).get("number of output rows")
    return format_metric(m) if m is not None else None


def box_numbers(times: Optional[NodeTimes] = None) -> Callable[[PlanNode], list[str]]:
    """The numbers a plan box writes for a node, all Spark's own: :func:`node_numbers`, its
    stage's duration and task times (``times``), and its output rows."""

    def numbers(node: PlanNode) -> list[str]:
        lines = node_numbers(node)
        if times:
            lines = [*lines, *times.label(node)]
        rows = _short(_metrics(node).get("number of output rows"))
        return [*lines, f"{rows} rows"] if rows else lines

    return numbers
