"""Event-log executions as :class:`~aqe_core.views.query.QueryView` s.

A log holds only Spark's metrics after AQE (the sizes each adaptive read produced), so every
shuffle's lines are computed over those sizes and say so (``approx_reason``).
"""
from __future__ import annotations

from dataclasses import replace
from typing import Optional, Sequence

from aqe_core import config
from aqe_core.config import AQEConf, checked_layers
from aqe_core.engine.pipeline import streaming_without_aqe
from aqe_core.engine import adaptive_verdict
from aqe_core.model.eventlog import EventLog, ShuffleRead, SQLExecution
from aqe_core.model.cluster import parallelism_of
from aqe_core.model.evidence import Evidence
from aqe_core.model.log_release import release_of
from aqe_core.model.plan import PlanNode
from aqe_core.model.plan_walk import SHUFFLE_READ_NAMES, exchange_below
from aqe_core.model.query import query_from_execution
from aqe_core.model.reasons import Reason
from aqe_core.model.vocabulary import Vocabulary
from aqe_core.model.task_time import TaskTime
from aqe_core.units import mib
from aqe_core.versions import SparkVersion
from aqe_core.views.align_runs import shape_key
from aqe_core.views.engine_view import engine_label, engine_numbers, engine_of_plans, numbers_sentence
from aqe_core.views.eventlog_summary import join_change_lists, outcome_text, read_before_partitions
from aqe_core.views.query import (
    QueryView, ShuffleView, compute_group_lines, exchange_join_context, join_keys,
    read_join_context,
)
from aqe_core.views.plan_stages import final_node_stages
from aqe_core.engine.left_alone import coalesce_why, skew_why
from aqe_core.views.sentences import adaptive_reason, streaming_batch, streaming_reason

# -- the reasons a plain log gives (:mod:`aqe_core.model.vocabulary`): what Spark's metrics say it
# did, where no rule is replayed
V = Vocabulary("event log", __name__)
LEFT_ALONE = V.code("left_alone", "AQE added no adaptive read over this shuffle: why, in the log's numbers.",
                    "AQE left this shuffle as planned (no adaptive read): {why}")
NO_READ_METRICS = V.code("no_read_metrics", "A Spark 3.0 log has no adaptive-read metrics.",
                         "Spark 3.0 logs carry no adaptive-read metrics: whether AQE coalesced or split this read is"
                         " not in the log (sizes are what each reduce task read)")
LOGGED_SKEW = V.code("logged_skew", "The read's metrics count skewed reducers Spark split.",
                     "Spark split {skewed} skewed reducer{s}{parts} (the read's metrics; which reducer, the log does"
                     " not say)")
LOGGED_COALESCE = V.code("logged_coalesce", "The read's metrics count the partitions Spark read after coalescing.",
                         "{before} shuffle partitions were read as {after}{detail} (the read's metrics)")

__all__ = ["carry_log_facts", "execution_conf", "view_from_execution", "views_from_eventlog"]

_APPROX = ("event log: the lines are computed over the partition sizes after AQE (the log has no"
           " pre-AQE per-reducer sizes or per-map sizes)")
#: the coalescing target needs only the total (merging keeps it) and, with parallelismFirst, the cores
_TARGET_EXACT = "; the coalescing target is exact"
_TARGET_UNKNOWN = ("; the coalescing target is not drawn: it needs the default parallelism, which the log"
                   " does not give for this query")


def views_from_eventlog(log: EventLog) -> list[QueryView]:
    """One :class:`QueryView` per SQL execution of a loaded :class:`aqe_core.model.eventlog.EventLog`."""
    return [view_from_execution(log, ex) for ex in log.executions_by_id()]


def execution_conf(v: SparkVersion, ex: SQLExecution) -> tuple[AQEConf, list[str]]:
    """The execution's AQE conf under release ``v`` (the release whose rules replay it), with notes."""
    if isinstance(ex.aqe_conf, AQEConf):
        return ex.aqe_conf, []
    layers, notes = checked_layers(v, ex.conf_layers or [])
    return AQEConf.resolve(v, layers, validate=False), notes


