"""Structured Streaming recorded for real (issue 41, requirement 3).

``tests/fixtures/eventlogs/streaming/<release>/{plain,listener}/`` hold the logs of
``tools/record_streaming.py`` on PySpark 3.5.9 and 4.3.0: a stateless stream-static join fed
micro-batches of 30 to 12,000 rows, and a ``foreachBatch`` aggregation run twice per batch (on
the session Spark gives the batch, then with ``spark.sql.adaptive.enabled=true`` set on it).
Every micro-batch is three SQL executions: the micro-batch (the root) and the two actions.

Spark's own record is the truth, read here from the raw JSON lines without our reader: the
executions (``SparkListenerSQLExecutionStart``), whether each is adaptive (an
``AdaptiveSparkPlan`` node, ``SparkListenerSQLAdaptiveExecutionUpdate`` events), and each final
plan's adaptive reads (the ``AQEShuffleRead`` metrics Spark posted for the execution) and joins.

What the logs show (recorded, not assumed): on 3.5.9 the micro-batch and the first action are not
adaptive (their ``modifiedConfigs`` say ``spark.sql.adaptive.enabled=false``: Spark's
``StreamExecution`` sets it on the stream's session) and the second action is; on 4.3.0 all three
are, and the micro-batch's join is a broadcast join for small batches and a sort-merge join with
the static side's hot reducer split for large ones.
"""
from __future__ import annotations

import json
import re
from collections import Counter, defaultdict
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path

import pytest
import zstandard

from aqe_core.engine.simulate import simulate
from aqe_core.model.evidence import Evidence
from aqe_core.model.plan_walk import graph_nodes
from aqe_core.model.presets import BUILTIN_PRESETS
from aqe_core.opening import load_exact, load_source
from aqe_core.advise.whatif import simulate_preset

DIR = Path(__file__).resolve().parents[1] / "fixtures" / "eventlogs" / "streaming"
RELEASES = ("3.5.9", "4.3.0")
KINDS = ("plain", "listener")
ACTUAL = next(p for p in BUILTIN_PRESETS if p.name == "actual")
SQL = "org.apache.spark.sql.execution.ui."


def _log(release: str, kind: str) -> Path:
    return next((DIR / release / kind).glob("local-*"))


@dataclass
class Execution:
    """One SQL execution as Spark logged it."""

    id: int
    root: int
    description: str
    modified: dict
    adaptive: bool = False
    final: dict = field(default_factory=dict)
    driver: dict = field(default_factory=dict)

    def own_nodes(self) -> list[dict]:
        """The final plan's nodes, not those a ``Scan ExistingRDD`` shows below it (the plan of
        the micro-batch the batch DataFrame came from: its metrics are posted there)."""
        out, stack = [], [self.final]
        while stack:
            n = stack.pop()
            out.append(n)
            if not n["nodeName"].startswith("Scan ExistingRDD"):
                stack.extend(n["children"])
        return out

    def reads(self) -> Counter:
        """(partitions, skewed partitions) of each adaptive read, from Spark's driver metrics."""
        out: Counter = Counter()
        for n in self.own_nodes():
            if n["nodeName"] == "AQEShuffleRead":
                m = {x["name"]: self.driver.get(x["accumulatorId"]) for x in n["metrics"]}
                out[(m["number of partitions"], m.get("number of skewed partitions") or 0)] += 1
        return out

    def joins(self) -> list[str]:
        return sorted(n["nodeName"] for n in self.own_nodes() if "Join" in n["nodeName"])


@dataclass
class SparkRecord:
    version: str
    batches: int
    executions: dict[int, Execution]


@cache
def spark(release: str, kind: str) -> SparkRecord:
    """The raw log, read line by line: Spark's own record of what it did."""
    with open(_log(release, kind), "rb") as fh:
        lines = zstandard.ZstdDecompressor().stream_reader(fh).read().decode().splitlines()
    execs: dict[int, Execution] = {}
    version, batches = "", 0
    for line in lines:
        e = json.loads(line)
        name = e["Event"]
        if name == "SparkListenerLogStart":
            version = e["Spark Version"]
        elif name.endswith("StreamingQueryListener$QueryProgressEvent"):
            batches += 1
        elif name == SQL + "SparkListenerSQLExecutionStart":
            execs[e["executionId"]] = x = Execution(e["executionId"], e.get("rootExecutionId", e["executionId"]),
                                                     e["description"], e.get("modifiedConfigs") or {})
            x.final = e["sparkPlanInfo"]
            x.adaptive = e["sparkPlanInfo"]["nodeName"] == "AdaptiveSparkPlan"
        elif name == SQL + "SparkListenerSQLAdaptiveExecutionUpdate":
            execs[e["executionId"]].final = e["sparkPlanInfo"]
            execs[e["executionId"]].adaptive = True
        elif name == SQL + "SparkListenerDriverAccumUpdates":
            execs[e["executionId"]].driver.update(dict(e["accumUpdates"]))
    return SparkRecord(version, batches, execs)


def _roles(rec: SparkRecord) -> dict[int, str]:
    """Each execution's part of its micro-batch: the micro-batch itself (the root), then the
    foreachBatch actions in the order they ran."""
    by_root: dict[int, list[int]] = defaultdict(list)
    for x in rec.executions.values():
        by_root[x.root].append(x.id)
    out = {}
    for root, ids in by_root.items():
        out[root] = "micro-batch"
        rest = sorted(i for i in ids if i != root)
        out.update(zip(rest, ("aggregate", "aggregate, AQE on")))
    return out


@cache
def _source(release: str, kind: str):
    return load_source(str(_log(release, kind)))


CASES = [pytest.param(r, k, id=f"{r}-{k}") for r in RELEASES for k in KINDS]


