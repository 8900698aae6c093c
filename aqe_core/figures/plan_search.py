"""Finding nodes in a plan and a node's details: the Plans page's search (hits ringed in the
map) and what a node's details hold (name, description, kind, codegen stage, metrics)."""
from __future__ import annotations

from typing import Any

from aqe_core.figures.plan_figure import _codegen_stage_of, format_metric, node_kind
from aqe_core.figures.plan_paths import CODEGEN_PREFIX, INPUT_ADAPTER, iter_paths, node_at, short_label
from aqe_core.model.plan import PlanNode

__all__ = ["node_details", "plan_search"]


def plan_search(plan: PlanNode, text: str, *, fold_codegen: bool = True) -> list[str]:
    """Path ids of the nodes whose name or description contains ``text`` (case-insensitive),
    in plan order. With ``fold_codegen`` a hit on a folded wrapper (``WholeStageCodegen``,
    ``InputAdapter``) is reported as the displayed node that stands for it."""
    needle = (text or "").strip().casefold()
    if not needle or plan is None:
        return []
    hits: list[str] = []
    seen: set[str] = set()
    for path, node in iter_paths(plan):
        if needle in (node.name or "").casefold() or needle in (node.description or "").casefold():
            p = path
            if fold_codegen:
                p = _display_of(node, path)
            if p not in seen:
                seen.add(p)
                hits.append(p)
    return hits


def _display_of(node: PlanNode, path: str) -> str:
    while ((node.name or "").startswith(CODEGEN_PREFIX) or node.name == INPUT_ADAPTER) and len(node.children) == 1:
        node = node.children[0]
        path += ".0"
    return path


def node_details(plan: PlanNode, path: str) -> dict[str, Any] | None:
    """Everything a details panel shows for one node, or None for an unknown path:
    ``path, id, name, description, kind, label, codegen_stage, parent, children,
    metrics`` (rows ``{name, type, value, total, min, med, max, accumulator_id}``; ``value`` is
    the formatted text or ``""``)."""
    node = node_at(plan, path) if plan is not None and isinstance(path, str) else None
    if node is None:
        return None
    rows = []
    for m in node.metrics:
        rows.append({
            "name": str(m.get("name", "")), "type": str(m.get("type", "")), "value": format_metric(m) or "",
            "total": m.get("total"), "min": m.get("min"), "med": m.get("med"), "max": m.get("max"),
            "accumulator_id": m.get("accumulator_id"),
        })
    return {
        "path": path,
        "id": node.id,
        "name": node.name,
        "description": node.description,
        "kind": node_kind(node),
        "label": short_label(node),
        "codegen_stage": _codegen_stage_of(plan, path),
        "parent": path.rsplit(".", 1)[0] if "." in path else None,
        "children": [f"{path}.{i}" for i in range(len(node.children))],
        "metrics": rows,
    }