def view_from_execution(log: EventLog, ex: SQLExecution, *, plans: bool = True) -> QueryView:
    """The view of one execution: its plans, each adaptive read as a shuffle, the rules' lines.
    ``plans=False`` (the fleet scan's rows, which read no plan but the final one): no initial
    plan and no plan versions, so their trees are neither built nor given metric values."""
    rel = release_of(log)  # (the log's own, else the nearest modelled: :mod:`aqe_core.model.log_release`)
    v = rel.replayed_as
    conf, notes = execution_conf(v, ex)
    par = parallelism_of(log, ex.submission_time, ex.completion_time)
    dp = par.value
    initial = ex.initial_plan  # (built from the log's JSON on each read: once here)
    formatted: dict = {}  # each metric's UI strings, once for all plan versions
    changes = join_change_lists(ex, initial)  # (AQE's and the engine's: one walk of both plans)
    qv = QueryView(
        source_kind="eventlog",
        query_id=str(ex.id),
        description=(ex.description or "").strip() or f"execution {ex.id}",
        spark_version=v,
        conf=conf,
        default_parallelism=dp,
        status=ex.status,
        duration_ms=ex.duration,
        initial_plan=ex.plan_with_values(initial, formatted) if plans else None,
        plan_versions=[p for p in (ex.plan_with_values(p, formatted) for p in ex.plan_versions) if p is not None]
        if plans else [],
        final_plan=ex.plan_with_values(ex.final_plan, formatted),
        join_changes=changes[0],
        adaptive=ex.adaptive,
        outcome=outcome_text(ex, initial, changes),
        warnings=list(ex.warnings) + notes,
        model=query_from_execution(ex, str(v), dp),
    )
    qv.parallelism_how, qv.release, qv.release_known = par.how, rel.label, rel.known
    qv.engine = engine_label(engine_of_plans([initial, ex.final_plan], log.spark_properties))
    qv.engine_changes = changes[1]
    if not rel.known:
        qv.warnings.append(f"The Spark release is unknown ({rel.source}): {rel.label}")
    qv.spark_query_id = ex.query_id
    qv.root_execution_id = ex.root_execution_id if ex.root_execution_id not in (None, ex.id) else None
    qv.stage_retries = list(ex.stage_retries)
    qv.start_ms, qv.end_ms, qv.query_shape = ex.submission_time, ex.completion_time, shape_key(None if plans else initial)
    qv.warnings += [f"{event} events were excluded from this log by {config.EVENT_LOG_EXCLUDED_PATTERNS}: {what}"
                    for event, what in log.excluded_events.items() if event == "SparkListenerTaskEnd"]
    if not ex.adaptive and initial is not None:
        qv.adaptive_reason = _not_adaptive_reason(ex, initial, conf, v)
    ctx = read_join_context(ex.final_plan)
    keys = join_keys(ex.final_plan)
    qv.stage_times = _stage_times(log, ex)
    qv.shuffles = [_shuffle(ex, r, ctx, keys, dp) for r in ex.shuffle_reads]
    rebalanced = _rebalance_reads(qv.final_plan)
    for s in qv.shuffles:
        s.rebalance = s.node_id in rebalanced
    planned_ctx = exchange_join_context(qv.final_plan)
    groups: dict[str, list[list[int]]] = {}  # a join's sides are coalesced together: one target over both
    for r in ex.planned_shuffles:
        if r.node_id in planned_ctx and r.partition_sizes:
            groups.setdefault(planned_ctx[r.node_id][3], []).append(list(r.partition_sizes))
    for r in ex.planned_shuffles:
        if r.partitions == 1:  # (a global aggregate's, an executor broadcast's: nothing for AQE to do)
            qv.single_partition_exchanges += 1
            continue
        side = planned_ctx.get(r.node_id) if r.node_id is not None else None
        sv = planned_shuffle(r, qv.final_plan, conf, dp, groups.get(side[3]) if side else None, side[:3] if side else None)
        if side:
            sv.join, sv.side, sv.join_type, sv.group_key = side
            sv.label += f": {sv.side} side of {sv.join}"
        qv.shuffles.append(sv)
    for s in qv.shuffles:
        s.task_time = qv.stage_times.get(s.stage_id) if s.stage_id is not None else None
        s.engine_numbers = engine_numbers(qv.final_plan, s.node_id)
        if s.engine_numbers:
            s.approx_reason = "; ".join(x for x in (s.approx_reason, numbers_sentence(s.engine_numbers)) if x)
    qv.node_stages = final_node_stages(qv)
    compute_group_lines(qv.shuffles, conf, dp)
    for s in qv.shuffles:  # skew is Spark's claim (the read's metrics), never ours over post-AQE sizes
        s.skew_rows = []
        # the coalescing target needs only the total, which the post-AQE sizes keep: Spark's metric;
        # for a read AQE left as planned it is what coalescing would aim at, which Spark never did
        known = Evidence.SPARK_METRIC if s.adaptive_read is not False else Evidence.ESTIMATE
        s.lines = [replace(ln, evidence=known) if ln.kind == "coalesce_target" else ln for ln in s.lines]
    return qv


