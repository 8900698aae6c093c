"""Matching the operators of two plans of one query, for :mod:`aqe_core.views.plan_diff`.

Matching. Both plans are first reduced to their operators: the wrappers that only exist in
executed adaptive plans (``WholeStageCodegen (n)``, ``InputAdapter``, ``ShuffleQueryStage``,
``BroadcastQueryStage``, ``TableCacheQueryStage``, ``ResultQueryStage``) and the columnar
transitions Spark inserts into each new query stage (``ColumnarToRow``, ``RowToColumnar``:
ApplyColumnarRulesAndInsertTransitions runs after a stage is cut, never on the initial plan)
are dropped, so the initial plan's ``Exchange → Filter → Scan`` lines up with the final plan's
``ShuffleQueryStage → Exchange → Filter → ColumnarToRow → Scan``. A ``ReusedExchange`` is
one operator without the stage it points at when that stage is drawn in full elsewhere (a
capture repeats it under every reuse); when it is the stage's only full drawing (an event
log's plan info draws each exchange once), it only wraps it.
Operator signatures ignore the numbers Spark renumbers on re-planning (``[plan_id=..]``,
``[id=#..]``, ``isFinalPlan``, stage statistics, ``(skew=true)``). An engine's operator is the Spark
operator it stands for (:func:`aqe_core.model.engines.spark_name`: ``PhotonBroadcastHashJoin`` is a
``BroadcastHashJoin``), its wrappers and transitions are dropped like Spark's, and an exchange of
several nodes (Photon's source, map stage and sink) is its sink. When one plan is in Spark's names
and the other in an engine's (an event log's initial plan is Spark's: the engine converts each
stage when AQE creates it), descriptions are not compared (each engine words them its own way):
names, and an exchange's partitioning without its count. Then, GumTree-style:

1. top-down: identical subtrees (same signatures all the way down) are matched;
2. bottom-up: an unmatched operator is matched to the unmatched earlier-plan ancestor of
   its matched descendants' partners that shares most descendants with it (Dice ≥ 0.2) and
   is compatible (same operator, or both joins: a sort-merge join that became a broadcast
   hash join keeps its inputs);
3. top-down leftovers: an unmatched child of a matched pair takes a compatible unmatched
   child of the partner (same position first).
"""
from __future__ import annotations

from functools import lru_cache

import re

from aqe_core.model.engines import engine_of_names, is_engine_wrapper, spark_name
from aqe_core.model.plan import PlanNode
from aqe_core.model.plan_walk import SHUFFLE_READ_NAMES, STAGE_WRAPPERS

#: columnar transitions, inserted when a query stage is created (not AQE re-planning)
TRANSITIONS = ("ColumnarToRow", "RowToColumnar")
_WRAPPERS = STAGE_WRAPPERS + ("InputAdapter",) + TRANSITIONS
REUSED_EXCHANGE = "ReusedExchange"
_JOINS = ("SortMergeJoin", "BroadcastHashJoin", "ShuffledHashJoin", "BroadcastNestedLoopJoin", "CartesianProduct")
_SKEW_SUFFIX = "(skew=true)"

_RE_PLAN_ID = re.compile(r",?\s*\[(?:plan_id=\d+|id=#\d+)\]")
_RE_STATS = re.compile(r",?\s*Statistics\(.*$")
_RE_FINAL = re.compile(r"isFinalPlan=\w+")


# --------------------------------------------------------------------------------------------
# signatures
# --------------------------------------------------------------------------------------------
@lru_cache(maxsize=8192)  # (names and texts repeat: a plan is walked many times, a query run often)
def base_name(name: str) -> str:
    """Spark's name for an operator, without ``(skew=true)`` (an engine's operator: the Spark
    operator it stands for).

    >>> base_name("SortMergeJoin(skew=true)"), base_name("PhotonBroadcastHashJoin")
    ('SortMergeJoin', 'BroadcastHashJoin')
    """
    name = spark_name(name) or name
    return name[: -len(_SKEW_SUFFIX)] if name.endswith(_SKEW_SUFFIX) else name


def _canonical(node: PlanNode) -> str:
    """:func:`base_name` with the node's description (Auron's one broadcast join is a hash or a
    nested-loop join by its keys)."""
    name = spark_name(node.name or "", node.description or "") or (node.name or "")
    return name[: -len(_SKEW_SUFFIX)] if name.endswith(_SKEW_SUFFIX) else name


