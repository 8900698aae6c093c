"""The engine's rule steps: each finds its Spark rule's plan shape in a stage fragment and calls
the rule's math in :mod:`aqe_core.rules`, putting the specs on the fragment's stage leaves.

One step per Spark rule, run in the order :mod:`aqe_core.engine.pipeline` lists per release.
TODO(issue 9, WP1 step 7): the plan-shape checks below belong in their rule modules, seeing the
stage plan through protocols in :mod:`aqe_core.model.stage`:
"""
from __future__ import annotations

from typing import Any, Optional

from aqe_core import config
from aqe_core.engine.stage_plan import (
    SHUFFLED_JOINS,
    Context,
    Fragment,
    FragmentState,
    StageNode,
    breaks_distribution,
    merge_reasons,
)
from aqe_core.model.reasons import Reason
from aqe_core.model.specs import CoalescedMapperPartitionSpec, PartialMapperPartitionSpec, ShufflePartitionSpec
from aqe_core.rules.coalesce_shuffle_partitions import (
    PlanShape,
    StageInput,
    coalesce_group,
    coalesce_groups,
    is_supported_shuffle,
    min_num_partitions,
    split_min_num_across_groups,
)
from aqe_core.rules.optimize_shuffle_with_local_read import local_read_specs
from aqe_core.rules.optimize_skew_in_rebalance_partitions import REBALANCE_ORIGINS, optimize_skew_in_rebalance
from aqe_core.rules.optimize_skewed_join import SkewJoinSide, normalize_join_type, optimize_broadcast_stream_side, optimize_skewed_join
from aqe_core.versions import SparkVersion


def _under_sort(n: StageNode) -> Optional[StageNode]:
    if n.name == "Sort" and len(n.children) == 1:
        return n.children[0]
    return None


def _shuffle_leaf(ctx: Context, n: Optional[StageNode], state: FragmentState, *, for_skew: bool) -> Optional[StageNode]:
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


def skew_join(ctx: Context, fr: Fragment, state: FragmentState) -> None:
    """OptimizeSkewedJoin on a fragment: every shuffled join over two shuffle stages (and, 4.3,
    the stream side of a broadcast hash join), kept only if the plan's distribution holds."""
    v, conf = ctx.v, ctx.conf
    if not conf.get(config.SKEW_JOIN_ENABLED):
        _skew_join_disabled(fr, state)
        return
    shuffle_stages = [s for s in fr.stages if s.is_shuffle_stage]
    if v < SparkVersion(3, 3, 0) and len(shuffle_stages) != 2:
        return
    trial = state.copy()
    changed: list[StageNode] = []
    for node in fr.root.walk():
        if node.name.startswith(SHUFFLED_JOINS) and len(node.children) == 2:
            changed += _skew_shuffled_join(ctx, node, trial)
        elif (v >= SparkVersion(4, 3, 0) and node.name.startswith("BroadcastHashJoin") and len(node.children) == 2):
            changed += _skew_broadcast_stream(ctx, node, trial)
    if not changed:
        merge_reasons(state, trial)
        return
    _keep_if_distribution_holds(ctx, fr, state, trial, changed)


def _skew_join_disabled(fr: Fragment, state: FragmentState) -> None:
    for st in fr.stages:
        if st.parent is not None and (st.parent.name.startswith(SHUFFLED_JOINS)
                                      or (st.parent.name == "Sort" and st.parent.parent is not None
                                          and st.parent.parent.name.startswith(SHUFFLED_JOINS))):
            state.why(st, [Reason("skew_join_disabled", "skewJoin.enabled is false", {}, (config.SKEW_JOIN_ENABLED,))])


