"""Replay a capture through AQE Lens's rules: what would AQE do with these statistics?

    report = simulate(capture)                                  # replay: agreement with Spark
    report = simulate(capture, {config.SKEW_JOIN_SKEWED_PARTITION_FACTOR: "2"})  # what-if
    report = simulate(capture, spark_version="3.0.1")           # another release's rules

Only the rules run (milliseconds), never Spark. The final plan of each captured query is cut
into its *stage fragments* (the plan between an exchange, or the root, and the query stages
below it) because that is the unit Spark's query-stage rules work on. For each fragment the
release's rules run in the release's order (:mod:`aqe_core.engine.pipeline`, the rule lists
of ``AdaptiveSparkPlanExec`` as data) on the captured statistics.

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

import time
from dataclasses import replace
from typing import TYPE_CHECKING, Any, Mapping, Optional

from aqe_core import config
from aqe_core.config import AQEConf
from aqe_core.engine.adaptive import AdaptiveVerdict, adaptive_verdict
from aqe_core.engine.pipeline import APPLY_FINAL_STAGE_FLAG, SUPPORTED_ORIGINS_3_1, Pipeline, final_stage_rules_3_1, pipeline_for
from aqe_core.engine.replan_joins import decide_joins, rewrite_joins
from aqe_core.engine.restage import (
    cut_after_forced_split, mark_new_stage_reads, mark_unknown_inputs, merge_added_exchanges, new_stage_unknown,
)
from aqe_core.engine.results import (
    STAGE_NOT_CREATED, UNDECIDED, UNDECIDED_NEW_STAGE, UNPLACED_READ, Agreement, JoinResult, QueryResult, ReadResult,
    SimulationReport,
)
from aqe_core.engine.stage_plan import Context, Fragment, FragmentState, PlanIndex, all_origins, describe_specs
from aqe_core.rules.join_selection_helper import broadcast_threshold
from aqe_core.model.shared_vocabulary import FINAL_STAGE_RULE_EXCLUDED, FINAL_STAGE_RULES_OFF
from aqe_core.versions import SparkVersion, as_version

if TYPE_CHECKING:  # the capture model (moving to aqe_core.model in issue 9); only for hints
    from aqe_core.model.capture import Capture, QueryCapture

__all__ = ["Agreement", "JoinResult", "PLAN_CHANGING_KEYS", "QueryResult", "ReadResult", "SimulationReport",
           "one_query", "simulate", "simulate_query"]

#: settings that change the plan Spark builds before AQE: a capture cannot answer for them
PLAN_CHANGING_KEYS = (config.SHUFFLE_PARTITIONS, config.COALESCE_PARTITIONS_INITIAL_PARTITION_NUM,
                      config.ADAPTIVE_EXECUTION_ENABLED)


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
        qr = simulate_query(q, overrides, v, what_if=bool(overrides) or v != as_version(capture.spark_version),
                            recorded_v=as_version(capture.spark_version))
        queries.append(qr)
        _tally(agreement, q.label, qr)
    rep = SimulationReport(str(v), capture.spark_version, overrides, queries, agreement, notes=notes)
    rep.elapsed_ms = (time.perf_counter() - t0) * 1000.0
    return rep


def one_query(capture: Capture, q: QueryCapture) -> Capture:
    """``capture`` with only query ``q`` (the engine simulates one query at a time)."""
    return replace(capture, queries=[q])


def _tally(agreement: Agreement, label: str, qr: QueryResult) -> None:
    """Count one query's reads and re-decided joins into the agreement with Spark."""
    for r in qr.reads:
        agreement.total += 1
        if r.agrees:
            agreement.agreeing += 1
        else:
            agreement.mismatches.append(f"{label}: stage {r.stage_id} read: {r.first_difference()}")
    for j in qr.joins:
        agreement.joins_total += 1
        if j.agrees:
            agreement.joins_agreeing += 1
        elif j.outcome == UNDECIDED:
            agreement.joins_undecided += 1
            agreement.undecided.append(f"{label}: join at node {j.node} ({j.spark}): {j.undecided_reason}")
        else:
            agreement.mismatches.append(f"{label}: join at node {j.node}: Spark {j.spark}"
                                        f"{' (skew)' if j.spark_skew else ''}, simulated {j.simulated}"
                                        f"{' (skew)' if j.simulated_skew else ''}")


