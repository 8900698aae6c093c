"""Replay a capture through AQE Lens's rules: what would AQE do with these statistics?

    report = simulate(capture)                                  # replay: agreement with Spark
    report = simulate(capture, {"spark.sql.adaptive.skewJoin.skewedPartitionFactor": "2"})  # what-if
    report = simulate(capture, spark_version="3.0.1")           # another release's rules

Only the rules run (milliseconds), never Spark. The final plan of each captured query is cut
into its *stage fragments* (the plan between an exchange, or the root, and the query stages
below it) because that is the unit Spark's query-stage rules work on. For each fragment the
release's rules run in the release's order on the captured statistics:

* 3.0/3.1: CoalesceShufflePartitions, OptimizeSkewedJoin (on the coalesced sizes),
  OptimizeLocalShuffleReader;
* 3.2: OptimizeSkewedJoin (only with exactly two shuffle stages),
  OptimizeSkewInRebalancePartitions (stage at the root), CoalesceShufflePartitions (one
  group), OptimizeShuffleWithLocalRead;
* 3.3+: OptimizeSkewedJoin (a preparation rule, all-or-nothing, forceOptimizeSkewedJoin),
  then the same query-stage rules with coalesce groups; 4.3 adds the broadcast stream-side
  split and maxReducerPartitionsPerTask.

A rule whose result would break a distribution the plan relies on (Spark's
``ValidateRequirements`` / "no extra shuffle" checks) is dropped, as Spark drops it; the
required distributions come from the captured plan. The specs each adaptive read gets are
compared with the specs Spark used: the agreement report. Join strategies (runtime broadcast,
demotion, shuffled hash join) are re-decided from the stages' runtime statistics.

What a what-if cannot know: statistics of stages *above* a changed read were measured under
the captured plan (their map count follows the captured specs); settings that change the plan
before AQE (``spark.sql.shuffle.partitions``) need a new run. Both are reported as notes.
"""
from __future__ import annotations

import re
import time
from dataclasses import dataclass, field
from typing import Any, Mapping, Optional

from aqe_core.model.scala_text import split_top_level
from aqe_core.capture.model import Capture, QueryCapture, ShuffleCapture, StageCapture
from aqe_core.config import AQEConf
from aqe_core.rules.coalesce_shuffle_partitions import (
    PlanShape,
    StageInput,
    coalesce_group,
    coalesce_groups,
    is_supported_shuffle,
    min_num_partitions,
    split_min_num_across_groups,
)
from aqe_core.model.reasons import Reason
from aqe_core.units import mib
from aqe_core.rules.join_selection import (
    NO_BROADCAST_HASH,
    PREFER_SHUFFLE_HASH,
    SHUFFLE_HASH,
    broadcast_threshold,
    can_build_broadcast_left,
    can_build_broadcast_right,
    choose_shuffled_hash_join_build_side,
    select_join_hints,
)
from aqe_core.rules.local_shuffle_read import local_read_specs
from aqe_core.rules.optimize_skew_in_rebalance_partitions import REBALANCE_ORIGINS, optimize_skew_in_rebalance
from aqe_core.rules.skew_join import SkewJoinSide, normalize_join_type, optimize_broadcast_stream_side, optimize_skewed_join
from aqe_core.model.specs import (
    CoalescedMapperPartitionSpec,
    CoalescedPartitionSpec,
    PartialMapperPartitionSpec,
    PartialReducerPartitionSpec,
    ShufflePartitionSpec,
    spec_to_dict,
)
from aqe_core.versions import SparkVersion, as_version

A = "spark.sql.adaptive."
#: settings that change the plan Spark builds before AQE: a capture cannot answer for them
PLAN_CHANGING_KEYS = ("spark.sql.shuffle.partitions", A + "coalescePartitions.initialPartitionNum", A + "enabled")
_WRAPPERS = ("WholeStageCodegen", "InputAdapter", "ColumnarToRow", "RowToColumnar")
_STAGES = ("ShuffleQueryStage", "BroadcastQueryStage", "TableCacheQueryStage")
_READS = ("AQEShuffleRead", "CustomShuffleReader")
_SHUFFLED_JOINS = ("SortMergeJoin", "ShuffledHashJoin")


# ----------------------------------------------------------------------------------------
# Results