def _skew_shuffled_join(ctx: Context, node: StageNode, trial: FragmentState) -> list[StageNode]:
    """One sort-merge / shuffled hash join: the stage leaves whose specs the rule changed."""
    v, conf = ctx.v, ctx.conf
    jt = normalize_join_type(node.info.get("join_type", "")) if node.info.get("join_type") else ""
    if node.name.startswith("SortMergeJoin"):
        left, right = _under_sort(node.children[0]), _under_sort(node.children[1])
    elif v >= SparkVersion(3, 1, 0):
        left, right = node.children
    else:
        return []
    left = _shuffle_leaf(ctx, left, trial, for_skew=True)
    right = _shuffle_leaf(ctx, right, trial, for_skew=True)
    if left is None or right is None:
        return []
    if v < SparkVersion(3, 2, 0) and jt not in ("Inner", "Cross", "LeftSemi", "LeftAnti", "LeftOuter", "RightOuter"):
        return []
    lside = SkewJoinSide(ctx.bytes(left), ctx.map_sizes_for(left),
                         trial.specs.get(left.idx) if v < SparkVersion(3, 2, 0) else None)  # type: ignore[arg-type]
    rside = SkewJoinSide(ctx.bytes(right), ctx.map_sizes_for(right),
                         trial.specs.get(right.idx) if v < SparkVersion(3, 2, 0) else None)  # type: ignore[arg-type]
    try:
        res = optimize_skewed_join(lside, rside, jt, conf, spark_version=v)
    except (AssertionError, ValueError) as e:
        trial.why(left, [Reason("skew_join_error", f"OptimizeSkewedJoin would fail: {e}")])
        return []
    for side_node, reasons in ((left, [r for r in res.reasons if r.subject.get("side") != "right"]),
                               (right, [r for r in res.reasons if r.subject.get("side") == "right"])):
        trial.why(side_node, reasons)
    if not res.applied:
        return []
    trial.put(left, res.left_specs, "OptimizeSkewedJoin")
    trial.put(right, res.right_specs, "OptimizeSkewedJoin")
    if v < SparkVersion(3, 2, 0):
        trial.descriptions[left.idx] = _skew_desc(res.left, res.num_skewed_left)
        trial.descriptions[right.idx] = _skew_desc(res.right, res.num_skewed_right)
    trial.skew_joins.add(node.idx)
    return [left, right]


def _skew_broadcast_stream(ctx: Context, node: StageNode, trial: FragmentState) -> list[StageNode]:
    """4.3: the shuffled stream side of a broadcast hash join."""
    build = node.info.get("build_side", "")
    stream = node.children[0] if build == "BuildRight" else node.children[1] if build == "BuildLeft" else None
    stream = _shuffle_leaf(ctx, stream, trial, for_skew=True)
    if stream is None:
        return []
    specs, analysis, reasons = optimize_broadcast_stream_side(
        SkewJoinSide(ctx.bytes(stream), ctx.map_sizes_for(stream)), ctx.conf, spark_version=ctx.v)  # type: ignore[arg-type]
    trial.why(stream, reasons)
    if specs is None:
        return []
    trial.put(stream, specs, "OptimizeSkewedJoin")
    trial.skew_joins.add(node.idx)
    return [stream]


def _keep_if_distribution_holds(ctx: Context, fr: Fragment, state: FragmentState, trial: FragmentState,
                                changed: list[StageNode]) -> None:
    """Spark's "no extra shuffle" check (3.3+: unless forceOptimizeSkewedJoin)."""
    v, conf = ctx.v, ctx.conf
    broken = breaks_distribution(ctx, fr, changed, trial.skew_joins)
    if broken is None:
        state.__dict__.update(trial.__dict__)
        return
    force = v >= SparkVersion(3, 3, 0) and conf.get_or(config.ADAPTIVE_FORCE_OPTIMIZE_SKEWED_JOIN, False)
    if force:
        state.__dict__.update(trial.__dict__)
        for n in changed:
            state.why(n, [Reason("forced", f"the split breaks the plan's distribution ({broken}); applied anyway"
                                 " because forceOptimizeSkewedJoin=true (Spark adds a shuffle)", {},
                                 (config.ADAPTIVE_FORCE_OPTIMIZE_SKEWED_JOIN,))])
        return
    merge_reasons(state, trial)
    for n in changed:
        state.why(n, [Reason("distribution_broken", f"skew handling not applied: splitting would break the plan's"
                             f" distribution ({broken}), which would need an extra shuffle", {},
                             (config.ADAPTIVE_FORCE_OPTIMIZE_SKEWED_JOIN,) if v >= SparkVersion(3, 3, 0) else ())])


def _skew_desc(side: Any, num_skewed: int) -> str:
    if num_skewed == 0:
        return "no skewed partition"
    return f"{num_skewed} skewed partitions"


def rebalance(ctx: Context, fr: Fragment, state: FragmentState) -> None:
    v = ctx.v
    candidates = fr.stages if v >= SparkVersion(3, 3, 0) else ([fr.root] if fr.root.is_shuffle_stage else [])
    for st in candidates:
        if not st.is_shuffle_stage or st.idx in state.specs:
            continue
        origin = ctx.origin(st)
        if origin not in REBALANCE_ORIGINS:
            continue
        b = ctx.bytes(st)
        if b is None:
            continue
        sc = ctx.stage(st)
        res = optimize_skew_in_rebalance(b, ctx.map_sizes_for(st), ctx.conf, spark_version=v, origin=origin,
                                         advisory_override=sc.advisory_partition_size if sc else None)
        state.why(st, res.reasons)
        if not res.applied or res.specs is None:
            continue
        trial = state.copy()
        trial.put(st, res.specs, "OptimizeSkewInRebalancePartitions")
        broken = breaks_distribution(ctx, fr, [st], trial.skew_joins)
        if broken:
            state.why(st, [Reason("distribution_broken", f"rebalance split dropped: it would break the plan's"
                                  f" distribution ({broken})")])
            continue
        state.__dict__.update(trial.__dict__)


