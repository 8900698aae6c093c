"""The stage plan the rules work on: a query's final plan cut into *stage fragments*.

A fragment is the plan between an exchange (or the root) and the query stages below it, the
unit Spark's query-stage rules see. Codegen wrappers and adaptive reads are taken out of the
nodes (a stage leaf remembers Spark's read above it). :class:`Context` gives a rule the
captured statistics of a stage leaf; :class:`FragmentState` holds the specs the rules put on
the leaves; :func:`breaks_distribution` is Spark's "no extra shuffle" check. These implement
the protocols of :mod:`aqe_core.model.stage`, through which the rules see the plan.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Optional, Sequence

from aqe_core.config import AQEConf
from aqe_core.model.reasons import Reason
from aqe_core.model.specs import (
    CoalescedMapperPartitionSpec,
    CoalescedPartitionSpec,
    PartialMapperPartitionSpec,
    PartialReducerPartitionSpec,
    ShufflePartitionSpec,
)
from aqe_core.rules.union_exec import inferred_union_partitioning, partitioning_of, union_reports_partitioning
from aqe_core.versions import SparkVersion

if TYPE_CHECKING:  # the capture model (moving to aqe_core.model in issue 9); only for hints
    from aqe_core.model.capture import QueryCapture, ShuffleCapture, StageCapture

WRAPPERS = ("WholeStageCodegen", "InputAdapter", "ColumnarToRow", "RowToColumnar")
STAGES = ("ShuffleQueryStage", "BroadcastQueryStage", "TableCacheQueryStage")
READS = ("AQEShuffleRead", "CustomShuffleReader")


@dataclass
class StageNode:
    """A node of a stage fragment, with the codegen wrappers and adaptive reads taken out
    (implements :class:`aqe_core.model.stage.StageNode`)."""

    idx: int
    name: str
    desc: str
    info: dict[str, Any]
    children: list["StageNode"] = field(default_factory=list)
    parent: Optional["StageNode"] = None
    pos: int = 0  # position among Spark's children of the parent (for required distributions)
    read_idx: Optional[int] = None  # for a stage leaf: Spark's read above it

    @property
    def is_stage(self) -> bool:
        return self.name in STAGES

    @property
    def is_shuffle_stage(self) -> bool:
        return self.name == "ShuffleQueryStage"

    def walk(self):
        stack = [self]
        while stack:
            n = stack.pop()
            yield n
            stack.extend(reversed(n.children))


@dataclass
class Fragment:
    fid: int
    root: StageNode
    is_final: bool
    stages: list[StageNode]  # stage leaves, plan order
    main: bool = True  # under the query's own AdaptiveSparkPlan (not a subquery's)


class PlanIndex:
    """Index of the captured final plan: names, infos, children, parents."""

    def __init__(self, q: QueryCapture) -> None:
        assert q.final_plan is not None
        self.nodes = q.final_plan.nodes()
        info = q.final_plan.info
        self.info = [info[i] if i < len(info) else {} for i in range(len(self.nodes))]
        ids = {id(n): i for i, n in enumerate(self.nodes)}
        self.kids = [[ids[id(c)] for c in n.children] for n in self.nodes]
        self.parent = [-1] * len(self.nodes)
        for i, ks in enumerate(self.kids):
            for k in ks:
                self.parent[k] = i
        self.stage_by_node = {s.node: s for s in q.stages}
        self.read_by_node = {r.node: r for r in q.reads}

    def name(self, i: int) -> str:
        return self.nodes[i].name

    def fragments(self) -> list[Fragment]:
        out: list[Fragment] = []
        seen_exchanges: set[int] = set()
        seen_shuffles: set[int] = set()

        def add(root_idx: int, is_final: bool, main: bool = True) -> None:
            fr = Fragment(len(out), None, is_final, [], main)  # type: ignore[arg-type]
            out.append(fr)
            fr.root = self._build(root_idx, None, 0, fr)
            for st in fr.stages:
                self._descend(st.idx, add, seen_exchanges, seen_shuffles)

        for i, n in enumerate(self.nodes):
            # every AdaptiveSparkPlan is a root: the query's (possibly under a write command)
            # and each subquery's; a fragment stops at a nested one, so none is seen twice
            if n.name == "AdaptiveSparkPlan":
                r = self.kids[i][0] if self.kids[i] else None
                while r is not None and self.name(r) == "ResultQueryStage":
                    r = self.kids[r][0] if self.kids[r] else None
                if r is not None:
                    add(r, True, not self.info[i].get("is_subquery", False) and not any(
                        f.main and f.is_final for f in out))
        return out

    def _descend(self, stage_idx: int, add, seen_exchanges: set[int], seen_shuffles: set[int]) -> None:
        kids = self.kids[stage_idx]
        if not kids:
            return
        ex = kids[0]
        if self.name(ex) == "ReusedExchange":
            return  # the original stage's fragment is elsewhere in the plan
        st = self.stage_by_node.get(stage_idx)
        if st is not None and st.shuffle_id is not None:
            if st.shuffle_id in seen_shuffles:
                return
            seen_shuffles.add(st.shuffle_id)
        if ex in seen_exchanges or not self.kids[ex]:
            return
        seen_exchanges.add(ex)
        add(self.kids[ex][0], False)

    def _build(self, i: int, parent: Optional[StageNode], pos: int, fr: Fragment) -> StageNode:
        name = self.name(i)
        while name.startswith(WRAPPERS) and self.kids[i]:
            i = self.kids[i][0]
            name = self.name(i)
        read_idx = None
        if name in READS and self.kids[i]:
            read_idx = i
            i = self.kids[i][0]
            name = self.name(i)
        node = StageNode(i, name, self.nodes[i].description, self.info[i], [], parent, pos, read_idx)
        if node.is_stage:
            fr.stages.append(node)
            return node
        if name == "AdaptiveSparkPlan":
            return node  # a subquery's plan: its own fragments
        for p, k in enumerate(self.kids[i]):
            node.children.append(self._build(k, node, p, fr))
        return node


class Context:
    """A query's captured statistics as the rules ask for them (implements
    :class:`aqe_core.model.stage.StageStats`)."""

    def __init__(self, q: QueryCapture, conf: AQEConf, v: SparkVersion, plan: PlanIndex,
                 recorded_v: Optional[SparkVersion] = None) -> None:
        self.q, self.conf, self.v, self.plan = q, conf, v, plan
        #: the release the capture was recorded on (its settings are ``q.conf``)
        self.recorded_v = recorded_v or v
        self._recorded_conf: Optional[AQEConf] = None
        self.default_parallelism = q.default_parallelism
        #: settings or release differ from the captured run (the plan's shape may not be Spark's)
        self.what_if = False
        #: stage leaves a what-if plan no longer has (a join broadcast their input earlier), and
        #: why where it is not that (:mod:`aqe_core.engine.restage`)
        self.removed_stages: set[int] = set()
        self.removed_why: dict[int, str] = {}
        #: what-if restaging (:mod:`aqe_core.engine.restage`): the node under each stage Spark added
        #: for a forced split -> that captured stage leaf; each new stage leaf -> (the captured
        #: stage it may be, the fragment under it); fragment roots the what-if re-planned; joins
        #: whose skew split a run decides; joins whose strategy the what-if changes
        self.folded: dict[int, StageNode] = {}
        self.added: dict[int, tuple[Optional[StageNode], Fragment]] = {}
        self.restaged: set[int] = set()
        self.skew_unknown: set[int] = set()
        self.changed_joins: set[int] = set()

    def stage(self, n: StageNode) -> Optional[StageCapture]:
        return self.plan.stage_by_node.get(n.idx)

    def shuffle(self, n: StageNode) -> Optional[ShuffleCapture]:
        st = self.stage(n)
        return self.q.shuffle(st.shuffle_id) if st else None

    def bytes(self, n: StageNode) -> Optional[list[int]]:
        sh = self.shuffle(n)
        return sh.bytes_by_partition_id if sh else None

    def origin(self, n: StageNode) -> str:
        st = self.stage(n)
        if st is None:
            return "UNKNOWN"
        if st.origin:
            return origin_in_release(st.origin, self.v)
        # 3.0.x has no ShuffleOrigin: canChangeNumPartitions=false means a user repartition
        if st.can_change_num_partitions is False:
            return "SINGLE_PARTITION" if (st.output_partitioning or "").startswith("SinglePartition") else "REPARTITION"
        return "ENSURE_REQUIREMENTS"

    def single_partition(self, n: StageNode) -> bool:
        st = self.stage(n)
        return bool(st and (st.output_partitioning or "").startswith("SinglePartition"))

    def map_sizes_for(self, n: StageNode):
        sh = self.shuffle(n)
        if sh is None or sh.map_sizes is None:
            return None
        return sh.map_sizes.for_reducer

    def stage_at(self, idx: int) -> StageCapture:
        """The stage recorded at a leaf's node index (KeyError if none)."""
        return self.plan.stage_by_node[idx]

    def breaks_distribution(self, fr: Fragment, changed: Sequence[StageNode], skew_joins: set[int]) -> Optional[str]:
        return breaks_distribution(self, fr, changed, skew_joins)

    def union_reports_partitioning(self, n: StageNode) -> bool:
        """Does this Union report its children's partitioning under the rules' release
        (:func:`aqe_core.rules.union_exec.union_reports_partitioning`)?"""
        if self._recorded_conf is None:  # (resolved once, and only for plans with a Union)
            self._recorded_conf = AQEConf.resolve(self.recorded_v, [self.q.conf], validate=False)
        # the partitioning is recorded on the final plan: 4.1 and 4.2 coalesced the children
        # apart, so theirs reads "unknown" whatever the union reported before coalescing
        recorded_conf = self._recorded_conf if self.recorded_v >= SparkVersion(4, 3, 0) else None
        return union_reports_partitioning(self.plan.nodes[n.idx], n.info.get("partitioning"), self.conf,
                                          recorded_conf)


