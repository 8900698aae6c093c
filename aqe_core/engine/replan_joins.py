"""Join replanning: re-decide each join's strategy from its stages' runtime statistics (runtime
broadcast, demotion, shuffled hash join), and, in a what-if, put a join whose strategy changes
into the shape the new strategy has so the shuffle-read rules run on the plan Spark would build.
"""
from __future__ import annotations

import re
from typing import Any, Optional

from aqe_core import config
from aqe_core.engine.results import JoinResult, QueryResult
from aqe_core.engine.stage_plan import READS, WRAPPERS, Context, Fragment, StageNode
from aqe_core.model.reasons import Reason
from aqe_core.model.scala_text import split_top_level
from aqe_core.rules.convert_sort_merge_join_to_shuffled_hash_join import choose_shuffled_hash_join_build_side
from aqe_core.rules.demote_broadcast_hash_join import NO_BROADCAST_HASH
from aqe_core.rules.dynamic_join_selection import PREFER_SHUFFLE_HASH, SHUFFLE_HASH, select_join_hints
from aqe_core.rules.join_selection_helper import broadcast_threshold, can_build_broadcast_left, can_build_broadcast_right
from aqe_core.rules.join_type import normalize_join_type
from aqe_core.units import mib
from aqe_core.versions import SparkVersion


_JOIN_DESC = re.compile(r"^(?:SortMergeJoin|ShuffledHashJoin|BroadcastHashJoin)(?:\(skew=true\))?\s+"
                        r"\[(?P<l>.*?)\],\s+\[(?P<r>.*?)\],\s+(?P<t>[A-Za-z]+)")


def _join_key_from_desc(desc: str) -> Optional[tuple[str, str, str]]:
    """Join keys and type from a join's simpleString (plans read from the event log)."""
    m = _JOIN_DESC.match(desc)
    if not m:
        return None
    return (m.group("l").strip(), m.group("r").strip(), normalize_join_type(m.group("t")))


def _join_key(info: dict[str, Any]) -> Optional[tuple[str, str, str]]:
    """Join identity across plan versions: keys (expression ids survive re-planning) and type.
    The collection wrapper differs between plans (``List(k#1L)`` vs ``Vector(k#1L)``)."""
    if "left_keys" not in info:
        return None
    lk = ", ".join(split_top_level(info.get("left_keys", "")))
    rk = ", ".join(split_top_level(info.get("right_keys", "")))
    return (lk, rk, normalize_join_type(info.get("join_type", "")))


def _strategy(name: str) -> str:
    return name.split("(")[0]


def _side_stage(ctx: Context, n: StageNode) -> Optional[StageNode]:
    """The shuffle stage feeding one join side in the final plan (through sorts, broadcast
    stages and local reads)."""
    cur: Optional[StageNode] = n
    while cur is not None:
        if cur.is_shuffle_stage:
            return cur
        if cur.name == "BroadcastQueryStage":
            return _broadcast_source(ctx, cur)
        if cur.name in ("Sort", "Project", "Filter") and len(cur.children) == 1:
            cur = cur.children[0]
            continue
        return None
    return None


def _broadcast_source(ctx: Context, bq: StageNode) -> Optional[StageNode]:
    """BroadcastQueryStage -> BroadcastExchange -> [read] -> ShuffleQueryStage."""
    p = ctx.plan
    kids = p.kids[bq.idx]
    if not kids:
        return None
    i = kids[0]
    if p.name(i) == "ReusedExchange" and p.kids[i]:
        i = p.kids[i][0]
    if not p.name(i).startswith("BroadcastExchange") or not p.kids[i]:
        return None
    i = p.kids[i][0]
    while (p.name(i).startswith(WRAPPERS) or p.name(i) in READS or p.name(i) in ("Project", "Filter")) and p.kids[i]:
        i = p.kids[i][0]
    if p.name(i) == "ShuffleQueryStage":
        return StageNode(i, p.name(i), p.nodes[i].description, p.info[i])
    return None


