"""AQE outcome of an execution (for the CLI) and the JSON document (docs/eventlog-json.md)."""
from __future__ import annotations

import json
from collections import Counter
from typing import Any, Callable, Optional, Protocol

from aqe_core.model.engines import Engine, by_key, operator_of, spark_name
from aqe_core.model.eventlog import APPROXIMATE_NOTE, NOT_IN_LOG, EventLog, ShuffleRead, SQLExecution
from aqe_core.model.plan_walk import exchange_below, partitioning_count
from aqe_core.model.plan import PlanNode
from aqe_core.views.plan_match import _SKEW_SUFFIX, base_name

SCHEMA_VERSION = 1



def exchange_partitions(ex: SQLExecution, exchange: PlanNode) -> int | None:
    """Shuffle partitions an exchange was planned with (before AQE changed the read)."""
    m = exchange.metric("number of partitions") or exchange.metric("partitions")  # (RAPIDS: "partitions")
    if m is not None:
        acc = m.get("accumulator_id")
        v = ex.metric_values.get(acc) if acc is not None else None
        if v is not None and v.get("total"):
            return int(v["total"])
    return partitioning_count(exchange.description or "")


def read_before_partitions(ex: SQLExecution, read: ShuffleRead) -> int | None:
    plan = ex.final_plan
    if plan is None:
        return None
    for n in plan.walk():
        if n.id == read.node_id and n.name == read.name:
            exch = exchange_below(n)
            return exchange_partitions(ex, exch) if exch is not None else None
    return None


def _joins(plan: PlanNode | None) -> Counter:
    """The joins a plan runs, by Spark's name and the engine that ran it (``(name, engine key)``,
    "" for Spark's own): an engine's join is the Spark join it stands for
    (:func:`aqe_core.model.engines.spark_name`), so ``PhotonBroadcastHashJoin`` is a
    ``BroadcastHashJoin``. A reused exchange counts the joins below the exchange it reuses:
    the initial plan repeats a reused subtree (a CTE used four times), the final one refers to
    it, and counting only the drawn joins said 'SortMergeJoin removed' for each reuse."""
    if plan is None:
        return Counter()
    full = {n.id: n for n in plan.walk() if n.id is not None and n.children}
    out: Counter = Counter()
    stack = [plan]
    while stack:
        n = stack.pop()
        name = spark_name(n.name, n.description)
        if "Join" in name:
            hit = operator_of(n.name)
            out[(name, hit[0].key if hit is not None else "")] += 1
        if not n.children and n.id in full:  # the reader's childless copy of a reused node
            stack.append(full[n.id])
        stack.extend(n.children)
    return out


def _by_name(joins: Counter) -> Counter:
    out: Counter = Counter()
    for (name, _engine), k in joins.items():
        out[name] += k
    return out


def _engine_rewrite(before: str, after: str, engines_after: set[str]) -> Optional[Engine]:
    """The engine that made ``before -> after`` itself (a sort-merge join run as a shuffled hash
    join: :attr:`Engine.own` ``smj_as_hash``), or None (AQE's change)."""
    if base_name(before) != "SortMergeJoin" or base_name(after) != "ShuffledHashJoin":
        return None
    for key in sorted(engines_after):
        e = by_key(key)
        if e is not None and e.own_decision("smj_as_hash") is not None:
            return e
    return None


def _paired(ex: SQLExecution, initial: PlanNode | None) -> tuple[list[tuple[str, str]], list[str], list[str], set[str]]:
    """(changed pairs, removed, added, engines of the later plan's joins), by Spark's names."""
    a_joins, b_joins = _joins(initial if initial is not None else ex.initial_plan), _joins(ex.final_plan)
    before, after = _by_name(a_joins), _by_name(b_joins)
    gone = list((before - after).elements())
    new = list((after - before).elements())
    engines_after = {e for (_n, e) in b_joins if e}
    return list(zip(gone, new)), gone[len(new):], new[len(gone):], engines_after


def join_change_lists(ex: SQLExecution, initial: PlanNode | None = None) -> tuple[list[str], list[str]]:
    """(AQE's join changes, the engine's own), from one walk of both plans: ``SortMergeJoin ->
    BroadcastHashJoin`` style changes between the initial and final plan, in Spark's names
    (``initial``: the initial plan when the caller has built it already). An engine's renaming is
    no change; an engine's own rewrite (a sort-merge join run as a hash join) names the engine
    and its setting: ``SortMergeJoin -> ShuffledHashJoin (NVIDIA RAPIDS's own rewrite, not AQE; ...)``."""
    pairs, removed, added, engines_after = _paired(ex, initial)
    aqe, engine = [], []
    for a, b in pairs:
        e = _engine_rewrite(a, b, engines_after)
        if e is None:
            aqe.append(f"{a} -> {b}")
            continue
        if b.endswith(_SKEW_SUFFIX) and not a.endswith(_SKEW_SUFFIX):
            aqe.append(f"{a} -> {a}{_SKEW_SUFFIX}")  # AQE split the skewed join before the engine converted it
        d = e.own_decision("smj_as_hash")
        conf = f"; {d.conf}" if d is not None and d.conf else ""
        engine.append(f"{a} -> {b} ({e.label}'s own rewrite, not AQE{conf})")
    aqe += [f"{a} removed" for a in removed]
    aqe += [f"{b} added" for b in added]
    return aqe, engine


