"""The size of a join side as AQE saw it when it re-planned the join.

Spark re-plans from the *logical* plan with each materialized stage replaced by a
``LogicalQueryStage``; we only have the physical plan, so this walk maps one back to the other:

- a shuffle query stage (under local sorts, codegen wrappers and adaptive reads) is a
  ``LogicalQueryStage`` of its own: its runtime statistics, and the only shape
  ``DemoteBroadcastHashJoin`` / ``DynamicJoinSelection`` put hints on (a *direct* stage side);
- a final aggregate right above a shuffle stage whose exchange holds the partial aggregate is
  one ``LogicalQueryStage`` too (Spark links the stage to the logical ``Aggregate``): the stage's
  runtime statistics, but not direct;
- filters, projects, unions, global sorts and joins above those are logical operators:
  :mod:`aqe_core.rules.size_in_bytes_only_stats_plan_visitor` gives their size, without the
  runtime flag.

Anything else (a scan without an exchange, a window, an operator whose row width the capture
did not record) leaves the size unknown, with the operator named.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Optional

from aqe_core.engine.stage_plan import READS, WRAPPERS, Context
from aqe_core.rules import size_in_bytes_only_stats_plan_visitor as visitor
from aqe_core.rules.size_in_bytes_only_stats_plan_visitor import SizeStats

AGGREGATES = ("HashAggregate", "ObjectHashAggregate", "SortAggregate")
JOINS = ("SortMergeJoin", "ShuffledHashJoin", "BroadcastHashJoin", "BroadcastNestedLoopJoin", "CartesianProduct")


@dataclass
class JoinSide:
    """One side of a join: its statistics (None when unknown) and how they are known."""

    stats: Optional[SizeStats]
    how: str  # words for sentences: "shuffle stage 3", "the aggregate over shuffle stage 1", ...
    direct_stage: Optional[int] = None  # plan index of the shuffle stage when the side is one
    broadcast_stage: bool = False  # the side is a broadcast query stage (a planned broadcast)
    unknown: Optional[str] = None  # why the size is unknown
    stage_id: Optional[int] = None  # the query stage whose runtime statistics are the side's size

    @property
    def size(self) -> Optional[int]:
        return None if self.stats is None else self.stats.size

    @property
    def is_runtime(self) -> bool:
        return bool(self.stats and self.stats.is_runtime)


def _skip(ctx: Context, i: int) -> int:
    """Past codegen wrappers, adaptive reads and the local sorts EnsureRequirements adds."""
    p = ctx.plan
    while p.kids[i]:
        name = p.name(i)
        if name.startswith(WRAPPERS) or name in READS or (name == "Sort" and not _global_sort(p.nodes[i].description)):
            i = p.kids[i][0]
            continue
        break
    return i


def _global_sort(desc: str) -> bool:
    """``Sort [...], true, 0``: an ORDER BY (a logical Sort), not EnsureRequirements' local sort."""
    tail = desc.rsplit("]", 1)[-1]
    return tail.strip().startswith(", true")


def _stage_label(ctx: Context, i: int) -> str:
    st = ctx.plan.stage_by_node.get(i)
    return f"shuffle stage {st.stage_id}" if st is not None and st.stage_id >= 0 else "a shuffle stage"


def _stage_side(ctx: Context, i: int, how: str, direct: bool) -> JoinSide:
    st = ctx.plan.stage_by_node.get(i)
    if st is None or st.size_in_bytes is None:
        return JoinSide(None, how, i if direct else None, unknown=f"{how} has no runtime statistics in the capture")
    return JoinSide(visitor.logical_query_stage(st.size_in_bytes, ctx.v), how, i if direct else None,
                    stage_id=st.stage_id)


def _holds_partial_aggregate(ctx: Context, stage: int) -> bool:
    """Is the stage's exchange over an aggregate (the partial half of the one above the stage)?"""
    p = ctx.plan
    kids = p.kids[stage]
    if not kids or not p.kids[kids[0]]:
        return False
    j = p.kids[kids[0]][0]
    while p.name(j).startswith(WRAPPERS) and p.kids[j]:
        j = p.kids[j][0]
    return p.name(j).startswith(AGGREGATES)


def join_side(ctx: Context, i: int, *, through_broadcast: bool = True) -> JoinSide:
    """The statistics AQE re-planned the join child at plan index ``i`` with.
    ``through_broadcast``: a broadcast stage Spark made at run time is looked through to the
    side it broadcast (the side's shape when the join was re-planned)."""
    p = ctx.plan
    i = _skip(ctx, i)
    name = p.name(i)
    if name == "ShuffleQueryStage":
        return _stage_side(ctx, i, _stage_label(ctx, i), True)
    if name == "BroadcastQueryStage":
        inner = _broadcast_child(ctx, i)
        if through_broadcast and inner is not None:
            return join_side(ctx, inner, through_broadcast=False)
        st = ctx.plan.stage_by_node.get(i)
        return JoinSide(None if st is None or st.size_in_bytes is None else SizeStats(st.size_in_bytes),
                        "a broadcast stage", broadcast_stage=True)
    if name.startswith(AGGREGATES) and p.kids[i]:
        below = _skip(ctx, p.kids[i][0])
        if p.name(below) == "ShuffleQueryStage" and _holds_partial_aggregate(ctx, below):
            return _stage_side(ctx, below, f"{_stage_label(ctx, below)} below the aggregate", False)
        if p.name(below).startswith(AGGREGATES) and p.kids[below]:
            return _aggregate(ctx, i, below)
        return JoinSide(None, name, unknown=f"an aggregate ({name}) not over a shuffle stage")
    if name in ("Filter", "Project", "Window", "Generate", "Expand", "Sort") and p.kids[i]:
        return _unary(ctx, i, name)
    if name == "Union" and p.kids[i]:
        return _combine(ctx, i, "union", visitor.union)
    if name.startswith(JOINS) and len(p.kids[i]) == 2:
        jt = str(p.info[i].get("join_type", "Inner"))
        return _combine(ctx, i, f"{jt} join", lambda st: visitor.join(jt, st[0], st[1]))
    return JoinSide(None, name, unknown=f"its size comes from {name}, which is not a query stage")