@dataclass
class ReadResult:
    """One shuffle stage's read in one fragment: Spark's specs and ours."""

    stage_node: int
    read_node: Optional[int]  # Spark's read node in the final plan (None: Spark read the stage as is)
    stage_id: Optional[int]
    shuffle_id: Optional[int]
    fragment: int
    spark_specs: Optional[list[ShufflePartitionSpec]]  # None: no adaptive read in Spark's plan
    simulated_specs: Optional[list[ShufflePartitionSpec]]  # None: our rules put no read there
    rules: list[str] = field(default_factory=list)
    description: str = ""
    reasons: list[Reason] = field(default_factory=list)

    @property
    def agrees(self) -> bool:
        return _norm(self.spark_specs) == _norm(self.simulated_specs)

    def first_difference(self) -> Optional[str]:
        a, b = _norm(self.spark_specs), _norm(self.simulated_specs)
        if a == b:
            return None
        if a is None or b is None:
            return f"Spark {'had no read' if a is None else f'read {len(a)} specs'}; simulation " \
                   f"{'puts no read' if b is None else f'gives {len(b)} specs'}"
        for i, (x, y) in enumerate(zip(a, b)):
            if x != y:
                return f"spec {i}: Spark {x} vs simulated {y}"
        return f"Spark has {len(a)} specs, simulation {len(b)}"

    def to_dict(self) -> dict[str, Any]:
        return {
            "stage_node": self.stage_node, "read_node": self.read_node, "stage_id": self.stage_id,
            "shuffle_id": self.shuffle_id, "fragment": self.fragment, "agrees": self.agrees,
            "rules": self.rules, "description": self.description,
            "spark_specs": None if self.spark_specs is None else [spec_to_dict(s) for s in self.spark_specs],
            "simulated_specs": None if self.simulated_specs is None else [spec_to_dict(s) for s in self.simulated_specs],
            "difference": self.first_difference(), "reasons": [r.to_dict() for r in self.reasons],
        }


def _norm(specs: Optional[list[ShufflePartitionSpec]]) -> Optional[list[ShufflePartitionSpec]]:
    return None if specs is None else list(specs)


@dataclass
class JoinResult:
    """A join's strategy: planned (initial plan), Spark's final, and simulated."""

    node: int  # final-plan node
    join_type: str
    keys: str
    initial: Optional[str]
    spark: str
    simulated: Optional[str]
    spark_skew: bool = False
    simulated_skew: Optional[bool] = None
    reasons: list[Reason] = field(default_factory=list)
    simulated_build_side: Optional[str] = None  # "left" / "right" for a simulated broadcast

    @property
    def agrees(self) -> bool:
        return (self.simulated is None or self.simulated == self.spark) and \
            (self.simulated_skew is None or self.simulated_skew == self.spark_skew)

    def to_dict(self) -> dict[str, Any]:
        return {"node": self.node, "join_type": self.join_type, "keys": self.keys, "initial": self.initial,
                "spark": self.spark, "simulated": self.simulated, "spark_skew": self.spark_skew,
                "simulated_skew": self.simulated_skew, "agrees": self.agrees,
                "reasons": [r.to_dict() for r in self.reasons]}


@dataclass
class QueryResult:
    index: int
    label: str
    preset: Optional[str]
    reads: list[ReadResult] = field(default_factory=list)
    joins: list[JoinResult] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)

    @property
    def reads_agreeing(self) -> int:
        return sum(1 for r in self.reads if r.agrees)

    def to_dict(self) -> dict[str, Any]:
        return {"index": self.index, "label": self.label, "preset": self.preset,
                "reads": [r.to_dict() for r in self.reads], "joins": [j.to_dict() for j in self.joins],
                "notes": self.notes}


@dataclass
class Agreement:
    """How many adaptive reads (and join decisions) the rules reproduced exactly."""

    total: int = 0
    agreeing: int = 0
    joins_total: int = 0
    joins_agreeing: int = 0
    mismatches: list[str] = field(default_factory=list)

    @property
    def percent(self) -> float:
        return 100.0 if self.total == 0 else 100.0 * self.agreeing / self.total

    @property
    def complete(self) -> bool:
        return self.agreeing == self.total and self.joins_agreeing == self.joins_total

    def to_dict(self) -> dict[str, Any]:
        return {"reads": self.total, "reads_agreeing": self.agreeing, "percent": round(self.percent, 3),
                "joins": self.joins_total, "joins_agreeing": self.joins_agreeing, "complete": self.complete,
                "mismatches": self.mismatches}


@dataclass
class SimulationReport:
    spark_version: str
    captured_version: str
    overrides: dict[str, str]
    queries: list[QueryResult]
    agreement: Agreement
    elapsed_ms: float = 0.0
    notes: list[str] = field(default_factory=list)

    @property
    def is_replay(self) -> bool:
        """No override and the captured release: the agreement figures are meaningful."""
        return not self.overrides and as_version(self.spark_version) == as_version(self.captured_version)

    def to_dict(self) -> dict[str, Any]:
        return {"spark_version": self.spark_version, "captured_version": self.captured_version,
                "overrides": self.overrides, "replay": self.is_replay, "agreement": self.agreement.to_dict(),
                "elapsed_ms": round(self.elapsed_ms, 3), "notes": self.notes,
                "queries": [q.to_dict() for q in self.queries]}