def is_join(name: str) -> bool:
    b = base_name(name)
    return b in _JOINS or b.endswith("Join")


def is_wrapper(node: PlanNode) -> bool:
    n = node.name or ""
    return n in _WRAPPERS or n.startswith("WholeStageCodegen") or is_engine_wrapper(n)


def is_empty_relation(node: PlanNode) -> bool:
    n = node.name or ""
    d = node.description or ""
    return n == "EmptyRelation" or (n in ("LocalTableScan", "LocalRelation") and "<empty>" in d)


def _norm_desc(node: PlanNode) -> str:
    d = node.description or ""
    if d.startswith(node.name):
        d = d[len(node.name):]
    d = d.replace(_SKEW_SUFFIX, "")
    d = _RE_PLAN_ID.sub("", d)
    d = _RE_STATS.sub("", d)
    d = _RE_FINAL.sub("", d)
    return " ".join(d.split())


_RE_EXPR_ID = re.compile(r"#\d+L?")


def _partitioning(node: PlanNode) -> str:
    """An exchange's description without expression ids."""
    return _RE_EXPR_ID.sub("", _norm_desc(node))


def _sig(node: PlanNode) -> tuple[str, str]:
    return (_canonical(node), _norm_desc(node))


_RE_PARTITIONING = re.compile(r"\b(?:\w*[pP]artitioning\(.*\)|SinglePartition)")
_RE_COUNT = re.compile(r",\s*\d+\)$")


def _sig_names(node: PlanNode) -> tuple[str, str]:
    """A signature that holds across engines: Spark's name, and for an exchange its partitioning
    without its count (an engine may pick the count itself: Photon's auto-optimized shuffle)."""
    name = _canonical(node)
    if name.endswith("Exchange") and name != REUSED_EXCHANGE:
        return (name, _partitioning_kind(node))
    return (name, "")


def _partitioning_kind(node: PlanNode) -> str:
    m = _RE_PARTITIONING.search(_RE_EXPR_ID.sub("", node.description or ""))
    return _RE_COUNT.sub(")", m.group(0)) if m else ""


def _compatible(a: PlanNode, b: PlanNode, names_only: bool = False) -> bool:
    na, nb = _canonical(a), _canonical(b)
    if na == nb:
        # an exchange is its partitioning: AQE never changes one in place (a new shuffle that
        # EnsureRequirements adds after a re-plan is another exchange, not this one)
        # (expression ids aside: Spark 3.0 re-numbers aliases when it re-optimizes)
        if not na.endswith("Exchange") or na == REUSED_EXCHANGE:
            return True
        return (_partitioning_kind(a) == _partitioning_kind(b)) if names_only else _partitioning(a) == _partitioning(b)
    if is_join(na) and is_join(nb):
        return True
    return na in SHUFFLE_READ_NAMES and nb in SHUFFLE_READ_NAMES


# --------------------------------------------------------------------------------------------
# reduced trees
# --------------------------------------------------------------------------------------------
def _is_exchange(node: PlanNode) -> bool:
    name = _canonical(node)
    return name.endswith("Exchange") and name != REUSED_EXCHANGE


def _drawn_exchanges(plan: PlanNode) -> set[tuple[str, str]]:
    """Signatures of the exchanges drawn with their subtree outside any ``ReusedExchange``."""
    out: set[tuple[str, str]] = set()
    stack = [(plan, False)]
    while stack:
        node, under_reuse = stack.pop()
        if not under_reuse and node.children and _is_exchange(node):
            out.add(_sig(node))
        reused = node.name == REUSED_EXCHANGE or (under_reuse and is_wrapper(node))
        stack.extend((c, reused) for c in node.children)
    return out


def _below_wrappers(node: PlanNode) -> PlanNode:
    """The operator under a chain of single-child wrappers (an engine's exchange parts)."""
    while is_wrapper(node) and len(node.children) == 1:
        node = node.children[0]
    return node


def names_only(a: PlanNode | None, b: PlanNode | None) -> bool:
    """An engine ran one of the two plans: compare names, not descriptions (the engine converts
    each stage when AQE creates it, so a plan mixes Spark's words and the engine's until the last
    stage is converted; each engine words its descriptions its own way)."""
    if a is None or b is None:
        return False
    return engine_of_names(n.name for n in a.walk()) is not None or engine_of_names(n.name for n in b.walk()) is not None