def _not_adaptive_reason(ex: SQLExecution, initial: PlanNode, conf: AQEConf, v: SparkVersion) -> str:
    """Why an execution ran without AQE: the plan's verdict, or, for a streaming micro-batch before
    4.1, that Spark itself set ``spark.sql.adaptive.enabled=false`` on the stream's session."""
    batch = streaming_batch(ex.description, ex.job_properties)
    if batch is not None and streaming_without_aqe(v) and not conf.get(config.ADAPTIVE_EXECUTION_ENABLED):
        return streaming_reason(v, batch)  # (Spark set the false: not the user)
    return adaptive_reason(adaptive_verdict(initial, conf, v))


def _rebalance_reads(plan: Optional[PlanNode]) -> set[int]:
    """Node ids of the adaptive reads whose exchange is a REBALANCE (its origin in the description)."""
    out: set[int] = set()
    for n in plan.walk() if plan is not None else []:
        if n.name in SHUFFLE_READ_NAMES and n.id is not None:
            e = exchange_below(n)
            if e is not None and "REBALANCE_PARTITIONS" in (e.description or ""):
                out.add(n.id)
    return out


def _stage_times(log: EventLog, ex: SQLExecution) -> dict[int, TaskTime]:
    out: dict[int, TaskTime] = {}
    for sid in ex.stage_ids:
        st = log.stages.get(sid)
        t = st.task_time() if st is not None else None
        if t is not None:
            out[sid] = t
    return out


def carry_log_facts(plain: QueryView, exact: QueryView) -> None:
    """An exact (listener) view of a logged execution keeps what only the log holds: when it
    started and ended, the task times (the stage times as they are, and each read's when both views list the same reads in
    the same order, pre-order, with the same partition counts), Spark's metric values on the
    plans, and the shuffles AQE left as planned (the listener records adaptive reads only: a
    run comparison must still see a shuffle that one run read as planned and the other split)."""
    exact.stage_times = plain.stage_times
    exact.node_stages = plain.node_stages
    if exact.start_ms is None and exact.end_ms is None:  # (the execution's times: the log's events)
        exact.start_ms, exact.end_ms = plain.start_ms, plain.end_ms
    # the same plans with Spark's metric values (rows on the edges, each read's sizes), where the
    # exact view draws the very same trees (node ids and names, in order)
    if _same_plan(plain.final_plan, exact.final_plan):
        exact.final_plan = plain.final_plan
    if _same_plan(plain.initial_plan, exact.initial_plan):
        exact.initial_plan = plain.initial_plan
    if len(plain.plan_versions) == len(exact.plan_versions) and all(
            _same_plan(a, b) for a, b in zip(plain.plan_versions, exact.plan_versions)):
        exact.plan_versions = list(plain.plan_versions)
    a, b = [s for s in plain.shuffles if s.adaptive_read], exact.shuffles
    if len(a) == len(b) and all(x.partitions_after == y.partitions_after for x, y in zip(a, b)):
        for x, y in zip(a, b):
            y.task_time = x.task_time
    have = {s.key for s in b}
    if exact.final_plan is plain.final_plan:  # (the same tree: the node ids they name)
        # (a listener that records reads left as planned too names their query stage)
        covered = {s.stage_id for s in b if s.stage_id is not None}
        planned = [s for s in plain.shuffles if not s.adaptive_read and s.key not in have
                   and _query_stage(plain.final_plan, s.node_id) not in covered]
        exact.shuffles = list(b) + planned
        exact.single_partition_exchanges = plain.single_partition_exchanges