# ----------------------------------------------------------------------------------------
# Plan model


@dataclass
class _N:
    """A node of a stage fragment, with the codegen wrappers and adaptive reads taken out."""

    idx: int
    name: str
    desc: str
    info: dict[str, Any]
    children: list["_N"] = field(default_factory=list)
    parent: Optional["_N"] = None
    pos: int = 0  # position among Spark's children of the parent (for required distributions)
    read_idx: Optional[int] = None  # for a stage leaf: Spark's read above it

    @property
    def is_stage(self) -> bool:
        return self.name in _STAGES

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
class _Fragment:
    fid: int
    root: _N
    is_final: bool
    stages: list[_N]  # stage leaves, plan order
    main: bool = True  # under the query's own AdaptiveSparkPlan (not a subquery's)


class _Plan:
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

    def fragments(self) -> list[_Fragment]:
        out: list[_Fragment] = []
        seen_exchanges: set[int] = set()
        seen_shuffles: set[int] = set()

        def add(root_idx: int, is_final: bool, main: bool = True) -> None:
            fr = _Fragment(len(out), None, is_final, [], main)  # type: ignore[arg-type]
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

    def _build(self, i: int, parent: Optional[_N], pos: int, fr: _Fragment) -> _N:
        name = self.name(i)
        while name.startswith(_WRAPPERS) and self.kids[i]:
            i = self.kids[i][0]
            name = self.name(i)
        read_idx = None
        if name in _READS and self.kids[i]:
            read_idx = i
            i = self.kids[i][0]
            name = self.name(i)
        node = _N(i, name, self.nodes[i].description, self.info[i], [], parent, pos, read_idx)
        if node.is_stage:
            fr.stages.append(node)
            return node
        if name == "AdaptiveSparkPlan":
            return node  # a subquery's plan: its own fragments
        for p, k in enumerate(self.kids[i]):
            node.children.append(self._build(k, node, p, fr))
        return node


# ----------------------------------------------------------------------------------------
# Simulation


class _Ctx:
    def __init__(self, q: QueryCapture, conf: AQEConf, v: SparkVersion, plan: _Plan) -> None:
        self.q, self.conf, self.v, self.plan = q, conf, v, plan
        self.default_parallelism = q.default_parallelism

    def stage(self, n: _N) -> Optional[StageCapture]:
        return self.plan.stage_by_node.get(n.idx)

    def shuffle(self, n: _N) -> Optional[ShuffleCapture]:
        st = self.stage(n)
        return self.q.shuffle(st.shuffle_id) if st else None

    def bytes(self, n: _N) -> Optional[list[int]]:
        sh = self.shuffle(n)
        return sh.bytes_by_partition_id if sh else None

    def origin(self, n: _N) -> str:
        st = self.stage(n)
        if st is None:
            return "UNKNOWN"
        if st.origin:
            return st.origin
        # 3.0.x has no ShuffleOrigin: canChangeNumPartitions=false means a user repartition
        if st.can_change_num_partitions is False:
            return "SINGLE_PARTITION" if (st.output_partitioning or "").startswith("SinglePartition") else "REPARTITION"
        return "ENSURE_REQUIREMENTS"

    def single_partition(self, n: _N) -> bool:
        st = self.stage(n)
        return bool(st and (st.output_partitioning or "").startswith("SinglePartition"))

    def map_sizes_for(self, n: _N):
        sh = self.shuffle(n)
        if sh is None or sh.map_sizes is None:
            return None
        return sh.map_sizes.for_reducer