class _Tree:
    """Operators of a plan (wrappers dropped), pre-order arrays."""

    def __init__(self, plan: PlanNode, intern: dict, names_only: bool = False) -> None:
        self.paths: list[str] = []
        self.nodes: list[PlanNode] = []
        self.parent: list[int] = []
        self.children: list[list[int]] = []
        self.index: dict[str, int] = {}
        stack: list[tuple[PlanNode, str, int]] = [(plan, "0", -1)]
        elsewhere = _drawn_exchanges(plan)
        while stack:
            node, path, p = stack.pop()
            kids = node.children
            if node.name == REUSED_EXCHANGE and len(kids) == 1 and _only_drawing(kids[0], elsewhere):
                kids = kids[:]  # the only full drawing of the reused stage (an event log's plan info draws each once):
                stack.append((kids[0], f"{path}.0", p))  # the ReusedExchange only wraps it
                continue
            if is_wrapper(node) and len(kids) <= 1:
                for i in range(len(kids) - 1, -1, -1):
                    stack.append((kids[i], f"{path}.{i}", p))
                continue
            i = len(self.paths)
            self.paths.append(path)
            self.nodes.append(node)
            self.parent.append(p)
            self.children.append([])
            self.index[path] = i
            if p >= 0:
                self.children[p].append(i)
            if node.name == REUSED_EXCHANGE:
                continue  # the stage it reuses is drawn in full (and matched) elsewhere
            for k in range(len(kids) - 1, -1, -1):
                stack.append((kids[k], f"{path}.{k}", i))
        n = len(self.paths)
        self.names_only = names_only
        #: operators an engine folded into the one below (set by the cross-engine alignment)
        self.fused: set[int] = set()
        #: joins the engine itself made hash joins (a sort-merge join run as a shuffled hash join)
        self.engine_rewrites: set[int] = set()
        self.sig = [(_sig_names if names_only else _sig)(nd) for nd in self.nodes]
        self.key = [0] * n
        self.size = [1] * n
        for i in range(n - 1, -1, -1):  # reverse pre-order: children before parents
            ch = self.children[i]
            shape = (self.sig[i], tuple(self.key[c] for c in ch))
            self.key[i] = intern.setdefault(shape, len(intern))
            for c in ch:
                self.size[i] += self.size[c]

    def subtree(self, i: int) -> range:
        return range(i, i + self.size[i])  # pre-order: a subtree is a contiguous range


def _only_drawing(child: PlanNode, elsewhere: set[tuple[str, str]]) -> bool:
    """A ``ReusedExchange``'s child is the reused stage's only full drawing (through an engine's
    exchange parts: Photon's ``ReusedExchange > PhotonShuffleMapStage > PhotonShuffleExchangeSink``)."""
    ex = _below_wrappers(child)
    return bool(ex.children) and _sig(ex) not in elsewhere


def _match(A: _Tree, B: _Tree) -> tuple[list[int], list[int]]:
    """``ma[a]`` = index in B matched to A's ``a`` (or -1), and ``mb`` the other way: identical
    subtrees first, then bottom-up by shared matched descendants, then leftovers by position.
    Across engines (names only, where many subtrees look alike), the plans are first aligned top
    down from their roots: the engine converted the plan in place."""
    ma = [-1] * len(A.paths)
    mb = [-1] * len(B.paths)
    if B.names_only:
        _match_aligned(A, B, ma, mb)
    else:
        _match_identical(A, B, ma, mb)
    _match_bottom_up(A, B, ma, mb)
    _match_leftovers(A, B, ma, mb)
    return ma, mb


#: operators an engine folds into the one below it (Photon's scan takes the filter above it: a
#: Databricks Photon log's final plans have no filter where the initial plan's scans had one)
_FUSED = ("Filter",)