def join_changes(ex: SQLExecution, initial: PlanNode | None = None) -> list[str]:
    """AQE's join changes (:func:`join_change_lists`)."""
    return join_change_lists(ex, initial)[0]


def engine_join_changes(ex: SQLExecution, initial: PlanNode | None = None) -> list[str]:
    """The engine's own join changes (:func:`join_change_lists`)."""
    return join_change_lists(ex, initial)[1]


def outcome_line(ex: SQLExecution) -> str:
    """The CLI's one line per execution: id, status, a 40-character description, then
    :func:`outcome_text`."""
    desc = (ex.description or "").replace("\n", " ")
    if len(desc) > 40:
        desc = desc[:37] + "..."
    head = f"#{ex.id:<4} {ex.status:<9} {desc:<40}"
    return head + "  " + outcome_text(ex)


def spark_ids(ex: SQLExecution) -> str:
    """Spark's ids that tie executions together, as its SQL tab shows them: the root execution of
    a sub-execution (3.4+, e.g. the insert under a CTAS) and the query id (4.2+, cut to 8
    characters as the tab does).

    >>> spark_ids(SQLExecution(id=1, root_execution_id=0, query_id="01a2165a-c1d0-7f4b-83a3-0ef98025480f"))
    'sub-execution of #0, query 01a2165a...'
    """
    parts = []
    if ex.root_execution_id is not None and ex.root_execution_id != ex.id:
        parts.append(f"sub-execution of #{ex.root_execution_id}")
    if ex.query_id:
        parts.append(f"query {ex.query_id[:8]}...")
    return ", ".join(parts)


def outcome_text(ex: SQLExecution, initial: PlanNode | None = None,
                 changes: tuple[list[str], list[str]] | None = None) -> str:
    """What AQE did to one execution, in a few words (plan versions, partitions before -> after
    per adaptive read, join changes), or ``no AQE``. ``changes``: :func:`join_change_lists`, when
    the caller has them already."""
    if not ex.adaptive:
        return "no AQE"
    parts = [f"{ex.num_plan_versions} plan versions"]
    reads = []
    for r in ex.shuffle_reads:
        before = read_before_partitions(ex, r)
        s = (f"{before if before is not None else '(not in log)'}->"
             f"{r.partitions if r.partitions is not None else '(not in log)'}")
        extra = []
        if r.local:
            extra.append("local")
        if r.coalesced_partitions:
            extra.append(f"{r.coalesced_partitions} coalesced")
        elif r.coalesced and r.coalesced_partitions is None:
            extra.append("coalesced")
        if r.skewed_partitions:
            extra.append(f"{r.skewed_partitions} skewed reducer{'s' if r.skewed_partitions != 1 else ''} split"
                         + (f" into {r.skew_splits} parts" if r.skew_splits else ""))
        if extra:
            s += f" ({', '.join(extra)})"
        reads.append(s)
    if reads:
        parts.append("partitions " + ", ".join(reads))
    jc, ejc = changes if changes is not None else join_change_lists(ex, initial)
    if jc:
        parts.append("joins: " + "; ".join(jc))
    if ejc:
        parts.append("engine: " + "; ".join(ejc))
    if not reads and not jc:
        parts.append("no shuffle read changes")
    return " | ".join(parts)


