"""Spark's ``OptimizeSkewedJoin``, its plan-shape check on a stage fragment: which joins match
(two shuffle stages under a sort-merge or shuffled hash join; 4.2+ a broadcast join's streamed
side), and the "no extra shuffle" check (3.3+: unless ``forceOptimizeSkewedJoin``).

Mirrors ``OptimizeSkewedJoin.apply`` / ``optimizeSkewJoin`` and its ``ShuffleStage`` pattern
(3.0.1 - 4.3.0). A part of :mod:`aqe_core.rules.optimize_skewed_join`, in its own file for room:
that module does the numbers and declares every code and sentence this one gives. The joins it
looks under:

    >>> SHUFFLED_JOINS
    ('SortMergeJoin', 'ShuffledHashJoin')
"""
from __future__ import annotations

from typing import Optional

from aqe_core import config
from aqe_core.model.stage import Fragment, SpecState, StageNode, StageStats
from aqe_core.rules.join_type import normalize_join_type
from aqe_core.rules.optimize_skewed_join import (
    DISTRIBUTION_BROKEN, FORCED, SHUFFLED_JOINS, SKEW_JOIN_DISABLED, SKEW_JOIN_ERROR, SkewJoinSide,
    optimize_broadcast_stream_side, optimize_skewed_join, splits_join,
)
from aqe_core.versions import SparkVersion

__all__ = ["apply"]


# OptimizeSkewedJoin's plan-shape check on a stage fragment (the engine's stage plan, seen
# through the protocols of :mod:`aqe_core.model.stage`)


def apply(ctx: StageStats, fr: Fragment, state: SpecState) -> None:
    """OptimizeSkewedJoin on a fragment: every shuffled join over two shuffle stages (and, 4.2+,
    the stream side of a broadcast hash join), kept only if the plan's distribution holds."""
    v, conf = ctx.v, ctx.conf
    if not conf.get(config.SKEW_JOIN_ENABLED):
        _skew_join_disabled(fr, state)
        return
    # 3.0-3.2 look at a plan with exactly two shuffle stages (a broadcast join: only to say why not)
    few = v < SparkVersion(3, 3, 0) and len([s for s in fr.stages if s.is_shuffle_stage]) != 2
    trial = state.copy()
    changed: list[StageNode] = []
    for node in fr.root.walk():
        if node.name.startswith(SHUFFLED_JOINS) and len(node.children) == 2 and not few:
            changed += _skew_shuffled_join(ctx, node, trial)
        elif node.name.startswith("BroadcastHashJoin") and len(node.children) == 2:  # (before 4.2: why not)
            changed += _skew_broadcast_stream(ctx, node, trial)
    if not changed:
        return state.merge_reasons(trial)
    _keep_if_distribution_holds(ctx, fr, state, trial, changed)


def _skew_join_disabled(fr: Fragment, state: SpecState) -> None:
    for st in fr.stages:
        if st.parent is not None and (st.parent.name.startswith(SHUFFLED_JOINS)
                                      or (st.parent.name == "Sort" and st.parent.parent is not None
                                          and st.parent.parent.name.startswith(SHUFFLED_JOINS))):
            state.why(st, [SKEW_JOIN_DISABLED.reason(config_keys=(config.SKEW_JOIN_ENABLED,), key="skewJoin.enabled")])