def decide_joins(ctx: Context, frags: list[Fragment]) -> list[JoinResult]:
    q = ctx.q
    initial: dict[tuple[str, str, str], str] = {}
    if q.initial_plan is not None:
        for _, node, info in q.initial_plan.indexed():
            k = _join_key(info) or _join_key_from_desc(node.description)
            if k is not None:
                initial.setdefault(k, _strategy(node.name))
    out: list[JoinResult] = []
    for fr in frags:
        for node in fr.root.walk():
            if not node.name.startswith(("SortMergeJoin", "ShuffledHashJoin", "BroadcastHashJoin")):
                continue
            key = _join_key(node.info)
            jt = key[2] if key else ""
            jr = JoinResult(node.idx, jt, f"{key[0]} = {key[1]}" if key else "", initial.get(key) if key else None,
                            _strategy(node.name), None, bool(node.info.get("skew")))
            out.append(jr)
            if len(node.children) != 2 or jr.initial is None:
                continue
            if jr.initial == "BroadcastHashJoin":
                jr.reasons.append(Reason("planned_broadcast", "broadcast was planned before AQE (static size estimate)"))
                continue
            ls, rs = _side_stage(ctx, node.children[0]), _side_stage(ctx, node.children[1])
            if ls is None or rs is None:
                jr.reasons.append(Reason("sides_not_stages", "a side is not a materialized shuffle stage: the join"
                                         " strategy cannot be re-decided from runtime statistics"))
                continue
            _decide_join(ctx, jr, ls, rs)
    return out


def _decide_join(ctx: Context, jr: JoinResult, ls: StageNode, rs: StageNode) -> None:
    v, conf = ctx.v, ctx.conf
    lb, rb = ctx.bytes(ls), ctx.bytes(rs)
    lst, rst = ctx.stage(ls), ctx.stage(rs)
    lh, rh = select_join_hints(lb, rb, jr.join_type, conf, spark_version=v)
    jr.reasons += lh.reasons + rh.reasons
    thr = broadcast_threshold(conf, spark_version=v, runtime_stats=True)
    lsize = lst.size_in_bytes if lst else None
    rsize = rst.size_in_bytes if rst else None
    can_l = (lsize is not None and 0 <= lsize <= thr and can_build_broadcast_left(jr.join_type)
             and lh.hint not in (NO_BROADCAST_HASH, SHUFFLE_HASH))
    can_r = (rsize is not None and 0 <= rsize <= thr and can_build_broadcast_right(jr.join_type)
             and rh.hint not in (NO_BROADCAST_HASH, SHUFFLE_HASH))
    if can_l and can_r:
        build = "right" if rsize <= lsize else "left"  # type: ignore[operator]
    else:
        build = "left" if can_l else "right" if can_r else None
    if build is not None:
        jr.simulated = "BroadcastHashJoin"
        jr.simulated_build_side = build
        size = lsize if build == "left" else rsize
        jr.reasons.append(Reason("runtime_broadcast", f"the {build} side's runtime size {mib(size)} fits the broadcast"
                                 f" threshold {mib(thr)}: broadcast hash join building the {build} side",
                                 {"size": size, "threshold": thr}, (config.ADAPTIVE_AUTO_BROADCASTJOIN_THRESHOLD,
                                                                     config.AUTO_BROADCASTJOIN_THRESHOLD)))
        return
    for side, size, hint in (("left", lsize, lh.hint), ("right", rsize, rh.hint)):
        if size is not None and 0 <= size <= thr and hint in (NO_BROADCAST_HASH, SHUFFLE_HASH):
            jr.reasons.append(Reason("demoted", f"the {side} side ({mib(size)}) fits the broadcast threshold but was"
                                     " demoted: too many empty partitions", {"size": size}))
    if v < SparkVersion(4, 3, 0):
        shj = (lh.hint in (SHUFFLE_HASH, PREFER_SHUFFLE_HASH) and jr.join_type in ("Inner", "Cross", "RightOuter")) or \
              (rh.hint in (SHUFFLE_HASH, PREFER_SHUFFLE_HASH) and jr.join_type in
               ("Inner", "Cross", "LeftOuter", "LeftSemi", "LeftAnti", "ExistenceJoin"))
        jr.simulated = "ShuffledHashJoin" if shj else "SortMergeJoin"
    else:
        choice = choose_shuffled_hash_join_build_side(lb, rb, jr.join_type, conf, spark_version=v,
                                                      is_skew_join=False)
        if choice.build_side or conf.get_or(config.ADAPTIVE_MAX_SHUFFLE_HASH_JOIN_LOCAL_MAP_THRESHOLD, 0) > 0:
            jr.reasons += choice.reasons
        jr.simulated = "ShuffledHashJoin" if choice.build_side else "SortMergeJoin"
    if jr.simulated == jr.initial:
        jr.reasons.append(Reason("unchanged", f"stays {jr.simulated}"))


# -- what-if: a join whose strategy changes changes the plan around its stages ------------

_REQ_CLUSTERED = "ClusteredDistribution(join keys)"


def _find(frags: list[Fragment], idx: int) -> tuple[Optional[Fragment], Optional[StageNode]]:
    for fr in frags:
        for n in fr.root.walk():
            if n.idx == idx:
                return fr, n
    return None, None


