"""Join replanning: re-decide each join's strategy from its stages' runtime statistics (runtime
broadcast, demotion, shuffled hash join), and, in a what-if, put a join whose strategy changes
into the shape the new strategy has so the shuffle-read rules run on the plan Spark would build.
"""
from __future__ import annotations

import re
from typing import Any, Optional

from aqe_core import config
from aqe_core.config import AQEConf
from aqe_core.engine.join_sides import JoinSide, earlier_side, join_side, needs_new_shuffle, side_bytes
from aqe_core.engine.results import UNCHANGED, UNDECIDED_INITIAL, UNDECIDED_NEW_STAGE, UNDECIDED_SHAPE, JoinResult, QueryResult
from aqe_core.engine.stage_plan import READS, WRAPPERS, Context, Fragment, StageNode
from aqe_core.model.reasons import Reason
from aqe_core.model.scala_text import split_top_level
from aqe_core.rules.convert_sort_merge_join_to_shuffled_hash_join import choose_shuffled_hash_join_build_side
from aqe_core.rules.demote_broadcast_hash_join import NO_BROADCAST_HASH
from aqe_core.rules.dynamic_join_selection import PREFER_SHUFFLE_HASH, SHUFFLE_HASH, select_join_hints
from aqe_core.rules import join_selection_helper as jsh
from aqe_core.rules.join_selection_helper import broadcast_threshold, can_build_broadcast_left, can_build_broadcast_right
from aqe_core.rules.join_type import normalize_join_type
from aqe_core.units import format_bytes
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


def decide_joins(ctx: Context, frags: list[Fragment]) -> list[JoinResult]:
    """Re-decide every join's strategy from the runtime statistics of its sides. A join we cannot
    re-decide keeps ``simulated = None`` with the reason: it is *undecided*, never agreeing."""
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
            if len(node.children) != 2 or not key:
                jr.reasons.append(UNDECIDED_SHAPE.reason())
            elif jr.initial is None:
                jr.reasons.append(UNDECIDED_INITIAL.reason())
            elif jr.initial == "BroadcastHashJoin":
                jr.simulated = "BroadcastHashJoin"
                jr.reasons.append(jsh.PLANNED_BROADCAST.reason())
            else:
                _decide_join(ctx, jr, node)
    return out


def runtime_broadcast_threshold(conf: AQEConf, v: SparkVersion) -> tuple[int, str]:
    """(the threshold AQE re-plans a join with over runtime statistics, the key it comes from):
    ``spark.sql.adaptive.autoBroadcastJoinThreshold`` where set (3.2+), else the static one."""
    aqe = config.ADAPTIVE_AUTO_BROADCASTJOIN_THRESHOLD
    key = aqe if v >= SparkVersion(3, 2, 0) and conf.get(aqe) is not None else config.AUTO_BROADCASTJOIN_THRESHOLD
    return broadcast_threshold(conf, spark_version=v, runtime_stats=True), key


def fits_threshold(size: int, threshold: int) -> bool:
    """``canBroadcastBySize``'s comparison (:func:`~aqe_core.rules.join_selection_helper.fits_broadcast_threshold`)."""
    return jsh.fits_broadcast_threshold(size, threshold)


def _threshold_key(ctx: Context, side: JoinSide) -> str:
    v, aqe = ctx.v, config.ADAPTIVE_AUTO_BROADCASTJOIN_THRESHOLD
    if side.is_runtime and v >= SparkVersion(3, 2, 0) and ctx.conf.get(aqe) is not None:
        return aqe
    return config.AUTO_BROADCASTJOIN_THRESHOLD


def _broadcastable(ctx: Context, name: str, side: JoinSide, hint: Optional[str], can_build: bool,
                   jt: str) -> tuple[Optional[bool], Optional[Reason]]:
    """``canBroadcastBySize`` and the hints for one side: True / False, or None when its size is
    unknown and would matter; with the sentence that says which size decided."""
    if not can_build:
        return False, jsh.CANNOT_BUILD_SIDE.reason(subject={"side": name}, join_type=jt, name=name)
    thr = broadcast_threshold(ctx.conf, spark_version=ctx.v, runtime_stats=side.is_runtime)
    key = _threshold_key(ctx, side)
    kind = "adaptive" if key == config.ADAPTIVE_AUTO_BROADCASTJOIN_THRESHOLD else "static"
    if thr < 0:
        return False, jsh.BROADCAST_OFF.reason(numbers={"threshold": thr}, config_keys=(key,), subject={"side": name},
                                               name=name, how=side.how, key=key, threshold=thr)
    if side.size is None:
        return None, jsh.SIZE_UNKNOWN.reason(numbers={"threshold": thr}, config_keys=(key,), subject={"side": name},
                                             name=name, why=side.unknown)
    size = side.size
    subject = {"side": name, **({"stage_id": side.stage_id} if side.stage_id is not None else {})}
    adaptive_set = ctx.v >= SparkVersion(3, 2, 0) and ctx.conf.get(config.ADAPTIVE_AUTO_BROADCASTJOIN_THRESHOLD) is not None
    why = "" if side.is_runtime or not adaptive_set else (
        " (Spark's size-only statistics of the operators above the query stage are not runtime statistics,"
        " so the static threshold applies)")
    numbers = {"size": size, "threshold": thr}
    fields: dict[str, Any] = {"name": name, "size": format_bytes(size), "how": side.how, "kind": kind, "threshold": format_bytes(thr)}
    if not jsh.fits_broadcast_threshold(size, thr):
        return False, jsh.TOO_BIG_TO_BROADCAST.reason(numbers=numbers, config_keys=(key,), subject=subject, why=why,
                                                      **fields)
    if hint in (NO_BROADCAST_HASH, SHUFFLE_HASH):
        return False, jsh.DEMOTED.reason(numbers=numbers, subject=subject, **fields,
                                         config_keys=(key, config.NON_EMPTY_PARTITION_RATIO_FOR_BROADCAST_JOIN))
    return True, jsh.RUNTIME_BROADCAST.reason(numbers=numbers, config_keys=(key,), subject=subject, why=why, **fields)


