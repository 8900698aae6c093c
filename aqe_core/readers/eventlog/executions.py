"""End of an event log: each SQL execution's status, its adaptive shuffle reads (sizes from the
driver's metric updates, bytes read from the reduce tasks) and its effective AQE configuration.
"""
from __future__ import annotations

import re
from collections import defaultdict
from typing import Any, Iterable, Sequence

from aqe_core import config
from aqe_core.model.eventlog import EventLog, LazyPlan, ShuffleRead, SQLExecution
from aqe_core.model.plan import PlanNode
from aqe_core.model.plan_walk import (
    SHUFFLE_READ_NAMES, exchange_below, exchange_parts, graph_nodes, is_shuffle_exchange, partitioning_count, reuses_drawn_exchange,
)
from aqe_core.readers.eventlog.planinfo import is_malformed
from aqe_core.readers.eventlog.live_state import _LiveExec


def _opt_str(v: Any) -> str | None:
    return v if isinstance(v, str) else None


def _set_status(m: SQLExecution, ex: _LiveExec) -> None:
    if m.initial_source is None and m.submission_time is None:
        # known only from its jobs: the start event is missing (compacted away, or the log is cut)
        m.status = "UNKNOWN"
        m.warnings.append("no SQLExecutionStart for this execution in the log (compacted away or cut): "
                          "only its jobs are known")
    elif m.completion_time is None:
        m.status = "RUNNING"
    elif m.error_message or any(s == "FAILED" for s in m.job_status.values()):
        m.status = "FAILED"
    else:
        m.status = "COMPLETED"


_SKEW_DESC = re.compile(r"(\d+) skewed partitions")


def planned_shuffles(ex: _LiveExec, log: EventLog, plan: PlanNode | None) -> list[ShuffleRead]:
    """The final plan's shuffle exchanges that no adaptive read reads (AQE neither coalesced,
    split nor read them locally): their partition count (the exchange's driver metric, 3.2+,
    else the partitioning in its description) and the bytes each reduce task read, which is
    reducer i's size as read (task metrics), since reduce task i reads reducer i."""
    if plan is None:
        return []
    driver: dict[int, list[int]] = defaultdict(list)
    it = iter(ex.driver_all)
    for acc, value in zip(it, it):
        driver[acc].append(value)
    nodes = graph_nodes(plan, own=True)
    # (by id: a read of a reused exchange meets a copy of it, with the original's id)
    read = {e.id for n in nodes if n.name in SHUFFLE_READ_NAMES if (e := exchange_below(n)) is not None}
    parts = exchange_parts(plan)
    out = []
    for node in nodes:
        if not is_shuffle_exchange(node) or node.id in read or reuses_drawn_exchange(node):
            continue  # (a reuse whose exchange is drawn below it reads that one shuffle: shown once, there)
        r = ShuffleRead(node_id=node.id, name=node.name, description=node.description)
        parts_acc = next((m["accumulator_id"] for m in node.metrics if m["name"] == "number of partitions"), None)
        if parts_acc is not None and driver.get(parts_acc):
            r.num_partitions = driver[parts_acc][-1]
        _task_reads(r, node, ex, parts.get(id(node), ()))
        if r.bytes_read is not None:
            r.partition_sizes, r.partition_sizes_source = list(r.bytes_read), "task_shuffle_read"
        if r.num_partitions is None:
            planned = partitioning_count(node.description or "")
            if planned is not None:
                r.derived_partitions, r.derived_partitions_from = planned, "the exchange's partitioning"
        out.append(r)
    return out


def _padded(values: Sequence[int] | None, n: int) -> list[int]:
    """``values`` as a list of ``n``, zeros after its end (None: all zeros)."""
    out = list(values or ())[:n]
    out.extend([0] * (n - len(out)))
    return out


