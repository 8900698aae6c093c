"""Find a recorded shuffle's exchange in a re-planned query and a DataFrame of its input.

Used by :mod:`aqe_core.live.hot_keys`. The query is planned again (``session.sql(text)``, not
run): ``AdaptiveSparkPlanExec.executedPlan`` is, before the query runs, AQE's *initial* plan
(``currentPhysicalPlan = initialPlan``: the input plan after ``EnsureRequirements``), so its
``ShuffleExchangeExec`` nodes are the exchanges Spark planned, each with its
``HashPartitioning(expressions, numPartitions)``.

Matching a capture's shuffle to a re-planned exchange: the capture's final plan names the stage's
exchange (``Exchange hashpartitioning(k#15L, 40), ENSURE_REQUIREMENTS, [plan_id=82]``); the same
text without its plan id is one exchange of the capture's *initial* plan, whose place among the
initial plan's exchanges (pre-order) is the place of the re-planned exchange. Every match is
checked: the two exchanges' texts with expression ids and plan ids removed must be equal (same
keys, same order, same partition count). Without a recorded initial plan, a text that matches one
re-planned exchange alone is taken.

The exchange's input: the physical child's ``logicalLink`` (the logical operator it was planned
from), turned into a DataFrame with ``Dataset.ofRows`` (``org.apache.spark.sql.classic.Dataset``
in 4.x), used only when that logical operator outputs exactly the child's attributes (same
expression ids), so the rows and the key columns are the rows the exchange hashed. A partial
aggregate (the map side of an aggregation) is stepped over: its input rows are counted, the
rows the aggregation groups (the shuffle itself carries about one row per key and map task).
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any, Optional

from aqe_core.model.capture import QueryCapture

_PLAN_ID = re.compile(r",?\s*\[(?:plan_id=\d+|id=#\d+)\]")
_EXPR_ID = re.compile(r"#\d+L?")
#: names Spark's optimizer gives the expressions it pulls out into a Project
_MADE_UP = ("_groupingexpression", "_nondeterministic", "_common_expr")
_AGGREGATES = ("HashAggregateExec", "ObjectHashAggregateExec", "SortAggregateExec")


class PlanMatchError(RuntimeError):
    """The recorded exchange could not be found (or trusted) in the re-planned query."""


def without_plan_id(text: str) -> str:
    return _PLAN_ID.sub("", text).strip()


def without_ids(text: str) -> str:
    """An exchange's text with plan ids and expression ids removed (``k#15L`` -> ``k``)."""
    return _EXPR_ID.sub("", without_plan_id(text))


@dataclass
class SideInput:
    """One exchange of the re-planned query and a DataFrame over its input."""

    exchange: Any  # ShuffleExchangeExec (JVM)
    partitioning: Any  # HashPartitioning (JVM)
    text: str  # the exchange's text, ids removed
    frame: Any  # JVM Dataset[Row] of the rows the exchange hashes (or the aggregation's input)
    input_kind: str  # "join side" | "aggregation input" | "repartition input"
    key_names: list[str]
    size_in_bytes: Optional[int]  # the optimizer's estimate of the input (for sampling)


def jvm_exchanges(df: Any) -> list[Any]:
    """The ``ShuffleExchangeExec`` nodes of ``df``'s initial physical plan, in pre-order."""
    plan = df._jdf.queryExecution().executedPlan()
    if plan.getClass().getSimpleName() == "AdaptiveSparkPlanExec":
        plan = plan.executedPlan()  # not run yet: AQE's initial plan
    out: list[Any] = []
    stack = [plan]
    while stack:
        node = stack.pop()
        if node.getClass().getSimpleName() == "ShuffleExchangeExec":
            out.append(node)
        kids = node.children()
        stack.extend(reversed([kids.apply(i) for i in range(kids.size())]))
    return out