def execution_json(ex: SQLExecution, *, plans: bool = True) -> dict[str, Any]:
    changes = join_change_lists(ex)
    d: dict[str, Any] = {
        "id": ex.id,
        "description": ex.description,
        "status": ex.status,
        "adaptive": ex.adaptive,
        "root_execution_id": ex.root_execution_id,
        "query_id": ex.query_id,
        "submission_time": ex.submission_time,
        "completion_time": ex.completion_time,
        "duration_ms": ex.duration,
        "error_message": ex.error_message,
        "job_ids": list(ex.job_ids),
        "stage_ids": list(ex.stage_ids),
        "num_plan_versions": ex.num_plan_versions,
        "join_changes": changes[0],
        "engine_join_changes": changes[1],
        "stage_retries": list(ex.stage_retries),
    }
    if plans:
        formatted: dict = {}  # each metric's UI strings, once for all versions
        versions = ex.plan_versions
        d["initial_plan"] = ex.plan_dict_with_values(ex.initial_plan, formatted)
        d["plan_versions"] = [ex.plan_dict_with_values(p, formatted) for p in versions]
        final = ex.final_plan
        # the final plan is the last version, built once: its dict is shared, written twice
        d["final_plan"] = (d["plan_versions"][-1] if versions and final is versions[-1]
                           else ex.plan_dict_with_values(final, formatted))
    reads = []
    for r in ex.shuffle_reads:
        rd = r.to_dict()
        rd["partitions_before"] = read_before_partitions(ex, r)
        reads.append(rd)
    d["shuffle_reads"] = reads
    d["other_shuffle_reads"] = [r.to_dict() for r in ex.other_shuffle_reads]
    d["modified_configs"] = dict(ex.modified_configs)
    d["aqe_conf"] = ex.aqe_conf.to_strings() if ex.aqe_conf is not None else None
    d["aqe_conf_layers"] = {
        "spark_properties": ex.conf_layers[0] if ex.conf_layers else {},
        "job_properties": ex.conf_layers[1] if len(ex.conf_layers) > 1 else {},
        "modified_configs": ex.conf_layers[2] if len(ex.conf_layers) > 2 else {},
    }
    d["warnings"] = list(ex.warnings)
    return d


class KnownExecutions(Protocol):
    """Executions' documents encoded as the reader finalised them
    (:class:`~aqe_core.views.encoded_executions.EncodedExecutions`)."""

    def __contains__(self, eid: object) -> bool: ...

    def warnings(self, eid: int) -> tuple[str, ...]: ...

    def text(self, eid: int) -> Optional[str]: ...


def write_log_json(log: EventLog, out: Any, *, plans: bool = True, tasks: bool = False,
                   indent: Optional[int] = None, encode: Optional[Callable[[Any], str]] = None,
                   extra: Optional[dict[str, Any]] = None, known: Optional["KnownExecutions"] = None) -> None:
    """:func:`log_json` (executions last) written to ``out`` one execution at a time, each with
    a C encoder (``json.dumps`` without indent; ``json.dump`` would use the pure-Python one,
    ~60x slower, in about a million small writes: minutes on unbuffered stdout). ``encode``:
    a faster encoder for one execution's JSON without indent (the CLI passes orjson's).
    ``extra``: keys written before the executions (``query_groups``). ``known``: executions
    encoded as the reader finalised them (with ``encode`` and ``plans`` the same, no indent),
    copied instead of read back and encoded again."""
    known = known if encode is not None and indent is None else None
    doc = {**log_json(log, plans=plans, tasks=tasks, executions=False, known=known), **(extra or {})}
    sep = ",\n" if indent is not None else ", "
    head = json.dumps({k: v for k, v in doc.items() if k != "executions"}, indent=indent).rstrip()
    nl = "\n" if indent is not None else ""
    out.write(head[:-1].rstrip() + ("," if len(head) > 2 else "") + f'{nl or " "}"executions": [{nl}')
    first = True
    dumps = encode if encode is not None and indent is None else (lambda v: json.dumps(v, indent=indent))
    for eid in sorted(log.executions):
        text = known.text(eid) if known is not None else None
        out.write(("" if first else sep) + (text if text is not None else dumps(execution_json(log.executions[eid],
                                                                                               plans=plans))))
        first = False
    out.write(f"{nl}]{nl}}}\n")


def log_json(log: EventLog, *, plans: bool = True, tasks: bool = False, executions: bool = True,
             known: Optional["KnownExecutions"] = None) -> dict[str, Any]:
    """The log's ``inspect --json`` document; ``known``: as :func:`write_log_json` (the warnings
    of the executions it holds taken from it, not read back)."""
    warnings = list(log.warnings)
    for eid in log.executions:
        ws = known.warnings(eid) if known is not None and eid in known else log.executions[eid].warnings
        warnings.extend(f"execution {eid}: {w}" for w in ws)
    doc: dict[str, Any] = {
        "schema_version": SCHEMA_VERSION,
        "application": log.application.to_dict(),
        "source": {
            "path": log.path, "layout": log.layout, "codec": log.codec, "parts": list(log.parts),
            "complete": log.complete, "bytes_read": log.bytes_read, "bytes_decoded": log.bytes_decoded,
            "events": log.events,
        },
        "executions": ([execution_json(ex, plans=plans) for ex in log.executions_by_id()]
                       if executions else []),
        "limitations": {"not_in_log": list(NOT_IN_LOG), "simulation": APPROXIMATE_NOTE},
        "notes": list(log.notes),
        "warnings": warnings,
    }
    doc["excluded_events"] = dict(log.excluded_events)
    if tasks:
        doc["stages"] = [st.to_dict(tasks=True) for st in sorted(log.stages.values(), key=lambda s: s.stage_id)]
    return doc