def simulate(capture: Capture, conf: Optional[Mapping[str, Any]] = None,
             spark_version: "str | SparkVersion | None" = None) -> SimulationReport:
    """Run AQE Lens's rules over every query of ``capture`` (see the module doc)."""
    t0 = time.perf_counter()
    v = as_version(spark_version or capture.spark_version)
    overrides = {str(k): str(val) for k, val in (conf or {}).items()}
    queries = []
    agreement = Agreement()
    notes: list[str] = []
    changed_plan_keys = [k for k in overrides if k in PLAN_CHANGING_KEYS]
    if changed_plan_keys:
        notes.append("these settings change the plan Spark builds before AQE and need a new run to answer: "
                     + ", ".join(changed_plan_keys))
    for q in capture.queries:
        qr = simulate_query(q, overrides, v)
        queries.append(qr)
        for r in qr.reads:
            agreement.total += 1
            if r.agrees:
                agreement.agreeing += 1
            else:
                agreement.mismatches.append(f"{q.label}: stage {r.stage_id} read: {r.first_difference()}")
        for j in qr.joins:
            if j.simulated is None and j.simulated_skew is None:
                continue
            agreement.joins_total += 1
            if j.agrees:
                agreement.joins_agreeing += 1
            else:
                agreement.mismatches.append(f"{q.label}: join at node {j.node}: Spark {j.spark}"
                                            f"{' (skew)' if j.spark_skew else ''}, simulated {j.simulated}"
                                            f"{' (skew)' if j.simulated_skew else ''}")
    rep = SimulationReport(str(v), capture.spark_version, overrides, queries, agreement, notes=notes)
    rep.elapsed_ms = (time.perf_counter() - t0) * 1000.0
    return rep


def simulate_query(q: QueryCapture, overrides: Mapping[str, str], v: SparkVersion) -> QueryResult:
    qr = QueryResult(q.index, q.label, q.preset)
    if not q.adaptive or q.final_plan is None:
        qr.notes.append("AQE did not run for this query: nothing to simulate")
        return qr
    conf = AQEConf.resolve(v, [q.conf, overrides], validate=False)
    plan = _Plan(q)
    ctx = _Ctx(q, conf, v, plan)
    frags = plan.fragments()
    try:
        joins = _joins(ctx, frags)
    except Exception as e:  # noqa: BLE001
        qr.notes.append(f"join strategies could not be simulated: {type(e).__name__}: {e}")
        joins = []
    changed = [j for j in joins if j.simulated is not None and j.simulated != j.spark]
    if changed:
        frags = _rewrite_joins(ctx, frags, changed, qr)
    skew_joins: set[int] = set()
    for fr in frags:
        try:
            skew_joins |= _simulate_fragment(ctx, fr, qr)
        except Exception as e:  # noqa: BLE001 - one odd fragment must not hide the others
            qr.notes.append(f"fragment {fr.fid} could not be simulated: {type(e).__name__}: {e}")
    for jr in joins:
        jr.simulated_skew = jr.node in skew_joins
    qr.joins.extend(joins)
    missing = sorted({r.node for r in q.reads} - {r.read_node for r in qr.reads if r.read_node is not None})
    for m in missing:  # a read Spark made that no fragment accounted for (should not happen)
        rc = plan.read_by_node[m]
        qr.reads.append(ReadResult(-1, m, rc.stage_id, rc.shuffle_id, -1, rc.specs, None,
                                   reasons=[Reason("unplaced_read", "this read is outside every stage fragment")]))
    return qr


# -- fragments --------------------------------------------------------------------------


@dataclass
class _State:
    """Specs put on each stage leaf of a fragment (keyed by node idx) and the rules that did it."""

    specs: dict[int, list[ShufflePartitionSpec]] = field(default_factory=dict)
    rules: dict[int, list[str]] = field(default_factory=dict)
    reasons: dict[int, list[Reason]] = field(default_factory=dict)
    skew_joins: set[int] = field(default_factory=set)
    descriptions: dict[int, str] = field(default_factory=dict)

    def put(self, n: _N, specs: list[ShufflePartitionSpec], rule: str) -> None:
        self.specs[n.idx] = list(specs)
        self.rules.setdefault(n.idx, []).append(rule)

    def why(self, n: _N, reasons: list[Reason]) -> None:
        self.reasons.setdefault(n.idx, []).extend(reasons)

    def copy(self) -> "_State":
        return _State({k: list(v) for k, v in self.specs.items()}, {k: list(v) for k, v in self.rules.items()},
                      {k: list(v) for k, v in self.reasons.items()}, set(self.skew_joins), dict(self.descriptions))