def _match_aligned(A: _Tree, B: _Tree, ma: list[int], mb: list[int]) -> None:
    """Top-down from the roots, each B child taking the first compatible A child left in order,
    looking through the adaptive reads of B (never in an initial plan), the operators an engine
    fuses away in A (recorded in ``A.fused``: converted, not removed), and failing a direct
    partner, up to :data:`_LOOK` operators AQE dropped (a sort under a join it re-planned) or
    added (the broadcast exchange of a join it made a broadcast join)."""
    if not A.paths or not B.paths or not _compatible(A.nodes[0], B.nodes[0], True):
        return
    ma[0], mb[0] = 0, 0
    stack = [(0, 0)]
    while stack:
        a, b = stack.pop()
        kids_a = list(A.children[a])
        for kb in _through_reads(B, b):
            got = _take(A, B, kids_a, kb, 0) or _take(A, B, kids_a, kb, _LOOK)
            if got is None:
                continue
            ha, hb, i = got
            ma[ha], mb[hb] = hb, ha
            stack.append((ha, hb))
            del kids_a[: i + 1]


#: operators looked through on either side when a child has no direct partner
_LOOK = 2


def _take(A: _Tree, B: _Tree, kids_a: list[int], kb: int, look: int) -> tuple[int, int, int] | None:
    """(A node, B node, index in ``kids_a``) of the first compatible pair from ``kb`` down its
    single-child chain and each A child down its own, ``look`` operators deep at most."""
    chain_b = [kb]
    while look and len(chain_b) <= look and len(B.children[chain_b[-1]]) == 1:
        nxt = B.children[chain_b[-1]][0]
        chain_b.append(nxt)
    for nb in chain_b:
        for i, ka in enumerate(kids_a):
            hit = _fused_to(A, ka, B.nodes[nb], look)
            if hit is not None:
                return hit, nb, i
    return None


def _through_reads(B: _Tree, b: int) -> list[int]:
    out: list[int] = []
    for c in B.children[b]:
        if B.nodes[c].name in SHUFFLE_READ_NAMES and len(B.children[c]) == 1:
            out.extend(B.children[c])
        else:
            out.append(c)
    return out


def _fused_to(A: _Tree, a: int, node_b: PlanNode, look: int = 0) -> int | None:
    """``a`` when compatible with ``node_b``, else the first compatible node down a chain of
    operators the engine fuses (those go into ``A.fused``), or of at most ``look`` others."""
    chain: list[int] = []
    only_fused = True
    while True:
        if _compatible(A.nodes[a], node_b, True):
            if only_fused:
                A.fused.update(chain)
            return a
        if len(A.children[a]) != 1:
            return None
        if _canonical(A.nodes[a]) in _FUSED and _canonical(node_b) not in _FUSED:
            pass  # (an engine folds it into the operator below: no cost)
        elif look > 0:
            look -= 1
            only_fused = False
        else:
            return None
        chain.append(a)
        a = A.children[a][0]


def _match_identical(A: _Tree, B: _Tree, ma: list[int], mb: list[int]) -> None:
    """1. identical subtrees, top-down."""
    na, nb = len(A.paths), len(B.paths)
    pool: dict[int, list[int]] = {}
    for i in range(na):
        pool.setdefault(A.key[i], []).append(i)
    for b in range(nb):
        if mb[b] >= 0:
            continue
        cands = [a for a in pool.get(B.key[b], ()) if ma[a] < 0]
        if not cands:
            continue
        a = cands[0]
        if len(cands) > 1:
            pb = B.parent[b]
            for c in cands:
                pc = A.parent[c]
                if (pb < 0) == (pc < 0) and (pb < 0 or A.sig[pc] == B.sig[pb]):
                    a = c
                    break
        for x, y in zip(A.subtree(a), B.subtree(b)):
            ma[x] = y
            mb[y] = x


def _match_bottom_up(A: _Tree, B: _Tree, ma: list[int], mb: list[int]) -> None:
    """2. bottom-up by shared matched descendants."""
    nb = len(B.paths)
    mcount = [0] * nb  # matched nodes in the subtree
    front: dict[int, list[int]] = {}
    for b in range(nb - 1, -1, -1):
        ch = B.children[b]
        if mb[b] < 0:
            fr: list[int] = []
            for c in ch:
                if mb[c] >= 0:
                    fr.append(c)
                else:
                    fr.extend(front.get(c, ()))
            score: dict[int, int] = {}
            for f in fr:
                a = A.parent[mb[f]]
                w = mcount[f]
                while a >= 0 and ma[a] < 0:
                    score[a] = score.get(a, 0) + w
                    a = A.parent[a]
            best, best_dice = -1, 0.2
            node_b = B.nodes[b]
            for a in sorted(score):
                if not _compatible(A.nodes[a], node_b, B.names_only):
                    continue
                dice = 2.0 * score[a] / max(1, (A.size[a] - 1) + (B.size[b] - 1))
                if dice > best_dice + 1e-12:
                    best, best_dice = a, dice
            if best >= 0:
                ma[best] = b
                mb[b] = best
            else:
                front[b] = fr
        mcount[b] = (1 if mb[b] >= 0 else 0) + sum(mcount[c] for c in ch)
        for c in ch:
            front.pop(c, None)