def simulate_query(q: QueryCapture, overrides: Mapping[str, str], v: SparkVersion, *,
                   what_if: bool = False, recorded_v: Optional[SparkVersion] = None,
                   reads: Optional[set[str]] = None) -> QueryResult:
    """One query's replay; ``reads``, when given, collects every setting the rules asked for."""
    qr = QueryResult(q.index, q.label, q.preset)
    if not q.adaptive and q.final_plan is not None:
        conf = AQEConf.resolve(v, [q.conf, overrides], validate=False)
        if reads is not None:
            conf.record_reads(reads)
        qr.adaptive = adaptive_verdict(q.final_plan.root, conf, v)
        qr.notes.append(_not_adaptive_note(qr.adaptive))
        return qr
    if not q.adaptive or q.final_plan is None:
        qr.notes.append("AQE did not run for this query: nothing to simulate")
        return qr
    conf = AQEConf.resolve(v, [q.conf, overrides], validate=False)
    if reads is not None:
        conf.record_reads(reads)
    plan = PlanIndex(q)
    ctx = Context(q, conf, v, plan, recorded_v)
    ctx.what_if = what_if
    frags = plan.fragments()
    if what_if:  # from the plan before any split that added a shuffle (restage re-adds it)
        frags = merge_added_exchanges(ctx, frags)
    try:
        joins = decide_joins(ctx, frags)
    except Exception as e:  # noqa: BLE001 - a note on the result, the partitions still simulated
        qr.notes.append(f"join strategies could not be simulated: {type(e).__name__}: {e}")
        joins = []
    changed = [j for j in joins if (j.simulated is not None and j.simulated != j.spark)
               or j.simulated_build_root is not None]
    ctx.changed_joins = {j.node for j in changed}
    if changed:
        frags = rewrite_joins(ctx, frags, changed, qr)
    skew_joins: set[int] = set()
    queue, done, cut_from = list(frags), list[Fragment](), dict[int, int]()
    while queue:  # a forced split may cut a fragment: the part above it is simulated after it
        fr = queue.pop(0)
        fr.fid = len(done) if fr.fid not in cut_from else fr.fid
        unknown = new_stage_unknown(ctx, fr, qr.reads) if ctx.added else []
        try:
            skew_joins |= _simulate_fragment(ctx, fr, qr, queue, cut_from, run=not unknown)
        except Exception as e:  # noqa: BLE001 - one odd fragment must not hide the others
            qr.notes.append(f"fragment {fr.fid} could not be simulated: {type(e).__name__}: {e}")
        mark_new_stage_reads(ctx, fr, unknown, qr)
        done.insert(next((k for k, f in enumerate(done) if f.fid == cut_from.get(fr.fid)), len(done)), fr)
    rank = {f.fid: k for k, f in enumerate(done)}  # plan order: a part cut above a fragment comes first
    qr.reads.sort(key=lambda r: rank.get(r.fragment, len(rank)))
    for jr in joins:
        jr.simulated_skew = None if jr.node in ctx.skew_unknown else jr.node in skew_joins
        if (jr.node in ctx.skew_unknown and jr.simulated not in (None, "BroadcastHashJoin")
                and broadcast_threshold(conf, spark_version=v, runtime_stats=True) >= 0):
            jr.simulated = None  # AQE re-plans it from the new stage's runtime size
            jr.reasons.append(UNDECIDED_NEW_STAGE.reason())
    qr.joins.extend(joins)
    missing = sorted({r.node for r in q.reads} - {r.read_node for r in qr.reads if r.read_node is not None})
    for m in missing:  # a read Spark made that no fragment accounted for (should not happen)
        rc = plan.read_by_node[m]
        stage_node = plan.kids[m][0] if 0 <= m < len(plan.kids) and plan.kids[m] else -1
        why = (STAGE_NOT_CREATED.reason(why=ctx.removed_why.get(stage_node, "under these settings this shuffle stage is"
                                        " never created: the join above broadcasts its input as soon as that input"
                                        " finishes"))
               if stage_node in ctx.removed_stages else UNPLACED_READ.reason())
        qr.reads.append(ReadResult(-1, m, rc.stage_id, rc.shuffle_id, -1, rc.specs, None, reasons=[why]))
    if what_if:
        mark_unknown_inputs(ctx, done, qr, joins)
    return qr