def _task_reads(r: ShuffleRead, exch: PlanNode, ex: _LiveExec, parts: Iterable[PlanNode] = ()) -> None:
    """Bytes (and records) the reduce tasks read from ``exch``, per task index, and their stage
    (an engine's exchange of several nodes: its read side carries the read metrics)."""
    eids = {mm["name"]: mm["accumulator_id"] for n in (*parts, exch) for mm in n.metrics}
    loc, rem, rec = eids.get("local bytes read"), eids.get("remote bytes read"), eids.get("records read")
    for sid, by_acc in ex.reads_snapshot.items():
        la = by_acc.get(loc) if loc is not None else None
        ra = by_acc.get(rem) if rem is not None else None
        if la is not None or ra is not None:
            # (the arrays stop at the last task seen: the stage's other tasks read 0, as in Spark's)
            n = ex.read_tasks.get(sid, max(len(la or ()), len(ra or ())))
            r.bytes_read = [a + b for a, b in zip(_padded(la, n), _padded(ra, n))]
            ca = by_acc.get(rec) if rec is not None else None
            r.records_read = _padded(ca, n) if ca is not None else None
            r.stage_id = sid
            return


def _shuffle_reads(ex: _LiveExec, log: EventLog, version: str | None,
                   plan: PlanNode | None) -> tuple[list[ShuffleRead], list[ShuffleRead]]:
    """Adaptive shuffle reads of the final plan (``plan``, built), and the others that posted
    sizes (reads of earlier plan versions that were replaced, reads inside AQE subqueries)."""
    m = ex.model
    if plan is None:
        return [], []
    driver: dict[int, list[int]] = defaultdict(list)
    it = iter(ex.driver_all)
    for acc, value in zip(it, it):
        driver[acc].append(value)
    parts = exchange_parts(plan)
    own = graph_nodes(plan, own=True)  # (not a micro-batch's plan shown under its batch DataFrame's scan)
    out = [_read_of(node, ex, log, driver, parts) for node in own if node.name in SHUFFLE_READ_NAMES]
    seen = {n.metric("partition data size")["accumulator_id"] for n in own  # type: ignore[index]
            if n.name in SHUFFLE_READ_NAMES and n.metric("partition data size")}
    others: list[ShuffleRead] = []
    for version_no, src in enumerate([m.initial_source, *m.version_sources[:-1]]):
        if src is None or (isinstance(src, LazyPlan) and all(a in seen or not driver.get(a) for a in src.size_accs)):
            continue  # (no read of that version posted sizes the final plan lacks: left unbuilt)
        p = src.plan() if isinstance(src, LazyPlan) else src
        for node in graph_nodes(p, own=True):
            size = node.metric("partition data size") if node.name in SHUFFLE_READ_NAMES else None
            if size is None or size["accumulator_id"] in seen or not driver.get(size["accumulator_id"]):
                continue
            seen.add(size["accumulator_id"])
            r = _read_of(node, ex, log, driver)
            r.node_id = None
            r.notes.append(f"read of plan version {version_no} (0 = initial plan), not in the final plan")
            others.append(r)
    for acc in ex.subquery_size_ids:
        if acc in seen or not driver.get(acc):
            continue
        seen.add(acc)
        sizes = list(driver[acc])
        others.append(ShuffleRead(
            node_id=None, name="AQEShuffleRead", description="", derived_partitions=len(sizes),
            derived_partitions_from="partition sizes",
            partition_sizes=sizes, partition_sizes_source="driver_metrics",
            notes=["read inside an adaptive subquery: Spark logs its metrics but no plan tree, so only the "
                   "sizes are known (counts of coalesced/skewed partitions are not attributed)"]))
    return out, others


