"""``explain``'s skew claims against what Spark did (issue 11).

The listener logs (tests/fixtures/eventlogs/listener, every release 3.0.1 - 4.3.0, every
workload) are also plain event logs: read without their listener events, they are what a user
has. Their truth is the listener's own record of the specs Spark used. Every claim a plain
view makes must be Spark's: the skewed reducers and split parts per execution equal the truth
(3.0 logs carry no read metrics: they claim nothing, ``null``), with 0 false claims; the exact
view of the same log names the split reducers by id.
"""
from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import pytest

from aqe_core.cli import main as cli_main
from aqe_core.model.specs import PartialReducerPartitionSpec
from aqe_core.readers.eventlog import load
from aqe_core.readers.eventlog.listener_events import listener_capture
from aqe_core.opening import load_source, sample_sources
from aqe_core.views.explain import explain_views
from aqe_core.views.from_eventlog import views_from_eventlog

DIR = Path(__file__).parents[1] / "fixtures" / "eventlogs" / "listener"
LOGS = [pytest.param(p, id=p.parent.name) for p in sorted(DIR.glob("*/*")) if p.name != "captures.json.gz"]


def _truth(log):
    """execution id -> Counter of (reducer, parts) Spark split, from the listener's specs."""
    out = {}
    for q in listener_capture(log).queries:
        split = Counter()
        for r in q.reads:
            for s in r.specs:
                if isinstance(s, PartialReducerPartitionSpec):
                    split[(r.shuffle_id, s.reducer_index)] += 1
        out[q.execution_ids[0]] = split
    return out


@pytest.mark.parametrize("path", LOGS)
def test_plain_views_make_no_false_skew_claim(path):
    log = load(str(path))
    truth = _truth(log)
    doc = explain_views(views_from_eventlog(log))
    claims = 0
    for ex in doc["executions"]:
        eid = int(ex["id"])
        if eid not in truth:
            continue
        claimed = [x for r in ex["reads"] if r["skewed_reducers"] for x in r["skewed_reducers"]]
        unknown = [r for r in ex["reads"] if r["skewed_reducers"] is None]
        spark = truth[eid]
        if unknown:  # a 3.0 log: no claim either way
            assert log.spark_version.startswith("3.0") and not claimed
            continue
        assert len(claimed) == len(spark), f"execution {eid}: claims {len(claimed)} split reducers, Spark split {len(spark)}"
        parts = sum(r["skewed_parts_total"] or 0 for r in ex["reads"])
        assert parts == sum(spark.values()), f"execution {eid}: {parts} parts claimed, Spark made {sum(spark.values())}"
        claims += len(claimed)
    if not log.spark_version.startswith("3.0"):
        assert claims > 0  # the catalogue splits reducers: the check is not vacuous


@pytest.mark.parametrize("path", LOGS)
def test_the_exact_view_names_the_split_reducers(path):
    log = load(str(path))
    truth = _truth(log)
    doc = explain_views(load_source(str(path)).views)
    for ex in doc["executions"]:
        eid = int(ex["id"])
        if eid not in truth:
            continue
        got = Counter()
        for r in ex["reads"]:
            assert r["evidence"] == "exact"
            for x in r["skewed_reducers"]:
                got[x["reducer"]] += x["parts"]
        want = Counter()
        for (_shuffle, red), n in truth[eid].items():
            want[red] += n
        assert got == want, f"execution {eid}"


def test_bundled_samples_claim_only_what_spark_logged():
    for s in sample_sources():
        if s.kind != "eventlog":
            continue
        log = load(s.path)
        for ex in explain_views(views_from_eventlog(log))["executions"]:
            logged = {r.node_id: r for r in log.executions[int(ex["id"])].shuffle_reads}
            for r in ex["reads"]:
                if r["skewed_reducers"]:
                    assert (logged[r["node_id"]].skewed_partitions or 0) == len(r["skewed_reducers"])


def test_cli_explain_json(capsys):
    path = next(p.values[0] for p in LOGS if p.id == "4.3.0")
    assert cli_main(["explain", str(path), "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    ex = doc["executions"][0]
    assert {"id", "description", "reads"} <= set(ex)
    for r in (r for e in doc["executions"] for r in e["reads"]):
        assert {"node_id", "evidence", "partitions", "skewed_reducers", "lines", "sentences"} <= set(r)
        assert len(set(r["sentences"])) == len(r["sentences"]), r["sentences"]  # a split's sentence once
    assert cli_main(["explain", str(path), "--execution", "999999"]) == 2