def _reused_kind(node: PlanNode) -> str:
    """``BroadcastExchange`` or ``Exchange``: what a ``ReusedExchange`` stands for (its child
    in Spark's plan info, else its description ``ReusedExchange [out], <exchange> ...``), in
    Spark's names."""
    if node.children and _is_exchange(_below_wrappers(node.children[0])):
        return _canonical(_below_wrappers(node.children[0]))
    return "BroadcastExchange" if "BroadcastExchange " in (node.description or "") else "Exchange"


def match_reused(A: _Tree, B: _Tree, ma: list[int], mb: list[int]) -> set[int]:
    """4. a later-plan ``ReusedExchange`` takes the earlier plan's exchange it stands for: an
    unmatched exchange of the same kind under the partner of its nearest matched ancestor
    (same branch first). Returns the earlier-plan operators below those exchanges: they run
    once, in the stage that is reused, so they are not removed."""
    covered: set[int] = set()
    for b, node in enumerate(B.nodes):
        if node.name != REUSED_EXCHANGE or mb[b] >= 0:
            continue
        child, pb = b, B.parent[b]
        while pb >= 0 and mb[pb] < 0:
            child, pb = pb, B.parent[pb]
        if pb < 0:
            continue
        pa, kind = mb[pb], _reused_kind(node)
        branch = B.children[pb].index(child)
        cands: list[tuple[int, int]] = []  # (A index, branch under pa)
        for k, top in enumerate(A.children[pa]):
            stack = [top]
            while stack:
                a = stack.pop()
                if ma[a] >= 0:
                    continue
                if _canonical(A.nodes[a]) == kind:
                    cands.append((a, k))
                    continue
                stack.extend(A.children[a])
        if not cands:
            continue
        a = next((x for x, k in cands if k == branch), cands[0][0])
        ma[a], mb[b] = b, a
        covered.update(x for x in A.subtree(a) if x != a and ma[x] < 0)
    return covered


def _partner_parent(B: _Tree, mb: list[int], b: int) -> tuple[int, int]:
    """(B index of ``b``'s nearest matched ancestor, position under it), looking through the
    adaptive reads AQE put between an operator and its exchange (never in the earlier plan);
    ``(-1, -1)`` when the parent is not matched."""
    child, pb = b, B.parent[b]
    while pb >= 0 and mb[pb] < 0 and B.nodes[pb].name in SHUFFLE_READ_NAMES:
        child, pb = pb, B.parent[pb]
    if pb < 0 or mb[pb] < 0:
        return -1, -1
    return pb, B.children[pb].index(child)


def _match_leftovers(A: _Tree, B: _Tree, ma: list[int], mb: list[int]) -> None:
    """3. leftovers under matched parents (through adaptive reads): the same operator
    (signature) first; then a compatible one, same position first."""
    for b in range(len(B.paths)):
        if mb[b] >= 0 or B.parent[b] < 0:
            continue
        pb, _pos = _partner_parent(B, mb, b)
        if pb < 0:
            continue
        same_sig = [a for a in A.children[mb[pb]] if ma[a] < 0 and A.sig[a] == B.sig[b]]
        if same_sig:
            ma[same_sig[0]], mb[b] = b, same_sig[0]
    for b in range(len(B.paths)):
        if mb[b] >= 0:
            continue
        if B.parent[b] < 0:
            if A.paths and ma[0] < 0 and _compatible(A.nodes[0], B.nodes[b], B.names_only):
                ma[0], mb[b] = b, 0
            continue
        pb, pos = _partner_parent(B, mb, b)
        if pb < 0:
            continue
        pa = mb[pb]
        free = [a for a in A.children[pa] if ma[a] < 0 and _compatible(A.nodes[a], B.nodes[b], B.names_only)]
        if not free:
            continue
        same = [a for a in free if A.children[pa].index(a) == pos]
        a = same[0] if same else free[0]
        ma[a], mb[b] = b, a
