"""What AQE changed between two plans of one query (initial vs final adaptive plan, or two
consecutive plan versions), as structured change records.

Matching: :mod:`aqe_core.views.plan_match` (wrappers dropped, GumTree-style).

Classification of every later-plan node (path ids as in :mod:`aqe_core.figures.plan_paths`):
shuffle reads by their description (``coalesced``, ``skewed``, ``coalesced and skewed``,
``local``; 3.0's ``CustomShuffleReader`` SkewDesc text), ``...(skew=true)`` joins, join
strategy changes (SMJ → broadcast / shuffled hash), empty relations that replaced a subtree,
other new operators; earlier-plan operators without a partner are ``removed``. A read or skew
flag that was already there in the earlier plan is not reported again.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any, Iterator, Sequence

from aqe_core import config
from aqe_core.model.engines import operator_of
from aqe_core.model.plan import PlanNode
from aqe_core.model.plan_walk import SHUFFLE_READ_NAMES, exchange_below, partitioning_count
from aqe_core.views.plan_match import (  # noqa: F401  (the signature helpers stay importable from here)
    _JOINS,
    _RE_FINAL,
    _RE_PLAN_ID,
    _RE_STATS,
    _SKEW_SUFFIX,
    _WRAPPERS,
    _canonical,
    _compatible,
    _match,
    _match_bottom_up,
    _match_identical,
    _match_leftovers,
    _norm_desc,
    _sig,
    _Tree,
    base_name,
    is_empty_relation,
    is_join,
    is_wrapper,
    match_reused,
    names_only,
)

# --- change kinds (stable strings, in legend / priority order) ------------------------------
SMJ_TO_BROADCAST = "SMJ -> broadcast"
SMJ_TO_SHUFFLED_HASH = "SMJ -> shuffled hash"
JOIN_CHANGED = "join strategy changed"
SKEW_JOIN = "skew join"
COALESCED_AND_SKEWED = "coalesced and skewed"
SKEWED_READ = "skewed read"
COALESCED_READ = "coalesced read"
LOCAL_READ = "local read"
SHUFFLE_READ = "shuffle read"
EMPTY_PRUNED = "empty relation pruned"
NEW_NODE = "new node"
REMOVED = "removed"

CHANGE_KINDS: tuple[str, ...] = (
    SMJ_TO_BROADCAST, SMJ_TO_SHUFFLED_HASH, JOIN_CHANGED, SKEW_JOIN, COALESCED_AND_SKEWED, SKEWED_READ,
    COALESCED_READ, LOCAL_READ, SHUFFLE_READ, EMPTY_PRUNED, NEW_NODE, REMOVED,
)

_RE_SKEWDESC = re.compile(r"^(\d+) skewed partitions? with size\((.*)\)\s*$")
_RE_STAGE_NO = re.compile(r"^((?:Shuffle|Broadcast|TableCache|Result)QueryStage) \d+")


@dataclass(frozen=True)
class Change:
    """One AQE change. ``path`` is a path id in the later plan (``side == "after"``) or, for
    ``removed``, in the earlier plan (``side == "before"``)."""

    path: str
    kind: str
    label: str
    explanation: str
    node_name: str
    side: str = "after"
    before_path: str | None = None
    #: other earlier-plan paths summarised by this record (operators removed below it)
    related: tuple[str, ...] = ()

    def to_dict(self) -> dict[str, Any]:
        return {
            "path": self.path, "kind": self.kind, "label": self.label, "node": self.node_name,
            "explanation": self.explanation, "side": self.side, "before_path": self.before_path,
            "related": list(self.related),
        }


@dataclass
class PlanDiff:
    """Change records (iterable like a list of :class:`Change`) plus the node matching."""

    changes: list[Change]
    #: later-plan path -> earlier-plan path, for matched operators (wrappers not included)
    matches: dict[str, str] = field(default_factory=dict)

    def __iter__(self) -> Iterator[Change]:
        return iter(self.changes)

    def __len__(self) -> int:
        return len(self.changes)

    def __getitem__(self, i: int) -> Change:
        return self.changes[i]

    def __bool__(self) -> bool:
        return bool(self.changes)

    def for_path(self, path: str, side: str = "after") -> list[Change]:
        return [c for c in self.changes if c.path == path and c.side == side]

    def by_kind(self) -> dict[str, list[Change]]:
        out: dict[str, list[Change]] = {}
        for c in self.changes:
            out.setdefault(c.kind, []).append(c)
        return out

    def kinds(self) -> list[str]:
        return [c.kind for c in self.changes]

    def table(self) -> list[dict[str, Any]]:
        return [c.to_dict() for c in self.changes]


# --------------------------------------------------------------------------------------------
# helpers for explanations
# --------------------------------------------------------------------------------------------
def _metric_total(node: PlanNode, name: str) -> int | None:
    for m in node.metrics:
        if m.get("name") == name:
            v = m.get("total", m.get("value"))
            if isinstance(v, bool):
                return None
            if isinstance(v, (int, float)):
                return int(v)
            if isinstance(v, str):
                s = v.replace(",", "").strip()
                if s.isdigit():
                    return int(s)
            return None
    return None


def _through_wrapper(node: PlanNode) -> bool:
    return is_wrapper(node) or node.name == "ReusedExchange"


def _exchange_below(node: PlanNode) -> PlanNode | None:
    """The shuffle exchange a read reads: only through wrappers and ``ReusedExchange``."""
    return exchange_below(node, through=_through_wrapper)


def read_kind(node: PlanNode) -> tuple[str, str] | None:
    """(kind, short label) of an adaptive shuffle read from its description."""
    name = node.name or ""
    if name not in SHUFFLE_READ_NAMES:
        return None
    desc = (node.description or "")
    rest = desc[len(name):].strip() if desc.startswith(name) else desc.strip()
    if rest == "local":
        return LOCAL_READ, "local read"
    if rest == "coalesced and skewed":
        return COALESCED_AND_SKEWED, "coalesced and skewed"
    if rest == "coalesced":
        return COALESCED_READ, "coalesced"
    if rest == "skewed":
        return SKEWED_READ, "skewed"
    m = _RE_SKEWDESC.match(rest)
    if m:
        n = int(m.group(1))
        return SKEWED_READ, f"{n} skewed partition{'s' if n != 1 else ''}"
    if rest == "no skewed partition":
        return SHUFFLE_READ, "skew-join side, no skewed partition"
    return SHUFFLE_READ, "shuffle read"


def _read_explanation(node: PlanNode, kind: str) -> str:
    ex = _exchange_below(node)
    before = partitioning_count(ex.description or "") if ex is not None else None
    parts_n = _metric_total(node, "number of partitions")
    if parts_n is None:  # (RAPIDS' GpuCustomShuffleReader calls it "partitions": aqe_core/model/engines.py)
        parts_n = _metric_total(node, "partitions")
    coalesced = _metric_total(node, "number of coalesced partitions")
    skewed = _metric_total(node, "number of skewed partitions")
    splits = _metric_total(node, "number of skewed partition splits")
    empty = _metric_total(node, "number of empty partitions")
    counts = []
    if before is not None and parts_n is not None:
        counts.append(f"the exchange has {before} partitions, this read has {parts_n}")
    elif before is not None:
        counts.append(f"the exchange has {before} partitions")
    elif parts_n is not None:
        counts.append(f"this read has {parts_n} partitions")
    if coalesced is not None:
        counts.append(f"{coalesced} coalesced partition{'s' if coalesced != 1 else ''}")
    if skewed is not None:
        counts.append(f"{skewed} skewed partition{'s' if skewed != 1 else ''}"
                      + (f" split into {splits}" if splits is not None else ""))
    if empty:
        counts.append(f"{empty} empty partition{'s' if empty != 1 else ''} in the shuffle")
    tail = f" ({'; '.join(counts)})." if counts else "."
    desc = node.description or ""
    if kind == COALESCED_READ:
        return ("CoalesceShufflePartitions merged adjacent small shuffle partitions up to the advisory partition "
                "size, so fewer and bigger tasks read this shuffle" + tail)
    if kind == SKEWED_READ:
        m = _RE_SKEWDESC.match(desc[len(node.name):].strip() if desc.startswith(node.name) else desc)
        extra = f" Spark reports size({m.group(2)})." if m else ""
        return ("OptimizeSkewedJoin split the skewed partitions of this join side into several smaller reads; the "
                "matching partitions of the other side are read once per split" + tail + extra)
    if kind == COALESCED_AND_SKEWED:
        return ("OptimizeSkewedJoin split the skewed partitions of this join side and CoalesceShufflePartitions "
                "merged the small ones" + tail)
    if kind == LOCAL_READ:
        return ("OptimizeShuffleWithLocalRead (OptimizeLocalShuffleReader in 3.0/3.1): this shuffle is read per map "
                "output, locally on the executor that wrote it, without a network shuffle; this happens when a "
                "sort-merge join became a broadcast hash join (probe side) or when the stage is the query's root"
                + tail)
    if "no skewed partition" in desc:
        return ("Spark 3.0 OptimizeSkewedJoin wrapped both sides of the skew join: this side had no skewed "
                "partition; its partitions are repeated to line up with the other side's splits and the non-skewed "
                "ones are coalesced" + tail)
    return "An adaptive shuffle read without coalesced or split partitions" + tail


def _join_explanation(kind: str, a: PlanNode | None, b: PlanNode) -> str:
    build = ""
    m = re.search(r"\bBuild(Left|Right)\b", b.description or "")
    if m:
        build = f" (build side: {m.group(1).lower()})"
    if kind == SMJ_TO_BROADCAST:
        return ("At runtime one join input turned out small enough to broadcast (at most "
                f"{config.ADAPTIVE_AUTO_BROADCASTJOIN_THRESHOLD}, or {config.AUTO_BROADCASTJOIN_THRESHOLD} before 3.2), "
                f"so AQE re-planned the sort-merge join as a broadcast hash join{build}: the sorts are gone and "
                "the other side usually gets a local shuffle read.")
    if kind == SMJ_TO_SHUFFLED_HASH:
        return ("AQE replaced the sort-merge join by a shuffled hash join"
                f"{build}: every partition of the build side fits the local hash map limit "
                f"({config.ADAPTIVE_MAX_SHUFFLE_HASH_JOIN_LOCAL_MAP_THRESHOLD}; DynamicJoinSelection in 3.2–4.2, "
                "ConvertSortMergeJoinToShuffledHashJoin in 4.3), so the sorts are no longer needed.")
    if kind == SKEW_JOIN:
        return ("OptimizeSkewedJoin handles skew in this join: partitions larger than the skew threshold "
                "(max(skewedPartitionThresholdInBytes, median x skewedPartitionFactor)) are split into several "
                "tasks and the matching partitions of the other side are repeated.")
    was = base_name(a.name) if a is not None else "?"
    return f"AQE re-planned this join at runtime: it was a {was} and is now a {base_name(b.name)}{build}."


def _count_ops(node: PlanNode) -> int:
    return sum(1 for n in node.walk() if not is_wrapper(n))


# --------------------------------------------------------------------------------------------
# public API
# --------------------------------------------------------------------------------------------
def classify_node(node: PlanNode) -> list[tuple[str, str, str]]:
    """Changes evident from one node alone (no earlier plan): ``[(kind, label, explanation)]``."""
    out = []
    rk = read_kind(node)
    if rk is not None:
        out.append((rk[0], rk[1], _read_explanation(node, rk[0])))
    elif is_join(node.name or "") and (node.name or "").endswith(_SKEW_SUFFIX):
        out.append((SKEW_JOIN, "skew join", _join_explanation(SKEW_JOIN, None, node)))
    return out


def diff_plans(before: PlanNode | None, after: PlanNode) -> PlanDiff:
    """Changes from ``before`` (initial plan, or the previous version) to ``after``.

    With ``before=None`` only self-evident changes are reported (shuffle reads, skew joins).
    """
    if after is None:
        return PlanDiff([], {})
    intern: dict = {}
    by_names = names_only(before, after)  # Spark's names against an engine's: compare names, not descriptions
    B = _Tree(after, intern, by_names)
    if before is None:
        changes = []
        for i, node in enumerate(B.nodes):
            for kind, label, expl in classify_node(node):
                changes.append(Change(B.paths[i], kind, label, expl, node.name))
        return PlanDiff(_sorted(changes), {})
    A = _Tree(before, intern, by_names)
    ma, mb = _match(A, B)
    reused = match_reused(A, B, ma, mb)
    # joins first (the new/removed explanations refer to them)
    join_changed_at = _join_changes(A, B, mb)
    changes, empty_replaced = _later_changes(A, B, ma, mb, join_changed_at)
    converted = {a for a, node in enumerate(A.nodes) if ma[a] < 0 and base_name(node.name) == "Sort"
                 and A.parent[a] >= 0 and ma[A.parent[a]] in B.engine_rewrites}  # (sorts the engine's hash join dropped)
    changes += _removed(A, ma, join_changed_at, empty_replaced, reused | A.fused | converted)
    matches = {B.paths[b]: A.paths[mb[b]] for b in range(len(B.paths)) if mb[b] >= 0}
    return PlanDiff(_sorted(changes), matches)


def _engine_rewrite(before: str, node: PlanNode) -> bool:
    """The engine, not AQE, made this join a hash join (a sort-merge join it runs as a shuffled
    hash join: :attr:`aqe_core.model.engines.Engine.own` ``smj_as_hash``)."""
    hit = operator_of(node.name or "")
    return (hit is not None and hit[0].own_decision("smj_as_hash") is not None
            and before == "SortMergeJoin" and base_name(node.name) == "ShuffledHashJoin")


def _join_changes(A: _Tree, B: _Tree, mb: list[int]) -> dict[int, str]:
    """B index -> change kind, for every matched join whose strategy changed (AQE's: an engine's
    renaming is no change, its own rewrite of a sort-merge join is in ``B.engine_rewrites``)."""
    join_changed_at: dict[int, str] = {}  # B index -> kind
    for b, node in enumerate(B.nodes):
        a = mb[b]
        name = node.name or ""
        if not is_join(name) or a < 0:
            continue
        an = A.nodes[a]
        ba, bb = _canonical(an), _canonical(node)
        if ba != bb and _engine_rewrite(ba, node):
            B.engine_rewrites.add(b)
        elif ba != bb:
            if ba == "SortMergeJoin" and bb == "BroadcastHashJoin":
                join_changed_at[b] = SMJ_TO_BROADCAST
            elif ba == "SortMergeJoin" and bb == "ShuffledHashJoin":
                join_changed_at[b] = SMJ_TO_SHUFFLED_HASH
            else:
                join_changed_at[b] = JOIN_CHANGED
    return join_changed_at


def _later_changes(A: _Tree, B: _Tree, ma: list[int], mb: list[int],
                   join_changed_at: dict[int, str]) -> tuple[list[Change], dict[int, int]]:
    """Changes on the later plan's operators (joins, reads, skew joins, empty relations, new
    nodes), and A index of each replaced subtree root -> B index of its empty relation."""
    changes: list[Change] = []
    empty_replaced: dict[int, int] = {}  # A index of replaced subtree root -> B index of empty relation
    for b, node in enumerate(B.nodes):
        a = mb[b]
        an = A.nodes[a] if a >= 0 else None
        name = node.name or ""
        path = B.paths[b]
        bpath = A.paths[a] if a >= 0 else None
        if b in join_changed_at:
            assert an is not None  # (_join_changes keeps matched joins only)
            kind = join_changed_at[b]
            label = {SMJ_TO_BROADCAST: "SMJ → broadcast hash join",
                     SMJ_TO_SHUFFLED_HASH: "SMJ → shuffled hash join"}.get(kind, f"{base_name(an.name)} → {base_name(name)}")
            changes.append(Change(path, kind, label, _join_explanation(kind, an, node), name, before_path=bpath))
        rk = read_kind(node)
        if rk is not None:
            if an is None or (an.name, _norm_desc(an)) != (name, _norm_desc(node)):
                changes.append(Change(path, rk[0], rk[1], _read_explanation(node, rk[0]), name, before_path=bpath))
            continue
        if is_join(name) and name.endswith(_SKEW_SUFFIX) and not (an is not None and an.name.endswith(_SKEW_SUFFIX)):
            changes.append(Change(path, SKEW_JOIN, "skew join", _join_explanation(SKEW_JOIN, an, node), name,
                                  before_path=bpath))
            continue
        if is_empty_relation(node):
            if an is not None and is_empty_relation(an):
                continue
            replaced = a if a >= 0 else _replaced_subtree(A, B, ma, mb, b)
            if replaced is not None and replaced >= 0:
                empty_replaced[replaced] = b
                rn = A.nodes[replaced]
                k = _count_ops(rn)
                expl = (f"AQEPropagateEmptyRelation: a query stage produced no rows at runtime, so the {rn.name} "
                        f"subtree ({k} operator{'s' if k != 1 else ''} in the earlier plan) was replaced by an "
                        "empty relation and never runs.")
                changes.append(Change(path, EMPTY_PRUNED, "empty relation", expl, name, before_path=A.paths[replaced]))
            else:
                changes.append(Change(path, EMPTY_PRUNED, "empty relation",
                                      "AQE replaced part of the plan by an empty relation: a query stage produced "
                                      "no rows at runtime (AQEPropagateEmptyRelation).", name))
            continue
        if a < 0:
            changes.append(Change(path, NEW_NODE, "new", _new_explanation(B, b, mb, join_changed_at), name))
    return changes, empty_replaced


def _removed(A: _Tree, ma: list[int], join_changed_at: dict[int, str], empty_replaced: dict[int, int],
             reused: set[int] = frozenset()) -> list[Change]:  # type: ignore[assignment]
    """Unmatched earlier-plan operators, one record per maximal removed subtree (not those
    under an exchange whose stage the later plan reuses: they run once, elsewhere)."""
    changes: list[Change] = []
    for a, node in enumerate(A.nodes):
        if ma[a] >= 0 or a in reused:
            continue
        pa = A.parent[a]
        if pa >= 0 and ma[pa] < 0:
            continue  # summarised by an ancestor's record
        related = tuple(A.paths[x] for x in A.subtree(a) if x != a and ma[x] < 0)
        if a in empty_replaced:
            expl = "Replaced by an empty relation at runtime (AQEPropagateEmptyRelation)."
        elif pa >= 0 and ma[pa] in join_changed_at and base_name(node.name) == "Sort":
            expl = "No longer needed: the sort-merge join above it was re-planned as a hash join."
        else:
            expl = "Operator of the earlier plan that is not in the later plan."
        if related:
            expl += f" {len(related)} more operator{'s' if len(related) != 1 else ''} below it went too."
        changes.append(Change(A.paths[a], REMOVED, "removed", expl, node.name, side="before", related=related))
    return changes


def _replaced_subtree(A: _Tree, B: _Tree, ma: list[int], mb: list[int], b: int) -> int | None:
    """The earlier-plan subtree an (unmatched) empty relation took the place of."""
    pb = B.parent[b]
    if pb < 0:
        return 0 if A.paths and ma[0] < 0 else None
    pa = mb[pb]
    if pa < 0:
        return None
    free = [a for a in A.children[pa] if ma[a] < 0]
    if not free:
        return None
    pos = B.children[pb].index(b)
    same = [a for a in free if A.children[pa].index(a) == pos]
    return same[0] if same else free[0]


def _new_explanation(B: _Tree, b: int, mb: list[int], join_changed_at: dict[int, str]) -> str:
    node = B.nodes[b]
    name = base_name(node.name or "")  # (an engine's exchange is Spark's)
    # nearest operator ancestor that changed join strategy
    p = B.parent[b]
    hops = 0
    while p >= 0 and hops < 3:
        if p in join_changed_at:
            if name == "BroadcastExchange":
                return "Inserted with the broadcast hash join: the small side is collected and broadcast to every task."
            return f"Added when AQE re-planned the join above it ({join_changed_at[p]})."
        p = B.parent[p]
        hops += 1
    if name == "ReusedExchange":  # reuse is reuse: no new exchange runs here
        return ("Reuse: this stage reads the output of an identical exchange elsewhere in the plan, which runs"
                " once (exchange reuse); nothing new is shuffled here.")
    if name.endswith("Exchange"):
        return "A new exchange: added by EnsureRequirements after a runtime re-plan."
    return "Operator that is not in the earlier plan (added by a runtime re-plan)."


def _sorted(changes: list[Change]) -> list[Change]:
    """Stable, deterministic order: later-plan changes in plan order, then removals."""
    def key(c: Change):
        return (0 if c.side == "after" else 1, [int(x) for x in c.path.split(".")], CHANGE_KINDS.index(c.kind))
    return sorted(changes, key=key)


def diff_versions(initial: PlanNode | None, versions: Sequence[PlanNode]) -> list[PlanDiff]:
    """One diff per step: initial → versions[0], versions[0] → versions[1], ...

    (With no initial plan the first step reports only self-evident changes.)"""
    out = []
    prev = initial
    for v in versions:
        out.append(diff_plans(prev, v))
        prev = v
    return out


def diff_execution(execution: Any) -> PlanDiff:
    """Initial → final plan of an ``SQLExecution`` (or anything with ``initial_plan`` and
    ``final_plan``)."""
    initial: PlanNode | None = getattr(execution, "initial_plan", None)
    final: PlanNode | None = getattr(execution, "final_plan", None)
    if final is None:
        return PlanDiff([], {})
    if initial is final:
        initial = None
    return diff_plans(initial, final)