def _broadcast_before_stage(ctx: Context, jr: JoinResult, sides: dict[str, JoinSide]) -> bool:
    """A side whose shuffle stage sits over other stages: when those finished, AQE re-planned
    the join with the stage's input as the side. Broadcastable then, it is broadcast at once
    and the stage above it is never created."""
    jt = jr.join_type
    for name, side in sides.items():
        earlier = earlier_side(ctx, side)
        if earlier is None:
            continue
        can = can_build_broadcast_left(jt) if name == "left" else can_build_broadcast_right(jt)
        ok, why = _broadcastable(ctx, name, earlier[1], None, can, jt)
        if ok and why is not None:
            jr.simulated, jr.simulated_build_side, jr.simulated_build_root = "BroadcastHashJoin", name, earlier[0]
            jr.reasons.append(jsh.BROADCAST_BEFORE_STAGE.reason(numbers=why.numbers, config_keys=why.config_keys,
                                                                subject=why.subject, why=why.message, how=side.how))
            return True
    return False


def _decide_join(ctx: Context, jr: JoinResult, node: StageNode) -> None:
    v, conf, jt = ctx.v, ctx.conf, jr.join_type
    left, right = join_side(ctx, node.children[0].idx), join_side(ctx, node.children[1].idx)
    if _broadcast_before_stage(ctx, jr, {"left": left, "right": right}):
        return
    lb, rb = side_bytes(ctx, left), side_bytes(ctx, right)  # hints only on direct shuffle-stage sides
    lh, rh = select_join_hints(lb, rb, jt, conf, spark_version=v)
    jr.reasons += lh.reasons + rh.reasons
    lok, lwhy = _broadcastable(ctx, "left", left, lh.hint, can_build_broadcast_left(jt), jt)
    rok, rwhy = _broadcastable(ctx, "right", right, rh.hint, can_build_broadcast_right(jt), jt)
    if lok is None or rok is None:
        jr.reasons += [r for r in (lwhy, rwhy) if r is not None and r.code == jsh.SIZE_UNKNOWN]
        return
    if lok and rok:
        build: Optional[str] = "right" if (right.size or 0) <= (left.size or 0) else "left"
    else:
        build = "left" if lok else "right" if rok else None
    if build is not None:
        jr.simulated, jr.simulated_build_side = "BroadcastHashJoin", build
        jr.reasons.append(lwhy if build == "left" else rwhy)  # type: ignore[arg-type]
        return
    if ctx.what_if and jr.spark == "BroadcastHashJoin":
        spark_build = 1 if node.info.get("build_side") == "BuildRight" else 0
        thr = broadcast_threshold(conf, spark_version=v, runtime_stats=True)
        if thr >= 0 and needs_new_shuffle(ctx, node.children[spark_build].idx):
            side_name = ("left", "right")[spark_build]
            jr.reasons.append(UNDECIDED_NEW_STAGE.reason(form="union", side=side_name, about={"side": side_name}))
            return
    jr.reasons += [r for r in (lwhy, rwhy) if r is not None]
    if v < SparkVersion(4, 3, 0):
        shj = (lh.hint in (SHUFFLE_HASH, PREFER_SHUFFLE_HASH) and jt in ("Inner", "Cross", "RightOuter")) or \
              (rh.hint in (SHUFFLE_HASH, PREFER_SHUFFLE_HASH) and jt in
               ("Inner", "Cross", "LeftOuter", "LeftSemi", "LeftAnti", "ExistenceJoin"))
        jr.simulated = "ShuffledHashJoin" if shj else "SortMergeJoin"
    else:
        choice = choose_shuffled_hash_join_build_side(lb, rb, jt, conf, spark_version=v, is_skew_join=False)
        if choice.build_side or conf.get_or(config.ADAPTIVE_MAX_SHUFFLE_HASH_JOIN_LOCAL_MAP_THRESHOLD, 0) > 0:
            jr.reasons += choice.reasons
        jr.simulated = "ShuffledHashJoin" if choice.build_side else "SortMergeJoin"
    if jr.simulated == jr.initial:
        jr.reasons.append(UNCHANGED.reason(strategy=jr.simulated))