def _simulate_fragment(ctx: _Ctx, fr: _Fragment, qr: QueryResult) -> set[int]:
    v = ctx.v
    state = _State()
    if v < SparkVersion(3, 2, 0):
        allowed = _final_stage_rules_3_1(ctx) if (fr.is_final and v >= SparkVersion(3, 1, 0)) else None
        for name, rule in (("CoalesceShufflePartitions", _coalesce_3_0), ("OptimizeSkewedJoin", _skew_join),
                           ("OptimizeLocalShuffleReader", _local_read)):
            if allowed is None or name in allowed:
                rule(ctx, fr, state)
            else:
                for st in fr.stages:
                    state.why(st, [Reason("final_stage_rule_excluded", f"{name} does not run on the final stage:"
                                          " the query has a shuffle whose origin it does not support"
                                          f" ({', '.join(sorted(_all_origins(ctx)))}), so the final partitioning"
                                          " is kept (Spark 3.1)", {"rule": name})])
    else:
        _skew_join(ctx, fr, state)
        final_ok = not (fr.is_final and v >= SparkVersion(3, 4, 2)
                        and not ctx.conf.get_or(A + "applyFinalStageShuffleOptimizations", True))
        if final_ok:
            _rebalance(ctx, fr, state)
            _coalesce(ctx, fr, state)
            _local_read(ctx, fr, state)
        else:
            for st in fr.stages:
                state.why(st, [Reason("final_stage_rules_off", "applyFinalStageShuffleOptimizations=false: no"
                                      " shuffle-read rule runs on the final stage", {},
                                      (A + "applyFinalStageShuffleOptimizations",))])
    for st in fr.stages:
        if not st.is_shuffle_stage:
            continue
        rc = ctx.plan.read_by_node.get(st.read_idx) if st.read_idx is not None else None
        sim = state.specs.get(st.idx)
        if rc is None and sim is None:
            continue
        sc = ctx.stage(st)
        res = ReadResult(st.idx, st.read_idx, sc.stage_id if sc else None, sc.shuffle_id if sc else None, fr.fid,
                         rc.specs if rc else None, sim, state.rules.get(st.idx, []),
                         state.descriptions.get(st.idx) or (_describe(sim, v) if sim is not None else ""),
                         state.reasons.get(st.idx, []))
        qr.reads.append(res)
    return set(state.skew_joins)


#: 3.1.x ``CustomShuffleReaderRule.supportedShuffleOrigins`` (checked in the 3.1.3 release)
_RULE_ORIGINS_3_1 = {
    "CoalesceShufflePartitions": frozenset({"ENSURE_REQUIREMENTS", "REPARTITION"}),
    "OptimizeSkewedJoin": frozenset({"ENSURE_REQUIREMENTS"}),
    "OptimizeLocalShuffleReader": frozenset({"ENSURE_REQUIREMENTS"}),
}


def _all_origins(ctx: _Ctx) -> set[str]:
    """Shuffle origins of every shuffle exchange in the query (3.1 ``inputPlan.collect``)."""
    out = {st.origin for st in ctx.q.stages if st.kind == "shuffle" and st.origin}
    out |= {str(i["origin"]) for i in ctx.plan.info if i.get("origin")}
    return out


def _final_stage_rules_3_1(ctx: _Ctx) -> set[str]:
    """3.1 ``AdaptiveSparkPlanExec.finalStageOptimizerRules``: a shuffle-reader rule runs on the
    final stage only if it supports the origin of *every* shuffle of the input plan, so a
    user repartition keeps the partitioning it asked for (3.2 replaced this by validating the
    required distribution)."""
    origins = _all_origins(ctx)
    return {name for name, ok in _RULE_ORIGINS_3_1.items() if origins <= ok}


def _describe(specs: list[ShufflePartitionSpec], v: SparkVersion) -> str:
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
    if all(isinstance(s, CoalescedPartitionSpec) for s in specs):
        return any(a.end_reducer_index != b.start_reducer_index for a, b in zip(specs, specs[1:]))
    if all(isinstance(s, PartialMapperPartitionSpec) for s in specs):
        return len({s.map_index for s in specs}) != len(specs)
    return True


def _breaks_distribution(ctx: _Ctx, fr: _Fragment, changed: list[_N], skew_joins: set[int]) -> Optional[str]:
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
                reqs = node.info.get("req") or []
                req = reqs[child.pos] if child.pos < len(reqs) else "UnspecifiedDistribution"
                if not (req.startswith("UnspecifiedDistribution") or req.startswith("BroadcastDistribution")):
                    return f"{node.name} needs {req.split('(')[0]} from its child"
            child, node = node, node.parent
        if fr.is_final and fr.main and ctx.q.required_distribution and not ctx.q.required_distribution.startswith(
                ("UnspecifiedDistribution", "None")):
            return f"the query's result must keep {ctx.q.required_distribution.split('(')[0]}"
    return None


def _under_sort(n: _N) -> Optional[_N]:
    if n.name == "Sort" and len(n.children) == 1:
        return n.children[0]
    return None


def _shuffle_leaf(ctx: _Ctx, n: Optional[_N], state: _State, *, for_skew: bool) -> Optional[_N]:
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


