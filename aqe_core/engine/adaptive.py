"""Did AQE apply to a query, and why (not)? Spark's ``InsertAdaptiveSparkPlan`` on a recorded plan.

:func:`adaptive_verdict` reads the facts ``InsertAdaptiveSparkPlan`` looks at
(:class:`aqe_core.rules.insert_adaptive_spark_plan.PlanFacts`) from a physical plan as a log or
a capture recorded it, asks the rule, and says whether the plan itself shows an
``AdaptiveSparkPlan`` node, so a disagreement between our rule and what Spark did is visible.

The recorded plan is the one *after* Spark's preparation rules: exchanges that
``EnsureRequirements`` inserted stand for the required distributions Spark saw before them,
which gives ``shouldApplyAQE`` the same answer.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any, Mapping, Optional

from aqe_core.config import AQEConf
from aqe_core.model.plan import PlanNode
from aqe_core.model.reasons import Reason
from aqe_core.rules.insert_adaptive_spark_plan import PlanFacts, adaptive_applies
from aqe_core.versions import SparkVersion, as_version

#: nodes that require a child distribution other than ``UnspecifiedDistribution`` (a final
#: aggregate is always in the plan beside its partial one; joins, windows, global sorts/limits)
_REQUIRING = ("HashAggregate", "SortAggregate", "ObjectHashAggregate", "SortMergeJoin", "ShuffledHashJoin",
              "BroadcastHashJoin", "BroadcastNestedLoopJoin", "Window", "GlobalLimit", "CoGroup",
              "FlatMapGroupsInPandas", "AggregateInPandas")
_SUBQUERY_NODES = ("Subquery", "SubqueryBroadcast", "ReusedSubquery", "SubqueryAdaptiveBroadcast")
_SUBQUERY_TEXT = re.compile(r"subquery#\d+", re.IGNORECASE)
_GLOBAL_SORT = re.compile(r"^Sort \[.*\], true")


@dataclass
class AdaptiveVerdict:
    """Our ``InsertAdaptiveSparkPlan`` answer for one query, beside what its plan shows."""

    applies: bool  # our rule: the plan is wrapped in AdaptiveSparkPlanExec
    reasons: list[Reason]
    plan_shows_adaptive: bool  # the recorded plan has an AdaptiveSparkPlan node
    facts: PlanFacts = field(default_factory=PlanFacts)

    @property
    def agrees(self) -> bool:
        return self.applies == self.plan_shows_adaptive

    def to_dict(self) -> dict[str, Any]:
        return {"applies": self.applies, "plan_shows_adaptive": self.plan_shows_adaptive, "agrees": self.agrees,
                "reasons": [r.to_dict() for r in self.reasons]}


def adaptive_verdict(plan: PlanNode, conf: "Mapping[str, Any] | AQEConf | None",
                     spark_version: "str | SparkVersion") -> AdaptiveVerdict:
    """Whether AQE applies to the query of ``plan`` (a recorded physical plan: a log's
    ``sparkPlanInfo`` or a capture's executed plan) under ``conf`` (Spark conf strings or an
    :class:`AQEConf`) in ``spark_version``, with the reasons, and whether ``plan`` shows it."""
    v = as_version(spark_version)
    shows = any(n.name == "AdaptiveSparkPlan" for n in plan.walk())
    facts = plan_facts(plan)
    applies, reasons = adaptive_applies(facts, conf, spark_version=v)
    return AdaptiveVerdict(applies, reasons, shows, facts)


def plan_facts(plan: PlanNode) -> PlanFacts:
    """The facts ``InsertAdaptiveSparkPlan.applyInternal`` / ``shouldApplyAQE`` test, read from
    a recorded plan: data-writing commands and ``AdaptiveSparkPlan`` wrappers are looked through
    (AQE wraps the query under a write command), a leaf ``Execute ...`` node is a command."""
    query = _query_of(plan)
    if query is None:
        return PlanFacts(is_command=True)
    nodes = list(query.walk())
    names = [n.name.split(" (")[0].split("(")[0] for n in nodes]
    return PlanFacts(
        is_command=False,
        has_exchange=any(n.endswith("Exchange") for n in names),
        requires_child_distribution=any(n in _REQUIRING for n in names)
        or any(_GLOBAL_SORT.match(n.description or "") for n in nodes),
        has_subquery_expression=any(n in _SUBQUERY_NODES for n in names)
        or any(_SUBQUERY_TEXT.search(n.description or "") for n in nodes),
        has_dynamic_pruning_subquery=any("dynamicpruning" in (n.description or "").lower() for n in nodes),
    )


def _query_of(plan: PlanNode) -> Optional[PlanNode]:
    """The query below write commands and AQE wrappers; None for a command without a query."""
    node = plan
    while True:
        if node.name == "AdaptiveSparkPlan" and node.children:
            node = node.children[0]
        elif _is_command(node) and node.children:  # DataWritingCommandExec: AQE wraps its child
            node = node.children[0]
        elif _is_command(node):
            return None
        else:
            return node


def _is_command(node: PlanNode) -> bool:
    """``ExecutedCommandExec`` / ``DataWritingCommandExec`` (``Execute <command>``) and 3.2+'s
    ``CommandResultExec``."""
    return node.name.startswith("Execute ") or node.name == "CommandResult"