# -- what-if: a join whose strategy changes changes the plan around its stages ------------

_REQ_CLUSTERED = "ClusteredDistribution(join keys)"


def _find(frags: list[Fragment], idx: int) -> tuple[Optional[Fragment], Optional[StageNode]]:
    for fr in frags:
        for n in fr.root.walk():
            if n.idx == idx:
                return fr, n
    return None, None


def _side_of(n: StageNode) -> StageNode:
    """A join child without the local Sort a sort-merge join puts above it."""
    local = "(what-if)" in n.desc or ", false," in n.desc  # not an ORDER BY's global sort
    return n.children[0] if n.name == "Sort" and len(n.children) == 1 and local else n


def _broadcast_root(ctx: Context, bq: StageNode) -> Optional[int]:
    """Plan index of the root of the fragment a broadcast stage broadcasts (what
    :meth:`PlanIndex.fragments` starts it from: past codegen wrappers and an adaptive read)."""
    p = ctx.plan
    kids = p.kids[bq.idx] if bq.idx >= 0 else []
    if not kids or not p.name(kids[0]).startswith("BroadcastExchange") or not p.kids[kids[0]]:
        return None
    i = p.kids[kids[0]][0]
    while p.name(i).startswith(WRAPPERS) and p.kids[i]:
        i = p.kids[i][0]
    if p.name(i) in READS and p.kids[i]:
        i = p.kids[i][0]
    return i


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
        if strategy == "SortMergeJoin" and child.name != "Sort":
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


def _drop_broadcast_stage(ctx: Context, frags: list[Fragment], node: StageNode, qr: QueryResult) -> None:
    """Spark broadcast a shuffle stage made above the side's input; the what-if broadcasts that
    input as soon as it finished, so the stage (and its read) never exist."""
    bq = node.children[1 if node.info.get("build_side") == "BuildRight" else 0]
    root = _broadcast_root(ctx, bq) if bq.name == "BroadcastQueryStage" else None
    bfr = next((f for f in frags if f.root.idx == root), None) if root is not None else None
    if bfr is None or not bfr.root.is_shuffle_stage:
        return
    frags.remove(bfr)
    ctx.removed_stages.add(bfr.root.idx)
    qr.notes.append(f"join at node {node.idx}: broadcast as soon as its side's input finished under these settings;"
                    " the shuffle stage Spark made above that input is never created")


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
        if jr.spark == jr.simulated == "BroadcastHashJoin":  # broadcast earlier, before a stage above its input
            _drop_broadcast_stage(ctx, frags, node, qr)
            continue
        if jr.spark == "BroadcastHashJoin":  # Spark broadcast at run time; the what-if does not
            build = node.info.get("build_side", "")
            bq_pos = 1 if build == "BuildRight" else 0
            bq, stream = node.children[bq_pos], _side_of(node.children[1 - bq_pos])
            root = _broadcast_root(ctx, bq) if bq.name == "BroadcastQueryStage" else None
            bfr = next((f for f in frags if f.root.idx == root), None) if root is not None else None
            if bfr is None:
                continue
            frags.remove(bfr)
            build_leaf = bfr.root
            build_leaf.parent = None
            left, right = (stream, build_leaf) if bq_pos == 1 else (build_leaf, stream)
            j = _new_join(node, jr.simulated or "SortMergeJoin", left, right, None)
        elif jr.simulated == "BroadcastHashJoin":
            left, right = _side_of(node.children[0]), _side_of(node.children[1])
            build_leaf, stream = (right, left) if jr.simulated_build_side == "right" else (left, right)
            if jr.simulated_build_root is not None:  # broadcast the stage's input: the stage goes away
                inner = next((f for f in frags if f.root.idx == jr.simulated_build_root), None)
                if inner is None:
                    continue
                frags.remove(inner)
                ctx.removed_stages.add(build_leaf.idx)
                build_leaf = inner.root
            bq = StageNode(-20_000 - build_leaf.idx, "BroadcastQueryStage", "BroadcastQueryStage (what-if)", {})
            l2, r2 = (stream, bq) if jr.simulated_build_side == "right" else (bq, stream)
            j = _new_join(node, "BroadcastHashJoin", l2, r2, jr.simulated_build_side)
            build_leaf.parent, build_leaf.pos = None, 0
            nf = Fragment(len(frags), build_leaf, False, [n for n in build_leaf.walk() if n.is_stage], fr.main)
            frags.append(nf)
        elif {jr.spark, jr.simulated} <= {"SortMergeJoin", "ShuffledHashJoin"}:
            left, right = _side_of(node.children[0]), _side_of(node.children[1])
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