def _skew_join(ctx: _Ctx, fr: _Fragment, state: _State) -> None:
    v, conf = ctx.v, ctx.conf
    if not conf.get(A + "skewJoin.enabled"):
        for st in fr.stages:
            if st.parent is not None and (st.parent.name.startswith(_SHUFFLED_JOINS)
                                          or (st.parent.name == "Sort" and st.parent.parent is not None
                                              and st.parent.parent.name.startswith(_SHUFFLED_JOINS))):
                state.why(st, [Reason("skew_join_disabled", "skewJoin.enabled is false", {}, (A + "skewJoin.enabled",))])
        return
    shuffle_stages = [s for s in fr.stages if s.is_shuffle_stage]
    if v < SparkVersion(3, 3, 0) and len(shuffle_stages) != 2:
        return
    trial = state.copy()
    changed: list[_N] = []
    for node in fr.root.walk():
        jt = normalize_join_type(node.info.get("join_type", "")) if node.info.get("join_type") else ""
        if node.name.startswith(_SHUFFLED_JOINS) and len(node.children) == 2:
            if node.name.startswith("SortMergeJoin"):
                left, right = _under_sort(node.children[0]), _under_sort(node.children[1])
            elif v >= SparkVersion(3, 1, 0):
                left, right = node.children
            else:
                continue
            left = _shuffle_leaf(ctx, left, trial, for_skew=True)
            right = _shuffle_leaf(ctx, right, trial, for_skew=True)
            if left is None or right is None:
                continue
            if v < SparkVersion(3, 2, 0) and jt not in ("Inner", "Cross", "LeftSemi", "LeftAnti", "LeftOuter", "RightOuter"):
                continue
            lside = SkewJoinSide(ctx.bytes(left), ctx.map_sizes_for(left),
                                 trial.specs.get(left.idx) if v < SparkVersion(3, 2, 0) else None)  # type: ignore[arg-type]
            rside = SkewJoinSide(ctx.bytes(right), ctx.map_sizes_for(right),
                                 trial.specs.get(right.idx) if v < SparkVersion(3, 2, 0) else None)  # type: ignore[arg-type]
            try:
                res = optimize_skewed_join(lside, rside, jt, conf, spark_version=v)
            except (AssertionError, ValueError) as e:
                trial.why(left, [Reason("skew_join_error", f"OptimizeSkewedJoin would fail: {e}")])
                continue
            for side_node, reasons in ((left, [r for r in res.reasons if r.subject.get("side") != "right"]),
                                       (right, [r for r in res.reasons if r.subject.get("side") == "right"])):
                trial.why(side_node, reasons)
            if not res.applied:
                continue
            trial.put(left, res.left_specs, "OptimizeSkewedJoin")
            trial.put(right, res.right_specs, "OptimizeSkewedJoin")
            if v < SparkVersion(3, 2, 0):
                trial.descriptions[left.idx] = _skew_desc(res.left, res.num_skewed_left)
                trial.descriptions[right.idx] = _skew_desc(res.right, res.num_skewed_right)
            trial.skew_joins.add(node.idx)
            changed += [left, right]
        elif (v >= SparkVersion(4, 3, 0) and node.name.startswith("BroadcastHashJoin") and len(node.children) == 2):
            build = node.info.get("build_side", "")
            stream = node.children[0] if build == "BuildRight" else node.children[1] if build == "BuildLeft" else None
            stream = _shuffle_leaf(ctx, stream, trial, for_skew=True)
            if stream is None:
                continue
            specs, analysis, reasons = optimize_broadcast_stream_side(
                SkewJoinSide(ctx.bytes(stream), ctx.map_sizes_for(stream)), conf, spark_version=v)  # type: ignore[arg-type]
            trial.why(stream, reasons)
            if specs is None:
                continue
            trial.put(stream, specs, "OptimizeSkewedJoin")
            trial.skew_joins.add(node.idx)
            changed.append(stream)
    if not changed:
        _merge_reasons(state, trial)
        return
    broken = _breaks_distribution(ctx, fr, changed, trial.skew_joins)
    if broken is None:
        state.__dict__.update(trial.__dict__)
        return
    force = v >= SparkVersion(3, 3, 0) and conf.get_or(A + "forceOptimizeSkewedJoin", False)
    if force:
        state.__dict__.update(trial.__dict__)
        for n in changed:
            state.why(n, [Reason("forced", f"the split breaks the plan's distribution ({broken}); applied anyway"
                                 " because forceOptimizeSkewedJoin=true (Spark adds a shuffle)", {},
                                 (A + "forceOptimizeSkewedJoin",))])
        return
    _merge_reasons(state, trial)
    for n in changed:
        state.why(n, [Reason("distribution_broken", f"skew handling not applied: splitting would break the plan's"
                             f" distribution ({broken}), which would need an extra shuffle", {},
                             (A + "forceOptimizeSkewedJoin",) if v >= SparkVersion(3, 3, 0) else ())])


