"""The stages of a what-if plan when the change adds or removes a shuffle, and the reads whose
statistics the capture cannot give.

Spark 3.3+ runs ``OptimizeSkewedJoin`` as the last of ``AdaptiveSparkPlanExec``'s query-stage
preparation rules, over the whole plan. When a split breaks a distribution an operator above
the join needs and ``forceOptimizeSkewedJoin`` is on, the rule calls ``EnsureRequirements``,
which puts a ``ShuffleExchangeExec`` between that operator and the join's side of the plan
(below a local ``Sort``, which it re-adds above the exchange). The plan under the new exchange
becomes a query stage of its own, and ``CoalesceShufflePartitions`` (run by
``optimizeQueryStage`` as each new stage is created) coalesces the join's shuffles as one group
without the shuffles above; the operator above reads the new stage together with its other
inputs. Conversely a captured stage that Spark added for such a split is not there when the
change leaves the join unsplit (a sort-merge join that becomes a broadcast join).

:func:`merge_added_exchanges` folds those added stages back into the fragment above them (a
what-if starts from the plan as it was before the split), :func:`cut_after_forced_split`
re-adds the exchange where the rule's split needs it, and :func:`mark_unknown_inputs` says which
reads no captured statistic can size: the reads of a new shuffle, the reads coalesced with it,
and every read of a shuffle whose writing stage runs other tasks under the change (their
partial aggregates and their compression blocks differ, so its bytes per reducer do too).
"""
from __future__ import annotations

import re
from collections import Counter
from typing import TYPE_CHECKING, Optional

from aqe_core.engine.results import NOT_PREDICTED, JoinResult, ReadResult
from aqe_core.engine.stage_plan import READS, WRAPPERS, Context, Fragment, FragmentState, StageNode, required_of
from aqe_core.rules.coalesce_shuffle_partitions import COALESCE_DISABLED, UNSUPPORTED_SHUFFLE
from aqe_core.rules.optimize_skewed_join import FORCED
from aqe_core.model.shared_vocabulary import FINAL_STAGE_RULE_EXCLUDED, FINAL_STAGE_RULES_OFF
from aqe_core.model.specs import spec_to_dict
from aqe_core.versions import SparkVersion

if TYPE_CHECKING:
    from aqe_core.engine.results import QueryResult

__all__ = ["NOT_PREDICTED", "cut_after_forced_split", "mark_unknown_inputs", "merge_added_exchanges",
           "new_stage_unknown", "writer_root"]

#: the reason code of a read no captured statistic can size (its message says why)
_PLAN_ID = re.compile(r",?\s*\[(?:plan_id=|id=#)\d+\]")
#: the synthetic stage leaf of a shuffle the change adds: ``-30_000 - idx`` of the node below it
_NEW_STAGE = -30_000


def _exchange_key(desc: str) -> str:
    return _PLAN_ID.sub("", desc).strip()


def writer_root(ctx: Context, stage_idx: int) -> Optional[int]:
    """Plan index of the root of the fragment that writes the shuffle of the stage leaf at
    ``stage_idx`` (what :meth:`PlanIndex.fragments` starts it from), or None."""
    p = ctx.plan
    if stage_idx < 0 or not p.kids[stage_idx]:
        return None
    ex = p.kids[stage_idx][0]
    if not p.name(ex).startswith("Exchange") or not p.kids[ex]:
        return None
    i = p.kids[ex][0]
    while p.name(i).startswith(WRAPPERS) and p.kids[i]:
        i = p.kids[i][0]
    if p.name(i) in READS and p.kids[i]:
        i = p.kids[i][0]
    return i


def _added_exchange(ctx: Context, leaf: StageNode, writer: Fragment, surplus: Counter) -> bool:
    """A shuffle stage Spark added above a join it split: its exchange is one more than the
    initial plan has of that partitioning, and the plan it writes holds a skew join."""
    p = ctx.plan
    ex = p.kids[leaf.idx][0]
    key = _exchange_key(p.nodes[ex].description)
    if surplus[key] <= 0 or not key.startswith("Exchange hashpartitioning"):
        return False
    if not any(n.name.startswith(("SortMergeJoin", "ShuffledHashJoin")) and n.info.get("skew") for n in writer.root.walk()):
        return False
    surplus[key] -= 1
    return True