def recorded_exchange_text(q: QueryCapture, shuffle_id: int) -> tuple[str, Optional[int]]:
    """The text of the exchange that wrote ``shuffle_id`` (from the final plan) and its
    place among the exchanges of the recorded initial plan (None when that plan is missing or
    does not hold it)."""
    stage = next((s for s in q.stages if s.shuffle_id == shuffle_id and s.kind == "shuffle"), None)
    if stage is None or q.final_plan is None:
        raise PlanMatchError(f"shuffle {shuffle_id} has no query stage in the recorded final plan")
    nodes = q.final_plan.nodes()
    below = nodes[stage.node].children if stage.node < len(nodes) else []
    exch = next((n for n in below if "Exchange" in n.name), None)
    if exch is None:
        raise PlanMatchError(f"the stage of shuffle {shuffle_id} holds no exchange in the recorded plan")
    text = f"{exch.name} {exch.description}" if not exch.description.startswith(exch.name) else exch.description
    rank = None
    if q.initial_plan is not None:
        initial = [n for n in q.initial_plan.nodes() if n.name.endswith("Exchange") and "Broadcast" not in n.name]
        target = without_plan_id(text)
        hits = [i for i, n in enumerate(initial) if without_plan_id(n.description) == target]
        rank = hits[0] if len(hits) == 1 else None
    return text, rank


def match_exchange(exchanges: list[Any], text: str, rank: Optional[int]) -> Any:
    """The re-planned exchange that is the recorded one (see the module docstring)."""
    want = without_ids(text)
    texts = [without_ids(str(e.simpleString(25))) for e in exchanges]
    if rank is not None and rank < len(exchanges):
        if texts[rank] == want:
            return exchanges[rank]
        raise PlanMatchError(f"the re-planned query's exchange #{rank} is {texts[rank]!r}, the recorded one {want!r}:"
                             " the query plans differently now")
    hits = [e for e, t in zip(exchanges, texts) if t == want]
    if len(hits) != 1:
        raise PlanMatchError(f"{len(hits)} exchanges of the re-planned query read {want!r}: cannot tell which"
                             " one the recorded shuffle was")
    return hits[0]


def _attr_ids(seq: Any) -> list[str]:
    return [str(seq.apply(i).exprId().id()) for i in range(seq.size())]


def _references(partitioning: Any) -> set[str]:
    exprs = partitioning.expressions()
    out: set[str] = set()
    for i in range(exprs.size()):
        refs = exprs.apply(i).references().toSeq()
        out.update(_attr_ids(refs))
    return out


def _logical_for(node: Any) -> Optional[Any]:
    """The logical operator ``node`` was planned from, when it outputs exactly ``node``'s attributes."""
    link = node.logicalLink()
    if not link.isDefined():
        return None
    logical = link.get()
    return logical if _attr_ids(logical.output()) == _attr_ids(node.output()) else None


def _is_partial_aggregate(node: Any) -> bool:
    """The map side of an aggregation: ``requiredChildDistributionExpressions`` is None for the
    partial aggregate below the exchange (``AggUtils.planAggregateWithoutDistinct``)."""
    if node.getClass().getSimpleName() not in _AGGREGATES:
        return False
    try:
        return bool(node.requiredChildDistributionExpressions().isEmpty())
    except Exception:  # noqa: BLE001 - py4j: the field differs between releases
        return "partial_" in str(node.simpleString(25))