def _not_adaptive_note(verdict: AdaptiveVerdict) -> str:
    """The note for a query Spark ran without AQE, with ``InsertAdaptiveSparkPlan``'s reason."""
    if verdict.applies:  # our rule disagrees with the recorded plan: say so, do not guess
        return ("AQE did not run for this query: nothing to simulate (InsertAdaptiveSparkPlan as we read it"
                " would have applied: " + "; ".join(r.message for r in verdict.reasons) + ")")
    return "AQE did not run for this query: " + "; ".join(r.message for r in verdict.reasons) + ": nothing to simulate"


def _simulate_fragment(ctx: Context, fr: Fragment, qr: QueryResult, queue: list[Fragment], cut_from: dict[int, int],
                       run: bool = True) -> set[int]:
    """The rules on one fragment (``run=False``: a fragment over a new shuffle without statistics,
    whose reads are listed for :func:`~aqe_core.engine.restage.mark_new_stage_reads` to mark)."""
    state = FragmentState()
    upper = _run_pipeline(pipeline_for(ctx.v), ctx, fr, state) if run else None
    if upper is not None:  # simulated after this fragment, listed before it
        upper.fid = 1000 + len(cut_from) + fr.fid
        cut_from[upper.fid] = fr.fid
        queue.append(upper)
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
                         state.descriptions.get(st.idx) or (describe_specs(sim, ctx.v) if sim is not None else ""),
                         state.reasons.get(st.idx, []))
        qr.reads.append(res)
    return set(state.skew_joins)


def _run_pipeline(pipeline: Pipeline, ctx: Context, fr: Fragment, state: FragmentState) -> Optional[Fragment]:
    """Run the release's steps in order, with its final-stage filter. A what-if split forced
    past a distribution cuts ``fr`` where Spark adds a shuffle: the rest of the steps run on the
    part below it, and the part above is returned (:func:`aqe_core.engine.restage.cut_after_forced_split`)."""
    upper = None
    for step in pipeline.steps:
        allowed = final_stage_rules_3_1(ctx) if fr.is_final and pipeline.final_stage == SUPPORTED_ORIGINS_3_1 else None
        flag_off = (fr.is_final and pipeline.final_stage == APPLY_FINAL_STAGE_FLAG
                    and not ctx.conf.get_or(config.ADAPTIVE_APPLY_FINAL_STAGE_SHUFFLE_OPTIMIZATIONS, True))
        if flag_off and step.shuffle_read_rule:  # 3.4.2+: each shuffle-read rule is left out, and says so
            for st in fr.stages:
                state.why(st, [FINAL_STAGE_RULES_OFF.reason(
                    numbers={"rule": step.rule}, rule=step.rule,
                    config_keys=(config.ADAPTIVE_APPLY_FINAL_STAGE_SHUFFLE_OPTIMIZATIONS,))])
            continue
        if allowed is None or step.rule in allowed:
            step.run(ctx, fr, state)
            if ctx.what_if and step.phase == "preparation" and step.rule == "OptimizeSkewedJoin" and upper is None:
                upper = cut_after_forced_split(ctx, fr, state)
            continue
        for st in fr.stages:
            state.why(st, [FINAL_STAGE_RULE_EXCLUDED.reason(numbers={"rule": step.rule}, rule=step.rule,
                                                            origins=", ".join(sorted(all_origins(ctx))))])
    return upper
