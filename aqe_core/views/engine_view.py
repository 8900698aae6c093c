"""Which engine ran a query, and the engine's own numbers for its shuffles, for the views.

The engine is read from what the log shows: the plans' node names (``PhotonShuffleExchangeSink``,
``ColumnarExchange``: :func:`aqe_core.model.engines.engine_of_names`), else the log's Spark
properties (``spark.plugins``, Databricks' cluster tags). The engine's numbers (Photon's
auto-optimized shuffle: "aos old / new / intended number of partitions"; the sink's "number of
partitions") are shown as the engine's metric: they are never replayed as Spark's rules, never
exact.
"""
from __future__ import annotations

from typing import Any, Mapping, Optional

from aqe_core.model.engines import Engine, engine_of_names, engine_of_properties, operator_of
from aqe_core.model.plan import PlanNode
from aqe_core.model.plan_walk import SHUFFLE_READ_NAMES, exchange_below, exchange_parts

__all__ = ["COUNT_NOT_IN_LOG", "counts_text", "engine_label", "engine_numbers", "engine_of_plans", "numbers_sentence"]

#: what a partition count the log does not hold is written as (never "?")
COUNT_NOT_IN_LOG = "not in the log"


def engine_of_plans(plans: list[Optional[PlanNode]], properties: Mapping[str, str]) -> Optional[Engine]:
    """The engine whose operators the plans show (most). The properties name an engine only for
    a query without a plan: an engine that is on but shows no operator ran none of the plan
    (Photon and the native engines fall back to Spark's operators where they cannot run one)."""
    names = [n.name for p in plans if p is not None for n in p.walk()]
    return engine_of_names(names) if names else engine_of_properties(properties)


def engine_label(engine: Optional[Engine]) -> str:
    return engine.label if engine is not None else ""


def _value(m: Mapping[str, Any]) -> Optional[int]:
    v = m.get("total", m.get("value"))
    if isinstance(v, bool):
        return None
    if isinstance(v, (int, float)):
        return int(v)
    if isinstance(v, str) and v.replace(",", "").strip().isdigit():
        return int(v.replace(",", "").strip())
    return None


def engine_numbers(plan: Optional[PlanNode], node_id: Optional[int]) -> list[dict[str, Any]]:
    """The engine's own metrics (``decided_by == "engine"`` in the registry) on the exchange a
    shuffle view stands for (the node ``node_id``: an adaptive read, or the exchange itself) and
    on the other nodes of that exchange, with the values the log holds (None: not in the log)."""
    if plan is None or node_id is None:
        return []
    node = next((n for n in plan.walk() if n.id == node_id), None)
    if node is None:
        return []
    ex = exchange_below(node) if node.name in SHUFFLE_READ_NAMES else node
    if ex is None:
        return []
    nodes = [*exchange_parts(plan).get(id(ex), ()), ex]
    out: list[dict[str, Any]] = []
    for n in nodes:
        hit = operator_of(n.name or "")
        if hit is None:
            continue
        engine = hit[0]
        for em in engine.metrics:
            if em.on != hit[1].name or em.decided_by != "engine":
                continue
            m = n.metric(em.name)
            if m is None:
                continue
            out.append({"engine": engine.label, "metric": em.name, "meaning": em.meaning, "value": _value(m),
                        "decided_by": "engine", "node": n.name})
    return out


def counts_text(before: Optional[int], after: Optional[int], numbers: Optional[list[dict[str, Any]]] = None) -> str:
    """A shuffle's partition counts, a count the log lacks said so, the engine's own numbers after.

    >>> counts_text(200, 17)
    '200 -> 17 partitions'
    >>> counts_text(None, None)
    'partition counts not in the log'
    >>> counts_text(128, None)
    '128 -> (not in the log) partitions'
    """
    if before is None and after is None:
        text = f"partition counts {COUNT_NOT_IN_LOG}"
    else:
        text = (f"{before if before is not None else f'({COUNT_NOT_IN_LOG})'} -> "
                f"{after if after is not None else f'({COUNT_NOT_IN_LOG})'} partitions")
    extra = numbers_sentence(numbers or [])
    return f"{text}; {extra}" if extra else text


def numbers_sentence(numbers: list[dict[str, Any]]) -> str:
    """One line for the engine's numbers, each labelled as the engine's metric.

    >>> numbers_sentence([{"engine": "Databricks Photon", "metric": "aos new number of partitions",
    ...                    "value": 38, "meaning": ""}, {"engine": "Databricks Photon",
    ...                    "metric": "aos old number of partitions", "value": None, "meaning": ""}])
    "Databricks Photon's metrics (the engine's own, not Spark's rules): aos new number of partitions 38; aos old number of partitions: no value in the log"
    """
    if not numbers:
        return ""
    engine = numbers[0]["engine"]
    parts = [f"{n['metric']} {n['value']}" if n["value"] is not None else f"{n['metric']}: no value in the log"
             for n in numbers]
    return f"{engine}'s metrics (the engine's own, not Spark's rules): " + "; ".join(parts)