def _skew_shuffled_join(ctx: StageStats, node: StageNode, trial: SpecState) -> list[StageNode]:
    """One sort-merge / shuffled hash join: the stage leaves whose specs the rule changed."""
    v, conf = ctx.v, ctx.conf
    jt = normalize_join_type(node.info.get("join_type", "")) if node.info.get("join_type") else ""
    if not splits_join(node.name, v):  # a shuffled hash join before 3.2
        return []
    if node.name.startswith("SortMergeJoin"):
        left, right = _under_sort(node.children[0]), _under_sort(node.children[1])
    else:
        left, right = node.children
    left, right = _shuffle_leaf(ctx, left, trial, for_skew=True), _shuffle_leaf(ctx, right, trial, for_skew=True)
    if left is None or right is None:
        return []
    if v < SparkVersion(3, 2, 0) and jt not in ("Inner", "Cross", "LeftSemi", "LeftAnti", "LeftOuter", "RightOuter"):
        return []
    lbytes, rbytes = ctx.bytes(left), ctx.bytes(right)
    if lbytes is None or rbytes is None:  # (never: _shuffle_leaf keeps only stages with map statistics)
        return []
    lside = SkewJoinSide(lbytes, ctx.map_sizes_for(left),
                         trial.specs.get(left.idx) if v < SparkVersion(3, 2, 0) else None)  # type: ignore[arg-type]
    rside = SkewJoinSide(rbytes, ctx.map_sizes_for(right),
                         trial.specs.get(right.idx) if v < SparkVersion(3, 2, 0) else None)  # type: ignore[arg-type]
    try:
        res = optimize_skewed_join(lside, rside, jt, conf, spark_version=v)
    except (AssertionError, ValueError) as e:
        trial.why(left, [SKEW_JOIN_ERROR.reason(error=e)])
        return []
    for side_node, reasons in ((left, [r for r in res.reasons if r.subject.get("side") != "right"]),
                               (right, [r for r in res.reasons if r.subject.get("side") == "right"])):
        trial.why(side_node, reasons)
    if not res.applied:
        return []
    trial.put(left, res.left_specs, "OptimizeSkewedJoin")
    trial.put(right, res.right_specs, "OptimizeSkewedJoin")
    if v < SparkVersion(3, 2, 0):  # 3.0/3.1 SkewDesc
        for n, k in ((left, res.num_skewed_left), (right, res.num_skewed_right)):
            trial.descriptions[n.idx] = "no skewed partition" if k == 0 else f"{k} skewed partitions"
    trial.skew_joins.add(node.idx)
    return [left, right]


def _skew_broadcast_stream(ctx: StageStats, node: StageNode, trial: SpecState) -> list[StageNode]:
    """The shuffled streamed side of a broadcast hash join: split from 4.2 (before, only why not)."""
    build = node.info.get("build_side", "")
    side = "left" if build == "BuildRight" else "right" if build == "BuildLeft" else ""
    stream = _shuffle_leaf(ctx, node.children[0 if side == "left" else 1] if side else None, trial, for_skew=True)
    if stream is None:
        return []
    specs, analysis, reasons = optimize_broadcast_stream_side(
        SkewJoinSide(ctx.bytes(stream), ctx.map_sizes_for(stream)), ctx.conf, spark_version=ctx.v, side=side)  # type: ignore[arg-type]
    trial.why(stream, reasons)
    if specs is None:
        return []
    trial.put(stream, specs, "OptimizeSkewedJoin")
    trial.skew_joins.add(node.idx)
    return [stream]


def _keep_if_distribution_holds(ctx: StageStats, fr: Fragment, state: SpecState, trial: SpecState,
                                changed: list[StageNode]) -> None:
    """Spark's "no extra shuffle" check (3.3+: unless forceOptimizeSkewedJoin)."""
    v, conf = ctx.v, ctx.conf
    broken = ctx.breaks_distribution(fr, changed, trial.skew_joins)
    if broken is None:
        state.adopt(trial)
        return
    force = v >= SparkVersion(3, 3, 0) and conf.get_or(config.ADAPTIVE_FORCE_OPTIMIZE_SKEWED_JOIN, False)
    if force:
        state.adopt(trial)
        for n in changed:
            state.why(n, [FORCED.reason(config_keys=(config.ADAPTIVE_FORCE_OPTIMIZE_SKEWED_JOIN,), broken=broken)])
        return
    state.merge_reasons(trial)
    for n in changed:
        state.why(n, [DISTRIBUTION_BROKEN.reason(config_keys=(config.ADAPTIVE_FORCE_OPTIMIZE_SKEWED_JOIN,) if v >= SparkVersion(
            3, 3, 0) else (), broken=broken)])


def _under_sort(n: StageNode) -> Optional[StageNode]:
    if n.name == "Sort" and len(n.children) == 1:
        return n.children[0]
    return None


def _shuffle_leaf(ctx: StageStats, n: Optional[StageNode], state: SpecState, *, for_skew: bool) -> Optional[StageNode]:
    """The ``ShuffleStage`` pattern of OptimizeSkewedJoin: a shuffle stage with map stats
    (3.2+: ENSURE_REQUIREMENTS origin; 3.0/3.1: a coalesced reader over it is fine)."""
    if n is None or not n.is_shuffle_stage:
        return None
    if ctx.bytes(n) is None:
        return None
    if ctx.v >= SparkVersion(3, 1, 0) and ctx.origin(n) != "ENSURE_REQUIREMENTS":
        return None  # 3.1+: OptimizeSkewedJoin.supportedShuffleOrigins = [ENSURE_REQUIREMENTS]
    if ctx.v >= SparkVersion(3, 2, 0):
        if n.idx in state.specs:  # already read through an AQEShuffleRead: not a bare stage
            return None
    return n
