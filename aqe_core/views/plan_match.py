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
``[id=#..]``, ``isFinalPlan``, stage statistics, ``(skew=true)``). Then, GumTree-style:

1. top-down: identical subtrees (same signatures all the way down) are matched;
2. bottom-up: an unmatched operator is matched to the unmatched earlier-plan ancestor of
   its matched descendants' partners that shares most descendants with it (Dice ≥ 0.2) and
   is compatible (same operator, or both joins: a sort-merge join that became a broadcast
   hash join keeps its inputs);
3. top-down leftovers: an unmatched child of a matched pair takes a compatible unmatched
   child of the partner (same position first).
"""
from __future__ import annotations

import re

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
def base_name(name: str) -> str:
    return name[: -len(_SKEW_SUFFIX)] if name.endswith(_SKEW_SUFFIX) else name


def is_join(name: str) -> bool:
    b = base_name(name)
    return b in _JOINS or b.endswith("Join")


def is_wrapper(node: PlanNode) -> bool:
    n = node.name or ""
    return n in _WRAPPERS or n.startswith("WholeStageCodegen")


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
    return (base_name(node.name or ""), _norm_desc(node))


def _compatible(a: PlanNode, b: PlanNode) -> bool:
    na, nb = base_name(a.name or ""), base_name(b.name or "")
    if na == nb:
        # an exchange is its partitioning: AQE never changes one in place (a new shuffle that
        # EnsureRequirements adds after a re-plan is another exchange, not this one)
        # (expression ids aside: Spark 3.0 re-numbers aliases when it re-optimizes)
        return not na.endswith("Exchange") or na == REUSED_EXCHANGE or _partitioning(a) == _partitioning(b)
    if is_join(na) and is_join(nb):
        return True
    return na in SHUFFLE_READ_NAMES and nb in SHUFFLE_READ_NAMES


# --------------------------------------------------------------------------------------------
# reduced trees
# --------------------------------------------------------------------------------------------
def _drawn_exchanges(plan: PlanNode) -> set[tuple[str, str]]:
    """Signatures of the exchanges drawn with their subtree outside any ``ReusedExchange``."""
    out: set[tuple[str, str]] = set()
    stack = [(plan, False)]
    while stack:
        node, under_reuse = stack.pop()
        if not under_reuse and node.children and (node.name or "").endswith("Exchange") and node.name != REUSED_EXCHANGE:
            out.add(_sig(node))
        reused = node.name == REUSED_EXCHANGE
        stack.extend((c, reused) for c in node.children)
    return out


class _Tree:
    """Operators of a plan (wrappers dropped), pre-order arrays."""

    def __init__(self, plan: PlanNode, intern: dict) -> None:
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
            if node.name == REUSED_EXCHANGE and len(kids) == 1 and kids[0].children and _sig(kids[0]) not in elsewhere:
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
        self.sig = [_sig(nd) for nd in self.nodes]
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


def _match(A: _Tree, B: _Tree) -> tuple[list[int], list[int]]:
    """``ma[a]`` = index in B matched to A's ``a`` (or -1), and ``mb`` the other way: identical
    subtrees first, then bottom-up by shared matched descendants, then leftovers by position."""
    ma = [-1] * len(A.paths)
    mb = [-1] * len(B.paths)
    _match_identical(A, B, ma, mb)
    _match_bottom_up(A, B, ma, mb)
    _match_leftovers(A, B, ma, mb)
    return ma, mb


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
                if not _compatible(A.nodes[a], node_b):
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
    in Spark's plan info, else its description ``ReusedExchange [out], <exchange> ...``)."""
    if node.children and (node.children[0].name or "").endswith("Exchange"):
        return node.children[0].name
    return "BroadcastExchange" if ", BroadcastExchange " in (node.description or "") else "Exchange"


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
                if A.nodes[a].name == kind:
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
            if A.paths and ma[0] < 0 and _compatible(A.nodes[0], B.nodes[b]):
                ma[0], mb[b] = b, 0
            continue
        pb, pos = _partner_parent(B, mb, b)
        if pb < 0:
            continue
        pa = mb[pb]
        free = [a for a in A.children[pa] if ma[a] < 0 and _compatible(A.nodes[a], B.nodes[b])]
        if not free:
            continue
        same = [a for a in free if A.children[pa].index(a) == pos]
        a = same[0] if same else free[0]
        ma[a], mb[b] = b, a