@dataclass
class FragmentState:
    """Specs put on each stage leaf of a fragment (keyed by node idx) and the rules that did it."""

    specs: dict[int, list[ShufflePartitionSpec]] = field(default_factory=dict)
    rules: dict[int, list[str]] = field(default_factory=dict)
    reasons: dict[int, list[Reason]] = field(default_factory=dict)
    skew_joins: set[int] = field(default_factory=set)
    descriptions: dict[int, str] = field(default_factory=dict)

    def put(self, n: StageNode, specs: list[ShufflePartitionSpec], rule: str) -> None:
        self.specs[n.idx] = list(specs)
        self.rules.setdefault(n.idx, []).append(rule)

    def why(self, n: StageNode, reasons: list[Reason]) -> None:
        self.reasons.setdefault(n.idx, []).extend(reasons)

    def copy(self) -> "FragmentState":
        return FragmentState({k: list(v) for k, v in self.specs.items()}, {k: list(v) for k, v in self.rules.items()},
                             {k: list(v) for k, v in self.reasons.items()}, set(self.skew_joins),
                             dict(self.descriptions))

    def adopt(self, trial: "FragmentState") -> None:
        """Keep a trial copy's result."""
        self.__dict__.update(trial.__dict__)

    def merge_reasons(self, trial: "FragmentState") -> None:
        """Keep only a dropped trial copy's reasons."""
        merge_reasons(self, trial)