def merge_added_exchanges(ctx: Context, frags: list[Fragment]) -> list[Fragment]:
    """A what-if starts from the plan before AQE split a join with an extra shuffle: each stage
    Spark added for a forced split is folded back into the fragment above it (and re-added by
    :func:`cut_after_forced_split` when the what-if splits the join again)."""
    q = ctx.q
    if q.initial_plan is None or ctx.recorded_v < SparkVersion(3, 3, 0):
        return frags  # forceOptimizeSkewedJoin is 3.3+: a run before never added such a stage
    initial = Counter(_exchange_key(n.description) for _, n, _ in q.initial_plan.indexed() if n.name == "Exchange")
    final = Counter(_exchange_key(ctx.plan.nodes[ctx.plan.kids[s.idx][0]].description)
                    for f in frags for s in f.stages if s.is_shuffle_stage and ctx.plan.kids[s.idx]
                    and ctx.plan.name(ctx.plan.kids[s.idx][0]) == "Exchange")
    surplus = final - initial
    if not surplus:
        return frags
    frags = list(frags)
    for upper in list(frags):
        for leaf in list(upper.stages):
            root = writer_root(ctx, leaf.idx) if leaf.is_shuffle_stage else None
            writer = next((f for f in frags if f.root.idx == root and f is not upper), None) if root is not None else None
            if writer is None or leaf.parent is None or not _added_exchange(ctx, leaf, writer, surplus):
                continue
            frags.remove(writer)
            below = writer.root
            below.parent, below.pos = leaf.parent, leaf.pos
            leaf.parent.children[leaf.pos] = below
            upper.stages = [n for n in upper.root.walk() if n.is_stage]
            ctx.folded[below.idx] = leaf
            ctx.restaged.add(upper.root.idx)
            ctx.removed_stages.add(leaf.idx)
            ctx.removed_why[leaf.idx] = ("under these settings this shuffle is not added: Spark added it above the join"
                                         " it split (forceOptimizeSkewedJoin), and the change leaves that join unsplit")
    for k, f in enumerate(frags):
        f.fid = k
    return frags


def _break_point(ctx: Context, fr: Fragment, leaf: StageNode, skew_joins: set[int]) -> Optional[StageNode]:
    """The node under which ``EnsureRequirements`` puts the new exchange: the child (on the path
    up from ``leaf``) of the first operator that needs a distribution from it, below a local
    sort the operator also needs. None when only the query's result needs one (or nothing)."""
    child, node = leaf, leaf.parent
    while node is not None:
        if node.idx not in skew_joins:
            req = required_of(node, child.pos)
            if not (req.startswith("UnspecifiedDistribution") or req.startswith("BroadcastDistribution")):
                if child.name == "Sort" and len(child.children) == 1 and ("(what-if)" in child.desc or ", false," in child.desc):
                    return child.children[0]
                return child
        child, node = node, node.parent
    return None


def cut_after_forced_split(ctx: Context, fr: Fragment, state: FragmentState) -> Optional[Fragment]:
    """After ``OptimizeSkewedJoin`` split a join anyway (forced), cut ``fr`` at the exchange
    Spark adds: ``fr`` becomes the plan under the exchange (a stage of its own, whose shuffles
    are coalesced together without those above) and the fragment above it is returned, with a
    stage leaf for the new shuffle. None when the split needs no new exchange."""
    forced = [st for st in fr.stages if any(r.code == FORCED for r in state.reasons.get(st.idx, []))]
    if not forced:
        return None
    points = {}
    for st in forced:
        at = _break_point(ctx, fr, st, state.skew_joins)
        if at is not None:
            points[at.idx] = at
    if len(points) != 1:
        return None  # the query's result or several operators need a distribution: not modelled
    below = next(iter(points.values()))
    parent, pos = below.parent, below.pos
    if parent is None:
        return None
    captured = ctx.folded.get(below.idx)
    leaf = StageNode(_NEW_STAGE - below.idx, "ShuffleQueryStage", "ShuffleQueryStage (what-if: the shuffle the split adds)",
                     {}, [], parent, pos)
    parent.children[pos] = leaf
    upper = Fragment(-1, fr.root, fr.is_final, [n for n in fr.root.walk() if n.is_stage], fr.main)
    below.parent, below.pos = None, 0
    fr.root, fr.is_final = below, False
    fr.stages = [n for n in below.walk() if n.is_stage]
    ctx.added[leaf.idx] = (captured, fr)
    return upper


def new_stage_unknown(ctx: Context, upper: Fragment, reads: list[ReadResult]) -> list[StageNode]:
    """Before ``upper`` is simulated: a new stage whose writing fragment reads exactly what Spark
    read in the captured run writes what Spark wrote, so it becomes the captured stage (with its
    statistics); any other is left without statistics and returned."""
    unknown = []
    for leaf in [n for n in upper.stages if n.idx in ctx.added]:
        captured, lower = ctx.added[leaf.idx]
        mine = [r for r in reads if r.fragment == lower.fid]
        same = bool(mine) and all(r.spark_specs is not None and same_tasks(r) and not _unknown(r) for r in mine)
        if captured is not None and same and not _changed_joins(ctx, lower):
            leaf.idx, leaf.info, leaf.read_idx, leaf.desc = captured.idx, captured.info, captured.read_idx, captured.desc
            ctx.removed_stages.discard(captured.idx)
            ctx.removed_why.pop(captured.idx, None)
            ctx.restaged.discard(upper.root.idx)
        else:
            unknown.append(leaf)
    upper.stages = [n for n in upper.root.walk() if n.is_stage]
    return unknown


def _tasks(specs: Optional[list]) -> Optional[list[dict]]:
    """What a read's tasks read, without the data sizes (3.0/3.1 record none)."""
    return None if specs is None else [{k: v for k, v in spec_to_dict(s).items() if k != "data_size"} for s in specs]