def side_input(spark: Any, exchange: Any) -> SideInput:
    """A DataFrame (JVM) of the rows ``exchange`` hashes, or of the aggregation's input rows."""
    part = exchange.outputPartitioning()
    if part.getClass().getSimpleName() != "HashPartitioning":
        raise PlanMatchError(f"the exchange is {part.getClass().getSimpleName()}, not hash partitioned: no key"
                             " decides its reducers")
    child = exchange.child()
    kind = "join side"
    if _is_partial_aggregate(child):
        child, kind = child.child(), "aggregation input"
    elif str(exchange.shuffleOrigin()).startswith("REPARTITION") or str(exchange.shuffleOrigin()).startswith("REBALANCE"):
        kind = "repartition input"
    logical = _logical_for(child)
    if logical is None:
        raise PlanMatchError(f"the exchange's input ({child.nodeName()}) has no logical plan with the same columns:"
                             " its rows cannot be counted exactly")
    if not _references(part) <= set(_attr_ids(logical.output())):
        raise PlanMatchError("the exchange's keys are computed inside the operator below it (a grouping"
                             " expression): its input does not hold them")
    frame = _dataset_of_rows(spark, logical)
    names = _key_names(part, _made_up_names(child))
    size = None
    try:
        size = int(str(logical.stats().sizeInBytes().toString()))
    except Exception:  # noqa: BLE001 - py4j: statistics are best effort
        pass
    return SideInput(exchange, part, without_ids(str(exchange.simpleString(25))), frame, kind, names, size)


def _made_up_names(node: Any) -> dict[str, str]:
    """Expression id -> the expression behind a name Spark made up (``_groupingexpression``:
    ``PullOutGroupingExpressions`` moves a grouping expression into a ``Project`` below the
    aggregate), from the ``ProjectExec``s down the single-child chain below the exchange."""
    out: dict[str, str] = {}
    while node is not None:
        if node.getClass().getSimpleName() == "ProjectExec":
            items = node.projectList()
            for i in range(items.size()):
                e = items.apply(i)
                if e.getClass().getSimpleName() == "Alias" and str(e.name()).startswith(_MADE_UP):
                    out[str(e.exprId().id())] = _EXPR_ID.sub("", str(e.child().toString()))
        kids = node.children()
        node = kids.apply(0) if kids.size() == 1 else None
    return out


def _key_names(partitioning: Any, made_up: dict[str, str]) -> list[str]:
    """The exchange's keys as people name them (ids dropped, made-up names replaced)."""
    exprs = partitioning.expressions()
    out = []
    for i in range(exprs.size()):
        e = exprs.apply(i)
        known = made_up.get(str(e.exprId().id())) if e.getClass().getSimpleName() == "AttributeReference" else None
        out.append(known or _EXPR_ID.sub("", str(e.toString())))
    return out


def _dataset_of_rows(spark: Any, logical: Any) -> Any:
    jvm = spark._jvm
    try:  # Spark 4.x: the classic (JVM) Dataset
        return jvm.org.apache.spark.sql.classic.Dataset.ofRows(spark._jsparkSession, logical)
    except Exception:  # noqa: BLE001 - py4j: 3.x has it on org.apache.spark.sql.Dataset
        return jvm.org.apache.spark.sql.Dataset.ofRows(spark._jsparkSession, logical)


def column(spark: Any, expression: Any) -> Any:
    """A JVM ``Column`` over a resolved Catalyst expression (4.x: through ``ExpressionColumnNode``)."""
    jvm = spark._jvm
    try:
        node = jvm.org.apache.spark.sql.classic.ExpressionColumnNode.apply(expression)
        return jvm.org.apache.spark.sql.Column(node)
    except Exception:  # noqa: BLE001 - py4j: 3.x builds a Column from an Expression directly
        return jvm.org.apache.spark.sql.Column(expression)


def reducer_and_keys(spark: Any, side: SideInput) -> Any:
    """A PySpark DataFrame ``(__reducer, __k0, __k1, ...)`` over the side's rows: ``__reducer``
    is ``side.partitioning.partitionIdExpression`` itself, ``pmod(hash(keys), n)`` exactly as
    ``ShuffleExchangeExec.prepareShuffleDependency`` evaluates it for every row."""
    from pyspark.sql import DataFrame

    part = side.partitioning
    exprs = part.expressions()
    cols = [column(spark, part.partitionIdExpression())] + [column(spark, exprs.apply(i)) for i in range(exprs.size())]
    jdf = side.frame.select(spark._jvm.PythonUtils.toSeq(cols))
    names = ["__reducer"] + [f"__k{i}" for i in range(exprs.size())]
    return DataFrame(jdf, spark).toDF(*names)
