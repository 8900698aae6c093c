"""The plan versions of a query in order: what each re-plan followed and what it changed.

AQE re-plans after query stages finish; every version Spark posted is in the source. For each
version: the query stages it shows that the previous one did not (the stages created or
finished by then), and the changes from the previous version (the same plan diff the Plans
page marks).
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Optional

from aqe_core.model.plan import PlanNode
from aqe_core.views.plan_diff import diff_plans

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