def same_tasks(r: ReadResult) -> bool:
    """Does the what-if read its shuffle in the tasks Spark ran (so the plan above it sees the same rows)?"""
    return _tasks(r.spark_specs) == _tasks(r.simulated_specs)


def _unknown(r: ReadResult) -> bool:
    return any(x.code == NOT_PREDICTED for x in r.reasons)


def _changed_joins(ctx: Context, fr: Fragment) -> bool:
    nodes = {n.idx for n in fr.root.walk()}
    return any(j in nodes for j in ctx.changed_joins)


def mark_new_stage_reads(ctx: Context, fr: Fragment, unknown: list[StageNode], qr: "QueryResult") -> None:
    """The reads of a fragment holding a new shuffle without statistics: not predicted."""
    if not unknown:
        return
    for leaf in unknown:
        qr.reads.append(ReadResult(leaf.idx, None, None, None, fr.fid, None, None, reasons=[NOT_PREDICTED.reason(
            why="a new shuffle the forced split adds above the join; its size depends on the join's output, which the"
            " captured statistics do not hold")]))
    why = "coalesced in one stage with the new shuffle the forced split adds above the join, whose size only a run can tell"
    for r in qr.reads:
        if r.fragment == fr.fid and r.stage_node not in {u.idx for u in unknown}:
            _not_predicted(r, why)
    for node in fr.root.walk():
        if node.name.startswith(("SortMergeJoin", "ShuffledHashJoin")) and any(
                c.idx in {u.idx for u in unknown} for c in node.walk()):
            ctx.skew_unknown.add(node.idx)


def _not_predicted(r: ReadResult, why: str) -> None:
    r.simulated_specs = None
    r.description = ""
    r.reasons = [x for x in r.reasons if x.code != NOT_PREDICTED] + [NOT_PREDICTED.reason(why=why)]


_SIZE_FREE = frozenset({UNSUPPORTED_SHUFFLE, COALESCE_DISABLED, FINAL_STAGE_RULES_OFF, FINAL_STAGE_RULE_EXCLUDED})


def mark_unknown_inputs(ctx: Context, frags: list[Fragment], qr: "QueryResult", joins: list[JoinResult]) -> None:
    """What-if only: a read of a shuffle whose writing stage runs differently under the change
    (other read specs, another join strategy, a re-planned stage) cannot be sized from the
    captured statistics, which Spark measured for the tasks it ran; it is marked not predicted,
    with why, unless its outcome does not depend on sizes (a user repartition, coalescing off)."""
    by_root = {f.root.idx: f for f in frags}
    reads_of: dict[int, list[ReadResult]] = {}
    for r in qr.reads:
        reads_of.setdefault(r.fragment, []).append(r)
    changed_nodes = {j.node for j in joins if (j.simulated is not None and j.simulated != j.spark)
                     or j.simulated_build_root is not None or (j.simulated_skew is not None and j.simulated_skew != j.spark_skew)}
    memo: dict[int, Optional[str]] = {}

    def runs_differently(fr: Fragment) -> Optional[str]:
        if fr.fid in memo:
            return memo[fr.fid]
        memo[fr.fid] = None
        why = None
        nodes = {n.idx for n in fr.root.walk()}
        moved = [j for j in joins if j.node in nodes & changed_nodes]
        tasks = next((r for r in reads_of.get(fr.fid, []) if not same_tasks(r) and not _unknown(r)), None)
        runs = ""
        if tasks is not None:
            n = len(tasks.simulated_specs) if tasks.simulated_specs is not None else None
            spark = len(tasks.spark_specs) if tasks.spark_specs is not None else None
            runs = (f"runs {n} tasks" if n is not None else "reads its input as is") + (
                f" instead of the {spark} Spark ran" if spark is not None else "")
        if moved:
            j = moved[0]
            why = f"its {j.spark} becomes a {j.simulated}" + (f" and it {runs}" if runs else "")
        elif fr.root.idx in ctx.restaged or any(n < 0 for n in nodes):
            why = "it is re-planned under the change" + (f" and {runs}" if runs else "")
        elif runs:
            why = f"it {runs}"
        elif any(_unknown(r) or _input_changed(r) for r in reads_of.get(fr.fid, [])):
            why = "its own input is not predicted"
        memo[fr.fid] = why
        return why

    def _input_changed(r: ReadResult) -> Optional[str]:
        root = writer_root(ctx, r.stage_node) if r.stage_node >= 0 else None
        writer = by_root.get(root) if root is not None else None
        return runs_differently(writer) if writer is not None else None

    for r in qr.reads:
        if _unknown(r) or r.stage_node < 0:
            continue
        why = _input_changed(r)
        if why is None:
            continue
        if r.simulated_specs is None and any(x.code in _SIZE_FREE for x in r.reasons):
            continue
        _not_predicted(r, f"the stage that writes this shuffle runs differently under the change ({why}), so the"
                          " shuffle's size, which decides this read, is only known from a run")