def _stage_input(ctx: Context, st: StageNode, state: FragmentState) -> StageInput:
    sc = ctx.stage(st)
    return StageInput(stage_id=st.idx, bytes_by_partition_id=ctx.bytes(st), origin=ctx.origin(st),
                      existing_specs=state.specs.get(st.idx), single_partition=ctx.single_partition(st),
                      user_specified_num_partitions=bool(sc and sc.can_change_num_partitions is False),
                      advisory_partition_size=sc.advisory_partition_size if sc else None)


def _shape(ctx: Context, n: StageNode, state: FragmentState) -> PlanShape:
    """The fragment as CoalesceShufflePartitions sees it: stages (with a read above those that
    already have specs)."""
    if n.is_stage:
        inp = _stage_input(ctx, n, state) if n.is_shuffle_stage else None
        shape = PlanShape(n.name, [], inp)
        if n.is_shuffle_stage and n.idx in state.specs:
            return PlanShape("AQEShuffleRead", [shape], inp)
        return shape
    plain = True
    if n.name == "Union":
        plain = not _union_keeps_partitioning(n)
    return PlanShape(n.name.split("(")[0], [_shape(ctx, c, state) for c in n.children], None, plain)


def _union_keeps_partitioning(n: StageNode) -> bool:
    part = str(n.info.get("partitioning", "UnknownPartitioning"))
    return not part.startswith("UnknownPartitioning")


def coalesce(ctx: Context, fr: Fragment, state: FragmentState) -> None:
    v, conf = ctx.v, ctx.conf
    if not conf.get(config.COALESCE_PARTITIONS_ENABLED):
        for st in fr.stages:
            if st.is_shuffle_stage:
                state.why(st, [Reason("coalesce_disabled", "coalescePartitions.enabled is false", {},
                                      (config.COALESCE_PARTITIONS_ENABLED,))])
        return
    shape = _shape(ctx, fr.root, state)
    groups = coalesce_groups(shape, spark_version=v)
    supported = []
    for g in groups:
        ok = all(is_supported_shuffle(s.origin, s.single_partition, spark_version=v,
                                      user_specified_num_partitions=s.user_specified_num_partitions) for s in g)
        if ok and g:
            supported.append(g)
        elif g:
            bad = next(s for s in g if not is_supported_shuffle(s.origin, s.single_partition, spark_version=v,
                                                                 user_specified_num_partitions=s.user_specified_num_partitions))
            for s in g:
                state.reasons.setdefault(s.stage_id, []).append(Reason(
                    "unsupported_shuffle", f"not coalesced: stage {ctx.plan.stage_by_node[bad.stage_id].stage_id}"
                    f" has {'a single output partition' if bad.single_partition else 'shuffle origin ' + bad.origin}",
                    {"origin": bad.origin}))
    if not supported:
        return
    min_num, _ = min_num_partitions(conf, spark_version=v, default_parallelism=ctx.default_parallelism)
    if v >= SparkVersion(3, 3, 0):
        sizes = [sum(sum(s.bytes_by_partition_id) for s in g if s.bytes_by_partition_id is not None) for g in supported]
        per_group = split_min_num_across_groups(min_num, sizes)
    else:
        per_group = [min_num]
    for g, gmin in zip(supported, per_group):
        advisory = None
        if v >= SparkVersion(3, 5, 0) and len(g) == 1 and g[0].advisory_partition_size is not None:
            advisory = g[0].advisory_partition_size
        if v >= SparkVersion(4, 3, 0) and _under_exploding_join(fr, g):
            advisory = conf.get(config.COALESCE_PARTITIONS_MIN_PARTITION_SIZE)
        d = coalesce_group(g, conf, spark_version=v, default_parallelism=ctx.default_parallelism,
                           group_min_num=gmin if v >= SparkVersion(3, 3, 0) else None, advisory_override=advisory)
        for s in g:
            state.reasons.setdefault(s.stage_id, []).extend(d.reasons)
        if d.applied:
            for s in g:
                state.specs[s.stage_id] = d.specs_by_stage[s.stage_id]
                state.rules.setdefault(s.stage_id, []).append("CoalesceShufflePartitions")