def _query_stage(plan: Optional[PlanNode], node_id: Optional[int]) -> Optional[int]:
    """The id of the ``ShuffleQueryStage`` right above a plan node (AQE's query stage), or None."""
    if plan is None or node_id is None:
        return None
    parent = {id(c): n for n in plan.walk() for c in n.children}
    cur = next((n for n in plan.walk() if n.id == node_id), None)
    while cur is not None:
        desc = (cur.description or "").split()
        if (cur.name or "").startswith("ShuffleQueryStage") and len(desc) > 1 and desc[1].isdigit():
            return int(desc[1])
        cur = parent.get(id(cur))
    return None


def _same_plan(a: Optional[PlanNode], b: Optional[PlanNode]) -> bool:
    return a is not None and b is not None and [(n.id, n.name) for n in a.walk()] == [(n.id, n.name) for n in b.walk()]


def _shuffle(ex: SQLExecution, r: ShuffleRead, ctx: dict, keys: dict, dp: Optional[int]) -> ShuffleView:
    """One adaptive read, with what its metrics say Spark did."""
    join, side, jtype = ctx.get(r.node_id, (None, None, None)) if r.node_id is not None else (None, None, None)
    head = r.description if r.description.startswith(r.name) else f"{r.name} {r.description}"
    label = head.strip() + (f" (node {r.node_id})" if r.node_id is not None else "")
    if join:
        label += f": {side} side of {join}"
    sv = ShuffleView(
        key=f"read-{r.node_id}", label=label, node_id=r.node_id, stage_id=r.stage_id, side=side, join=join,
        join_type=jtype, read_description=r.description, partitions_before=read_before_partitions(ex, r),
        partitions_after=r.partitions, sizes_after=list(r.partition_sizes) if r.partition_sizes else None,
        coalesced_partitions=r.coalesced_partitions, skewed_partitions=r.skewed_partitions,
        skew_splits=r.skew_splits, local=r.local, exact=False,
        # Spark posts a read's metrics once, the skew pair only when it split: without the
        # partition count posted (Spark 3.0, or no map statistics) a missing pair says nothing
        has_read_metrics=r.num_partitions is not None,
        approx_reason=_APPROX + (_TARGET_EXACT if dp is not None else _TARGET_UNKNOWN),
    )
    sv.group_key = keys.get(r.node_id) if r.node_id is not None else None
    if r.partition_sizes_source == "task_shuffle_read":
        sv.approx_reason = (sv.approx_reason or "") + "; Spark 3.0 logs no read metrics: sizes are the bytes each reduce task read"
    sv.reasons += logged_read_reasons(sv.partitions_before, r.partitions, r.coalesced_partitions,
                                      r.skewed_partitions, r.skew_splits, r.partition_sizes_source == "task_shuffle_read")
    return sv


_PLANNED_APPROX = ("AQE left this shuffle as planned: the sizes are the bytes each reduce task read (task i"
                   " reads reducer i; task metrics, not the MapStatus sizes AQE would have used)")


def planned_shuffle(r: ShuffleRead, final: Optional[PlanNode], conf: AQEConf,
                    cores: Optional[int] = None, group: Optional[list[list[int]]] = None,
                    join: Optional[tuple[str, str, Optional[str]]] = None) -> ShuffleView:
    """A shuffle no adaptive read reads: its partitions as planned, and why AQE left it alone,
    in the log's numbers (``join``: the join, side and join type it feeds, from the caller's
    one walk of the plan)."""
    node = next((n for n in final.walk() if n.id == r.node_id), None) if final is not None and r.node_id is not None else None
    written = node.metric("shuffle bytes written") if node is not None else None
    total = written.get("total") if written else None
    sv = ShuffleView(
        key=f"exchange-{r.node_id}", label=f"{r.description.split(', [plan_id')[0]} (node {r.node_id}): read as planned",
        node_id=r.node_id, stage_id=r.stage_id, read_description=r.description, partitions_before=r.partitions,
        partitions_after=r.partitions, sizes_after=list(r.partition_sizes) if r.partition_sizes else None,
        skewed_partitions=0, skew_splits=0, adaptive_read=False, exact=False, approx_reason=_PLANNED_APPROX)
    sv.reasons.append(left_alone_reason(r.partitions, total if isinstance(total, int) else None, conf,
                                        r.description, sizes=r.partition_sizes, cores=cores, join=join, group=group))
    return sv