@pytest.mark.parametrize("release,kind", CASES)
def test_every_execution_of_every_micro_batch_is_read(release, kind):
    rec = spark(release, kind)
    assert rec.version == release and 20 <= rec.batches <= 30
    assert Counter(_roles(rec).values()) == {"micro-batch": rec.batches, "aggregate": rec.batches,
                                             "aggregate, AQE on": rec.batches}
    src = _source(release, kind)
    assert sorted(int(v.query_id) for v in src.views) == sorted(rec.executions)
    assert not src.warnings


@pytest.mark.parametrize("release,kind", CASES)
def test_adaptive_as_spark_ran_it(release, kind):
    rec = spark(release, kind)
    roles = _roles(rec)
    views = {int(v.query_id): v for v in _source(release, kind).views}
    for eid, x in rec.executions.items():
        assert views[eid].adaptive == x.adaptive, (eid, roles[eid])
    adaptive = {role: {rec.executions[e].adaptive for e in roles if roles[e] == role} for role in set(roles.values())}
    if release == "3.5.9":  # StreamExecution turned AQE off on the stream's session; foreachBatch can turn it on
        assert adaptive == {"micro-batch": {False}, "aggregate": {False}, "aggregate, AQE on": {True}}
        assert all(x.modified.get("spark.sql.adaptive.enabled") == "false" for e, x in rec.executions.items()
                   if roles[e] != "aggregate, AQE on")
    else:
        assert adaptive == {"micro-batch": {True}, "aggregate": {True}, "aggregate, AQE on": {True}}


def test_3_5_says_why_a_micro_batch_is_not_adaptive():
    """The defect: 'spark.sql.adaptive.enabled is false' as if the user had set it; Spark did."""
    for kind in KINDS:
        rec = spark("3.5.9", kind)
        roles = _roles(rec)
        views = {int(v.query_id): v for v in _source("3.5.9", kind).views}
        for eid, x in rec.executions.items():
            if x.adaptive:
                continue
            why = views[eid].adaptive_reason
            batch = re.search(r"batch = (\d+)$", x.description).group(1)
            assert why.startswith("Spark 3.5 runs a streaming micro-batch without AQE (this execution is part of"
                                  f" batch {batch}): the streaming query sets spark.sql.adaptive.enabled=false"), (
                eid, roles[eid], why)
            assert why.endswith("arrived in 4.1: spark.sql.adaptive.streaming.stateless.enabled)")


@pytest.mark.parametrize("release,kind", CASES)
def test_each_batchs_adaptive_reads_and_joins_are_sparks(release, kind):
    """Per execution: the partitions each adaptive read produced and the reducers it split, as
    our view reads them (as run: Spark's metric), against Spark's driver metrics; the joins of
    the final plan (the execution's own: not the micro-batch's plan below a batch DataFrame)."""
    rec = spark(release, kind)
    views = {int(v.query_id): v for v in _source(release, kind).views}
    checked = 0
    for eid, x in rec.executions.items():
        v = views[eid]
        if not x.adaptive:
            assert not [s for s in v.shuffles if s.adaptive_read]
            continue
        ours = Counter((s.partitions_after, s.skewed_partitions or 0) for s in v.shuffles if s.adaptive_read)
        assert ours == x.reads(), eid
        assert sorted(n.name for n in graph_nodes(v.final_plan, own=True) if "Join" in n.name) == x.joins(), eid
        if kind == "plain":
            ran = simulate_preset(v, ACTUAL)
            assert ran.evidence is Evidence.SPARK_METRIC
        checked += sum(ours.values())
    assert checked >= 20  # (3.5.9: only the AQE-on aggregation adapts; 4 of its 24 batches keep 16 partitions, no read)


def test_decisions_differ_between_batches():
    """The fixture does what its README says, by Spark's record: on 4.3.0 the micro-batch's join
    is broadcast for small batches and sort-merge with the hot reducer split for large ones, and
    the aggregations' partition counts follow the batches' sizes; on 3.5.9 the aggregation with
    AQE on does."""
    new = spark("4.3.0", "plain")
    roles = _roles(new)
    joins = Counter(j for e, x in new.executions.items() if roles[e] == "micro-batch" for j in x.joins())
    assert set(joins) == {"BroadcastHashJoin", "SortMergeJoin(skew=true)"}
    split = [x.reads() for e, x in new.executions.items() if "SortMergeJoin(skew=true)" in x.joins()
             and roles[e] == "micro-batch"]
    assert split and all(sum(n for (_, skewed), n in r.items() if skewed) == 1 for r in split)
    for rec in (new, spark("3.5.9", "plain")):
        counts = {p for e, x in rec.executions.items() if roles.get(e, "").startswith("aggregate") and x.adaptive
                  for (p, _) in x.reads()} if rec is new else {
            p for e, x in rec.executions.items() if _roles(rec)[e] == "aggregate, AQE on" for (p, _) in x.reads()}
        assert len(counts) >= 3, counts


@pytest.mark.parametrize("release", RELEASES)
def test_listener_log_is_exact_and_agrees(release):
    """The listener's executions replay through our rules at 100%, and the label says so."""
    src = _source(release, "listener")
    m = re.search(r"; listener: (\d+) executions exact \((.*)\)$", src.label)
    assert m, src.label
    adaptive = [x for x in spark(release, "listener").executions.values() if x.adaptive]
    assert int(m.group(1)) == len(adaptive)
    rep = simulate(load_exact(str(_log(release, "listener"))))
    a = rep.agreement
    assert rep.is_replay and a.complete, a.summary() + "\n" + "\n".join(a.mismatches + a.undecided)
    assert a.summary() == m.group(2)
    assert a.total >= sum(1 for x in adaptive if x.reads())