def _under_exploding_join(fr: Fragment, group: list[StageInput]) -> bool:
    ids = {s.stage_id for s in group}
    for st in fr.stages:
        if st.idx not in ids:
            continue
        p = st.parent
        while p is not None:
            if p.name.startswith(("BroadcastNestedLoopJoin", "CartesianProduct")):
                return True
            p = p.parent
    return False


def coalesce_3_0(ctx: Context, fr: Fragment, state: FragmentState) -> None:
    """3.0/3.1 CoalesceShufflePartitions: all leaves query stages, every shuffle can change its
    partition count; one spec list for every stage, put on every stage even when unchanged."""
    conf, v = ctx.conf, ctx.v
    stages = [s for s in fr.stages if s.is_shuffle_stage]
    if not conf.get(config.COALESCE_PARTITIONS_ENABLED):
        return
    if not _all_leaves_stages(fr.root) or not stages:
        return
    inputs = [_stage_input(ctx, s, state) for s in stages]
    d = coalesce_group(inputs, conf, spark_version=v, default_parallelism=ctx.default_parallelism)
    for s in stages:
        state.why(s, d.reasons)
    if d.applied:
        for s in stages:
            state.put(s, d.specs_by_stage[s.idx], "CoalesceShufflePartitions")
            state.descriptions[s.idx] = "coalesced"


def _all_leaves_stages(n: StageNode) -> bool:
    if n.is_stage:
        return True
    if not n.children:
        return False
    return all(_all_leaves_stages(c) for c in n.children)


def local_read(ctx: Context, fr: Fragment, state: FragmentState) -> None:
    v, conf = ctx.v, ctx.conf
    if not conf.get(config.LOCAL_SHUFFLE_READER_ENABLED):
        return

    def eligible(st: StageNode) -> bool:
        if not st.is_shuffle_stage:
            return False
        sc = ctx.stage(st)
        has_stats = ctx.bytes(st) is not None
        origin = ctx.origin(st)
        existing = st.idx in state.specs
        if v < SparkVersion(3, 2, 0):
            if sc is not None and sc.can_change_num_partitions is False:
                return False
            if sc is not None and sc.origin is not None and sc.origin != "ENSURE_REQUIREMENTS":
                return False
            return not existing or bool(state.specs[st.idx])
        if not has_stats or ctx.single_partition(st):
            return False
        if existing:
            return origin == "ENSURE_REQUIREMENTS" and not _has_local(state.specs[st.idx])
        return origin in ("ENSURE_REQUIREMENTS", "REBALANCE_PARTITIONS_BY_NONE")

    def make(st: StageNode) -> list[ShufflePartitionSpec]:
        sc = ctx.stage(st)
        sh = ctx.shuffle(st)
        n_maps = (sc.num_maps if sc and sc.num_maps is not None else sh.num_maps if sh else None) or 0
        n_red = (sh.num_reducers if sh else None) or (sc.num_partitions if sc else 0) or 0
        expected = len(state.specs[st.idx]) if st.idx in state.specs else None
        return local_read_specs(n_maps, n_red, expected, spark_version=v)

    root = fr.root
    if root.is_shuffle_stage and eligible(root):
        specs = make(root)
        broken = breaks_distribution(ctx, fr, [root], state.skew_joins) if fr.is_final else None
        if broken is None:
            state.put(root, specs, "OptimizeShuffleWithLocalRead" if v >= SparkVersion(3, 2, 0) else "OptimizeLocalShuffleReader")
            state.descriptions[root.idx] = "local"
        return
    trial = state.copy()
    changed: list[StageNode] = []
    for node in root.walk():
        if not node.name.startswith("BroadcastHashJoin") or len(node.children) != 2:
            continue
        build = node.info.get("build_side", "")
        probe = node.children[0] if build == "BuildRight" else node.children[1] if build == "BuildLeft" else None
        if probe is None or not eligible(probe):
            continue
        trial.put(probe, make(probe), "OptimizeShuffleWithLocalRead" if v >= SparkVersion(3, 2, 0) else "OptimizeLocalShuffleReader")
        trial.descriptions[probe.idx] = "local"
        changed.append(probe)
    if not changed:
        return
    broken = breaks_distribution(ctx, fr, changed, trial.skew_joins)
    if broken is None:
        state.__dict__.update(trial.__dict__)
    else:
        for n in changed:
            state.why(n, [Reason("distribution_broken", f"local shuffle read not applied: it would break the plan's"
                                 f" distribution ({broken})")])


def _has_local(specs: list[ShufflePartitionSpec]) -> bool:
    return any(isinstance(s, (PartialMapperPartitionSpec, CoalescedMapperPartitionSpec)) for s in specs)