def _unary(ctx: Context, i: int, name: str) -> JoinSide:
    child = join_side(ctx, ctx.plan.kids[i][0], through_broadcast=False)
    how = f"{name} over {child.how}"
    if child.stats is None:
        return JoinSide(None, how, unknown=child.unknown)
    if name in ("Filter", "Sort", "Generate"):  # visitFilter / default: the child's size passes
        return JoinSide(visitor.unary_node(child.stats, 1, 1), how)
    if name == "Expand":  # visitExpand multiplies by the projection count, which is not recorded
        return JoinSide(None, how, unknown="an Expand's projection count is not recorded")
    rows = ctx.plan.info[i].get("row_sizes")
    if not (isinstance(rows, list) and len(rows) == 2 and all(isinstance(r, int) and r > 0 for r in rows)):
        return JoinSide(None, how, unknown=f"the capture has no row widths for {name} (recorded since issue 10)")
    return JoinSide(visitor.unary_node(child.stats, rows[0], rows[1]), how)


def _aggregate(ctx: Context, final: int, partial: int) -> JoinSide:
    """A logical ``Aggregate`` planned as final over partial with no exchange between (its input
    was already partitioned): ``visitAggregate`` over the partial's input."""
    p = ctx.plan
    child = join_side(ctx, p.kids[partial][0], through_broadcast=False)
    how = f"an aggregate over {child.how}"
    out, inp = p.info[final].get("row_sizes"), p.info[partial].get("row_sizes")
    if child.stats is None or not (isinstance(out, list) and isinstance(inp, list) and len(out) == len(inp) == 2):
        return JoinSide(None, how, unknown=child.unknown or "the capture has no row widths for the aggregate")
    if "keys=[]" in p.nodes[final].description:  # no grouping: one row (getOutputSize)
        return JoinSide(SizeStats(max(1, int(out[0]))), how)
    return JoinSide(visitor.unary_node(child.stats, int(out[0]), int(inp[1])), how)


def _combine(ctx: Context, i: int, what: str, fn) -> JoinSide:
    sides = [join_side(ctx, k, through_broadcast=False) for k in ctx.plan.kids[i]]
    how = f"{what} of " + " and ".join(s.how for s in sides)
    missing = next((s for s in sides if s.stats is None), None)
    if missing is not None:
        return JoinSide(None, how, unknown=missing.unknown)
    return JoinSide(fn([s.stats for s in sides]), how)


def _broadcast_child(ctx: Context, bq: int) -> Optional[int]:
    """BroadcastQueryStage -> [ReusedExchange ->] BroadcastExchange -> its child."""
    p = ctx.plan
    if not p.kids[bq]:
        return None
    i = p.kids[bq][0]
    if p.name(i) == "ReusedExchange" and p.kids[i]:
        i = p.kids[i][0]
    if not p.name(i).startswith("BroadcastExchange") or not p.kids[i]:
        return None
    return p.kids[i][0]


def earlier_side(ctx: Context, side: JoinSide) -> Optional[tuple[int, JoinSide]]:
    """A direct stage side whose exchange sits over other query stages was created only after
    those finished; until then AQE re-planned the join with the exchange's input as the side
    (not a runtime statistic). Returns (plan index of that input, its side), or None."""
    if side.direct_stage is None:
        return None
    p = ctx.plan
    kids = p.kids[side.direct_stage]
    if not kids or not p.name(kids[0]).startswith("Exchange") or not p.kids[kids[0]]:
        return None
    inner = p.kids[kids[0]][0]
    while p.name(inner).startswith(WRAPPERS) and p.kids[inner]:
        inner = p.kids[inner][0]
    if not any(p.name(k).endswith("QueryStage") for k in _descendants(p, inner)):
        return None
    return inner, join_side(ctx, inner, through_broadcast=False)


def _descendants(p, i: int):
    stack = [i]
    while stack:
        n = stack.pop()
        yield n
        stack.extend(p.kids[n])


def needs_new_shuffle(ctx: Context, i: int) -> bool:
    """Would a sort-merge join need a new shuffle above this (broadcast) side? A union without a
    known output partitioning (3.x; 4.x keeps its children's) does not give the join keys'
    clustering, so Spark adds an exchange: a query stage the capture does not have."""
    p = ctx.plan
    i = _skip(ctx, i)
    if p.name(i) == "BroadcastQueryStage":
        inner = _broadcast_child(ctx, i)
        if inner is None:
            return False
        i = _skip(ctx, inner)
    return p.name(i) == "Union" and str(p.info[i].get("partitioning", "")).startswith("UnknownPartitioning")


def side_bytes(ctx: Context, side: JoinSide) -> Optional[list[int]]:
    """``bytesByPartitionId`` of a direct shuffle-stage side (what the hint rules read)."""
    if side.direct_stage is None:
        return None
    st = ctx.plan.stage_by_node.get(side.direct_stage)
    sh = ctx.q.shuffle(st.shuffle_id) if st is not None and st.shuffle_id is not None else None
    return sh.bytes_by_partition_id if sh is not None else None