def describe_specs(specs: list[ShufflePartitionSpec], v: SparkVersion) -> str:
    """``AQEShuffleReadExec``'s description (3.2+)."""
    if any(isinstance(s, (PartialMapperPartitionSpec, CoalescedMapperPartitionSpec)) for s in specs):
        return "local"
    coalesced = any(isinstance(s, CoalescedPartitionSpec) and s.is_coalesced for s in specs)
    skewed = any(isinstance(s, PartialReducerPartitionSpec) for s in specs)
    if coalesced and skewed:
        return "coalesced and skewed"
    if coalesced:
        return "coalesced"
    if skewed:
        return "skewed"
    return ""


def _unknown_partitioning(specs: list[ShufflePartitionSpec]) -> bool:
    """Does a read with these specs lose its child's partitioning (``UnknownPartitioning``)?"""
    if not specs:
        return False
    coalesced = [s for s in specs if isinstance(s, CoalescedPartitionSpec)]
    if len(coalesced) == len(specs):
        return any(a.end_reducer_index != b.start_reducer_index for a, b in zip(coalesced, coalesced[1:]))
    mappers = [s for s in specs if isinstance(s, PartialMapperPartitionSpec)]
    if len(mappers) == len(specs):
        return len({s.map_index for s in mappers}) != len(specs)
    return True