def _merge_reasons(state: _State, trial: _State) -> None:
    for k, rs in trial.reasons.items():
        have = state.reasons.setdefault(k, [])
        for r in rs:
            if r not in have:
                have.append(r)


def _skew_desc(side: Any, num_skewed: int) -> str:
    if num_skewed == 0:
        return "no skewed partition"
    return f"{num_skewed} skewed partitions"


def _rebalance(ctx: _Ctx, fr: _Fragment, state: _State) -> None:
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
        broken = _breaks_distribution(ctx, fr, [st], trial.skew_joins)
        if broken:
            state.why(st, [Reason("distribution_broken", f"rebalance split dropped: it would break the plan's"
                                  f" distribution ({broken})")])
            continue
        state.__dict__.update(trial.__dict__)


def _stage_input(ctx: _Ctx, st: _N, state: _State) -> StageInput:
    sc = ctx.stage(st)
    return StageInput(stage_id=st.idx, bytes_by_partition_id=ctx.bytes(st), origin=ctx.origin(st),
                      existing_specs=state.specs.get(st.idx), single_partition=ctx.single_partition(st),
                      user_specified_num_partitions=bool(sc and sc.can_change_num_partitions is False),
                      advisory_partition_size=sc.advisory_partition_size if sc else None)


def _shape(ctx: _Ctx, n: _N, state: _State) -> PlanShape:
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


def _union_keeps_partitioning(n: _N) -> bool:
    part = str(n.info.get("partitioning", "UnknownPartitioning"))
    return not part.startswith("UnknownPartitioning")


def _coalesce(ctx: _Ctx, fr: _Fragment, state: _State) -> None:
    v, conf = ctx.v, ctx.conf
    if not conf.get(A + "coalescePartitions.enabled"):
        for st in fr.stages:
            if st.is_shuffle_stage:
                state.why(st, [Reason("coalesce_disabled", "coalescePartitions.enabled is false", {},
                                      (A + "coalescePartitions.enabled",))])
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
            advisory = conf.get(A + "coalescePartitions.minPartitionSize")
        d = coalesce_group(g, conf, spark_version=v, default_parallelism=ctx.default_parallelism,
                           group_min_num=gmin if v >= SparkVersion(3, 3, 0) else None, advisory_override=advisory)
        for s in g:
            state.reasons.setdefault(s.stage_id, []).extend(d.reasons)
        if d.applied:
            for s in g:
                state.specs[s.stage_id] = d.specs_by_stage[s.stage_id]
                state.rules.setdefault(s.stage_id, []).append("CoalesceShufflePartitions")


def _under_exploding_join(fr: _Fragment, group: list[StageInput]) -> bool:
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


def _coalesce_3_0(ctx: _Ctx, fr: _Fragment, state: _State) -> None:
    """3.0/3.1 CoalesceShufflePartitions: all leaves query stages, every shuffle can change its
    partition count; one spec list for every stage, put on every stage even when unchanged."""
    conf, v = ctx.conf, ctx.v
    stages = [s for s in fr.stages if s.is_shuffle_stage]
    if not conf.get(A + "coalescePartitions.enabled"):
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


def _all_leaves_stages(n: _N) -> bool:
    if n.is_stage:
        return True
    if not n.children:
        return False
    return all(_all_leaves_stages(c) for c in n.children)


def _local_read(ctx: _Ctx, fr: _Fragment, state: _State) -> None:
    v, conf = ctx.v, ctx.conf
    if not conf.get(A + "localShuffleReader.enabled"):
        return

    def eligible(st: _N) -> bool:
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

    def make(st: _N) -> list[ShufflePartitionSpec]:
        sc = ctx.stage(st)
        sh = ctx.shuffle(st)
        n_maps = (sc.num_maps if sc and sc.num_maps is not None else sh.num_maps if sh else None) or 0
        n_red = (sh.num_reducers if sh else None) or (sc.num_partitions if sc else 0) or 0
        expected = len(state.specs[st.idx]) if st.idx in state.specs else None
        return local_read_specs(n_maps, n_red, expected, spark_version=v)

    root = fr.root
    if root.is_shuffle_stage and eligible(root):
        specs = make(root)
        broken = _breaks_distribution(ctx, fr, [root], state.skew_joins) if fr.is_final else None
        if broken is None:
            state.put(root, specs, "OptimizeShuffleWithLocalRead" if v >= SparkVersion(3, 2, 0) else "OptimizeLocalShuffleReader")
            state.descriptions[root.idx] = "local"
        return
    trial = state.copy()
    changed: list[_N] = []
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
    broken = _breaks_distribution(ctx, fr, changed, trial.skew_joins)
    if broken is None:
        state.__dict__.update(trial.__dict__)
    else:
        for n in changed:
            state.why(n, [Reason("distribution_broken", f"local shuffle read not applied: it would break the plan's"
                                 f" distribution ({broken})")])


