"""The plan versions of a query in order: what each re-plan followed and what it changed.

AQE re-plans after query stages finish; every version Spark posted is in the source. For each
version: the query stages it shows that the previous one did not (the stages created or
finished by then), and the changes from the previous version (the same plan diff the Plans
page marks).
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Optional

from aqe_core.model.plan import PlanNode
from aqe_core.model.plan_walk import SHUFFLE_READ_NAMES
from aqe_core.views.plan_diff import diff_plans

if TYPE_CHECKING:
    from aqe_core.views.query import QueryView

_STAGE = re.compile(r"^(ShuffleQueryStage|BroadcastQueryStage|TableCacheQueryStage|ResultQueryStage)\s+(\d+)")


@dataclass
class VersionStep:
    version: int  # 1-based
    new_stages: list[str] = field(default_factory=list)
    changes: list[str] = field(default_factory=list)

    def to_dict(self) -> dict[str, object]:
        return {"version": self.version, "new query stages": ", ".join(self.new_stages) or "-",
                "changed from the previous version": "; ".join(self.changes) or "-"}


def _stages(plan: Optional[PlanNode]) -> list[str]:
    out = []
    for n in plan.walk() if plan is not None else []:
        m = _STAGE.match(n.description or n.name)
        if m:
            out.append(f"{m.group(1).replace('QueryStage', '')} stage {m.group(2)}")
    return out


def plan_timeline(initial: Optional[PlanNode], versions: list[PlanNode]) -> list[VersionStep]:
    """One step per version (the first compared with the initial plan)."""
    steps: list[VersionStep] = []
    prev = initial
    for i, plan in enumerate(versions):
        seen = set(_stages(prev))
        step = VersionStep(i + 1, [s for s in dict.fromkeys(_stages(plan)) if s not in seen])
        if prev is not None:
            counts: dict[str, int] = {}
            for c in diff_plans(prev, plan):
                counts[c.kind] = counts.get(c.kind, 0) + 1
            step.changes = [f"{k}" + (f" x{n}" if n > 1 else "") for k, n in counts.items()]
        steps.append(step)
        prev = plan
    return steps


_READS = SHUFFLE_READ_NAMES  # (RAPIDS' GpuCustomShuffleReader too: aqe_core/model/engines.py)


def read_stage_of(node: PlanNode) -> Optional[int]:
    """The query stage an adaptive read reads (``ShuffleQueryStage N`` under it), or None."""
    if not node.name.startswith(_READS):
        return None
    stack = list(node.children)
    while stack:
        n = stack.pop()
        m = _STAGE.match(n.description or n.name)
        if m:
            return int(m.group(2))
        if not n.name.startswith(("Exchange", "ShuffleExchange")):
            stack.extend(n.children)
    return None


def read_versions(versions: list[PlanNode]) -> dict[int, int]:
    """Query stage id -> the plan version (1-based) where its adaptive read first appears: where
    AQE decided that read (a finished stage's read keeps its specs in later versions).

    >>> stage = PlanNode(None, "ShuffleQueryStage", "ShuffleQueryStage 3", [], [])
    >>> read = PlanNode(1, "AQEShuffleRead", "coalesced", [], [stage])
    >>> read_versions([PlanNode(0, "SortMergeJoin", "", [], []), PlanNode(0, "SortMergeJoin", "", [], [read])])
    {3: 2}
    """
    out: dict[int, int] = {}
    for i, plan in enumerate(versions):
        for n in plan.walk() if plan is not None else []:
            sid = read_stage_of(n)
            if sid is not None and sid not in out:
                out[sid] = i + 1
    return out


def _side_stages(side: PlanNode) -> list[tuple[int, bool]]:
    """The query stages a join side reads first on each path: (stage id, through an adaptive read)."""
    out, stack = [], [side]
    while stack:
        n = stack.pop()
        sid = read_stage_of(n)
        if sid is not None:
            out.append((sid, True))
            continue
        m = _STAGE.match(n.description or n.name)
        if m:
            out.append((int(m.group(2)), False))
            continue
        stack.extend(n.children)
    return out


def _joins_over(plan: PlanNode) -> list[tuple[str, frozenset[int], PlanNode]]:
    """Each join of ``plan``: its name, the query stages under it, the node."""
    return [(n.name, frozenset(sid for c in n.children for sid, _ in _side_stages(c)), n)
            for n in plan.walk() if "Join" in n.name]


def join_versions(view: "QueryView") -> dict[int, int]:
    """Index into ``view.join_traces`` -> the plan version (1-based) where AQE decided that join.
    A join whose strategy changed: the first version where it has its final strategy over the
    same query stages (a sort-merge join becomes a broadcast join when the small side's stage
    finishes). A join that kept its strategy: the version where every adaptive read under it is
    there (the statistics it was decided with). Joins with no query stage under them are left out.

    >>> stage = lambda k: PlanNode(None, "ShuffleQueryStage", f"ShuffleQueryStage {k}", [], [])
    >>> read = lambda k: PlanNode(None, "AQEShuffleRead", "coalesced", [], [stage(k)])
    >>> v1 = PlanNode(0, "SortMergeJoin", "", [], [stage(0), stage(1)])
    >>> v2 = PlanNode(0, "BroadcastHashJoin", "", [], [stage(0), stage(1)])
    >>> v3 = PlanNode(0, "BroadcastHashJoin", "", [], [read(0), stage(1)])
    >>> from types import SimpleNamespace as V
    >>> join_versions(V(plan_versions=[v1, v2, v3], join_traces=[[]], join_nodes=[0]))
    {0: 2}
    >>> join_versions(V(plan_versions=[v1, PlanNode(0, "SortMergeJoin", "", [], [read(0), read(1)])],
    ...                 join_traces=[[]], join_nodes=[0]))
    {0: 2}
    """
    versions = [p for p in view.plan_versions if p is not None]
    if not versions or not view.join_traces:
        return {}
    per_version = [_joins_over(p) for p in versions]
    order = _join_order(view, len(per_version[-1]))
    if order is None:
        return {}
    reads = read_versions(versions)
    out: dict[int, int] = {}
    for pos, (name, stages, node) in enumerate(per_version[-1]):
        if not stages:
            continue
        first = next(i + 1 for i, joins in enumerate(per_version) if any(n == name and s == stages for n, s, _ in joins))
        if first == 1:  # the strategy AQE started with: decided once the reads under it are there
            firsts = [reads.get(sid) for c in node.children for sid, through_read in _side_stages(c) if through_read]
            first = max([first, *(f for f in firsts if f is not None)])
        out[order[pos]] = first
    return out


def join_index(plan: PlanNode, node: PlanNode) -> Optional[int]:
    """``node``'s position among the join operators of ``plan`` (pre-order), None if not a join."""
    joins = [n for n in plan.walk() if "Join" in n.name]
    return next((i for i, n in enumerate(joins) if n is node), None)


def node_trace(view: "QueryView", plan: PlanNode, node: PlanNode, final: bool) -> Optional[tuple[str, list]]:
    """The decision trace of a clicked plan node: an adaptive read's (any version), or a join's
    (the final plan: its strategy is the one the traces explain). None for other nodes."""
    sid = read_stage_of(node)
    if sid is not None:
        sv = next((x for x in view.shuffles if x.stage_id == sid and x.trace), None)
        return (f"Decision trace of the read of stage {sid}", sv.trace) if sv is not None else None
    if not final or not view.join_traces or "Join" not in node.name:
        return None
    pos = join_index(plan, node)
    order = _join_order(view, sum(1 for n in plan.walk() if "Join" in n.name))
    if pos is None or order is None:
        return None
    return "Join decision trace", view.join_traces[order[pos]]


def _join_order(view: "QueryView", joins_in_plan: int) -> Optional[list[int]]:
    """Indexes into ``view.join_traces`` in the final plan's pre-order (their node ids), or None
    when the plan's joins and the traces do not pair up one to one."""
    order = sorted(range(len(view.join_traces)), key=lambda i: view.join_nodes[i] if i < len(view.join_nodes) else i)
    return order if len(order) == joins_in_plan else None