def required_of(node: StageNode, pos: int) -> str:
    """The distribution ``node`` requires of its child at ``pos``, as recorded; a join Spark split
    recorded none (``ShuffledJoin`` of a skew join), but unsplit it needs its keys clustered."""
    if node.info.get("skew") and node.name.startswith(("SortMergeJoin", "ShuffledHashJoin")):
        return "ClusteredDistribution(join keys)"
    reqs = node.info.get("req") or []
    return reqs[pos] if pos < len(reqs) else "UnspecifiedDistribution"


def breaks_distribution(ctx: Context, fr: Fragment, changed: Sequence[StageNode], skew_joins: set[int]) -> Optional[str]:
    """Would making these stage leaves' partitioning unknown break a requirement above them?

    Walks up from each leaf to the fragment root: a node (other than a join being split) that
    requires a distribution other than ``UnspecifiedDistribution`` of the child on the path
    relied on the partitioning that flows from below; so does the final stage's required
    distribution. Returns a sentence, or None when nothing breaks.
    """
    for leaf in changed:
        child, node = leaf, leaf.parent
        while node is not None:
            if node.idx not in skew_joins:
                req = required_of(node, child.pos)
                if not (req.startswith("UnspecifiedDistribution") or req.startswith("BroadcastDistribution")):
                    return f"{node.name} needs {req.split('(')[0]} from its child"
            child, node = node, node.parent
        if fr.is_final and fr.main and ctx.q.required_distribution and not ctx.q.required_distribution.startswith(
                ("UnspecifiedDistribution", "None")):
            return f"the query's result must keep {ctx.q.required_distribution.split('(')[0]}"
    return None



def merge_reasons(state: FragmentState, trial: FragmentState) -> None:
    for k, rs in trial.reasons.items():
        have = state.reasons.setdefault(k, [])
        for r in rs:
            if r not in have:
                have.append(r)



def all_origins(ctx: Context) -> set[str]:
    """Shuffle origins of every shuffle exchange in the query (3.1 ``inputPlan.collect``)."""
    out = {st.origin for st in ctx.q.stages if st.kind == "shuffle" and st.origin}
    out |= {str(i["origin"]) for i in ctx.plan.info if i.get("origin")}
    return {origin_in_release(o, ctx.v) for o in out}


#: ``ShuffleOrigin`` names 3.2 renamed (3.1 -> 3.2+): the same user repartition under either name
_RENAMED_IN_3_2 = {"REPARTITION": "REPARTITION_BY_COL", "REPARTITION_WITH_NUM": "REPARTITION_BY_NUM"}


def origin_in_release(origin: str, v: SparkVersion) -> str:
    """A recorded shuffle origin under the name the release's rules know it by (a capture replayed
    under another release's rules: 3.1's ``REPARTITION`` is 3.2's ``REPARTITION_BY_COL``).

    >>> origin_in_release("REPARTITION_BY_COL", SparkVersion(3, 1, 3)), origin_in_release("REPARTITION", SparkVersion(3, 5, 9))
    ('REPARTITION', 'REPARTITION_BY_COL')
    """
    if v < SparkVersion(3, 2, 0):
        return {new: old for old, new in _RENAMED_IN_3_2.items()}.get(origin, origin)
    return _RENAMED_IN_3_2.get(origin, origin)


def exchange_over_union(node: Any) -> bool:
    """An exchange hashing a Union's output exactly as the Union would report it (4.1+)."""
    if node.name != "Exchange" or not node.children:
        return False
    below = node.children[0]
    while below.name.startswith(("WholeStageCodegen", "InputAdapter")) and below.children:
        below = below.children[0]
    if below.name != "Union":
        return False
    part = inferred_union_partitioning(below)
    return part is not None and partitioning_of(node) == part