def _leaf_of(n: StageNode) -> Optional[StageNode]:
    """The shuffle stage leaf of a join child: itself, or under a local Sort."""
    if n.is_shuffle_stage:
        return n
    if n.name == "Sort" and len(n.children) == 1 and n.children[0].is_shuffle_stage:
        return n.children[0]
    return None


def _new_join(old: StageNode, strategy: str, left: StageNode, right: StageNode, build: Optional[str]) -> StageNode:
    info = {k: v for k, v in old.info.items() if k in ("join_type", "left_keys", "right_keys")}
    info["skew"] = False
    if strategy == "BroadcastHashJoin":
        info["build_side"] = "BuildRight" if build == "right" else "BuildLeft"
        info["req"] = (["UnspecifiedDistribution", "BroadcastDistribution"] if build == "right"
                       else ["BroadcastDistribution", "UnspecifiedDistribution"])
    else:
        info["req"] = [_REQ_CLUSTERED, _REQ_CLUSTERED]
    j = StageNode(old.idx, strategy, f"{strategy} (what-if)", info, [], old.parent, old.pos)
    for pos, child in enumerate((left, right)):
        if strategy == "SortMergeJoin" and child.is_shuffle_stage:
            sort = StageNode(-10_000 - child.idx, "Sort", "Sort (what-if)", {"req": ["UnspecifiedDistribution"]}, [child], j, pos)
            child.parent, child.pos = sort, 0
            j.children.append(sort)
        else:
            child.parent, child.pos = j, pos
            j.children.append(child)
    if old.parent is not None:
        old.parent.children[old.pos] = j
    return j


def _restage(fr: Fragment) -> None:
    fr.stages = [n for n in fr.root.walk() if n.is_stage]


def rewrite_joins(ctx: Context, frags: list[Fragment], joins: list[JoinResult], qr: QueryResult) -> list[Fragment]:
    """Put each join whose simulated strategy differs from Spark's into the shape the new
    strategy has, so the shuffle-read rules run on the plan Spark would have built: a broadcast
    build side leaves the join's stage for a broadcast stage of its own (where it gets a local
    read), a sort-merge/shuffled-hash join reads both shuffle stages. Statistics stay as captured."""
    frags = list(frags)
    for jr in joins:
        fr, node = _find(frags, jr.node)
        if fr is None or node is None or len(node.children) != 2:
            continue
        if jr.spark == "BroadcastHashJoin":  # Spark broadcast at run time; the what-if does not
            build = node.info.get("build_side", "")
            bq_pos = 1 if build == "BuildRight" else 0
            bq, stream = node.children[bq_pos], node.children[1 - bq_pos]
            src = _broadcast_source(ctx, bq) if bq.name == "BroadcastQueryStage" else None
            if src is None or not stream.is_shuffle_stage:
                continue
            bfr = next((f for f in frags if f.root.idx == src.idx), None)
            build_leaf = bfr.root if bfr is not None else src
            if bfr is not None:
                frags.remove(bfr)
            build_leaf.parent = None
            left, right = (stream, build_leaf) if bq_pos == 1 else (build_leaf, stream)
            j = _new_join(node, jr.simulated or "SortMergeJoin", left, right, None)
        elif jr.simulated == "BroadcastHashJoin":
            left, right = _leaf_of(node.children[0]), _leaf_of(node.children[1])
            if left is None or right is None:
                continue
            build_leaf, stream = (right, left) if jr.simulated_build_side == "right" else (left, right)
            bq = StageNode(-20_000 - build_leaf.idx, "BroadcastQueryStage", "BroadcastQueryStage (what-if)", {})
            l2, r2 = (stream, bq) if jr.simulated_build_side == "right" else (bq, stream)
            j = _new_join(node, "BroadcastHashJoin", l2, r2, jr.simulated_build_side)
            build_leaf.parent, build_leaf.pos = None, 0
            nf = Fragment(len(frags), build_leaf, False, [build_leaf], fr.main)
            frags.append(nf)
        elif {jr.spark, jr.simulated} <= {"SortMergeJoin", "ShuffledHashJoin"}:
            left, right = _leaf_of(node.children[0]), _leaf_of(node.children[1])
            if left is None or right is None:
                continue
            j = _new_join(node, jr.simulated or jr.spark, left, right, None)
        else:
            continue
        if fr.root is node:
            fr.root = j
        _restage(fr)
        qr.notes.append(f"join at node {jr.node}: {jr.spark} becomes {jr.simulated} under these settings; its stages'"
                        " reads are simulated on that plan (statistics as captured)")
    for k, f in enumerate(frags):
        f.fid = k
    return frags