def _has_local(specs: list[ShufflePartitionSpec]) -> bool:
    return any(isinstance(s, (PartialMapperPartitionSpec, CoalescedMapperPartitionSpec)) for s in specs)


# -- joins ------------------------------------------------------------------------------


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


def _side_stage(ctx: _Ctx, n: _N) -> Optional[_N]:
    """The shuffle stage feeding one join side in the final plan (through sorts, broadcast
    stages and local reads)."""
    cur: Optional[_N] = n
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


def _broadcast_source(ctx: _Ctx, bq: _N) -> Optional[_N]:
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
    while (p.name(i).startswith(_WRAPPERS) or p.name(i) in _READS or p.name(i) in ("Project", "Filter")) and p.kids[i]:
        i = p.kids[i][0]
    if p.name(i) == "ShuffleQueryStage":
        return _N(i, p.name(i), p.nodes[i].description, p.info[i])
    return None


def _joins(ctx: _Ctx, frags: list[_Fragment]) -> list[JoinResult]:
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


def _decide_join(ctx: _Ctx, jr: JoinResult, ls: _N, rs: _N) -> None:
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
                                 {"size": size, "threshold": thr}, (A + "autoBroadcastJoinThreshold",
                                                                     "spark.sql.autoBroadcastJoinThreshold")))
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
        if choice.build_side or conf.get_or(A + "maxShuffledHashJoinLocalMapThreshold", 0) > 0:
            jr.reasons += choice.reasons
        jr.simulated = "ShuffledHashJoin" if choice.build_side else "SortMergeJoin"
    if jr.simulated == jr.initial:
        jr.reasons.append(Reason("unchanged", f"stays {jr.simulated}"))


# -- what-if: a join whose strategy changes changes the plan around its stages ------------

_REQ_CLUSTERED = "ClusteredDistribution(join keys)"


def _find(frags: list[_Fragment], idx: int) -> tuple[Optional[_Fragment], Optional[_N]]:
    for fr in frags:
        for n in fr.root.walk():
            if n.idx == idx:
                return fr, n
    return None, None


def _leaf_of(n: _N) -> Optional[_N]:
    """The shuffle stage leaf of a join child: itself, or under a local Sort."""
    if n.is_shuffle_stage:
        return n
    if n.name == "Sort" and len(n.children) == 1 and n.children[0].is_shuffle_stage:
        return n.children[0]
    return None


def _new_join(old: _N, strategy: str, left: _N, right: _N, build: Optional[str]) -> _N:
    info = {k: v for k, v in old.info.items() if k in ("join_type", "left_keys", "right_keys")}
    info["skew"] = False
    if strategy == "BroadcastHashJoin":
        info["build_side"] = "BuildRight" if build == "right" else "BuildLeft"
        info["req"] = (["UnspecifiedDistribution", "BroadcastDistribution"] if build == "right"
                       else ["BroadcastDistribution", "UnspecifiedDistribution"])
    else:
        info["req"] = [_REQ_CLUSTERED, _REQ_CLUSTERED]
    j = _N(old.idx, strategy, f"{strategy} (what-if)", info, [], old.parent, old.pos)
    for pos, child in enumerate((left, right)):
        if strategy == "SortMergeJoin" and child.is_shuffle_stage:
            sort = _N(-10_000 - child.idx, "Sort", "Sort (what-if)", {"req": ["UnspecifiedDistribution"]}, [child], j, pos)
            child.parent, child.pos = sort, 0
            j.children.append(sort)
        else:
            child.parent, child.pos = j, pos
            j.children.append(child)
    if old.parent is not None:
        old.parent.children[old.pos] = j
    return j


def _restage(fr: _Fragment) -> None:
    fr.stages = [n for n in fr.root.walk() if n.is_stage]


def _rewrite_joins(ctx: _Ctx, frags: list[_Fragment], joins: list[JoinResult], qr: QueryResult) -> list[_Fragment]:
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
            bq = _N(-20_000 - build_leaf.idx, "BroadcastQueryStage", "BroadcastQueryStage (what-if)", {})
            l2, r2 = (stream, bq) if jr.simulated_build_side == "right" else (bq, stream)
            j = _new_join(node, "BroadcastHashJoin", l2, r2, jr.simulated_build_side)
            build_leaf.parent, build_leaf.pos = None, 0
            nf = _Fragment(len(frags), build_leaf, False, [build_leaf], fr.main)
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