def _read_of(node: PlanNode, ex: _LiveExec, log: EventLog, driver: dict[int, list[int]],
             parts: dict[int, list[PlanNode]] | None = None) -> ShuffleRead:
    ids = {mm["name"]: mm["accumulator_id"] for mm in node.metrics}

    def last(name: str) -> int | None:
        vals = driver.get(ids.get(name), [])  # type: ignore[arg-type]
        return vals[-1] if vals else None

    desc = node.description
    r = ShuffleRead(node_id=node.id, name=node.name, description=desc)
    r.local = desc.rstrip().endswith(" local")
    r.num_partitions = last("number of partitions")
    r.coalesced_partitions = last("number of coalesced partitions")
    r.skewed_partitions = last("number of skewed partitions")
    r.skew_splits = last("number of skewed partition splits")
    r.empty_partitions = last("number of empty partitions")
    if "skewed partitions" in desc and r.skewed_partitions is None:
        sm = _SKEW_DESC.search(desc)
        if sm:
            r.skewed_partitions = int(sm.group(1))
    sizes_id = ids.get("partition data size")
    if sizes_id is not None and driver.get(sizes_id):
        sizes = list(driver[sizes_id])
        n = r.num_partitions
        if n and len(sizes) > n and len(sizes) % n == 0:
            r.notes.append(
                f"'partition data size' was posted {len(sizes) // n} times (the read was built more "
                "than once); the last set is used"
            )
            sizes = sizes[-n:]
        r.partition_sizes = sizes
        r.partition_sizes_source = "driver_metrics"
    # bytes actually read, per output partition, from the reduce tasks' SQL accumulators
    exch = exchange_below(node)
    if exch is not None:
        _task_reads(r, exch, ex, (parts or {}).get(id(exch), ()))
    if r.partition_sizes is None and not r.local and r.bytes_read is not None:
        r.partition_sizes = list(r.bytes_read)
        r.partition_sizes_source = "task_shuffle_read"
        r.notes.append(
            f"{node.name} has no partition size metrics in this Spark version: sizes are the shuffle "
            "bytes each reduce task read (task metrics), not the MapStatus sizes AQE used"
        )
    if r.num_partitions is None:
        if r.partition_sizes is not None:
            r.derived_partitions, r.derived_partitions_from = len(r.partition_sizes), "partition sizes"
        elif r.stage_id is not None and r.stage_id in log.stages and log.stages[r.stage_id].num_tasks:
            r.derived_partitions, r.derived_partitions_from = log.stages[r.stage_id].num_tasks, "reduce tasks"
    return r


def _effective_conf(m: SQLExecution, log: EventLog, version: str | None, cache: dict, epoch: int = -1) -> None:
    """``epoch``: the count of environment updates read so far (the application's layer, filtered
    and frozen, is kept per count: a log of a million executions has one environment); -1: none kept."""
    props = log.spark_properties
    got = cache.get(("app layer", epoch)) if epoch >= 0 else None
    if got is None or got[2] is not props:
        app = {k: v for k, v in props.items() if k.startswith(config.SQL_PREFIX)}
        got = (app, tuple(sorted(app.items())), props)
        if epoch >= 0:
            cache[("app layer", epoch)] = got
    m.conf_layers = [dict(got[0]), dict(m.job_properties),
                     {k: v for k, v in m.modified_configs.items() if k.startswith(config.SQL_PREFIX)}]
    if version is None:
        return
    key = (version, got[1], tuple(sorted(m.conf_layers[1].items())), tuple(sorted(m.conf_layers[2].items())))
    err: list[str]
    if key in cache:
        m.aqe_conf, err = cache[key]
    else:
        err = []
        try:
            from aqe_core.config import AQEConf, checked_layers

            layers, err = checked_layers(version, m.conf_layers)
            m.aqe_conf = AQEConf.resolve(version, layers, validate=False)
        except Exception as e:  # noqa: BLE001 - unsupported version string, missing module: keep the raw layers
            err = [f"effective AQE configuration not built: {str(e)[:200]}"]
        cache[key] = (m.aqe_conf, err)
    m.warnings.extend(err)


def _build_final(m: SQLExecution) -> PlanNode | None:
    """The final plan, built (for the reads) but kept unbuilt in the model like every version:
    views build it again when they ask. A version whose tree cannot be built is left out with
    a warning, as a bad event is."""
    while m.version_sources:
        last = m.final_plan
        if not is_malformed(last):
            return last
        m.version_sources.pop()
        m.warnings.append(f"a plan version of this execution was left out: {last.description}")  # type: ignore[union-attr]
    first = m.initial_plan
    if is_malformed(first):
        m.warnings.append(f"the initial plan of this execution was left out: {first.description}")  # type: ignore[union-attr]
        m.initial_source = None
        return None
    return first


# --------------------------------------------------------------------------------------------
# entry point