def left_alone_reason(partitions: Optional[int], written: Optional[int], conf: AQEConf, description: str, *,
                      sizes: Optional[Sequence[int]] = None, cores: Optional[int] = None,
                      join: Optional[tuple[str, str, Optional[str]]] = None,
                      group: Optional[list[list[int]]] = None) -> Reason:
    """Why AQE did not touch a shuffle, in the log's numbers (:mod:`aqe_core.engine.left_alone`):
    bytes written per partition against the advisory size; whether coalescing was on and, if
    so, the target it aimed at (``cores``: the cluster's, None when the log does not say);
    why no reducer was split (``join``: the join, side and join type the shuffle feeds;
    ``sizes``: what each reduce task read).

    >>> from aqe_core.config import AQEConf
    >>> c = AQEConf.resolve("4.3.0", [{"spark.sql.adaptive.coalescePartitions.enabled": "false"}])
    >>> print(left_alone_reason(128, 128 * 1024 * 1024, c, "Exchange hashpartitioning(a, 128), ENSURE_REQUIREMENTS").message)
    AQE left this shuffle as planned (no adaptive read): it wrote 128 MiB into 128 partitions (1 MiB each on average, against an advisory size of 64 MiB); coalescing is off (spark.sql.adaptive.coalescePartitions.enabled=false), so AQE keeps every partition; no reducer was split: the skew-join rule splits only the sides of a sort-merge or shuffled hash join, and this shuffle is not one
    """
    advisory = conf.advisory_partition_size
    parts = []
    numbers: dict = {"partitions": partitions, "bytes_written": written, "advisory": advisory}
    if written is not None and partitions:
        parts.append(f"it wrote {mib(written)} into {partitions} partition{'s' if partitions != 1 else ''}"
                     f" ({mib(written // partitions)} each on average, against an advisory size of {mib(advisory)})")
    elif partitions:
        parts.append(f"{partitions} partition{'s' if partitions != 1 else ''} (the log has no bytes written for it)")
    if partitions == 1:
        parts.append("a single partition: nothing to coalesce")
    elif not conf.get_or(config.COALESCE_PARTITIONS_ENABLED, True):
        parts.append(f"coalescing is off ({config.COALESCE_PARTITIONS_ENABLED}=false), so AQE keeps every partition")
    elif "REPARTITION_BY_NUM" in description:
        parts.append("a repartition to a fixed number of partitions: AQE keeps the number the query asked for")
    elif partitions:
        why, got = coalesce_why(partitions, written, sizes, conf, conf.spark_version, cores, group)
        parts.append(why)
        numbers.update(got)
    j, side, jtype = join if join else (None, None, None)
    parts.append(skew_why(sizes, conf, conf.spark_version, j, side, jtype))
    return LEFT_ALONE.reason(numbers=numbers, why="; ".join(parts))


def logged_read_reasons(before: Optional[int], after: Optional[int], coalesced: Optional[int], skewed: Optional[int],
                        splits: Optional[int], no_metrics: bool) -> list[Reason]:
    """What a read's metrics say Spark did, in Spark's own counts: split parts are not
    coalesced partitions, and a count the log does not hold is said to be missing.

    >>> for r in logged_read_reasons(40, 21, 17, 1, 4, False):
    ...     print(r.message)
    Spark split 1 skewed reducer into 4 parts (the read's metrics; which reducer, the log does not say)
    40 shuffle partitions were read as 21: 17 coalesced ranges, 4 parts of split reducers (the read's metrics)
    """
    out: list[Reason] = []
    if no_metrics:
        out.append(NO_READ_METRICS.reason())
        return out
    if skewed:
        parts = f" into {splits} parts" if splits is not None else " (the number of parts is not in the log)"
        out.append(LOGGED_SKEW.reason(numbers={"skewed": skewed, "splits": splits}, skewed=skewed,
                                      s="s" if skewed != 1 else "", parts=parts))
    if coalesced or skewed:
        what = [f"{coalesced} coalesced range{'s' if coalesced != 1 else ''}" if coalesced else "",
                f"{splits} parts of split reducers" if skewed and splits is not None else ""]
        detail = ", ".join(x for x in what if x)
        out.append(LOGGED_COALESCE.reason(numbers={"before": before, "after": after, "coalesced": coalesced},
                                          before=before if before is not None else "?",
                                          after=after if after is not None else "?",
                                          detail=f": {detail}" if detail else ""))
    return out
